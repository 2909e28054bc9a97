package voicetest

import "context"

// MessageMatcher decides whether one message's text matches an
// expectation that a substring cannot express, such as an intent judged
// by an LLM (judges.Intent). Expectations use it through
// EventExpectation.IsMessageMatching.
type MessageMatcher interface {
	// MatchMessage returns nil when text matches, else an error saying
	// why not.
	MatchMessage(ctx context.Context, text string) error
}

// IsMessageMatching asserts that the item is a message by role whose text
// m accepts; m's error becomes the expectation's failure:
//
//	st.Expect().
//		NextEvent().IsMessageMatching(ctx, voicetest.RoleAgent, judges.Intent(l, "offers to book a table")).
//		NextEvent().IsToolCall("book", nil).
//		Err()
func (ee *EventExpectation) IsMessageMatching(ctx context.Context, role Role, m MessageMatcher) *Expectation {
	if !ee.ok() {
		return ee.x
	}
	if m == nil {
		ee.x.failf("item %d: IsMessageMatching was given a nil MessageMatcher", ee.idx)
		return ee.x
	}
	if ee.ev.Type != EventMessage || ee.ev.Role != role {
		ee.x.failf("item %d: expected a message from %s, got %s", ee.idx, role, describeItem(*ee.ev))
		return ee.x
	}
	if err := m.MatchMessage(ctx, ee.ev.Text); err != nil {
		ee.x.failf("item %d: %s does not match: %v", ee.idx, describeItem(*ee.ev), err)
	}
	return ee.x
}
