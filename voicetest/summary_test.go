package voicetest_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSuiteSummary runs a tiny test binary whose TestMain calls
// voicetest.Main (internal/summarytest) and checks the summary it prints
// after its tests: with -test.v, with -voicetest.summary, and not at all
// without either.
func TestSuiteSummary(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH (Debian package golang-go); it builds the test binary")
	}
	if testing.Short() {
		t.Skip("builds a test binary")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "summarytest.test")
	// -ldflags=-w: no DWARF debug information, which nothing here reads;
	// linking without it takes about a third less CPU.
	build := exec.CommandContext(ctx, goTool, "test", "-c", "-ldflags=-w", "-o", bin, "./internal/summarytest")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the test binary: %v\n%s", err, out)
	}
	tmp := t.TempDir() // artifacts of the failing scenario go here
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), "VOICETEST_SUMMARY_CHILD=1", "TMPDIR="+tmp, "VOICETEST_SUMMARY=")
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
		"  talk-over: 0 (0 by the user, 0 by the agent), 0ms in all; dead air 1700ms; 0 unfilled gaps; longest pause 700ms (TestFailsVerdict, turn 1)\n",
		"  FAIL TestFailsVerdict (\"rude agent\"): ",
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
		if i, j := strings.Index(out, "--- FAIL: TestFailsVerdict"), strings.Index(out, "voicetest summary:"); i < 0 || j < i {
			t.Errorf("with %v the summary is not after the tests:\n%s", args, out)
		}
	}
	if out := run(); strings.Contains(out, "voicetest summary") {
		t.Errorf("summary printed without -v or -voicetest.summary:\n%s", out)
	}
}
