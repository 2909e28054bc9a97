package restaurant_test

import (
	"context"
	"strings"

	"github.com/voicetest-go/voicetest/voicetest"
)

// caller is a persona: a simulated caller who wants a table and answers
// whatever the agent asks, instead of reading lines in a fixed order. Any
// voicetest.User can play the caller; this one decides from the words of
// the agent's last message (its streamed transcript in process, or the
// test's transcription of its audio over the phone), so it keeps working
// when the agent asks in another order, repeats itself or re-prompts.
//
// A persona driven by an LLM (package personas) does the same with a
// prompt instead of rules.
type caller struct {
	party, when, name string // the caller's answers, as said
	said              int    // lines said so far, a bound against loops
}

// NextUtterance answers the agent's last question.
func (c *caller) NextUtterance(_ context.Context, st *voicetest.State) (voicetest.Utterance, error) {
	last := strings.ToLower(st.LastAgentText())
	c.said++
	switch {
	// The agent says goodbye only once the caller has spoken; in the
	// greeting, pocketsphinx's phrase grammar can hear a "goodbye" in the
	// pause after "Bella Vista" (it does on the recorded audio).
	case c.said > 8 || c.said > 1 && strings.Contains(last, "goodbye"):
		return voicetest.Utterance{Done: true}, nil
	case strings.Contains(last, "is that right"):
		return voicetest.Utterance{Text: "Yes, that's right."}, nil
	case strings.Contains(last, "name"):
		return voicetest.Utterance{Text: c.name}, nil
	case strings.Contains(last, "day") || strings.Contains(last, "time"):
		return voicetest.Utterance{Text: c.when}, nil
	case strings.Contains(last, "how many") || strings.Contains(last, "people"):
		return voicetest.Utterance{Text: c.party}, nil
	}
	return voicetest.Utterance{Text: "Sorry, what?"}, nil
}
