package layercode_test

import (
	"strings"
	"testing"
	"testing/synctest"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/layercode"
	"github.com/voicetest-go/voicetest/internal/peers/layercodepeer"
)

// TestExampleNew makes ExampleNew's call (the same double, agent and
// talk) over an in-memory network in a testing/synctest bubble, and
// checks what ExampleNew prints.
func TestExampleNew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := adaptertest.NewMemNet(t)
		peer := layercodepeer.New(t, layercodepeer.Config{Greeting: "Hello there.", HangUpAfter: 2, Listener: n.Listen()})

		agent := layercode.New(peer.AuthorizeURL, "agent-test")
		agent.WebSocketURL = peer.WebSocketURL
		agent.Metadata = map[string]any{"caller": "example"}
		agent.NetDial, agent.HTTPClient = n.Dial, n.HTTPClient()
		var out strings.Builder
		talk(t.Context(), agent, &out)
		const want = `agent said "Hello there." (300ms of audio)
agent said "Reply 1." (300ms of audio), then hung up: agent closed the WebSocket (status 1000 StatusNormalClosure): conversation ended by agent
`
		if got := out.String(); got != want {
			t.Errorf("ExampleNew prints:\n%s\nwant:\n%s", got, want)
		}
	})
}
