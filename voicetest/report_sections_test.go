package voicetest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// sectionJudge passes and adds a report section.
type sectionJudge struct{}

func (sectionJudge) Evaluate(ctx context.Context, req voicetest.JudgeRequest) (voicetest.Judgment, error) {
	return allPass(req)
}

func (sectionJudge) ReportSections() []voicetest.ReportSection {
	return []voicetest.ReportSection{{Title: "Audit", Summary: "two checks", Columns: []string{"check", "result"},
		Rows: []voicetest.ReportRow{{Cells: []string{"<script>alert(1)</script>", "ok"}, Mark: "pass"}, {Cells: []string{"b", "bad"}, Mark: "fail"}}}}
}

// TestReportSections: a Judge's (or User's) sections reach the Result,
// the HTML report (escaped) and their text form.
func TestReportSections(t *testing.T) {
	res, err := runVirtual(t, voicetest.Config{
		Agent: fixtures.TextAgent(fixtures.Reply{Text: "Hi"}), Judge: sectionJudge{},
		Script: []voicetest.Step{voicetest.UserSays("hello"), voicetest.AgentTurn(), voicetest.Verdict()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sections) != 1 || res.Sections[0].Title != "Audit" {
		t.Fatalf("sections %+v, want the judge's", res.Sections)
	}
	page, err := res.HTMLReport()
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	for _, want := range []string{"<h2>Audit</h2>", `<tr class="mark-fail">`, "&lt;script&gt;alert(1)&lt;/script&gt;"} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(html, "<script>alert(1)") {
		t.Error("a section's cell reached the page unescaped")
	}
	if got, want := res.Sections[0].Text(), "Audit: two checks\n  [pass] check: <script>alert(1)</script> | result: ok\n  [fail] check: b | result: bad"; got != want {
		t.Errorf("Text() =\n%s\nwant\n%s", got, want)
	}
	none, err := runVirtual(t, voicetest.Config{Agent: fixtures.TextAgent(fixtures.Reply{Text: "Hi"}), Script: []voicetest.Step{voicetest.UserSays("hello"), voicetest.AgentTurn()}})
	if err != nil || none.Sections != nil {
		t.Errorf("no reporter: sections %v, err %v", none.Sections, err)
	}
}
