package livekit_test

import (
	"testing"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/livekit"
	"github.com/voicetest-go/voicetest/internal/peers/lkagent"
	"github.com/voicetest-go/voicetest/internal/peers/lkserver"
	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// TestLiveKitCassette records a call through a real livekit-server with
// the Go agent double (two replies, then the agent leaves the room),
// stops the server, and replays the call from the cassette: the same
// transcript, timeline and verdict, with no server and no agent.
//
// The replay's timeline must match the recording's to a few hundred
// milliseconds, so the recording runs beside nothing but TestConformance's
// checks, as it did before the package's conversations ran side by side:
// after TestNodeAgent (nodeDone), and holding quiet alone. Beside
// TestNodeAgent's conversation, at load ~30, 3 of 19 runs recorded the
// user's end of speech 0.4-0.7 s late. (Since lk9 the replay's check
// times each event after the caller's step before it, as the cassette
// promises, so a live runner late under load no longer fails it; the
// scheduling was kept.)
func TestLiveKitCassette(t *testing.T) {
	t.Parallel()
	nodeDone.wait()
	besideQuiet(t, true)
	srv := lkserver.New(t, lkserver.Config{})
	w := lkagent.New(t, lkagent.Config{URL: srv.URL, APIKey: lkserver.DefaultKey, APISecret: lkserver.DefaultSecret, AgentName: "frontdesk",
		HangUpAfter: 2, Turns: []lkagent.Turn{{Reply: "Sure, {heard}"}, {Reply: "Goodbye."}}})
	a := livekit.New(srv.URL, lkserver.DefaultKey, lkserver.DefaultSecret, "frontdesk")
	rec, _ := adaptertest.RecordReplay(t, a, srv.Close, voicetest.Config{
		UserVoice: fixtures.FakeTTS(),
		Judge:     judges.All(judges.Says("Sure, a table for two"), judges.HungUp(), judges.Turns(2, 2)),
		Script: []voicetest.Step{
			voicetest.UserSays("a table for two"),
			voicetest.AgentTurn(),
			voicetest.UserSays("thanks"),
			voicetest.AgentTurn(),
			// The double says it is listening again when its goodbye has
			// played, then leaves the room: its turn may end before its
			// leaving arrives, which the verdict must wait for.
			voicetest.ExpectHangUp(),
			voicetest.Verdict(),
		},
	})
	if rec.Verdict == nil || len(rec.Passed) != 3 {
		t.Errorf("recorded verdict %v: want three criteria passed", rec.Verdict)
	}
	if n := len(w.Jobs()); n != 1 {
		t.Errorf("the agent double ran %d jobs; want the recorded call only", n)
	}
}
