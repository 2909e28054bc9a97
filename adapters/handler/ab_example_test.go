package handler_test

import (
	"context"
	"fmt"

	"github.com/voicetest-go/voicetest/adapters/handler"
	"github.com/voicetest-go/voicetest/voicetest"
)

// An agent runs an A/B test on its greeting and records an outcome; the
// test forces a variant (or seeds the draw with WithVariantSeed) and
// reads both back.
func ExampleCall_Test() {
	agent := handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
		switch ev.(type) {
		case handler.StartEvent:
			v, err := c.Test("greeting", handler.Variants{"formal": 0.5, "casual": 0.5})
			if err != nil {
				return err
			}
			if v == "casual" {
				return c.Say("Hey, what can I do for you?")
			}
			return c.Say("Good evening, how may I help?")
		case handler.TextEvent:
			if err := c.SetOutcome("booked", 1); err != nil {
				return err
			}
			return c.Say("Booked.")
		}
		return nil
	}, handler.ForceVariant("greeting", "casual"))
	res, err := voicetest.Run(context.Background(), voicetest.Config{Agent: agent, Script: []voicetest.Step{
		voicetest.AgentTurn(), voicetest.UserSays("A table for two."), voicetest.AgentTurn(),
	}})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	v, _ := res.State.Variant("greeting")
	booked, _ := res.State.Outcome("booked")
	fmt.Println(v, booked)
	fmt.Println(res.State.LastAgentText())
	// Output:
	// casual 1
	// Booked.
}
