package judges

import (
	"strconv"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/voicetest"
)

// Report logs every criterion judged in res, one line each, through
// t.Log, in the order pass, fail, inconclusive:
//
//	PASS criterion "the agent says \"table for two\"": turn 1: the agent said "…"
//	FAIL criterion "p95 agent response latency is at most 1500ms": p95 2000ms over 3 replies …
//	INCONCLUSIVE criterion "The agent quotes the price": no price was asked for
//
// and publishes the counts as the attributes voicetest.criteria_pass,
// voicetest.criteria_fail and voicetest.criteria_inconclusive (gotestsum
// writes them as JUnit properties). voicetest.Scenario already publishes
// voicetest.verdict and reports failed and inconclusive criteria with
// t.Error when the scenario fails; Report adds the passing ones, so a CI
// log shows the evidence for every verdict. It does not fail t.
func Report(t testing.TB, res *voicetest.Result) {
	t.Helper()
	if res == nil {
		t.Log("judges: no result to report (the scenario did not run)")
		return
	}
	for _, g := range []struct {
		label string
		cs    []voicetest.CriterionResult
		attr  string
	}{
		{"PASS", res.Passed, "voicetest.criteria_pass"},
		{"FAIL", res.Failed, "voicetest.criteria_fail"},
		{"INCONCLUSIVE", res.Inconclusive, "voicetest.criteria_inconclusive"},
	} {
		for _, c := range g.cs {
			t.Log(FormatCriterion(g.label, c))
		}
		t.Attr(g.attr, strconv.Itoa(len(g.cs)))
	}
}

// FormatCriterion renders one criterion result on one line as reports
// show it: `LABEL criterion "…": reasoning`.
func FormatCriterion(label string, c voicetest.CriterionResult) string {
	s := label + " criterion " + strconv.Quote(c.Criterion)
	if r := strings.TrimSpace(c.Reasoning); r != "" {
		s += ": " + oneLine(r)
	}
	return s
}
