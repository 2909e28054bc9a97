package voicetest

import (
	"path/filepath"
	"strings"
	"testing"
)

// Scenario names come from test names and Config.Name, which a table-driven
// test may fill from data; none may place artifacts outside the test's
// artifact directory.
func TestArtifactDirStaysInsideItsBase(t *testing.T) {
	base := t.TempDir()
	for _, name := range []string{
		"..", ".", "../..", "../../etc", "/etc/passwd", `..\..\windows`, "a/../../b",
		"nul\x00byte", "", "...", strings.Repeat("long", 1000), "TestX/../../..", "~root",
	} {
		dir := artifactDir(base, name, "TestX")
		rel, err := filepath.Rel(base, dir)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || strings.ContainsAny(rel, "/\\\x00") {
			t.Errorf("scenario %q: artifacts in %q, not in a subdirectory of %q", name, dir, base)
		}
		if len(filepath.Base(dir)) > 64 {
			t.Errorf("scenario %q: directory name of %d bytes", name, len(filepath.Base(dir)))
		}
	}
}

// Result.Save writes fixed file names under the directory it is given,
// whatever the scenario is called.
func TestSaveWritesOnlyUnderItsDir(t *testing.T) {
	dir := t.TempDir()
	res := &Result{Name: "../../escape", Recording: Recording{Rate: 8000}}
	if err := res.Save(filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(matches) != 1 || matches[0] != filepath.Join(dir, "out") {
		t.Errorf("Save wrote %v, want only %s", matches, filepath.Join(dir, "out"))
	}
}
