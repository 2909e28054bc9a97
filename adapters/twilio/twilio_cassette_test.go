package twilio_test

import (
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/twilio"
	"github.com/voicetest-go/voicetest/internal/peers/twiliobot"
	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/voicetest"
)

// TestTwilioCassette records a call with the loopback bot (a barge-in on
// its greeting, which it answers with clear; a reply; DTMF; a goodbye and
// the bot's hang-up), stops the bot, and replays the call from the
// cassette: the same transcript, timeline and verdict.
func TestTwilioCassette(t *testing.T) {
	var bot *twiliobot.Server
	rec, _ := adaptertest.RecordReplayOn(t, func(t *testing.T, n *adaptertest.MemNet) voicetest.Agent {
		bot = twiliobot.New(t, twiliobot.Config{Greeting: 2 * time.Second, HangUpAfter: 3, ReplyDuration: 300 * time.Millisecond, Listener: n.Listen()})
		a := twilio.New(bot.URL)
		a.NetDial = n.Dial
		return a
	}, voicetest.Config{
		UserVoice: adaptertest.ToneTTS{},
		Judge:     judges.All(judges.HungUp(), judges.InterruptionHandled(time.Second), judges.Turns(2, 2)),
		Script: []voicetest.Step{
			voicetest.Interrupt("wait", voicetest.After(500*time.Millisecond)),
			voicetest.AgentTurn(),
			voicetest.DTMF("12#"),
			voicetest.AgentTurn(),
			voicetest.UserSays("bye"),
			voicetest.AgentTurn(),
			voicetest.Verdict(),
		},
	})
	if rec.Verdict == nil || len(rec.Passed) != 3 {
		t.Errorf("recorded verdict %v: want three criteria passed", rec.Verdict)
	}
	if calls := bot.Calls(); len(calls) != 1 || calls[0].Clears != 1 || calls[0].DTMF != "12#" {
		t.Errorf("the bot saw %d calls (%+v); want the recorded one only, with a clear and the DTMF", len(calls), calls)
	}
}
