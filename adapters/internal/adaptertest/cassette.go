package adaptertest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/cassette"
)

// RecordReplay records the scenario cfg against agent, a wire adapter
// talking to its loopback peer, into a cassette in a temporary directory
// (subtest "record", on the real clock); calls stop, which must take the
// peer down; then replays the cassette with the same adapter (subtest
// "replay", on virtual time), whose dialling would now fail. It fails the
// test unless both runs succeed with the same transcript (turns, roles,
// texts, audio-only and interrupted marks), the same verdict, criterion by
// criterion, the same ending, and the same timeline (see sameTimeline),
// leaving out the event types in cfg.Golden.Ignore. Golden files are not
// compared. It returns both results.
func RecordReplay(t *testing.T, agent voicetest.Agent, stop func(), cfg voicetest.Config) (rec, rep *voicetest.Result) {
	t.Helper()
	return recordReplay(t, cfg, func(t *testing.T, scenario func(*testing.T, voicetest.Agent, cache.Mode) *voicetest.Result) (*voicetest.Result, voicetest.Agent) {
		return scenario(t, agent, cache.Record), agent
	}, stop)
}

// RecordReplayOn is RecordReplay with the recording on virtual time: the
// subtest "record" runs in a testing/synctest bubble, where start serves
// the loopback peer on an in-memory network (MemNet) and returns an agent
// that reaches it through the network. The peer and the network end with
// the bubble, before the replay, whose dialling would now fail. The
// comparison is RecordReplay's.
func RecordReplayOn(t *testing.T, start func(t *testing.T, n *MemNet) voicetest.Agent, cfg voicetest.Config) (rec, rep *voicetest.Result) {
	t.Helper()
	return recordReplay(t, cfg, func(t *testing.T, scenario func(*testing.T, voicetest.Agent, cache.Mode) *voicetest.Result) (res *voicetest.Result, agent voicetest.Agent) {
		synctest.Test(t, func(t *testing.T) {
			agent = start(t, NewMemNet(t))
			res = scenario(t, agent, cache.Record)
		})
		return res, agent
	}, func() {})
}

// recordReplay is RecordReplay, with record making the recording (in the
// subtest "record") and returning the agent the replay wraps.
func recordReplay(t *testing.T, cfg voicetest.Config, record func(*testing.T, func(*testing.T, voicetest.Agent, cache.Mode) *voicetest.Result) (*voicetest.Result, voicetest.Agent), stop func()) (rec, rep *voicetest.Result) {
	t.Helper()
	dir := t.TempDir()
	ignore := cfg.Golden.Ignore
	cfg.Golden = voicetest.GoldenOptions{Disable: true}
	scenario := func(t *testing.T, agent voicetest.Agent, mode cache.Mode) *voicetest.Result {
		t.Helper()
		a := cassette.New(t, agent, cassette.WithDir(dir), cassette.WithName("conversation"), cassette.WithMode(mode))
		if a.Replaying() != (mode == cache.Replay) {
			t.Fatalf("mode %s: Replaying() = %v", mode, a.Replaying())
		}
		c := cfg
		c.Agent = a
		res := voicetest.Scenario(t, c)
		if !res.Success {
			t.Fatalf("%s: scenario failed: %v\n%s", mode, res.Err, res.TimelineText())
		}
		return res
	}
	var agent voicetest.Agent
	t.Run("record", func(t *testing.T) { rec, agent = record(t, scenario) })
	if rec == nil {
		t.FailNow()
	}
	stop()
	t.Run("replay", func(t *testing.T) { rep = scenario(t, agent, cache.Replay) })
	if rep == nil {
		t.FailNow()
	}
	type line struct {
		Turn                   int
		Role                   voicetest.Role
		Text                   string
		AudioOnly, Interrupted bool
	}
	lines := func(res *voicetest.Result) []line {
		var out []line
		for _, m := range res.Transcript {
			out = append(out, line{Turn: m.Turn, Role: m.Role, Text: m.Text, AudioOnly: m.AudioOnly, Interrupted: m.Interrupted})
		}
		return out
	}
	if got, want := lines(rep), lines(rec); !slices.Equal(got, want) {
		t.Errorf("replayed transcript:\n%s\nrecorded:\n%s", rep.TranscriptText(), rec.TranscriptText())
	}
	if rep.Status != rec.Status || rep.Ended != rec.Ended || rep.Turns != rec.Turns {
		t.Errorf("replay: status %s, ended %q, %d turns; recorded: %s, %q, %d", rep.Status, rep.Ended, rep.Turns, rec.Status, rec.Ended, rec.Turns)
	}
	if (rep.Verdict == nil) != (rec.Verdict == nil) {
		t.Errorf("replay verdict %v, recorded %v", rep.Verdict, rec.Verdict)
	} else if rep.Verdict != nil {
		if got, want := verdict(rep.Verdict), verdict(rec.Verdict); !slices.Equal(got, want) {
			t.Errorf("replay verdict %q, recorded %q", got, want)
		}
	}
	if err := sameTimeline(rec.Timeline, rep.Timeline, ignore); err != nil {
		t.Errorf("the replayed timeline does not match the recorded one: %v\nreplayed:\n%s\nrecorded:\n%s", err, rep.TimelineText(), rec.TimelineText())
	}
	return rec, rep
}

// Timeline tolerance of a replay against its recording: the replay runs
// on virtual time, where the runner itself takes no time, so its events
// come a little earlier than they did live.
const (
	replayTolerance    = 250 * time.Millisecond
	replayRelTolerance = 0.02
	replaySameInstant  = 5 * time.Millisecond
)

// sameTimeline reports how the replayed timeline differs from the recorded
// one, leaving out the event types in ignore: every event must be there,
// in the same turn with the same text, payload and tool call, and in the
// same order, except that events less than replaySameInstant apart may
// come in either order (they crossed on the wire live, microseconds
// apart, and on virtual time the runner's own steps take no time); so an
// event that came within replaySameInstant of the user's start of a turn
// may be in that turn or the one before.
//
// Times are compared as the cassette promises them (voicetest/cassette:
// the agent's events come at their recorded times after the caller's call
// they followed), not from the start of the call:
//
//   - an agent event must come as long after the runner's own event
//     before it (its anchor: the latest user_*, silence or sleep event
//     recorded before it) as it did live, within replayTolerance plus
//     replayRelTolerance of its time; one recorded while the user spoke
//     (its anchor the user's start of speech) followed one of the
//     utterance's frames, not on the timeline, which live went out late
//     by up to how much longer the utterance took live than on replay:
//     it may come that much earlier too;
//   - the runner's own events (the simulated caller's speech, waits and
//     hang-up) are the runner's, timed by it, not replayed: live, its
//     steps take time, and more under load (an utterance sent in real
//     time was seen to end 0.26-0.91 s after its length at load ~30, the
//     SDK's pacing and the scheduler late), on virtual time none. So each
//     may come any time earlier than live after the runner's own event
//     before it, but not later than live by more than the tolerance; it
//     keeps its order among the runner's own events, and may come ahead
//     of an agent event recorded before it by at most the tolerance (the
//     runner still waited for what the agent did). An agent event never
//     comes ahead of an event recorded before it.
//
// A check of the times from the start of the call (as until lk9) added up
// the live runner's lateness of every turn before, which no replay can
// reproduce and the cassette does not record: TestLiveKitCassette failed
// so under load (the user's end of speech 0.39-0.83 s off, its start of a
// turn 0.91 s off, with every agent event on time after them).
func sameTimeline(rec, rep []voicetest.Event, ignore []voicetest.EventType) error {
	type key struct {
		Turn       int
		Type       voicetest.EventType
		Text, Data string
		Tool       string
	}
	keyOf := func(e voicetest.Event) key {
		k := key{Turn: e.Turn, Type: e.Type, Text: e.Text, Data: string(e.Data)}
		if tc := e.Tool; tc != nil {
			k.Tool = fmt.Sprintf("%s %s %s %s %v", tc.ID, tc.Name, tc.Arguments, tc.Result, tc.IsError)
		}
		return k
	}
	keep := func(evs []voicetest.Event) []voicetest.Event {
		var out []voicetest.Event
		for _, e := range evs {
			if !slices.Contains(ignore, e.Type) {
				out = append(out, e)
			}
		}
		return out
	}
	rec, rep = keep(rec), keep(rep)
	if len(rec) != len(rep) {
		return fmt.Errorf("%d events, recorded %d", len(rep), len(rec))
	}
	// sameTurn reports whether an event recorded as want may be got's:
	// in the same turn, or in the turn next to it when want was recorded
	// within replaySameInstant of the user's start of the later of the
	// two (an agent event that crossed that start on the wire belongs to
	// whichever turn the runner saw it in).
	sameTurn := func(got, want voicetest.Event) bool {
		if got.Turn == want.Turn {
			return true
		}
		if d := got.Turn - want.Turn; d != 1 && d != -1 {
			return false
		}
		for _, e := range rec {
			if e.Type == voicetest.EventUserStartSpeaking && e.Turn == max(got.Turn, want.Turn) &&
				e.At-want.At <= replaySameInstant && want.At-e.At <= replaySameInstant {
				return true
			}
		}
		return false
	}
	// lag is, per turn, how much longer the user's utterance took live
	// than on replay: an agent event recorded while the user spoke came
	// after one of the utterance's frames, which live went out up to that
	// much later than on replay (the frame is not on the timeline).
	utterance := func(evs []voicetest.Event, turn int) (d time.Duration, ok bool) {
		var start time.Duration
		var started bool
		for _, e := range evs {
			switch {
			case e.Turn != turn:
			case e.Type == voicetest.EventUserStartSpeaking:
				start, started = e.At, true
			case e.Type == voicetest.EventUserStopSpeaking && started:
				return e.At - start, true
			}
		}
		return 0, false
	}
	lag := func(turn int) time.Duration {
		r, ok1 := utterance(rec, turn)
		p, ok2 := utterance(rep, turn)
		if !ok1 || !ok2 {
			return 0
		}
		return max(r-p, 0)
	}
	used := make([]bool, len(rep))
	// last is the latest replay time of the events matched so far,
	// lastOwn that of the runner's own among them and lastAgent that of
	// the agent's; anchorRec and anchorRep are the recorded and replayed
	// times of the runner's own event recorded last (0 before the first).
	last, lastOwn, lastAgent := time.Duration(-1<<62), time.Duration(-1<<62), time.Duration(-1<<62)
	var anchorRec, anchorRep, early time.Duration
	anchor := "start of the call"
	for i, want := range rec {
		found := -1
		for j, got := range rep {
			kg, kw := keyOf(got), keyOf(want)
			kg.Turn, kw.Turn = 0, 0
			if used[j] || kg != kw || !sameTurn(got, want) {
				continue
			}
			found = j
			break
		}
		if found < 0 {
			return fmt.Errorf("recorded event %d (%s turn %d %q at %v) is not in the replay", i+1, want.Type, want.Turn, want.Text, want.At)
		}
		used[found] = true
		got := rep[found]
		tol := replayTolerance + time.Duration(replayRelTolerance*float64(want.At))
		after, recAfter := got.At-anchorRep, want.At-anchorRec
		own := runnersOwn(want.Type)
		switch d := after - recAfter; {
		case d > tol || (!own && d < -tol-early):
			return fmt.Errorf("event %s turn %d %q: replayed at %v, recorded at %v: %v after the %s, recorded %v after it (tolerance %v)",
				want.Type, want.Turn, want.Text, got.At, want.At, after, anchor, recAfter, tol)
		case own && got.At < lastAgent-tol:
			return fmt.Errorf("event %s turn %d %q replayed at %v, %v ahead of an agent event recorded before it (at %v; tolerance %v)",
				want.Type, want.Turn, want.Text, got.At, lastAgent-got.At, lastAgent, tol)
		}
		// The runner's own events keep their order among themselves, but
		// may come ahead of an agent event recorded just before them
		// (bounded by tol, checked above). An agent event may not come
		// ahead of anything.
		before := last
		if own {
			before = lastOwn
		}
		if got.At < before-replaySameInstant {
			return fmt.Errorf("event %s turn %d %q replayed at %v, before an event recorded earlier (at %v)", want.Type, want.Turn, want.Text, got.At, before)
		}
		last = max(last, got.At)
		if own {
			lastOwn = max(lastOwn, got.At)
			anchorRec, anchorRep = want.At, got.At
			anchor = fmt.Sprintf("%s of turn %d", want.Type, want.Turn)
			early = 0
			if want.Type == voicetest.EventUserStartSpeaking {
				early = lag(want.Turn)
			}
		} else {
			lastAgent = max(lastAgent, got.At)
		}
	}
	return nil
}

// runnersOwn reports whether events of type typ are the runner's own
// (the simulated caller's speech, waits and hang-up), timed by the runner
// rather than replayed from the agent's recorded messages. The agent's
// transcription of the user (user_transcript) is the agent's.
func runnersOwn(typ voicetest.EventType) bool {
	switch typ {
	case voicetest.EventSilence, voicetest.EventSleep:
		return true
	case voicetest.EventUserTranscript:
		return false
	}
	return strings.HasPrefix(string(typ), "user_")
}

// verdict lists a judgment's criteria with their status.
func verdict(j *voicetest.Judgment) []string {
	var out []string
	for _, c := range j.Criteria {
		out = append(out, c.Criterion+"="+string(c.Status))
	}
	return out
}
