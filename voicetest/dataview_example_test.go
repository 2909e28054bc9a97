package voicetest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// What a caller sees of a data payload the agent showed, under
// XMLView("screen"): the payload's fields as elements, in its order.
func ExampleXMLView() {
	view := voicetest.XMLView("screen")
	fmt.Println(view(voicetest.Event{Type: voicetest.EventData, Text: "booking_form",
		Data: json.RawMessage(`{"day":"friday","free":["19:00","21:30"]}`)}))
	// Output:
	// <screen name="booking_form">
	//   <day>friday</day>
	//   <free>
	//     <item>19:00</item>
	//     <item>21:30</item>
	//   </free>
	// </screen>
}

// A caller written as a UserFunc answers from what the agent showed on
// its screen (State.Shown), and takes its turn only once the agent has
// been quiet for two seconds (TurnTaking.Idle), so it waits through the
// agent's "one moment".
func ExampleTurnTaking() {
	agent := fixtures.TextAgent(fixtures.Reply{Text: "One moment", Latency: 300 * time.Millisecond,
		Then: &fixtures.Reply{Text: "Pick a time", Latency: 500 * time.Millisecond,
			DataName: "slots", Data: json.RawMessage(`{"free":["19:00"]}`)}})
	caller := voicetest.UserFunc(func(ctx context.Context, st *voicetest.State) (voicetest.Utterance, error) {
		shown := st.Shown() // "<data name=\"slots\">…<item>19:00</item>…</data>"
		if i := strings.Index(shown, "<item>"); i >= 0 {
			return voicetest.Utterance{Text: shown[i+6:i+11] + " please"}, nil
		}
		return voicetest.Utterance{Text: "Hello?"}, nil
	})
	res, err := voicetest.Run(context.Background(), voicetest.Config{
		Agent: agent, User: caller,
		TurnTaking: voicetest.TurnTaking{Idle: 2 * time.Second},
		Script:     []voicetest.Step{voicetest.UserSays("A table tonight"), voicetest.AgentTurn(), voicetest.UserTurn()},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(res.TranscriptText())
	// Output:
	// user: A table tonight
	// agent: One moment
	// agent: Pick a time
	// user: 19:00 please
}
