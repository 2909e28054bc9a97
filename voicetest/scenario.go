package voicetest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/internal/testlog"
)

// modulePath is this module's import path, whose frames a log line is
// never attributed to.
const modulePath = "github.com/voicetest-go/voicetest"

// Scenario runs the scenario described by cfg as part of the test t and
// reports it there; it returns the Result for further checks.
//
// When t is a *testing.T and cfg.Agent runs in process on virtual time
// (it implements VirtualTimer and reports true, as the fixtures fakes and
// the agents handler.New returns do), the whole conversation runs inside a
// testing/synctest bubble: pauses and timeouts cost no wall time, the
// timeline is identical on every run, and the bubble itself fails the
// test if any goroutine outlives the scenario. Such a scenario must not
// call t.Run or t.Parallel from its steps, and its agent must block only
// on channels and timers. Under a *testing.B, which cannot make a bubble,
// such an agent runs on the runner's virtual Clock when it declares
// Capabilities.SessionClock (see Run). Other agents run on the real
// clock. A test that already runs in a bubble (it called synctest.Test
// itself) runs the scenario in that bubble. In a bubble the runner calls
// synctest.Wait before it looks at the agent's events, so that what
// happens at one virtual instant is handled the same way on every run;
// no other goroutine of the bubble may call synctest.Wait while the
// scenario runs (synctest allows one caller at a time).
//
// Scenario calls t.Helper, logs through t, closes the connection in a
// t.Cleanup even if a step panics, and publishes the verdict and the
// metrics (Result.Attrs: voicetest.verdict, voicetest.turns,
// voicetest.latency_p50_ms, voicetest.talk_over_ms, ...) with t.Attr
// (gotestsum writes them as JUnit properties). When the scenario fails, t.Error reports what failed, the
// transcript with turns and latencies, and where the artifacts are:
// t.ArtifactDir() under go test -artifacts (always written there), else
// a temporary directory kept for the failure. An invalid cfg is t.Fatal.
//
// Unless cfg.Golden.Disable is set, Scenario then compares the transcript
// and the timeline with the golden files
// testdata/golden/<TestName>/<subtest>/.../transcript.golden and
// timeline.golden (see GoldenOptions, Result.GoldenTranscript and
// Result.GoldenTimeline): exactly for a scenario that ran on virtual
// time, within a tolerance otherwise. A missing or different golden file
// fails the scenario (Result.GoldenErr) with the differences, event by
// event and field by field, and the command that updates the files: go
// test with goldie's -update flag (or GOLDIE_UPDATE=1), which writes them
// before comparing (review the diff). -update writes only from a run that
// otherwise passed (a failed run reports "goldens not updated",
// ErrGoldenNotUpdated), and leaves a file the run already matches within
// its tolerance untouched; -update -clean also removes stale ones. Each
// scenario a test runs needs its own Config.Name, which then names a
// further directory. Under a *testing.B nothing is compared.
//
// In a package whose TestMain calls Main, Scenario also records the
// outcome for the suite summary Main prints after the tests.
func Scenario(t testing.TB, cfg Config) *Result {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = t.Name()
	}
	// One allocation holds what the run shares with its hooks and its
	// deferred cleanup (the Config, the Result, the Conns it opened),
	// where closures capturing each would make one apiece.
	s := &scenarioRun{cfg: cfg}
	vt := runsOnVirtualTime(cfg.Agent)
	bubbled := inBubble() // (outside a bubble it costs a panic: asked once)
	alreadyBubbled := vt && bubbled
	virtual := alreadyBubbled
	// The run's log lines (the runner's, the adapter's) are the test's,
	// at the line that called Scenario, whichever goroutine logs them.
	// (The line is looked up when the first one is logged.)
	s.loc = testlog.CallStack(0, modulePath)
	stray := ""
	if tt, ok := t.(*testing.T); ok && vt && !alreadyBubbled {
		func() {
			// A callee that never returns (it ignores its context) keeps
			// the bubble from ending after the scenario failed at its
			// bound: synctest panics; say what happened instead.
			defer func() {
				if p := recover(); p != nil {
					msg, ok := strayDeadlock(p, s.res)
					if !ok {
						panic(p)
					}
					stray = msg
				}
			}()
			synctest.Test(tt, func(bt *testing.T) { s.run(bt, bt.Context(), false, true) })
		}()
		virtual = true
	} else {
		// A testing.B (or a TB that is not a *testing.T) cannot make a
		// bubble: an in-process agent runs on a virtual Clock instead.
		s.run(t, t.Context(), vt && !alreadyBubbled, bubbled)
	}
	res, err := s.res, s.err
	if err != nil {
		t.Fatalf("voicetest: invalid scenario %q: %v", cfg.Name, err)
		return nil
	}
	if res == nil {
		// The bubble failed (a deadlock or a panic); testing has reported it.
		res = &Result{Name: cfg.Name, Status: StatusFail,
			Err: errors.New("voicetest: the scenario did not finish: the synctest bubble deadlocked or a step panicked (see the test log)")}
		t.Error(res.Err)
		recordSummary(t, res)
		return res
	}
	if _, bench := t.(*testing.B); !bench {
		// A replayed recording runs on virtual time, but its times are
		// the real clock's: its goldens compare within tolerance.
		exact := virtual && !replaying(cfg.Agent)
		res.virtualTime = exact
		for _, r := range res.Runs {
			r.virtualTime = exact
		}
		if gerr := checkGolden(t, res, cfg.Golden, goldenFlagsFromCommandLine()); gerr != nil {
			res.GoldenErr = gerr
			res.Success, res.Status = false, StatusFail
			if res.Err == nil {
				res.Err = gerr
			}
		}
	}
	if _, bench := t.(*testing.B); !bench {
		recordSummary(t, res)
	}
	if plainPass(res) {
		// What report writes for it, logged from here: testing looks
		// for the line to name through one helper's frame fewer
		// (TestPlainPassLogsWhatReportLogs).
		publishAttrs(t, res)
		t.Log(passedLine(res))
	} else {
		report(t, res)
	}
	if stray != "" {
		t.Error(stray)
	}
	return res
}

// scenarioRun is one call of Scenario: its Config, what the run returned,
// the Conns it opened (in a Result's hooks) and the test's call stack for
// its log lines.
type scenarioRun struct {
	cfg  Config
	res  *Result
	err  error
	open []Conn
	one  [1]Conn // open's room for the one Conn a run most often opens
	loc  *testlog.Stack
}

// run runs the scenario under tb, on the runner's virtual Clock when
// clock is set, inside a synctest bubble when bubble is.
func (s *scenarioRun) run(tb testing.TB, ctx context.Context, clock, bubble bool) {
	s.open = s.one[:0]
	h := hooks{
		logf:    s.loc.Logf(tb),
		opened:  &s.open,
		virtual: clock,
		bubble:  bubble,
	}
	finished := false
	defer func() {
		// A run that returns has closed every Conn it opened (runOnce
		// closes it even if a step panics), so nothing is left for
		// t.Cleanup, which would keep the Conn (and the agent behind
		// it) alive until the test ends: in a benchmark's loop, every
		// iteration's. One that did not return (a panic, or
		// runtime.Goexit, as t.FailNow does, before the runner could
		// close), or that left a callee running, has its Conns closed
		// in a t.Cleanup as ever.
		if finished && !leftRunning(s.res) {
			return
		}
		for _, c := range s.open {
			tb.Cleanup(func() { _ = closeWithin(c, closeWait) })
		}
	}()
	s.res, s.err = runAll(ctx, s.cfg, h)
	finished = true
}

// leftRunning reports whether res, or one of its runs, left a callee
// running (a Close among them, perhaps) at its bound.
func leftRunning(res *Result) bool {
	if res == nil {
		return false
	}
	if len(res.strays) > 0 {
		return true
	}
	for _, r := range res.Runs {
		if len(r.strays) > 0 {
			return true
		}
	}
	return false
}

// inBubble reports whether the caller already runs in a synctest bubble
// (the test called synctest.Test itself): the scenario then runs on that
// bubble's virtual time. synctest.Wait is documented to panic outside a
// bubble; inside one it returns once the bubble's other goroutines are
// blocked, which at the start of a scenario costs nothing.
func inBubble() (in bool) {
	defer func() {
		if recover() != nil {
			in = false
		}
	}()
	synctest.Wait()
	return true
}

func runsOnVirtualTime(a Agent) bool {
	v, ok := a.(VirtualTimer)
	return ok && v.VirtualTime()
}

// artifactsRequested reports whether go test ran with -artifacts.
func artifactsRequested() bool {
	f := flag.Lookup("test.artifacts")
	return f != nil && f.Value.String() == "true"
}

// report publishes res to t.
func report(t testing.TB, res *Result) {
	t.Helper()
	publishAttrs(t, res)
	if res.Runs != nil {
		for _, v := range res.Variants() {
			t.Logf("voicetest: %q A/B %s", res.Name, v)
		}
	}
	// Passing criteria are logged with their evidence, so a CI log shows
	// why every verdict was given; failed and inconclusive ones lead the
	// failure report below.
	for _, c := range res.Passed {
		t.Log(criterionLine("PASS", c))
	}
	for _, s := range res.Sections {
		t.Log(s.Text())
	}
	dir := ""
	if artifactsRequested() {
		dir = artifactDir(t.ArtifactDir(), res.Name, t.Name())
		if err := res.Save(dir); err != nil {
			t.Errorf("voicetest: %v", err)
		}
	}
	if res.Success {
		if len(res.SkippedSteps) > 0 {
			t.Logf("voicetest: %q: %s", res.Name, res.skippedLine())
		}
		t.Log(passedLine(res))
		return
	}
	var b strings.Builder
	b.WriteString(res.report())
	if dir == "" {
		d, err := os.MkdirTemp("", "voicetest-"+safeName(t.Name())+"-")
		if err != nil {
			fmt.Fprintf(&b, "artifacts: not saved: %v\n", err)
		} else if err := res.Save(d); err != nil {
			fmt.Fprintf(&b, "artifacts: %s (incomplete: %v)\n", d, err)
		} else {
			dir = d
		}
	}
	if dir != "" {
		fmt.Fprintf(&b, "artifacts: %s (report.html, conversation.wav, segments/, transcript.txt, timeline.txt, manifest.json)\n", dir)
	}
	fmt.Fprintf(&b, "rerun: go test %s -run '^%s$' -artifacts", packageArg(), runPattern(t.Name()))
	t.Error(b.String())
}

// publishAttrs records res's attributes with t.Attr, where t records them
// (attrsRecorded).
func publishAttrs(t testing.TB, res *Result) {
	if attrsRecorded(t) {
		for _, a := range res.Attrs() {
			t.Attr(a.Key, a.Value)
		}
	}
}

// plainPass reports whether all report would write for res is its
// attributes and the passed line: a passing run with one Result (no A/B
// runs), no passing criteria, no report sections, no skipped steps, and
// no -artifacts to save.
func plainPass(res *Result) bool {
	return res.Success && res.Runs == nil && len(res.Passed) == 0 && len(res.Sections) == 0 &&
		len(res.SkippedSteps) == 0 && !artifactsRequested()
}

// attrsRecorded reports whether t.Attr may record anything: always for a
// TB of the caller's own, and for testing's T, B and F only under -v (or
// -json, which implies it). Without it their Attr only checks the key for
// white space and the value for line breaks, which Result.Attrs never has
// (TestAttrsAreValidTestAttributes), and prints nothing: Scenario then
// does not put the attributes together.
func attrsRecorded(t testing.TB) bool {
	switch t.(type) {
	case *testing.T, *testing.B, *testing.F:
		return !flag.Parsed() || testing.Verbose()
	}
	return true
}

// passedLine is the line a passing scenario logs:
//
//	voicetest: "name" passed: 10 turns, 31s, latency p50 300ms p95 300ms
//
// as fmt.Sprintf("voicetest: %q passed: %d turns, %v, latency p50 %v p95 %v", ...)
// writes it, without fmt (TestPassedLineIsTheSprintfLine).
func passedLine(res *Result) string {
	b := make([]byte, 0, 128)
	b = append(b, "voicetest: "...)
	b = strconv.AppendQuote(b, res.Name)
	b = append(b, " passed: "...)
	b = strconv.AppendInt(b, int64(res.Turns), 10)
	b = append(b, " turns, "...)
	b = append(b, res.Duration.Round(time.Millisecond).String()...)
	b = append(b, ", latency p50 "...)
	b = append(b, res.Latency.P50.Round(time.Millisecond).String()...)
	b = append(b, " p95 "...)
	b = append(b, res.Latency.P95.Round(time.Millisecond).String()...)
	return string(b)
}

// artifactDir picks the directory for a scenario's artifacts inside the
// test's: the test's own for a scenario named after the test, else a
// subdirectory named after the scenario; a scenario already saved there
// (a test that runs several) gets a numbered one.
func artifactDir(base, name, testName string) string {
	dir := base
	if name != testName {
		dir = filepath.Join(base, safeName(name))
	}
	for i := 2; ; i++ {
		if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err != nil {
			return dir
		}
		dir = filepath.Join(base, fmt.Sprintf("%s-%d", safeName(name), i))
	}
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// safeName turns a scenario or test name into one path element: no
// separators or other unsafe characters, at most 60 bytes, and never "",
// "." or ".." (which would name the parent directory, or the directory
// itself, instead of a subdirectory).
func safeName(s string) string {
	s = unsafeChars.ReplaceAllString(s, "_")
	if len(s) > 60 {
		s = s[:60]
	}
	if strings.Trim(s, ".") == "" {
		s = "_" + s
	}
	return s
}

// runPattern turns a test name into a -run pattern matching only it.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return strings.Join(parts, "$/^")
}
