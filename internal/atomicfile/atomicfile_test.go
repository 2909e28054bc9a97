package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.json")
	for _, data := range []string{"first", "second, longer"} {
		var tmp string
		if err := Write(path, []byte(data), func(name string) { tmp = name }); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(filepath.Base(tmp), ".x.json"+TempMarker) {
			t.Errorf("temporary file %s, want .x.json%s<digits>", tmp, TempMarker)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != data {
			t.Errorf("read %q, %v; want %q", got, err, data)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("mode %v, %v; want 0644", fi.Mode(), err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestWriteErrorsLeaveNothing(t *testing.T) {
	dir := t.TempDir()
	// The target is a non-empty directory: the rename fails.
	target := filepath.Join(dir, "taken")
	if err := os.MkdirAll(filepath.Join(target, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := Write(target, []byte("data"), nil)
	if err == nil || !strings.Contains(err.Error(), "writing "+target) {
		t.Fatalf("err = %v, want one naming %s", err, target)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if err := Write(filepath.Join(dir, "missing", "x"), nil, nil); err == nil {
		t.Error("Write into a missing directory succeeded; it must not create it")
	}
}

func TestMkdirAll(t *testing.T) {
	dir := t.TempDir()
	deep := filepath.Join(dir, "a", "b", "c")
	for range 2 { // the second call finds it all there
		if err := MkdirAll(deep); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(deep); err != nil || !fi.IsDir() {
			t.Fatalf("%s: %v", deep, err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := MkdirAll(filepath.Join(dir, "file", "sub")); err == nil {
		t.Error("MkdirAll under a file succeeded")
	}
}
