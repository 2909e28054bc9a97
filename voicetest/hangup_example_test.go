package voicetest_test

import (
	"context"
	"fmt"

	"github.com/voicetest-go/voicetest/adapters/handler"
	"github.com/voicetest-go/voicetest/voicetest"
)

// The agent hanging up is the goal: ExpectHangUp says so, and the Check
// after it runs on the final conversation. Run gives the in-process agent
// a virtual clock, so the 2.8 s conversation costs no wall time.
func ExampleExpectHangUp() {
	agent := handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
		if _, ok := ev.(handler.TextEvent); ok {
			if _, err := c.ToolCall("book_table", map[string]any{"party": 2}); err != nil {
				return err
			}
			if err := c.Say("Booked. Goodbye!"); err != nil {
				return err
			}
			return c.HangUp("booked")
		}
		return nil
	})
	res, err := voicetest.Run(context.Background(), voicetest.Config{
		Agent: agent,
		Script: []voicetest.Step{
			voicetest.UserSays("A table for two, please."),
			voicetest.AgentTurn(),
			voicetest.ExpectHangUp(),
			voicetest.Check(func(st *voicetest.State) error {
				return st.Expect().ContainsToolCall("book_table", map[string]any{"party": 2}).Err()
			}),
		},
	})
	fmt.Println(err, "|", res.Ended, "|", res.Duration)
	// Output: <nil> | the agent hung up | 2.8s
}

// An agent may answer with silence where the script allows it.
func ExampleAllowSilence() {
	agent := handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
		if ev, ok := ev.(handler.TextEvent); ok && ev.Text != "Hmm." {
			return c.Say("How can I help?")
		}
		return nil // no word for "Hmm."
	})
	res, err := voicetest.Run(context.Background(), voicetest.Config{
		Agent: agent,
		Script: []voicetest.Step{
			voicetest.UserSays("Hmm."),
			voicetest.AgentTurn(voicetest.AllowSilence()),
			voicetest.UserSays("Hello?"),
			voicetest.AgentTurn(),
		},
	})
	fmt.Print(err, "\n", res.TranscriptText())
	// Output:
	// <nil>
	// user: Hmm.
	// user: Hello?
	// agent: How can I help?
}
