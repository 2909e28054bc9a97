package voicetest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/voicetest-go/voicetest/adapters/handler"
	"github.com/voicetest-go/voicetest/voicetest"
)

// Every Result measures the conversation as a caller hears it. The agent
// here thinks 700 ms, speaks, hands the call over and speaks again; Run
// gives it a virtual clock, so the figures are exact.
func ExampleResult_Metrics() {
	agent := handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
		if _, ok := ev.(handler.TextEvent); !ok {
			return nil
		}
		if err := c.Say("Let me check that."); err != nil {
			return err
		}
		if err := c.Handoff("host", "bookings"); err != nil {
			return err
		}
		return c.Say("Transferring.")
	}, handler.WithThinkTime(700*time.Millisecond))
	res, err := voicetest.Run(context.Background(), voicetest.Config{
		Agent: agent,
		Script: []voicetest.Step{
			voicetest.UserSays("I want to book a table."),
			voicetest.AgentTurn(),
			voicetest.Check(func(st *voicetest.State) error {
				return st.Expect().ContainsHandoff("bookings").Err()
			}),
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	m := res.Metrics
	fmt.Println("latency:", m.Latency.P50, "max", m.Latency.Max)
	fmt.Println("longest pause:", m.Pauses.Longest.Duration(), "after the", m.Pauses.Longest.After)
	fmt.Println("talk-over:", m.TalkOver.Count)
	fmt.Printf("agent: %.0f words a minute, %.0f words a turn\n", m.Speech.AgentWPM, m.Speech.AgentWordsPerTurn)
	// Output:
	// latency: 700ms max 700ms
	// longest pause: 700ms after the user
	// talk-over: 0
	// agent: 150 words a minute, 5 words a turn
}
