package handler

import (
	"strings"
	"testing"
)

// countFields is Say's word count (the speech time of text mode).
func TestCountFieldsIsLenFields(t *testing.T) {
	for _, s := range []string{
		"", " ", "one", " one two  three ", "a\tb\nc\vd\fe\rf",
		"naïve café", "x\u00a0y", "x\u0085y z", "日本語 テキスト", "word\xffbad \xfe",
	} {
		if got, want := countFields(s), len(strings.Fields(s)); got != want {
			t.Errorf("countFields(%q) = %d, want %d (len(strings.Fields))", s, got, want)
		}
	}
}
