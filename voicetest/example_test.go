package voicetest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// exampleVoice is a stand-in TTS for the examples: it "speaks" with
// fixtures.WordTones. Real tests use an engine from the speech package.
type exampleVoice struct{}

func (exampleVoice) Synthesize(ctx context.Context, req voicetest.SpeechRequest) (pcm.Chunk, error) {
	return fixtures.WordTones(req.Text, req.Rate), nil
}

// Run holds a conversation outside of a test. Here the agent is a fixtures
// fake that answers from a script; the user speaks through a TTS engine.
func ExampleRun() {
	agent := fixtures.Fake(fixtures.FakeConfig{
		Burst: true, // send each reply at once: the real clock need not wait
		Replies: []fixtures.Reply{
			{Text: "Hello, how can I help?"},
			{Text: "Booked for two at seven."},
		},
	})
	res, err := voicetest.Run(context.Background(), voicetest.Config{
		Agent:     agent,
		UserVoice: exampleVoice{},
		Pacing:    voicetest.PaceFast, // on the real clock, don't wait out the audio
		Script: []voicetest.Step{
			voicetest.UserSays("Hi there."),
			voicetest.AgentTurn(),
			voicetest.UserSays("A table for two at seven, please."),
			voicetest.AgentTurn(),
			voicetest.Check(func(st *voicetest.State) error {
				return st.Expect().ContainsMessage("booked").Err()
			}),
		},
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Print(res.TranscriptText())
	fmt.Println("success:", res.Success, "turns:", res.Turns)
	// Output:
	// user: Hi there.
	// agent: Hello, how can I help?
	// user: A table for two at seven, please.
	// agent: Booked for two at seven.
	// success: true turns: 2
}

// A Check step can assert the agent's tool calls in order, in the style of
// LiveKit's RunResult.expect. The scenario's timeline is exact because the
// conversation runs on virtual time under Scenario; under Run it is on
// the real clock, so this example prints only the order of events.
func ExampleState_Expect() {
	agent := fixtures.Fake(fixtures.FakeConfig{Burst: true, Replies: []fixtures.Reply{{
		Text:    "Your table is booked.",
		Latency: 10 * time.Millisecond,
		Tools:   []voicetest.ToolCall{{Name: "book", Arguments: []byte(`{"party":2,"time":"19:00"}`), Result: []byte(`{"ok":true}`)}},
	}}})
	res, err := voicetest.Run(context.Background(), voicetest.Config{
		Agent: agent, UserVoice: exampleVoice{}, Pacing: voicetest.PaceFast,
		Script: []voicetest.Step{
			voicetest.UserSays("Book a table for two at seven."),
			voicetest.AgentTurn(),
			voicetest.Check(func(st *voicetest.State) error {
				return st.Expect().
					NextEvent().IsToolCall("book", map[string]any{"party": 2}).
					NextEvent().IsToolResult().
					NextEvent().IsMessageContaining(voicetest.RoleAgent, "booked").
					NoMoreEvents().
					Err()
			}),
		},
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	for _, e := range res.State.Events() {
		fmt.Println(e.Type, e.Text)
	}
	// Output:
	// tool_call book
	// tool_result book
	// message Your table is booked.
}

// TestLogf gives Run, or an adapter connected by hand, a log function
// whose lines the test's output attributes to the test itself, not to
// voicetest's or the adapter's code (as t.Logf would), from whichever
// goroutine they come.
func ExampleTestLogf() {
	test := func(t *testing.T) {
		res, err := voicetest.Run(t.Context(), voicetest.Config{
			Agent:  fixtures.TextAgent(fixtures.Reply{Text: "Hello"}),
			Logf:   voicetest.TestLogf(t), // lines read "my_test.go:12: ..."
			Script: []voicetest.Step{voicetest.UserSays("Hi"), voicetest.AgentTurn()},
		})
		if err != nil {
			t.Fatal(err)
		}
		_ = res
	}
	_ = test
}
