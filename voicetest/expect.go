package voicetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// ErrExpectation matches every failed expectation with errors.Is.
var ErrExpectation = errors.New("voicetest: expectation failed")

// Expectation is a cursor over the agent's conversation items (State.Events:
// messages, tool calls and results, data, handoffs) for ordered assertions
// in the style of LiveKit's RunResult.expect:
//
//	err := st.Expect().
//		NextEvent().IsMessage(voicetest.RoleAgent).
//		NextEvent().IsToolCall("book", map[string]any{"party": 2}).
//		NextEvent().IsToolResultOf("book", map[string]any{"ok": true}).
//		NextEvent().IsHandoff("billing").
//		NoMoreEvents().
//		Err()
//
// Each method returns the Expectation so calls chain. The first failure
// sticks: later calls do nothing, and Err returns it, with a listing of
// the items and the cursor position. That makes expectations usable
// inside a Check step, which fails the scenario with the error.
type Expectation struct {
	events []Event
	pos    int
	err    error
	scope  string
}

// EventExpectation is the item NextEvent moved to; its Is methods assert
// what it is and return the parent Expectation.
type EventExpectation struct {
	x   *Expectation
	ev  *Event
	idx int
}

// Expect returns an Expectation over all of the agent's items so far.
func (s *State) Expect() *Expectation {
	return &Expectation{events: s.Events(), scope: "the conversation"}
}

// ExpectTurn returns an Expectation over the agent's items that belong to
// user turn n (0 is the greeting, before the first user turn).
func (s *State) ExpectTurn(n int) *Expectation {
	var evs []Event
	for _, e := range s.Events() {
		if e.Turn == n {
			evs = append(evs, e)
		}
	}
	return &Expectation{events: evs, scope: fmt.Sprintf("turn %d", n)}
}

// Err returns the first failed expectation, or nil.
func (x *Expectation) Err() error { return x.err }

func (x *Expectation) failf(format string, args ...any) {
	if x.err != nil {
		return
	}
	x.err = fmt.Errorf("%w: %s\n%s", ErrExpectation, fmt.Sprintf(format, args...), x.listing())
}

// listing renders the items with the cursor, for failure messages.
func (x *Expectation) listing() string {
	var b strings.Builder
	fmt.Fprintf(&b, "agent items in %s (%d):", x.scope, len(x.events))
	for i, e := range x.events {
		mark := "  "
		if i == x.pos-1 {
			mark = "> "
		}
		fmt.Fprintf(&b, "\n  %s[%d] %s", mark, i, describeItem(e))
	}
	if len(x.events) == 0 {
		b.WriteString(" none")
	}
	return b.String()
}

func describeItem(e Event) string {
	switch e.Type {
	case EventMessage:
		return fmt.Sprintf("message %s: %q", e.Role, e.Text)
	case EventToolCall, EventToolResult:
		if e.Tool == nil {
			return string(e.Type)
		}
		if e.Type == EventToolResult {
			s := fmt.Sprintf("tool_result %s %s", e.Tool.Name, compactJSON(e.Tool.Result))
			if e.Tool.IsError {
				s += " (error)"
			}
			return s
		}
		return fmt.Sprintf("tool_call %s %s", e.Tool.Name, compactJSON(e.Tool.Arguments))
	case EventData:
		return fmt.Sprintf("data %s %s", e.Text, compactJSON(e.Data))
	case EventHandoff:
		return fmt.Sprintf("handoff to %q", e.Text)
	}
	return string(e.Type)
}

func compactJSON(b json.RawMessage) string {
	if len(b) == 0 {
		return "{}"
	}
	return string(b)
}

// NextEvent moves the cursor to the next item. When there is none the
// Expectation fails, and the returned EventExpectation's checks do
// nothing.
func (x *Expectation) NextEvent() *EventExpectation {
	if x.err != nil {
		return &EventExpectation{x: x}
	}
	if x.pos >= len(x.events) {
		x.pos++
		x.failf("expected another agent item after item %d, but there is none", x.pos-2)
		return &EventExpectation{x: x}
	}
	x.pos++
	return &EventExpectation{x: x, ev: &x.events[x.pos-1], idx: x.pos - 1}
}

// Skip moves the cursor past n items; fewer than n left is a failure.
func (x *Expectation) Skip(n int) *Expectation {
	if x.err != nil {
		return x
	}
	if x.pos+n > len(x.events) {
		x.failf("cannot skip %d items: only %d left", n, len(x.events)-x.pos)
		return x
	}
	x.pos += n
	return x
}

// NoMoreEvents asserts that the cursor is past the last item.
func (x *Expectation) NoMoreEvents() *Expectation {
	if x.err != nil {
		return x
	}
	if x.pos < len(x.events) {
		x.pos++
		x.failf("expected no more agent items, but item %d is %s", x.pos-1, describeItem(x.events[x.pos-1]))
	}
	return x
}

// ContainsToolCall asserts that some item (anywhere, regardless of the
// cursor) is a call of the named tool whose arguments contain args (a
// subset match on the JSON object; nil matches any arguments).
func (x *Expectation) ContainsToolCall(name string, args map[string]any) *Expectation {
	if x.err != nil {
		return x
	}
	var reasons []string
	for _, e := range x.events {
		if e.Type != EventToolCall || e.Tool == nil || e.Tool.Name != name {
			continue
		}
		if err := matchArgs(e.Tool.Arguments, args); err != nil {
			reasons = append(reasons, err.Error())
			continue
		}
		return x
	}
	if len(reasons) > 0 {
		x.failf("no call of tool %q matches the arguments: %s", name, strings.Join(reasons, "; "))
	} else {
		x.failf("no call of tool %q", name)
	}
	return x
}

// ContainsMessage asserts that some agent message (anywhere, regardless of
// the cursor) contains substr, ignoring case.
func (x *Expectation) ContainsMessage(substr string) *Expectation {
	if x.err != nil {
		return x
	}
	for _, e := range x.events {
		if e.Type == EventMessage && strings.Contains(strings.ToLower(e.Text), strings.ToLower(substr)) {
			return x
		}
	}
	x.failf("no agent message contains %q", substr)
	return x
}

func (ee *EventExpectation) ok() bool { return ee.ev != nil && ee.x.err == nil }

// Event returns the item the cursor is on and true, or false when
// NextEvent failed.
func (ee *EventExpectation) Event() (Event, bool) {
	if ee.ev == nil {
		return Event{}, false
	}
	return *ee.ev, true
}

// IsMessage asserts that the item is a message by role.
func (ee *EventExpectation) IsMessage(role Role) *Expectation {
	if !ee.ok() {
		return ee.x
	}
	if ee.ev.Type != EventMessage || ee.ev.Role != role {
		ee.x.failf("item %d: expected a message from %s, got %s", ee.idx, role, describeItem(*ee.ev))
	}
	return ee.x
}

// IsMessageContaining asserts that the item is a message by role whose
// text contains substr, ignoring case.
func (ee *EventExpectation) IsMessageContaining(role Role, substr string) *Expectation {
	if !ee.ok() {
		return ee.x
	}
	if ee.ev.Type != EventMessage || ee.ev.Role != role ||
		!strings.Contains(strings.ToLower(ee.ev.Text), strings.ToLower(substr)) {
		ee.x.failf("item %d: expected a message from %s containing %q, got %s", ee.idx, role, substr, describeItem(*ee.ev))
	}
	return ee.x
}

// IsToolCall asserts that the item is a call of the named tool whose
// arguments contain args: every key of args must be present with an equal
// value (compared as JSON, so 2 matches 2.0; nested objects match as
// subsets too). Nil args matches any arguments.
func (ee *EventExpectation) IsToolCall(name string, args map[string]any) *Expectation {
	if !ee.ok() {
		return ee.x
	}
	if ee.ev.Type != EventToolCall || ee.ev.Tool == nil || ee.ev.Tool.Name != name {
		ee.x.failf("item %d: expected a call of tool %q, got %s", ee.idx, name, describeItem(*ee.ev))
		return ee.x
	}
	if err := matchArgs(ee.ev.Tool.Arguments, args); err != nil {
		ee.x.failf("item %d: call of tool %q: %v", ee.idx, name, err)
	}
	return ee.x
}

// IsToolResult asserts that the item is a tool result that is not an
// error.
func (ee *EventExpectation) IsToolResult() *Expectation {
	if !ee.ok() {
		return ee.x
	}
	if ee.ev.Type != EventToolResult || ee.ev.Tool == nil || ee.ev.Tool.IsError {
		ee.x.failf("item %d: expected a successful tool result, got %s", ee.idx, describeItem(*ee.ev))
	}
	return ee.x
}

// IsToolError asserts that the item is a tool result that reports an
// error.
func (ee *EventExpectation) IsToolError() *Expectation {
	if !ee.ok() {
		return ee.x
	}
	if ee.ev.Type != EventToolResult || ee.ev.Tool == nil || !ee.ev.Tool.IsError {
		ee.x.failf("item %d: expected a failed tool result, got %s", ee.idx, describeItem(*ee.ev))
	}
	return ee.x
}

// IsData asserts that the item is a data payload named name ("" matches
// any name).
func (ee *EventExpectation) IsData(name string) *Expectation {
	if !ee.ok() {
		return ee.x
	}
	if ee.ev.Type != EventData || (name != "" && ee.ev.Text != name) {
		ee.x.failf("item %d: expected data %q, got %s", ee.idx, name, describeItem(*ee.ev))
	}
	return ee.x
}

// matchArgs reports whether the JSON object got contains want.
func matchArgs(got json.RawMessage, want map[string]any) error {
	if want == nil {
		return nil
	}
	var g any
	if len(got) == 0 {
		g = map[string]any{}
	} else if err := json.Unmarshal(got, &g); err != nil {
		return fmt.Errorf("arguments are not valid JSON (%v): %s", err, got)
	}
	wb, err := json.Marshal(want)
	if err != nil {
		return fmt.Errorf("expected arguments cannot be encoded as JSON: %w", err)
	}
	var w any
	if err := json.Unmarshal(wb, &w); err != nil {
		return fmt.Errorf("expected arguments cannot be decoded: %w", err)
	}
	if path, ok := subset(w, g, "$"); !ok {
		return fmt.Errorf("arguments %s do not contain %s (first difference at %s)", compactJSON(got), wb, path)
	}
	return nil
}

// subset reports whether want is contained in got: objects by key subset,
// everything else by equality.
func subset(want, got any, path string) (string, bool) {
	wm, ok := want.(map[string]any)
	if !ok {
		if reflect.DeepEqual(want, got) {
			return "", true
		}
		return path, false
	}
	gm, ok := got.(map[string]any)
	if !ok {
		return path, false
	}
	for k, wv := range wm {
		gv, ok := gm[k]
		if !ok {
			return path + "." + k, false
		}
		if p, ok := subset(wv, gv, path+"."+k); !ok {
			return p, false
		}
	}
	return "", true
}
