package voicetest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// A user who says goodbye and hangs up does not hear the agent's answer
// to it: the line is closed from the instant the user hung up, and speech
// the agent starts at or after that instant is not part of the
// conversation, however fast the agent answers and whenever its answer
// is read. (Found as a flaky ExampleLLM: an instant "Goodbye." showed up
// in about one run in 200, as the answer reached the runner before or
// after it closed the line.)
func TestUserHangUpDoesNotHearTheAnswer(t *testing.T) {
	for _, mode := range []struct {
		name string
		text bool
	}{{"audio", false}, {"text", true}} {
		t.Run(mode.name, func(t *testing.T) {
			lines := []voicetest.Utterance{{Text: "A table for two."}, {Text: "Great, bye.", HangUp: true}}
			asked := 0
			user := voicetest.UserFunc(func(context.Context, *voicetest.State) (voicetest.Utterance, error) {
				u := lines[min(asked, len(lines)-1)]
				asked++
				return u, nil
			})
			agent := fixtures.Fake(fixtures.FakeConfig{Burst: true, TextOnly: mode.text,
				Greeting: fixtures.Reply{Text: "Luigi's, how can I help?"},
				Replies:  []fixtures.Reply{{Text: "Booked."}, {Text: "Goodbye."}},
			})
			res, err := runVirtual(t, voicetest.Config{
				Agent: agent, User: user, UserVoice: &toneTTS{},
				Script: []voicetest.Step{voicetest.Proceed(0)},
			})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range res.Transcript {
				got = append(got, string(m.Role)+": "+m.Text)
			}
			want := "agent: Luigi's, how can I help? | user: A table for two. | agent: Booked. | user: Great, bye."
			if strings.Join(got, " | ") != want {
				t.Errorf("transcript\n got %s\nwant %s", strings.Join(got, " | "), want)
			}
			if res.Ended != "the user hung up" {
				t.Errorf("Ended = %q, want the user hung up", res.Ended)
			}
			for _, e := range res.Timeline {
				if e.Role == voicetest.RoleAgent && e.Type == voicetest.EventAgentStartSpeaking && e.Turn >= 2 {
					t.Errorf("timeline has the agent speaking after the user hung up: %v", e)
				}
			}
		})
	}
}
