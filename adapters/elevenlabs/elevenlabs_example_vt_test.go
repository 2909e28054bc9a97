package elevenlabs_test

import (
	"strings"
	"testing"
	"testing/synctest"

	"github.com/voicetest-go/voicetest/adapters/elevenlabs"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/internal/peers/elevenpeer"
)

// TestExampleNew makes ExampleNew's call (talk, with the same server) on
// virtual time over an in-memory network, and checks what it prints: the
// output in ExampleNew's doc comment.
func TestExampleNew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := adaptertest.NewMemNet(t)
		cfg := exampleConfig()
		cfg.Listener = n.Listen()
		server := elevenpeer.New(t, cfg)
		agent := elevenlabs.New("agent_test") // as ExampleNew's, over n
		agent.URL, agent.NetDial = server.URL, n.Dial
		var out strings.Builder
		talk(t.Context(), agent, &out)
		const want = `agent audio: {pcm16 16000}
agent: "Hi how can I help"
server heard: "what time is it"
agent: "It is noon goodbye"
hung up (3.6s of agent audio in all)
`
		if got := out.String(); got != want {
			t.Errorf("ExampleNew prints:\n%s\nwant:\n%s", got, want)
		}
	})
}
