package cache

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A failed write leaves no temporary file and no entry.
func TestWriteAtomicFailureLeavesNoTempFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.json")
	// The target is a non-empty directory: the rename fails after the
	// temporary file is written and synced.
	if err := os.MkdirAll(filepath.Join(path, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := writeAtomic(path, []byte(`{"a":1}`), nil)
	if err == nil {
		t.Fatal("writeAtomic over a non-empty directory succeeded")
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name %s", err, path)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != "x.json" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// mkdirAllSynced creates nested directories and reports a file in the way.
func TestMkdirAllSynced(t *testing.T) {
	dir := t.TempDir()
	deep := filepath.Join(dir, "a", "b", "c")
	if err := mkdirAllSynced(deep); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(deep); err != nil || !fi.IsDir() {
		t.Fatalf("%s: %v", deep, err)
	}
	if err := mkdirAllSynced(deep); err != nil {
		t.Fatalf("existing directory: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := mkdirAllSynced(filepath.Join(dir, "file", "sub")); err == nil {
		t.Error("mkdirAllSynced under a file succeeded")
	}
}
