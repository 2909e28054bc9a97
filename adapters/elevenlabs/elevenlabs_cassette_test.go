package elevenlabs_test

import (
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/internal/peers/elevenpeer"
	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// TestElevenLabsCassette records a conversation with the loopback ConvAI
// server (its first message, a reply that says back what it heard, a
// goodbye and the hang-up, with pings on the way), stops the server, and
// replays the conversation from the cassette.
func TestElevenLabsCassette(t *testing.T) {
	var peer *elevenpeer.Server
	adaptertest.RecordReplayOn(t, func(t *testing.T, n *adaptertest.MemNet) voicetest.Agent {
		peer = elevenpeer.New(t, elevenpeer.Config{
			FirstMessage: "Welcome to the bistro",
			Turns:        []elevenpeer.Turn{{Reply: "Booked: {heard}"}, {Reply: "Goodbye"}},
			HangUpAfter:  2,
			PingInterval: 100 * time.Millisecond,
			Listener:     n.Listen(),
		})
		a := elevenAgent(peer)
		a.NetDial = n.Dial
		return a
	}, voicetest.Config{
		UserVoice: fixtures.FakeTTS(),
		Judge:     judges.All(judges.Says("Booked: A table for two please"), judges.HungUp()),
		Script: []voicetest.Step{
			voicetest.AgentTurn(),
			voicetest.UserSays("A table for two please"),
			voicetest.AgentTurn(),
			voicetest.UserSays("Thanks"),
			voicetest.AgentTurn(),
			voicetest.Verdict(),
		},
	})
	if n := len(peer.Conversations()); n != 1 {
		t.Errorf("the server saw %d conversations, want the recorded one only", n)
	}
}
