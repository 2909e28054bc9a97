package leakcheck_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/internal/leakcheck"
)

// The artifacts directory a report names is removed when the test ends,
// not before; one outside the temporary directory fails the test and is
// kept.
func TestRemoveArtifactsLater(t *testing.T) {
	dir, err := os.MkdirTemp("", "voicetest-artifacts-")
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "voicetest-elsewhere")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	report := "voicetest: \"x\" failed\nartifacts: " + dir + " (transcript, timeline)\n"
	t.Run("inside", func(t *testing.T) {
		leakcheck.RemoveArtifactsLater(t, report)
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("removed before the test ended: %v", err)
		}
	})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still there after the test ended (%v)", dir, err)
		os.RemoveAll(dir)
	}
	tb := &recordingTB{}
	leakcheck.RemoveArtifactsLater(tb, "artifacts: "+outside+"\n")
	if len(tb.failures) != 1 || !strings.Contains(tb.failures[0], outside) || len(tb.cleanups) != 0 {
		t.Errorf("a directory outside the temporary one: failures %q, %d cleanups; want one failure naming it and none", tb.failures, len(tb.cleanups))
	}
}
