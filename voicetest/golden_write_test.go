package voicetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A failed write leaves no temporary file, and the error names the file.
func TestGoldenWriteFailureLeavesNoTempFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, GoldenTranscriptFile)
	// A non-empty directory in the way: the rename fails after the
	// temporary file was written and synced.
	if err := os.MkdirAll(filepath.Join(path, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := crashResult(1).WriteGolden(dir, crashOpts)
	if err == nil {
		t.Fatal("WriteGolden over a directory succeeded")
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "golden") {
		t.Errorf("error %q does not name %s", err, path)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != GoldenTranscriptFile {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// goldenMkdirAll creates nested directories and reports a file in the way.
func TestGoldenMkdirAll(t *testing.T) {
	dir := t.TempDir()
	deep := filepath.Join(dir, "a", "b", "c")
	for range 2 {
		if err := goldenMkdirAll(deep); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Stat(deep); err != nil || !fi.IsDir() {
		t.Fatalf("%s: %v", deep, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := goldenMkdirAll(filepath.Join(dir, "file", "sub")); err == nil {
		t.Error("goldenMkdirAll under a file succeeded")
	}
}
