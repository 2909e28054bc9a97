package personas_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/voicetest-go/voicetest/personas"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
	"github.com/voicetest-go/voicetest/voicetest/llm"
)

// A scripted caller that does not talk into the agent's "let me check":
// while the agent's last words ask it to hold, it checks again every
// 200 ms (at most five times, TurnTaking's default), and speaks once the
// agent has answered.
func ExampleHoldOn() {
	agent := fixtures.TextAgent(fixtures.Reply{Text: "Let me check", Latency: 100 * time.Millisecond,
		Then: &fixtures.Reply{Text: "Seven is free", Latency: 300 * time.Millisecond}})
	res, err := voicetest.Run(context.Background(), voicetest.Config{
		Agent: agent, User: personas.Scripted("Seven then, please."),
		TurnTaking: voicetest.TurnTaking{Classifier: personas.HoldOn(200 * time.Millisecond)},
		Script:     []voicetest.Step{voicetest.UserSays("Is seven free?"), voicetest.AgentTurn(), voicetest.UserTurn()},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(res.TranscriptText())
	fmt.Println("the caller waited:", res.Metrics.Waits.Count > 0)
	// Output:
	// user: Is seven free?
	// agent: Let me check
	// agent: Seven is free
	// user: Seven then, please.
	// the caller waited: true
}

// A model decides when the caller speaks: once the agent has been quiet
// for half a second, it is asked whether the agent is done, and may
// answer "check again in N ms"; its answers are cached like every LLM
// call (in a test, give it llm.ForTest(t)).
func ExampleLLMTurns() {
	model, err := llm.New() // OPENAI_BASE_URL, OPENAI_API_KEY, VOICETEST_LLM_MODEL
	if err != nil {
		log.Fatal(err)
	}
	cfg := voicetest.Config{
		User: personas.Scripted("A table for two, please.", "Seven is fine."),
		TurnTaking: voicetest.TurnTaking{Idle: 500 * time.Millisecond,
			Classifier: personas.LLMTurns(model), MaxWaits: 3},
	}
	_ = cfg // with the Agent under test, to voicetest.Scenario
}
