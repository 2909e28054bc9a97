package handler_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/voicetest-go/voicetest/adapters/handler"
	"github.com/voicetest-go/voicetest/voicetest"
)

// TestHistoryEvent: voicetest.Inject reaches the handler as a
// HistoryEvent, which it can keep in its context; it is not user input.
func TestHistoryEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
			switch ev := ev.(type) {
			case handler.HistoryEvent:
				prev, _ := c.Get("history")
				s, _ := prev.(string)
				c.Set("history", s+string(ev.Role)+": "+ev.Text+"\n")
			case handler.TextEvent:
				h, _ := c.Get("history")
				if strings.Contains(h.(string), "table for two") {
					return c.Say("For Friday then, a table for two.")
				}
				return c.Say("What would you like?")
			}
			return nil
		})
		res, err := voicetest.Run(t.Context(), voicetest.Config{Agent: agent, Script: []voicetest.Step{
			voicetest.Inject(voicetest.RoleUser, "I want a table for two."),
			voicetest.Inject(voicetest.RoleAgent, "Which day?"),
			voicetest.UserSays("Friday."), voicetest.AgentTurn(),
		}})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.State.LastAgentText(); got != "For Friday then, a table for two." {
			t.Errorf("the agent answered %q: it did not get the injected history", got)
		}
	})
}
