package voicetest

import (
	"strings"
	"testing"
)

// countWords counts words as strings.Fields splits them (the runner's
// user speech time and the metrics' word counts), without the slice.
func TestCountWordsIsLenFields(t *testing.T) {
	for _, s := range []string{
		"", " ", "one", " one two  three ", "a\tb\nc\vd\fe\rf",
		"naïve café", "x\u00a0y", "x\u0085y z", "日本語 テキスト", "\u2003em\u2003space",
		"word\xffbad \xfe", "trailing  ", "é", " é ", "a é\u00a0b",
	} {
		if got, want := countWords(s), len(strings.Fields(s)); got != want {
			t.Errorf("countWords(%q) = %d, want %d (len(strings.Fields))", s, got, want)
		}
	}
}
