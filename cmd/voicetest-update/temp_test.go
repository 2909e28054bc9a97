package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest/cache"
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

const envKilledWriter = "VOICETEST_UPDATE_KILLED_WRITER_DIR"

// bigAnswer is an 8 MB text answer: its write (and fsync) takes long
// enough for the parent to see its temporary file and kill the writer.
func bigAnswer(i int) string {
	return strings.Repeat(fmt.Sprintf("answer %d. ", i%10), 8<<20/10)
}

// writerLoop records big new entries into dir until it is killed.
func writerLoop(dir string) {
	c, err := cache.Open(dir, cache.WithMode(cache.Record), cache.WithUsageDir(""))
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	for i := 0; ; i++ {
		key := cache.Key{Kind: "llm", Provider: "killed", Model: "m", Fields: map[string]any{"prompt": fmt.Sprintf("question %d", i)}}
		if _, err := c.Text(context.Background(), key, func(context.Context) (string, error) { return bigAnswer(i), nil }); err != nil {
			fmt.Println("error:", err)
			os.Exit(2)
		}
	}
}

// temps returns the temporary files directly in dir.
func temps(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if isTemp(e.Name()) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// A real cache writer SIGKILLed mid-write: the entries recorded before it
// still replay, its temporary files are not counted as unused entries,
// and voicetest-update removes them once they are stale.
func TestKilledWriterLeftoversArePruned(t *testing.T) {
	if dir := os.Getenv(envKilledWriter); dir != "" {
		writerLoop(dir)
		return
	}
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	pkgDir := t.TempDir()
	cacheDir := filepath.Join(pkgDir, filepath.FromSlash(cacheSubdir))
	llmDir := filepath.Join(cacheDir, "llm")

	// Two entries recorded before, both used by "the tests".
	keyOf := func(q string) cache.Key {
		return cache.Key{Kind: "llm", Provider: "sample", Model: "m1", Fields: map[string]any{"prompt": q}}
	}
	rec, err := cache.Open(cacheDir, cache.WithMode(cache.Record), cache.WithUsageDir(""))
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, q := range []string{"hello", "goodbye"} {
		if _, err := rec.Text(t.Context(), keyOf(q), func(context.Context) (string, error) { return "answer to " + q, nil }); err != nil {
			t.Fatal(err)
		}
		digest, err := keyOf(q).Digest()
		if err != nil {
			t.Fatal(err)
		}
		used[filepath.Join(llmDir, digest+".json")] = true
	}
	rec.Close()

	// Kill the writer as soon as a temporary file of it appears; if it
	// renamed the file in the moment between, try again.
	var left []string
	for attempt := 1; attempt <= 20 && len(left) == 0; attempt++ {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a safety net, not an assertion
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestKilledWriterLeftoversArePruned$")
		cmd.Env = append(os.Environ(), envKilledWriter+"="+cacheDir)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			cancel()
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		var werr error
	poll:
		for {
			select {
			case werr = <-exited:
				break poll
			default:
			}
			if len(temps(t, llmDir)) > 0 {
				cmd.Process.Signal(syscall.SIGKILL)
				werr = <-exited
				break
			}
			time.Sleep(100 * time.Microsecond)
		}
		cancel()
		ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("writer ended with %v, want killed by SIGKILL\n%s", werr, out.String())
		}
		left = temps(t, llmDir)
		t.Logf("attempt %d: the killed writer left %d temporary file(s)", attempt, len(left))
	}
	if len(left) == 0 {
		t.Fatal("no attempt killed the writer mid-write")
	}

	// The entries recorded before replay as they were.
	c, err := cache.Open(cacheDir, cache.WithMode(cache.Replay), cache.WithUsageDir(""))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"hello", "goodbye"} {
		if got, err := c.Text(t.Context(), keyOf(q), nil); err != nil || got != "answer to "+q {
			t.Errorf("replay %q after the crash: %q, %v", q, got, err)
		}
	}
	c.Close()

	// The unused-entry logic does not count temporary files: only the
	// entries (and bodies) the writer finished before it died.
	unused, err := unusedFiles(cacheDir, used)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range unused {
		if isTemp(filepath.Base(f)) {
			t.Errorf("unusedFiles lists the temporary file %s", f)
		}
	}

	// Fresh, they stay: the writer might still be running.
	pkgs := []pkgInfo{{ImportPath: "example.com/killed", Dir: pkgDir}}
	stale, fresh, err := tempFiles(pkgs, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) != 0 || fresh != len(left) {
		t.Fatalf("just after the crash: %d stale, %d fresh; want 0 and %d", len(stale), fresh, len(left))
	}
	// Stale, they go, and the report says how many.
	for _, f := range left {
		setAge(t, f, staleTempAge+time.Minute)
	}
	stale, fresh, err = tempFiles(pkgs, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(stale, left) || fresh != 0 {
		t.Fatalf("aged leftovers: stale %v, %d fresh; want %v", stale, fresh, left)
	}
	var out, errOut bytes.Buffer
	if n, ok := removeTemps(&out, &errOut, stale); n != len(left) || !ok {
		t.Fatalf("removeTemps = %d, %v; want %d\n%s", n, ok, len(left), errOut.String())
	}
	mustContain(t, out.String(), fmt.Sprintf("removed %d stale temporary file(s)", len(left)))
	if rest := temps(t, llmDir); len(rest) != 0 {
		t.Errorf("left after pruning: %v", rest)
	}

	// And replay still works.
	c, err = cache.Open(cacheDir, cache.WithMode(cache.Replay), cache.WithUsageDir(""))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, q := range []string{"hello", "goodbye"} {
		if got, err := c.Text(t.Context(), keyOf(q), nil); err != nil || got != "answer to "+q {
			t.Errorf("replay %q after pruning: %q, %v", q, got, err)
		}
	}
}
