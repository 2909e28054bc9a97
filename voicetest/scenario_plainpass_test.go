package voicetest_test

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/voicetest"
)

// passingScenario runs a one-turn scenario that passes, as a test helper:
// testing names the line that called it.
func passingScenario(t *testing.T, name string) {
	t.Helper()
	res := voicetest.Scenario(t, voicetest.Config{Name: name, // not the line named
		Golden: voicetest.GoldenOptions{Disable: true}, Agent: staleEndAgent{},
		Script: []voicetest.Step{voicetest.UserSays("one"), voicetest.AgentTurn()},
	})
	if !res.Success {
		t.Fatal(res.Err)
	}
}

// TestPassedLineIsAttributedToTheTest: the line a passing scenario logs
// names the test's line that called Scenario, and, through a helper that
// calls t.Helper, the line that called the helper, as testing names the
// line of a t.Log in a helper: Scenario logs it itself for a plain pass,
// and through report otherwise (here: with skipped steps), both marked
// helpers. Checked in a child test process under -test.v.
func TestPassedLineIsAttributedToTheTest(t *testing.T) {
	if os.Getenv("VOICETEST_PASSED_CHILD") == "1" {
		res := voicetest.Scenario(t, voicetest.Config{Name: "direct", // line D
			Golden: voicetest.GoldenOptions{Disable: true}, Agent: staleEndAgent{},
			Script: []voicetest.Step{voicetest.UserSays("one"), voicetest.AgentTurn()},
		})
		if !res.Success {
			t.Fatal(res.Err)
		}
		passingScenario(t, "helper")                                  // line H
		res = voicetest.Scenario(t, voicetest.Config{Name: "skipped", // line S
			Golden: voicetest.GoldenOptions{Disable: true}, Agent: staleEndAgent{},
			Script: []voicetest.Step{voicetest.UserSays("one"), voicetest.AgentTurn(),
				voicetest.Succeed("enough"), voicetest.UserSays("two")},
		})
		if !res.Success || len(res.SkippedSteps) == 0 {
			t.Fatalf("skipped: %v, skipped steps %q", res.Err, res.SkippedSteps)
		}
		return
	}
	t.Parallel() // waits on a child process, which runs the branch above alone
	src, err := os.ReadFile("scenario_plainpass_test.go")
	if err != nil {
		t.Fatal(err)
	}
	lineOf := func(mark string) int {
		for i, l := range strings.Split(string(src), "\n") {
			if strings.HasSuffix(l, "// "+mark) {
				return i + 1
			}
		}
		t.Fatalf("no line marked %q", mark)
		return 0
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPassedLineIsAttributedToTheTest$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "VOICETEST_PASSED_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	for _, want := range []struct {
		name string
		mark string
	}{{"direct", "line D"}, {"helper", "line H"}, {"skipped", "line S"}} {
		re := regexp.MustCompile(`(?m)^\s+(\S+): voicetest: "` + want.name + `" passed: `)
		m := re.FindSubmatch(out)
		if m == nil {
			t.Errorf("no passed line for %q in the output:\n%s", want.name, out)
			continue
		}
		if got, wantLoc := string(m[1]), "scenario_plainpass_test.go:"+strconv.Itoa(lineOf(want.mark)); got != wantLoc {
			t.Errorf("%q: the passed line names %s, want %s (%s)", want.name, got, wantLoc, want.mark)
		}
	}
}
