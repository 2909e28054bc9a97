//go:build unix

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
	// Parallel: as a sequential test it ran before the two end-to-end
	// tests could start (they are parallel, and parallel tests resume only
	// once every sequential one is done), 0.35-0.45 s of waiting on its
	// writer's fsyncs in front of the package's longest test.
	t.Parallel()
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
