package pcm

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEListsEffects keeps the README's table of effects true: one
// line per effect of EffectLibrary, with its function and description.
func TestREADMEListsEffects(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatalf("reading the README: %v", err)
	}
	readme := string(b)
	for _, e := range EffectLibrary() {
		line := "| " + e.Group + " | `pcm." + e.Func + "` | " + e.Description + " |"
		if !strings.Contains(readme, line) {
			t.Errorf("README.md does not list effect %q as %q", e.Name, line)
		}
	}
}
