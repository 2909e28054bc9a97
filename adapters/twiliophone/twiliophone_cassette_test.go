package twiliophone_test

import (
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/internal/peers/twiliobot"
	"github.com/voicetest-go/voicetest/internal/peers/twiliocarrier"
	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// TestPhoneCassette records a phone call placed through the loopback
// carrier (a reply, DTMF, a goodbye and the agent's hang-up), stops the
// carrier, and replays the call from the cassette: the same transcript,
// timeline and verdict, with no number dialled.
func TestPhoneCassette(t *testing.T) {
	var carrier *twiliocarrier.Server
	rec, _ := adaptertest.RecordReplayOn(t, func(t *testing.T, n *adaptertest.MemNet) voicetest.Agent {
		carrier = line(t, twiliobot.Config{HangUpAfter: 2, ReplyDuration: 300 * time.Millisecond}, twiliocarrier.Config{}, n)
		a := dialer(carrier, twiliocarrier.DefaultAuthToken)
		a.Listener, a.HTTPClient = n.Listen(), n.HTTPClient()
		return a
	}, voicetest.Config{
		UserVoice: fixtures.FakeTTS(),
		Judge:     judges.All(judges.HungUp(), judges.Turns(2, 2)),
		Script: []voicetest.Step{
			voicetest.UserSays("Hello?"),
			voicetest.AgentTurn(),
			voicetest.UserSays("bye"),
			voicetest.AgentTurn(),
			voicetest.Verdict(),
		},
	})
	if rec.Verdict == nil || len(rec.Passed) != 2 {
		t.Errorf("recorded verdict %v: want two criteria passed", rec.Verdict)
	}
	if calls := carrier.Calls(); len(calls) != 1 {
		t.Errorf("the carrier saw %d calls; want the recorded one only", len(calls))
	}
}
