package vapi_test

import (
	"testing"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/vapi"
	"github.com/voicetest-go/voicetest/internal/peers/vapipeer"
	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// TestVapiCassette records a call with the loopback Vapi double (a tool
// call with the reply, a second reply, the assistant's hang-up), stops
// the double, and replays the call from the cassette: the same
// transcript, timeline and verdict, with no Vapi to call.
func TestVapiCassette(t *testing.T) {
	rec, _ := adaptertest.RecordReplayOn(t, func(t *testing.T, n *adaptertest.MemNet) voicetest.Agent {
		bot := vapipeer.New(t, vapipeer.Config{HangUpAfter: 2, Turns: []vapipeer.Turn{
			{Reply: "A table for {heard}, booked.", Tool: &vapipeer.Tool{Name: "book_table", Args: map[string]any{"people": 2}}},
			{Reply: "Goodbye."},
		}, Listener: n.Listen()})
		a := vapi.New("vapi-test-key", "asst-1")
		a.BaseURL = bot.URL
		a.NetDial, a.HTTPClient = n.Dial, n.HTTPClient()
		return a
	}, voicetest.Config{
		UserVoice: fixtures.FakeTTS(),
		Judge:     judges.All(judges.ToolCalled("book_table", nil), judges.HungUp(), judges.Turns(2, 2)),
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
}
