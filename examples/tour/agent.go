package tour

import (
	"context"
	"strings"

	"github.com/voicetest-go/voicetest/adapters/handler"
)

// Greeter is the agent under test in the tour: it asks for the party size,
// books a table with a tool call and hangs up.
func Greeter(ctx context.Context, ev handler.Event, c *handler.Call) error {
	switch ev := ev.(type) {
	case handler.StartEvent:
		return c.Say("Thanks for calling Chez Go. For how many people?")
	case handler.TextEvent:
		if !strings.Contains(strings.ToLower(ev.Text), "two") {
			return c.Say("Sorry, for how many people?")
		}
		if _, err := c.ToolCall("book_table", map[string]any{"party": 2}); err != nil {
			return err
		}
		if err := c.Say("A table for two it is. Goodbye!"); err != nil {
			return err
		}
		return c.HangUp("booked")
	}
	return nil
}
