package adaptertest

import (
	"slices"
	"testing"

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
// criterion, the same ending, and a timeline that matches the recorded one
// as a remote agent's golden file does: the same events in the same order,
// times within tolerance. It returns both results.
func RecordReplay(t *testing.T, agent voicetest.Agent, stop func(), cfg voicetest.Config) (rec, rep *voicetest.Result) {
	t.Helper()
	dir := t.TempDir()
	golden := t.TempDir()
	// The recording is compared with the replay here, as a golden file
	// (with cfg.Golden's options, such as Ignore), not with files on disk.
	opts := cfg.Golden
	opts.Disable = false
	cfg.Golden.Disable = true
	scenario := func(t *testing.T, mode cache.Mode) *voicetest.Result {
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
	t.Run("record", func(t *testing.T) {
		rec = scenario(t, cache.Record)
		if err := rec.WriteGolden(golden, opts); err != nil {
			t.Fatal(err)
		}
	})
	if rec == nil {
		t.FailNow()
	}
	stop()
	t.Run("replay", func(t *testing.T) {
		rep = scenario(t, cache.Replay)
	})
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
	opts.Match = voicetest.GoldenTolerant
	if err := rep.CompareGolden(golden, opts); err != nil {
		t.Errorf("the replayed timeline does not match the recorded one within tolerance: %v\nreplayed:\n%s\nrecorded:\n%s", err, rep.TimelineText(), rec.TimelineText())
	}
	return rec, rep
}

// verdict lists a judgment's criteria with their status.
func verdict(j *voicetest.Judgment) []string {
	var out []string
	for _, c := range j.Criteria {
		out = append(out, c.Criterion+"="+string(c.Status))
	}
	return out
}
