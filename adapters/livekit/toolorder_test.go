package livekit_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/internal/peers/lkagent"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// TestToolEventsBeforeTheirSpeech: a tool call reaches the runner before
// the reply's speech it caused, even when the framework's session events
// (separate lk.agent.session byte streams on the data channel) arrive
// after that speech's first audio (the audio track): here the double
// sends its function_tools_executed, stamped when the tool ran, and its
// agent_state_changed to speaking 250 ms after the reply's first audio
// frame, as LiveKit Agents for Node's did 7 ms late in a session 9 run of
// TestNodeAgent. The adapter holds the start of the agent's speech until
// the framework has reported it speaking: the events it sent before
// that, on the one ordered data channel, are then in.
func TestToolEventsBeforeTheirSpeech(t *testing.T) {
	t.Parallel()
	beside(t)
	a, _ := goAgent(t, lkagent.Config{
		Turns: []lkagent.Turn{
			{Tool: &lkagent.Tool{Name: "lookup_booking", Args: map[string]any{"name": "ada"}, Result: map[string]any{"table": 4}}, Reply: "Table four."},
		},
		SessionStates:  true,
		LateToolEvents: 250 * time.Millisecond,
	})
	res := voicetest.Scenario(t, voicetest.Config{
		Agent:     a,
		UserVoice: fixtures.FakeTTS(),
		Golden:    voicetest.GoldenOptions{Disable: true},
		Script: []voicetest.Step{
			voicetest.UserSays("check my booking"),
			voicetest.AgentTurn(),
		},
	})
	if err := res.State.ExpectTurn(1).
		NextEvent().IsToolCall("lookup_booking", map[string]any{"name": "ada"}).
		NextEvent().IsToolResultOf("lookup_booking", map[string]any{"table": 4}).
		NextEvent().IsMessageContaining(voicetest.RoleAgent, "Table four").
		Err(); err != nil {
		t.Error(err)
		for _, e := range res.Timeline {
			b, _ := json.Marshal(e)
			t.Logf("%s", b)
		}
	}
}
