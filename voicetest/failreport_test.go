package voicetest_test

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// Issue 14, item 7: failures read well.

// silentSTT hears nothing in any audio.
type silentSTT struct{}

func (silentSTT) Transcribe(context.Context, voicetest.TranscriptionRequest) (voicetest.Transcription, error) {
	return voicetest.Transcription{}, nil
}

// A turn where the STT heard nothing says so, not "(silence)"; the rerun
// line names the package.
func TestReportNamesWhatSTTDidNotHearAndThePackage(t *testing.T) {
	var ftb *fakeTB
	var res *voicetest.Result
	synctest.Test(t, func(t *testing.T) {
		ftb = newFakeTB(t)
		res = voicetest.Scenario(ftb, voicetest.Config{
			Golden: voicetest.GoldenOptions{Disable: true},
			Agent:  fixtures.AudioOnlyAgent(fixtures.Reply{Text: "mumble mumble", Latency: 400 * time.Millisecond}), UserVoice: &toneTTS{}, AgentSTT: silentSTT{},
			Script: []voicetest.Step{voicetest.UserSays("hello"), voicetest.AgentTurn(), voicetest.Fail("for the report")},
		})
	})
	if res.Success {
		t.Fatal("the Fail step passed")
	}
	if m := res.Transcript[1]; !m.NothingHeard || m.DisplayText() != "(STT heard nothing)" {
		t.Errorf("agent message %+v shows %q", m, m.DisplayText())
	}
	report := ftb.errorText()
	dir := ""
	if i := strings.Index(report, "artifacts: "); i >= 0 {
		dir = strings.Fields(report[i+len("artifacts: "):])[0]
		t.Cleanup(func() { os.RemoveAll(dir) })
	}
	for _, want := range []string{"agent (latency 400ms): (STT heard nothing)", "rerun: go test ./voicetest -run '^TestReportNamesWhatSTTDidNotHearAndThePackage$' -artifacts"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "(silence)") {
		t.Errorf("report calls unheard speech silence:\n%s", report)
	}
}

// hideVirtual hides an agent's VirtualTimer, so that it runs on the real
// clock, as a remote agent does.
type hideVirtual struct{ voicetest.Agent }

// On the real clock the durations a passing scenario logs are rounded to
// the millisecond.
func TestRealClockDurationsAreRoundedToTheMillisecond(t *testing.T) {
	ftb := newFakeTB(t)
	res := voicetest.Scenario(ftb, voicetest.Config{
		Golden: voicetest.GoldenOptions{Disable: true},
		Agent:  hideVirtual{fixtures.TextAgent(fixtures.Reply{Text: "hi", Latency: 3 * time.Millisecond})},
		Pacing: voicetest.PaceFast, Timeouts: voicetest.Timeouts{TailSilence: 20 * time.Millisecond},
		Script: []voicetest.Step{voicetest.UserSays("hello"), voicetest.AgentTurn()},
	})
	if !res.Success {
		t.Fatal(res.Err)
	}
	passed := ftb.logs[len(ftb.logs)-1]
	m := regexp.MustCompile(`passed: 1 turns, (\S+), latency p50 (\S+) p95 (\S+)$`).FindStringSubmatch(passed)
	if m == nil {
		t.Fatalf("log line %q", passed)
	}
	for _, d := range m[1:] {
		v, err := time.ParseDuration(d)
		if err != nil || v != v.Round(time.Millisecond) {
			t.Errorf("duration %q in %q is not rounded to the millisecond", d, passed)
		}
	}
}

// The run's log lines (here the agent's log line, which the runner
// logs) are the test's: attributed to the line that called Scenario,
// never to the library's files. Checked in a child test process, whose
// output is what a user sees.
func TestLogLinesAreAttributedToTheTest(t *testing.T) {
	if os.Getenv("VOICETEST_LOG_CHILD") == "1" {
		res := voicetest.Scenario(t, voicetest.Config{ // the line the log lines name
			Golden: voicetest.GoldenOptions{Disable: true}, Agent: staleEndAgent{log: "hello from the agent"},
			Script: []voicetest.Step{voicetest.UserSays("one"), voicetest.AgentTurn()},
		})
		if !res.Success {
			t.Fatal(res.Err)
		}
		return
	}
	t.Parallel() // waits on a child process, which runs the branch above alone
	cmd := exec.Command(os.Args[0], "-test.run=^TestLogLinesAreAttributedToTheTest$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "VOICETEST_LOG_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var line string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "hello from the agent") {
			line = strings.TrimSpace(l)
		}
	}
	if !regexp.MustCompile(`^failreport_test\.go:\d+: agent log at 0\.000s: hello from the agent$`).MatchString(line) {
		t.Errorf("log line %q, want it attributed to failreport_test.go; output:\n%s", line, out)
	}
}

// TestAttrsReachGoTestV: under go test -v (and -json, which implies it)
// a scenario's metrics reach the test's output as testing's ATTR lines
// (gotestsum's JUnit properties). Without -v testing prints none, and
// Scenario does not put them together (attrsRecorded). Checked in a
// child test process.
func TestAttrsReachGoTestV(t *testing.T) {
	if os.Getenv("VOICETEST_ATTR_CHILD") == "1" {
		res := voicetest.Scenario(t, voicetest.Config{
			Golden: voicetest.GoldenOptions{Disable: true}, Agent: staleEndAgent{},
			Script: []voicetest.Step{voicetest.UserSays("one"), voicetest.AgentTurn()},
		})
		if !res.Success {
			t.Fatal(res.Err)
		}
		return
	}
	t.Parallel() // waits on child processes, which run the branch above alone
	for _, v := range []string{"-test.v", "-test.v=test2json"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAttrsReachGoTestV$", v, "-test.count=1")
		cmd.Env = append(os.Environ(), "VOICETEST_ATTR_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child %s: %v\n%s", v, err, out)
		}
		for _, want := range []string{"=== ATTR  TestAttrsReachGoTestV voicetest.verdict pass", "=== ATTR  TestAttrsReachGoTestV voicetest.turns 1"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("%s: output lacks %q:\n%s", v, want, out)
			}
		}
	}
}
