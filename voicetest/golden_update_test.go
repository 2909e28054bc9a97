package voicetest_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// Issue 14, items 3 and 4: -update writes goldens only from a run that
// otherwise passed, and leaves a golden file that already matches alone.
// These tests set goldie's -update flag, so they do not run in parallel.

// A run that fails for another reason (here a Check at step 4) writes no
// golden file under -update, and its failure says so.
func TestGoldenUpdateOnlyFromAPassingRun(t *testing.T) {
	dir := t.TempDir()
	goldens := filepath.Join(dir, "TestGoldenUpdateOnlyFromAPassingRun")
	run := func(check error, last string) (*voicetest.Result, *fakeTB) {
		var res *voicetest.Result
		var ftb *fakeTB
		synctest.Test(t, func(t *testing.T) {
			ftb = newFakeTB(t)
			res = voicetest.Scenario(ftb, voicetest.Config{
				Agent:     fixtures.ScriptedAgent(fixtures.Reply{Text: "hello there", Latency: 100 * time.Millisecond}, fixtures.Reply{Text: last}),
				UserVoice: &toneTTS{}, Golden: voicetest.GoldenOptions{Dir: dir},
				Script: []voicetest.Step{
					voicetest.UserSays("hi"), voicetest.AgentTurn(),
					voicetest.UserSays("more"),
					voicetest.Check(func(*voicetest.State) error { return check }),
					voicetest.AgentTurn(),
				},
			})
		})
		return res, ftb
	}
	withFlags(t, map[string]string{"update": "true"}, func() {
		res, ftb := run(errors.New("the booking is missing"), "again")
		if res.Success {
			t.Fatal("the failing check passed")
		}
		for _, f := range []string{voicetest.GoldenTranscriptFile, voicetest.GoldenTimelineFile} {
			if _, err := os.Stat(filepath.Join(goldens, f)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("-update wrote %s from a failed run (%v)", f, err)
			}
		}
		msg := ftb.errorText()
		if !errors.Is(res.GoldenErr, voicetest.ErrGoldenNotUpdated) ||
			!strings.Contains(msg, "goldens not updated: the scenario failed: step 4 Check(): the booking is missing") {
			t.Errorf("GoldenErr %v; report:\n%s", res.GoldenErr, msg)
		}

		// The same scenario passing writes them.
		if res, ftb := run(nil, "again"); !res.Success || len(ftb.errs) != 0 {
			t.Fatalf("-update of a passing run: %v %v", res.Err, ftb.errs)
		}
	})
	b, err := os.ReadFile(filepath.Join(goldens, voicetest.GoldenTranscriptFile))
	if err != nil || string(b) != "user: hi\nagent: hello there\nuser: more\nagent: again\n" {
		t.Fatalf("after a passing -update: %q, %v", b, err)
	}

	// Without -update, a failing run that also differs from its goldens
	// (the agent's last line changed): the mismatch must not offer
	// -update, which would refuse, but say to fix the failure first.
	withFlags(t, map[string]string{"update": "false", "clean": "false"}, func() {
		res, ftb := run(errors.New("the booking is missing"), "once more")
		msg := ftb.errorText()
		if !errors.Is(res.GoldenErr, voicetest.ErrGoldenMismatch) || strings.Contains(msg, "update the golden file") ||
			!strings.Contains(msg, "the scenario also failed for another reason, which may be what changed it: fix that first") {
			t.Errorf("a failed run that differs from its goldens: GoldenErr %v; report:\n%s", res.GoldenErr, msg)
		}
	})
	// A missing golden file of a failed run says the same.
	if err := os.Remove(filepath.Join(goldens, voicetest.GoldenTimelineFile)); err != nil {
		t.Fatal(err)
	}
	withFlags(t, map[string]string{"update": "false", "clean": "false"}, func() {
		res, ftb := run(errors.New("the booking is missing"), "again")
		msg := ftb.errorText()
		if !errors.Is(res.GoldenErr, voicetest.ErrGoldenMissing) ||
			!strings.Contains(msg, "does not exist; the scenario failed, and -update writes no golden file of a failed run: fix that failure first, then create it with: go test") {
			t.Errorf("a failed run whose golden file is missing: GoldenErr %v; report:\n%s", res.GoldenErr, msg)
		}
	})
}

// A golden file that the new run already matches within its tolerance is
// left as it is under -update: reruns of a remote agent do not churn.
func TestGoldenUpdateLeavesAMatchingFileAlone(t *testing.T) {
	dir := t.TempDir()
	opts := voicetest.GoldenOptions{Dir: dir, Match: voicetest.GoldenTolerant}
	run := func(latency time.Duration) *voicetest.Result {
		var res *voicetest.Result
		synctest.Test(t, func(t *testing.T) {
			ftb := newFakeTB(t)
			res = voicetest.Scenario(ftb, voicetest.Config{
				Agent:     fixtures.ScriptedAgent(fixtures.Reply{Text: "hello there", Latency: latency}),
				UserVoice: &toneTTS{}, Golden: opts,
				Script: []voicetest.Step{voicetest.UserSays("hi"), voicetest.AgentTurn()},
			})
			if len(ftb.errs) > 0 {
				t.Errorf("report: %v", ftb.errs)
			}
		})
		return res
	}
	timeline := filepath.Join(dir, "TestGoldenUpdateLeavesAMatchingFileAlone", voicetest.GoldenTimelineFile)
	withFlags(t, map[string]string{"update": "true"}, func() { run(100 * time.Millisecond) })
	first, err := os.ReadFile(timeline)
	if err != nil {
		t.Fatal(err)
	}
	// 3 ms later: within the tolerance, so the file stays byte for byte.
	withFlags(t, map[string]string{"update": "true"}, func() { run(103 * time.Millisecond) })
	if b, _ := os.ReadFile(timeline); string(b) != string(first) {
		t.Errorf("-update rewrote a golden that matched within its tolerance:\n%s\nwas:\n%s", b, first)
	}
	// A second later: outside it, so -update writes the new times.
	withFlags(t, map[string]string{"update": "true"}, func() { run(time.Second + 100*time.Millisecond) })
	if b, _ := os.ReadFile(timeline); string(b) == string(first) || !strings.Contains(string(b), "latency=1100ms") {
		t.Errorf("-update kept a golden the run no longer matches:\n%s", b)
	}
}
