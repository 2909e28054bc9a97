package voicetest

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

func TestArtifactDir(t *testing.T) {
	base := t.TempDir()
	if got := artifactDir(base, "TestX", "TestX"); got != base {
		t.Errorf("first scenario named after the test: %s, want the test's dir", got)
	}
	if err := os.WriteFile(filepath.Join(base, "manifest.json"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := artifactDir(base, "TestX", "TestX"), filepath.Join(base, "TestX-2"); got != want {
		t.Errorf("second scenario: %s, want %s", got, want)
	}
	if got, want := artifactDir(base, "booking: two/people", "TestX"), filepath.Join(base, "booking_two_people"); got != want {
		t.Errorf("named scenario: %s, want %s", got, want)
	}
}

func TestRunPattern(t *testing.T) {
	// go test splits -run at slashes and matches each element; the
	// pattern is wrapped in ^...$ by the report.
	pat := "^" + runPattern("TestBook/party of (2)/x") + "$"
	elems := regexp.MustCompile(`/`).Split(pat, -1)
	parts := []string{"TestBook", "party of (2)", "x"}
	if len(elems) != len(parts) {
		t.Fatalf("pattern %q has %d elements, want %d", pat, len(elems), len(parts))
	}
	for i, part := range parts {
		re := regexp.MustCompile(elems[i])
		if !re.MatchString(part) || re.MatchString(part+"y") {
			t.Errorf("element %q does not match exactly %q", elems[i], part)
		}
	}
}
