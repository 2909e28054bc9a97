package voicetest_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// TestSaveWritesTheManifestLast: a Save that fails part way (here
// report.html cannot be written) leaves no manifest.json, so the directory
// is never taken for a complete set of artifacts; a Save that succeeds
// writes it.
func TestSaveWritesTheManifestLast(t *testing.T) {
	res, err := runVirtual(t, voicetest.Config{
		Agent:     fixtures.ScriptedAgent(fixtures.Reply{Text: "hello", Latency: 100 * time.Millisecond}),
		UserVoice: &toneTTS{},
		Script:    []voicetest.Step{voicetest.UserSays("hi"), voicetest.AgentTurn()},
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "report.html", "blocker"), 0o755); err != nil {
		t.Fatal(err)
	}
	err = res.Save(dir)
	if err == nil || !strings.Contains(err.Error(), "report.html") {
		t.Fatalf("Save = %v, want an error naming report.html", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("manifest.json after a failed Save: %v, want none", err)
	}
	ok := t.TempDir()
	if err := res.Save(ok); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"manifest.json", "report.html", "conversation.wav", "transcript.txt", "timeline.txt"} {
		if _, err := os.Stat(filepath.Join(ok, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if tmp, _ := filepath.Glob(filepath.Join(ok, ".*")); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
	// A second Save into the directory replaces the first: a segment of
	// another run left there is gone, and a failed re-save leaves no
	// manifest next to half-replaced files.
	stray := filepath.Join(ok, "segments", "99-agent-123ms.wav")
	if err := os.WriteFile(stray, []byte("old run"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := res.Save(ok); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stray); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a segment of an earlier run is still there after Save: %v", err)
	}
	if err := os.Remove(filepath.Join(ok, "report.html")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ok, "report.html", "blocker"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := res.Save(ok); err == nil {
		t.Fatal("Save over a blocked report.html succeeded")
	}
	if _, err := os.Stat(filepath.Join(ok, "manifest.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("manifest.json of the earlier Save survived a failed re-save: %v", err)
	}
}
