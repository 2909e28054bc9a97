package voicetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// reportRecorder is a testing.TB that records what report publishes:
// attributes, log lines and errors, in order.
type reportRecorder struct {
	testing.TB // nil: a method report was not expected to call panics
	calls      []string
}

func (r *reportRecorder) Helper()          {}
func (r *reportRecorder) Name() string     { return "TestRecorded" }
func (r *reportRecorder) Attr(k, v string) { r.calls = append(r.calls, "attr "+k+"="+v) }
func (r *reportRecorder) Log(args ...any)  { r.calls = append(r.calls, "log "+fmt.Sprint(args...)) }
func (r *reportRecorder) Logf(format string, args ...any) {
	r.calls = append(r.calls, "log "+fmt.Sprintf(format, args...))
}
func (r *reportRecorder) Error(args ...any) { r.calls = append(r.calls, "error "+fmt.Sprint(args...)) }
func (r *reportRecorder) Errorf(format string, args ...any) {
	r.calls = append(r.calls, "error "+fmt.Sprintf(format, args...))
}

// TestPlainPassLogsWhatReportLogs: for every Result plainPass lets
// Scenario publish itself (its attributes, then the passed line, logged
// from Scenario so that testing walks one helper's frame fewer to name
// the line), report would publish exactly that; for the others (A/B runs,
// passing criteria, report sections, skipped steps, a failure), report
// publishes more, which is why plainPass sends them to report. The
// recorder is not a testing type, so attributes are always recorded.
func TestPlainPassLogsWhatReportLogs(t *testing.T) {
	base := func() *Result {
		res := &Result{Name: "plain", Success: true, Status: StatusPass, Turns: 2, Duration: 3 * time.Second,
			Transcript: []Message{{Role: RoleUser, Text: "hi"}, {Role: RoleAgent, Text: "hello"}}}
		res.Latency = Latency{PerTurn: []time.Duration{300 * time.Millisecond, 500 * time.Millisecond}}
		res.Latency.Summarize()
		return res
	}
	cases := []struct {
		name  string
		edit  func(*Result)
		plain bool
	}{
		{"plain", func(*Result) {}, true},
		// (Runs whose agent chose no variant log no A/B line: report
		// publishes the same for them, but plainPass need not know.)
		{"A/B runs", func(r *Result) { r.Runs = []*Result{base(), base()}; r.PassRate = 1 }, false},
		{"passing criterion", func(r *Result) {
			r.Passed = []CriterionResult{{Criterion: "greets", Status: StatusPass, Reasoning: "it said hello"}}
		}, false},
		{"report section", func(r *Result) { r.Sections = []ReportSection{{Title: "Red team"}} }, false},
		{"skipped steps", func(r *Result) { r.SkippedSteps = []string{"step 3 UserSays"}; r.SkipReason = "the agent hung up" }, false},
		{"failed", func(r *Result) { r.Success, r.Status = false, StatusFail }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := base()
			tc.edit(res)
			if got := plainPass(res); got != tc.plain {
				t.Fatalf("plainPass = %v, want %v", got, tc.plain)
			}
			if !res.Success {
				return // (report would save artifacts for it: not run here)
			}
			var viaReport, direct reportRecorder
			report(&viaReport, res)
			publishAttrs(&direct, res)
			direct.Log(passedLine(res))
			same := slices.Equal(viaReport.calls, direct.calls)
			if tc.plain && !same {
				t.Errorf("report publishes\n%s\nScenario's plain path\n%s", strings.Join(viaReport.calls, "\n"), strings.Join(direct.calls, "\n"))
			}
			if !tc.plain && same && res.Runs == nil {
				t.Errorf("report publishes only the attributes and the passed line, but plainPass sends the Result to it")
			}
			if len(direct.calls) < 10 {
				t.Errorf("%d calls: the attributes were not published", len(direct.calls))
			}
		})
	}
}
