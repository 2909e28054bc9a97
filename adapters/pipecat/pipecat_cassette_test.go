package pipecat_test

import (
	"testing"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/pipecat"
	"github.com/voicetest-go/voicetest/internal/peers/pipecatpeer"
	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// TestPipecatCassette records a call with the loopback bot, for each
// serializer (two replies and the bot's hang-up), stops the bot, and
// replays the call from the cassette: the same transcript, timeline and
// verdict, with the bot gone.
func TestPipecatCassette(t *testing.T) {
	for _, tc := range []struct {
		name string
		ser  pipecat.Serializer
	}{{"protobuf", pipecat.Protobuf}, {"twilio", pipecat.Twilio}} {
		t.Run(tc.name, func(t *testing.T) {
			var bot *pipecatpeer.Server
			rec, _ := adaptertest.RecordReplayOn(t, func(t *testing.T, n *adaptertest.MemNet) voicetest.Agent {
				bot = pipecatpeer.New(t, pipecatpeer.Config{Serializer: pipecatpeer.Serializer(tc.ser), RTVI: true, HangUpAfter: 2,
					Turns: []pipecatpeer.Turn{{Reply: "Sure, {heard}"}, {Reply: "Goodbye."}}, Listener: n.Listen()})
				a := pipecat.New(bot.URL, tc.ser)
				a.RTVI = true
				a.NetDial = n.Dial
				return a
			}, voicetest.Config{
				UserVoice: fixtures.FakeTTS(),
				Judge:     judges.All(judges.HungUp(), judges.Says("Sure, two at seven."), judges.Turns(2, 2)),
				Script: []voicetest.Step{
					voicetest.UserSays("two at seven."),
					voicetest.AgentTurn(),
					voicetest.UserSays("thanks."),
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
		})
	}
}
