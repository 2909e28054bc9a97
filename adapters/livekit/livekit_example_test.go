package livekit_test

import (
	"testing"

	"github.com/voicetest-go/voicetest/adapters/livekit"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// A LiveKit agent, deployed or running locally, reached the way a caller
// reaches it: voicetest joins a new room of the server at LIVEKIT_URL
// (signing its token with LIVEKIT_API_KEY and LIVEKIT_API_SECRET),
// dispatches the agent registered as "frontdesk" and talks with it. The
// agent's tool calls and results, handoffs and interrupted replies arrive
// through the agent session protocol, and are checked LiveKit-style.
func ExampleNew() {
	var t *testing.T // the test's

	agent := livekit.New("", "", "", "frontdesk") // "" reads LIVEKIT_URL, LIVEKIT_API_KEY, LIVEKIT_API_SECRET
	res := voicetest.Scenario(t, voicetest.Config{
		Agent:     agent,
		UserVoice: speech.Flite(),
		Script: []voicetest.Step{
			voicetest.AgentTurn(), // the greeting
			voicetest.UserSays("Can you check my booking? It is under Ada."),
			voicetest.AgentTurn(),
			voicetest.Check(func(s *voicetest.State) error {
				return s.ExpectTurn(1).
					NextEvent().IsToolCall("lookup_booking", map[string]any{"name": "Ada"}).
					NextEvent().IsToolResultOf("lookup_booking", map[string]any{"table": 4}).
					NextEvent().IsMessageContaining(voicetest.RoleAgent, "table four").
					Err()
			}),
		},
	})
	t.Log(res.Latency.P95) // from the caller's last audio into the room to the agent's first out of it
}
