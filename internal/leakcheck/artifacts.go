package leakcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// RemoveArtifactsLater has t remove, once it ends, each artifacts
// directory a failed scenario's report names (its "artifacts: <dir>"
// lines): voicetest.Scenario keeps a failed run's files in the temporary
// directory for the developer to open, and a test that fails a scenario
// on purpose must not leave them behind, which Main reports. A named
// directory that is not a voicetest-* directory of os.TempDir fails t
// and is left alone.
func RemoveArtifactsLater(t testing.TB, report string) {
	t.Helper()
	for line := range strings.Lines(report) {
		rest, ok := strings.CutPrefix(line, "artifacts: ")
		if !ok {
			continue
		}
		dir, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
		if filepath.Dir(dir) != filepath.Clean(os.TempDir()) || !strings.HasPrefix(filepath.Base(dir), "voicetest-") {
			t.Errorf("the report names artifacts at %q, want a voicetest-* directory in %s", dir, os.TempDir())
			continue
		}
		t.Cleanup(func() {
			if err := os.RemoveAll(dir); err != nil {
				t.Error(err)
			}
		})
	}
}
