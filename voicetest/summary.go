package voicetest

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// SummaryFlag is the name of the test flag that asks Main for the suite
// summary even without -v: go test -voicetest.summary. It is registered
// only in test binaries.
const SummaryFlag = "voicetest.summary"

// summaryEnv names the environment variable through which Main tells the
// scenarios of its test binary where to record their outcome:
// "<pid>:<directory>". The pid keeps a test binary that a test starts as
// a subprocess (and that inherits the environment) from recording into
// its parent's summary.
const summaryEnv = "VOICETEST_SUMMARY"

func init() {
	if testing.Testing() {
		flag.Bool(SummaryFlag, false, "voicetest: print a summary of the scenarios (count, pass rate, latency percentiles, talk-over, pauses, speaking rate) after the tests; needs TestMain to call voicetest.Main")
	}
}

// Main runs the tests of a package and then prints the suite summary of
// its voicetest scenarios: how many ran, passed, failed and were
// inconclusive, the pass rate, user turns, the agent's response latency
// (p50, p90, p95, p99, max, mean) over every measured turn, and the
// conversation quality over all scenarios (first-audio times, talk-over,
// pauses, speaking rate, word error rate; see Metrics), with one line per
// scenario that did not pass. The summary is printed when go test runs with -v or
// with -voicetest.summary. Use it from the package's TestMain:
//
//	func TestMain(m *testing.M) { voicetest.Main(m) }
//
// A package opts in this way: without a TestMain that calls Main its
// scenarios still run and report as usual, but no summary is printed.
// Main returns after the tests and the summary; the testing package then
// exits with m.Run's code. Call flag definitions a TestMain needs before
// Main (Main parses the command line).
//
// The scenarios of one test binary may run in parallel; each records its
// outcome in a small file in a temporary directory that Main creates and
// removes (it is passed to them in the process environment, not in a
// package variable). Note that go test in package list mode (go test
// ./...) shows the output of a passing package only with -v or -json.
func Main(m *testing.M) {
	if !flag.Parsed() {
		flag.Parse()
	}
	if !summaryWanted() {
		m.Run()
		return
	}
	dir, err := os.MkdirTemp("", "voicetest-summary-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "voicetest: no suite summary: %v\n", err)
		m.Run()
		return
	}
	defer os.RemoveAll(dir)
	old, had := os.LookupEnv(summaryEnv)
	if err := os.Setenv(summaryEnv, strconv.Itoa(os.Getpid())+":"+dir); err != nil {
		fmt.Fprintf(os.Stderr, "voicetest: no suite summary: %v\n", err)
		m.Run()
		return
	}
	defer func() {
		if had {
			_ = os.Setenv(summaryEnv, old)
		} else {
			_ = os.Unsetenv(summaryEnv)
		}
	}()
	m.Run()
	recs, err := readSummaryRecords(dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "voicetest: suite summary incomplete: %v\n", err)
	}
	writeSummary(os.Stdout, recs)
}

// summaryWanted reports whether the command line asks for the summary:
// -test.v or -voicetest.summary.
func summaryWanted() bool {
	if testing.Verbose() {
		return true
	}
	f := flag.Lookup(SummaryFlag)
	return f != nil && f.Value.String() == "true"
}

// summaryRecord is one scenario's outcome as the summary needs it.
type summaryRecord struct {
	Test      string          `json:"test"`
	Name      string          `json:"name"`
	Status    Status          `json:"status"`
	Success   bool            `json:"success"`
	Turns     int             `json:"turns"`
	Duration  time.Duration   `json:"duration"`
	Latencies []time.Duration `json:"latencies,omitempty"`
	Runs      int             `json:"runs,omitempty"`
	PassRate  float64         `json:"pass_rate"`
	Reason    string          `json:"reason,omitempty"`
	Quality   summaryQuality  `json:"quality"`
}

func newSummaryRecord(test string, res *Result) summaryRecord {
	r := summaryRecord{Test: test, Name: res.Name, Status: res.Status, Success: res.Success, Turns: res.Turns,
		Duration: res.Duration, Latencies: res.Latency.PerTurn, Runs: len(res.Runs), PassRate: res.PassRate,
		Quality: newSummaryQuality(res.Metrics)}
	if !res.Success && res.Err != nil {
		r.Reason = firstLine(res.Err.Error())
	}
	return r
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// summaryDir returns the directory Main set up for this process, or "".
func summaryDir() string {
	v := os.Getenv(summaryEnv)
	pid, dir, ok := strings.Cut(v, ":")
	if !ok || pid != strconv.Itoa(os.Getpid()) || dir == "" {
		return ""
	}
	return dir
}

// recordSummary records res for Main's summary, when Main asked for one.
func recordSummary(t testing.TB, res *Result) {
	t.Helper()
	dir := summaryDir()
	if dir == "" {
		return
	}
	b, err := json.Marshal(newSummaryRecord(t.Name(), res))
	if err != nil {
		t.Logf("voicetest: not recorded in the suite summary: %v", err)
		return
	}
	f, err := os.CreateTemp(dir, "scenario-*.json")
	if err != nil {
		t.Logf("voicetest: not recorded in the suite summary: %v", err)
		return
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		t.Logf("voicetest: not recorded in the suite summary: %v", werr)
	}
}

// readSummaryRecords reads the records in dir, ordered by test name.
func readSummaryRecords(dir string) ([]summaryRecord, error) {
	files, err := filepath.Glob(filepath.Join(dir, "scenario-*.json"))
	if err != nil {
		return nil, err
	}
	var recs []summaryRecord
	var errs []error
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var r summaryRecord
		if err := json.Unmarshal(b, &r); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", filepath.Base(name), err))
			continue
		}
		recs = append(recs, r)
	}
	slices.SortStableFunc(recs, func(a, b summaryRecord) int {
		if c := strings.Compare(a.Test, b.Test); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return recs, errors.Join(errs...)
}

// writeSummary prints the suite summary of recs to w.
func writeSummary(w io.Writer, recs []summaryRecord) {
	if len(recs) == 0 {
		fmt.Fprintln(w, "voicetest summary: no scenarios ran")
		return
	}
	var passed, failed, inconclusive, turns int
	var dur time.Duration
	var lat Latency
	for _, r := range recs {
		switch {
		case r.Success:
			passed++
		case r.Status == StatusInconclusive:
			inconclusive++
		default:
			failed++
		}
		turns += r.Turns
		dur += r.Duration
		lat.PerTurn = append(lat.PerTurn, r.Latencies...)
	}
	lat.Summarize()
	noun := "scenarios"
	if len(recs) == 1 {
		noun = "scenario"
	}
	fmt.Fprintf(w, "voicetest summary: %d %s, %d passed, %d failed, %d inconclusive (pass rate %.1f%%)\n",
		len(recs), noun, passed, failed, inconclusive, 100*float64(passed)/float64(len(recs)))
	fmt.Fprintf(w, "  user turns: %d; conversation time: %v\n", turns, dur.Round(time.Millisecond))
	if n := len(lat.PerTurn); n > 0 {
		fmt.Fprintf(w, "  response latency over %d turns: p50 %dms, p90 %dms, p95 %dms, p99 %dms, max %dms, mean %dms\n",
			n, lat.P50.Milliseconds(), lat.P90.Milliseconds(), lat.P95.Milliseconds(), lat.P99.Milliseconds(),
			lat.Max.Milliseconds(), lat.Mean.Milliseconds())
	} else {
		fmt.Fprintln(w, "  response latency: not measured")
	}
	writeSummaryQuality(w, recs)
	for _, r := range recs {
		if r.Success {
			continue
		}
		name := r.Test
		if r.Name != "" && r.Name != r.Test {
			name += fmt.Sprintf(" (%q)", r.Name)
		}
		line := fmt.Sprintf("  %s %s", strings.ToUpper(string(r.Status)), name)
		if r.Runs > 1 {
			line += fmt.Sprintf(": %.0f%% of %d runs passed", 100*r.PassRate, r.Runs)
		}
		if r.Reason != "" {
			line += ": " + r.Reason
		}
		fmt.Fprintln(w, line)
	}
}
