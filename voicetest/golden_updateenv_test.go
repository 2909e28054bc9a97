package voicetest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestGoldenTestsPassUnderGoldieUpdate runs this package's golden tests
// again, in a child process, with GOLDIE_UPDATE=1 in the environment, as
// `GOLDIE_UPDATE=1 go test ./...` and cmd/voicetest-update run every
// package of a tree: the tests that check what a comparison reports (a
// missing golden, a mismatch) must set the comparison mode themselves, not
// take the one the command line or the environment chose. The two that
// compare with this package's committed goldens (testdata/golden) are left
// out: under -update the child would write those.
func TestGoldenTestsPassUnderGoldieUpdate(t *testing.T) {
	t.Parallel() // the child is a process of its own: no flag of this one changes
	if os.Getenv("GOLDIE_UPDATE") != "" {
		t.Skip("GOLDIE_UPDATE is set: this is the child run, or a run that is one already")
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=Golden", "-test.skip=^(TestGoldenRichScenario|TestGoldenSubtestNaming)$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GOLDIE_UPDATE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the golden tests under GOLDIE_UPDATE=1: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "PASS") {
		t.Fatalf("the child run printed no PASS:\n%s", out)
	}
}
