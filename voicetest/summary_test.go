package voicetest_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestSuiteSummary runs this test binary again as a suite whose TestMain
// calls voicetest.Main (TestMain, with VOICETEST_SUMMARY_CHILD=1), running
// only the TestSummaryChild tests, and checks the summary it prints after
// its tests: with -test.v, with -voicetest.summary, and not at all without
// either. (It built a test binary of its own, internal/summarytest, with
// the go command: 2–3 s of CPU for the same suite.)
func TestSuiteSummary(t *testing.T) {
	t.Parallel()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	tmp := t.TempDir() // artifacts of the failing scenario go here
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, bin, append([]string{"-test.run=^TestSummaryChild"}, args...)...)
		cmd.Env = append(os.Environ(), summaryChildEnv+"=1", "TMPDIR="+tmp, "VOICETEST_SUMMARY=")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		// One scenario fails on purpose, so the binary exits 1.
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("test binary %v: %v, want exit status 1\n%s", args, err, out.String())
		}
		return out.String()
	}
	want := []string{
		"voicetest summary: 4 scenarios, 3 passed, 1 failed, 0 inconclusive (pass rate 75.0%)\n",
		"  user turns: 5; conversation time: ",
		// 300, 500, 100, 100, 700 ms
		"  response latency over 5 turns: p50 300ms, p90 700ms, p95 700ms, p99 700ms, max 700ms, mean 340ms\n",
		"  first audio after the user stopped, over 5 turns: p50 300ms, p95 700ms, max 700ms\n",
		// Each reply follows the user's words by its latency.
		"  talk-over: 0 (0 by the user, 0 by the agent), 0ms in all; dead air 1700ms; 0 unfilled gaps; longest pause 700ms (TestSummaryChildFailsVerdict, turn 1)\n",
		"  FAIL TestSummaryChildFailsVerdict (\"rude agent\"): ",
		"criterion \"the agent is polite\" failed: it said no\n",
	}
	for _, args := range [][]string{{"-test.v"}, {"-voicetest.summary"}} {
		out := run(args...)
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("with %v the output lacks %q:\n%s", args, w, out)
			}
		}
		// The summary comes after the tests.
		if i, j := strings.Index(out, "--- FAIL: TestSummaryChildFailsVerdict"), strings.Index(out, "voicetest summary:"); i < 0 || j < i {
			t.Errorf("with %v the summary is not after the tests:\n%s", args, out)
		}
	}
	if out := run(); strings.Contains(out, "voicetest summary") {
		t.Errorf("summary printed without -v or -voicetest.summary:\n%s", out)
	}
}
