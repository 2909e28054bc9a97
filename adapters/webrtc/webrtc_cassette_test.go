package webrtc_test

import (
	"testing"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/internal/peers/webrtcpeer"
	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// TestWebRTCCassette records a call with the loopback WebRTC bot (RTVI
// on its data channel; two replies, then the bot leaves) on virtual time
// (the bot and the network end with the recording's bubble), and replays
// the call from the cassette: the same transcript, timeline and verdict,
// with no peer connection at all.
func TestWebRTCCassette(t *testing.T) {
	var bot *webrtcpeer.Server
	rec, _ := adaptertest.RecordReplayOn(t, func(t *testing.T, mem *adaptertest.MemNet) voicetest.Agent {
		n := newNetwork(t, mem)
		bot = n.bot(t, webrtcpeer.Config{RTVI: true, HangUpAfter: 2,
			Turns: []webrtcpeer.Turn{{Reply: "Seven it is, for {heard}"}, {Reply: "Goodbye."}}})
		a := n.agent(bot.URL)
		a.RTVI = true
		return a
	}, voicetest.Config{
		UserVoice: fixtures.FakeTTS(),
		Judge:     judges.All(judges.Says("Seven it is, for two people"), judges.HungUp(), judges.Turns(2, 2)),
		Script: []voicetest.Step{
			voicetest.UserSays("two people"),
			voicetest.AgentTurn(),
			voicetest.UserSays("thanks"),
			voicetest.AgentTurn(),
			voicetest.Verdict(),
		},
	})
	if rec.Verdict == nil || len(rec.Passed) != 3 {
		t.Errorf("recorded verdict %v: want three criteria passed", rec.Verdict)
	}
	if n := len(bot.Calls()); n != 1 {
		t.Errorf("the bot saw %d calls; want the recorded one only", n)
	}
}
