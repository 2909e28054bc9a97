package layercode_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/internal/peers/layercodepeer"
	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// TestLayerCodeCassette records a LayerCode session with the loopback
// peer (authorize call, greeting, a reply, a long story the caller
// interrupts, the reply to the interruption), stops the peer, and replays
// the session from the cassette: no authorize call and no WebSocket.
func TestLayerCodeCassette(t *testing.T) {
	var peer *layercodepeer.Peer
	adaptertest.RecordReplayOn(t, func(t *testing.T, n *adaptertest.MemNet) voicetest.Agent {
		peer = storyPeer(t, n.Listen())
		a := lcAgent(peer)
		a.NetDial, a.HTTPClient = n.Dial, n.HTTPClient()
		return a
	}, voicetest.Config{
		UserVoice: fixtures.FakeTTS(),
		Judge:     judges.All(judges.Says("You said A table for two."), judges.Says("You said Stop."), judges.InterruptionHandled(2*time.Second)),
		Script: []voicetest.Step{
			voicetest.AgentTurn(),
			voicetest.UserSays("A table for two."),
			voicetest.AgentTurn(),
			voicetest.UserSays("Tell me a story."),
			voicetest.Interrupt("Stop.", voicetest.After(time.Second)),
			voicetest.AgentTurn(),
			voicetest.Verdict(),
		},
	})
	if n := len(peer.Calls()); n != 1 {
		t.Errorf("the peer saw %d calls, want the recorded one only", n)
	}
}

// storyPeer starts the LayerCode peer of the story scenarios: it greets,
// says back what it heard (it decodes the user's fake speech), and tells a
// long story, in real time, when asked for one. It serves on ln, or on
// loopback TCP when ln is nil.
func storyPeer(t *testing.T, ln net.Listener) *layercodepeer.Peer {
	return layercodepeer.New(t, layercodepeer.Config{
		Listener:      ln,
		Greeting:      "Hello, how can I help?",
		Speech:        adaptertest.FakeSpeech,
		Transcribe:    fakeTranscribe,
		RealTimeAudio: true,
		// Think a little, so that the reply never races the runner's
		// record of the end of the user's speech.
		ReplyDelay: 50 * time.Millisecond,
		Replies: func(n int, heard string) layercodepeer.Reply {
			if strings.Contains(heard, "story") {
				return layercodepeer.Reply{Text: "Once upon a time there was a voice agent that talked for a very long time."}
			}
			return layercodepeer.Reply{Text: "You said " + heard}
		},
	})
}
