package voicetest

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// clipPair shows the window around the first difference, cuts on
// character boundaries and counts what it cut; short values pass whole.
func TestClipPair(t *testing.T) {
	g, a := clipPair("same", "diff", true)
	if g != `"same"` || a != `"diff"` {
		t.Errorf("short values: %s, %s", g, a)
	}
	long := strings.Repeat("é", 1000) // two bytes each
	g, a = clipPair(long+"golden"+long, long+"actual"+long, true)
	for _, v := range []string{g, a} {
		if !utf8.ValidString(v) || strings.Contains(v, `\x`) {
			t.Errorf("a cut split a character: %s", v)
		}
		if len(v) > maxDiffValue+80 {
			t.Errorf("%d bytes shown, want about %d: %s", len(v), maxDiffValue, v)
		}
		if !strings.Contains(v, "bytes cut)") || !strings.HasPrefix(v, `…"`) {
			t.Errorf("no count of what was cut: %s", v)
		}
	}
	if !strings.Contains(g, "golden") || !strings.Contains(a, "actual") {
		t.Errorf("the window misses the difference: %s vs %s", g, a)
	}
}

// A failure report shows each message of the transcript clipped: an agent
// that says 5 MB in one message makes a report of a few KiB.
func TestReportClipsHugeMessages(t *testing.T) {
	t.Parallel() // pure
	huge := strings.Repeat("word ", 1<<20)
	res := &Result{Name: "huge", Transcript: []Message{{Role: RoleAgent, Text: huge}, {Role: RoleUser, Text: "hi"}}}
	rep := res.report()
	if len(rep) > 3*maxReportText {
		t.Errorf("report is %d bytes, want at most %d", len(rep), 3*maxReportText)
	}
	if !strings.Contains(rep, "of 5242880 bytes cut)") || !strings.Contains(rep, ": hi\n") {
		t.Errorf("report does not say what it cut, or lost the short message:\n%s", rep[:min(len(rep), 500)])
	}
}
