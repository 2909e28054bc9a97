package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestIsTemp(t *testing.T) {
	d := strings.Repeat("a", 64)
	for name, want := range map[string]bool{
		"." + d + ".json.tmp-123":              true,  // cache entry
		"." + d + ".0123456789ab.wav.tmp-9876": true,  // cache body
		".transcript.golden.tmp-42":            true,  // golden file
		".tmp-timeline.golden-42":              true,  // golden file, earlier versions
		".out.wav.12345.tmp":                   true,  // pcm.WriteWAVFile
		d + ".json":                            false, // an entry
		d + ".0123456789ab.txt":                false, // a body
		".gitkeep":                             false,
		".notes.tmp-draft":                     false, // not a random suffix
		"x.json.tmp-123":                       false, // not hidden: not ours
		".tmp-":                                false,
	} {
		if got := isTemp(name); got != want {
			t.Errorf("isTemp(%q) = %v, want %v", name, got, want)
		}
	}
}

// setAge makes path last modified age ago.
func setAge(t *testing.T, path string, age time.Duration) {
	t.Helper()
	at := time.Now().Add(-age)
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

func TestTempFilesStaleAndFresh(t *testing.T) {
	dir := t.TempDir()
	d := strings.Repeat("c", 64)
	cacheDir := filepath.Join(dir, "testdata", "voicetest", "cache", "llm")
	goldenDir := filepath.Join(dir, "testdata", "golden", "TestX")
	old1 := filepath.Join(cacheDir, "."+d+".json.tmp-1")
	old2 := filepath.Join(goldenDir, ".transcript.golden.tmp-2")
	young := filepath.Join(cacheDir, "."+d+".0123456789ab.txt.tmp-3")
	for _, f := range []string{old1, old2, young, filepath.Join(cacheDir, d+".json"), filepath.Join(goldenDir, ".gitkeep")} {
		write(t, f, "x")
	}
	setAge(t, old1, time.Hour)
	setAge(t, old2, staleTempAge+time.Minute)
	setAge(t, young, staleTempAge-time.Minute)
	setAge(t, filepath.Join(cacheDir, d+".json"), 24*time.Hour) // old, but an entry
	pkgs := []pkgInfo{{ImportPath: "example.com/x", Dir: dir}, {ImportPath: "example.com/none", Dir: filepath.Join(dir, "none")}}

	stale, fresh, err := tempFiles(pkgs, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{old2, old1}; !slices.Equal(stale, want) || fresh != 1 {
		t.Fatalf("tempFiles = %v, %d fresh; want %v, 1 fresh", stale, fresh, want)
	}
	var out, errOut bytes.Buffer
	n, ok := removeTemps(&out, &errOut, stale)
	if n != 2 || !ok || errOut.Len() > 0 {
		t.Fatalf("removeTemps = %d, %v; stderr %s", n, ok, errOut.String())
	}
	mustContain(t, out.String(), "removed 2 stale temporary file(s)", "  - "+old2, "  - "+old1)
	for _, f := range []string{old1, old2} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s not removed: %v", f, err)
		}
	}
	for _, f := range []string{young, filepath.Join(cacheDir, d+".json"), filepath.Join(goldenDir, ".gitkeep")} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s removed: %v", f, err)
		}
	}
	// A file another process removed meanwhile counts as removed.
	out.Reset()
	if n, ok := removeTemps(&out, &errOut, []string{old1}); n != 1 || !ok {
		t.Errorf("removing a file already gone: %d, %v", n, ok)
	}
}
