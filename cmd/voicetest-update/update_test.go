package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest/cache"
)

// sampleTest is the test file of the sample package the end-to-end test
// runs voicetest-update on. Its answers go through the real cache; its
// golden helper follows goldie's contract (rewrite when GOLDIE_UPDATE=1),
// so the sample needs no module outside this repository.
const sampleTest = `package greet

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/voicetest-go/voicetest/voicetest/cache"
)

func answer(t *testing.T, prompt string) string {
	t.Helper()
	c := cache.ForTest(t)
	key := cache.Key{Kind: "llm", Provider: "sample", Model: "m1", Fields: map[string]any{"prompt": prompt}}
	got, err := c.Text(t.Context(), key, func(context.Context) (string, error) {
		return "answer to " + prompt, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got + os.Getenv("SAMPLE_SUFFIX")
}

func golden(t *testing.T, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", t.Name()+".golden")
	if os.Getenv("GOLDIE_UPDATE") == "1" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file: %v", err)
	}
	if string(want) != got {
		t.Errorf("golden mismatch in %s: got %q, want %q", path, got, want)
	}
}

func TestGreeting(t *testing.T) { golden(t, answer(t, "hello")) }

func TestFarewell(t *testing.T) {
	t.Run("polite", func(t *testing.T) {
		t.Parallel()
		golden(t, answer(t, "goodbye"))
	})
}
`

// sampleKey is the cache key of the sample's answer to prompt (see
// sampleTest's answer).
func sampleKey(prompt string) cache.Key {
	return cache.Key{Kind: "llm", Provider: "sample", Model: "m1", Fields: map[string]any{"prompt": prompt}}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

// sample is a module that voicetest-update runs on: its directory, the
// environment voicetest-update runs with there (this process's, with env's
// variables set), and the directory where go test writes its packages'
// test binaries (go test -o).
type sample struct {
	dir string
	env map[string]string
	bin string
}

// setenv sets a variable of the environment voicetest-update runs with.
func (s *sample) setenv(name, value string) { s.env[name] = value }

// newSample writes a module with one package, greet, using the cache of
// this repository through a replace directive.
func newSample(t *testing.T) *sample {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command")
	}
	root := repoRoot(t)
	dir := t.TempDir()
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	gomod := "module example.com/sample\n\ngo 1.26\n\nrequire github.com/voicetest-go/voicetest v0.0.0\n\nreplace github.com/voicetest-go/voicetest => " + root + "\n"
	write(t, filepath.Join(dir, "go.mod"), gomod)
	if sum, err := os.ReadFile(filepath.Join(root, "go.sum")); err == nil {
		write(t, filepath.Join(dir, "go.sum"), string(sum))
	}
	write(t, filepath.Join(dir, "greet", "greet_test.go"), sampleTest)
	// A second package without a cache, to see several packages reported.
	write(t, filepath.Join(dir, "other", "other.go"), "// Package other has no tests.\npackage other\n")
	// -o keeps each package's test binary in a directory of its own (go
	// test still runs it), so the go test runs after the first find it up
	// to date and do not link it again: linking is most of the cost of a
	// run (about 5 s of CPU for the remote sample, 1 s for greet), and
	// the tests below run voicetest-update on the same sources up to 9
	// times. What voicetest-update does and sees is the same: it still
	// runs go test -json -count=1, which still builds, vets and runs.
	// -ldflags=-s links without the symbol table and DWARF debug
	// information, which nothing here reads (stack traces use the
	// pclntab, which stays): less CPU for the first link of each sample
	// (measured 6.8 -> 4.6 s for the remote sample's 70 MB test binary
	// with -w, about 1 s less again with -s).
	// -vet=off: the checks here are voicetest-update's, not vet's; go
	// test's vet step checks the cached vet facts of every dependency on
	// each of the up to 9 runs (about 0.15 s of CPU a run, 0.4 s on the
	// first run of the remote sample).
	// GOMAXPROCS=1: the go command's bookkeeping on a run whose build is
	// up to date (loading packages, checking the build cache) costs about
	// a fifth less CPU on one P than on two; the samples' tests are small
	// (the remote sample's recording on the real clock runs without it).
	// None of these changes a build cache key: every compile still hits
	// the cache the repository's own build filled.
	bin := t.TempDir()
	s := &sample{dir: dir, bin: bin, env: map[string]string{
		"GOFLAGS":    strings.TrimSpace(os.Getenv("GOFLAGS") + " -mod=mod -vet=off -ldflags=-s -o=" + bin + string(filepath.Separator)),
		"GOMAXPROCS": "1",
		"GOSUMDB":    "off",
		"GOWORK":     "off",
	}}
	for _, v := range []string{"SAMPLE_SUFFIX", "CI"} {
		s.setenv(v, "")
	}
	return s
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// update runs voicetest-update in s and checks its exit code. It runs as
// a process of its own (this test binary, see TestMain), in s's directory
// and environment.
func (s *sample) update(t *testing.T, wantCode int, args ...string) string {
	t.Helper()
	return s.start(t, wantCode, args...)()
}

// start starts voicetest-update in s, as update does, with s's
// environment as it is now, and returns the function that waits for it,
// checks its exit code and returns its output. Call that function from
// the test's goroutine.
func (s *sample) start(t *testing.T, wantCode int, args ...string) (wait func() string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, args...)
	cmd.Dir = s.dir
	cmd.Env = []string{envRunMain + "=1"}
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); name != envRunMain {
			if _, ok := s.env[name]; !ok {
				cmd.Env = append(cmd.Env, kv)
			}
		}
	}
	for name, value := range s.env {
		cmd.Env = append(cmd.Env, name+"="+value)
	}
	out, errOut := new(bytes.Buffer), new(bytes.Buffer)
	cmd.Stdout, cmd.Stderr = out, errOut
	startErr := cmd.Start()
	return func() string {
		t.Helper()
		err := startErr
		if err == nil {
			err = cmd.Wait()
		}
		code := exitOK
		var exitErr *exec.ExitError
		switch {
		case errors.As(err, &exitErr):
			code = exitErr.ExitCode()
		case err != nil:
			t.Fatalf("voicetest-update %s: %v\nstderr:\n%s", strings.Join(args, " "), err, errOut.String())
		}
		if code != wantCode {
			t.Fatalf("voicetest-update %s: exit %d, want %d\n%s\nstderr:\n%s", strings.Join(args, " "), code, wantCode, out.String(), errOut.String())
		}
		if errOut.Len() > 0 {
			t.Logf("voicetest-update %s: stderr:\n%s", strings.Join(args, " "), errOut.String())
		}
		return out.String()
	}
}

func mustContain(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

// cacheFiles returns the greet sample's cache entries and bodies (not the
// temporary files of writers).
func cacheFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, f := range files(t, filepath.Join(dir, "greet", "testdata", "voicetest", "cache", "llm", "*")) {
		if !isTemp(filepath.Base(f)) {
			out = append(out, f)
		}
	}
	return out
}

// greetCache returns the greet sample's cache directory and the file of
// the entry of prompt's answer.
func greetCache(t *testing.T, dir, prompt string) (cacheDir, entry string) {
	t.Helper()
	digest, err := sampleKey(prompt).Digest()
	if err != nil {
		t.Fatal(err)
	}
	cacheDir = filepath.Join(dir, "greet", filepath.FromSlash(cacheSubdir))
	return cacheDir, filepath.Join(cacheDir, "llm", digest+".json")
}

// recordAnswer records the sample's answer to prompt in the greet
// sample's cache, with the cache's own writer, as a run of a sample test
// asking it would (answer).
func recordAnswer(t *testing.T, dir, prompt string) {
	t.Helper()
	cacheDir, _ := greetCache(t, dir, prompt)
	c, err := cache.Open(cacheDir, cache.WithMode(cache.Record), cache.WithUsageDir(""))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Text(t.Context(), sampleKey(prompt), func(context.Context) (string, error) { return "answer to " + prompt, nil }); err != nil {
		t.Fatal(err)
	}
}

// prunedCacheFiles returns the cache files voicetest-update's output
// lists as pruned, in its order.
func prunedCacheFiles(out string) []string {
	m := prunedCacheList.FindStringSubmatch(out)
	if m == nil {
		return nil
	}
	var files []string
	for line := range strings.Lines(m[1]) {
		files = append(files, strings.TrimSuffix(strings.TrimPrefix(line, "  - "), "\n"))
	}
	return files
}

// prunedCacheList matches the list of pruned cache files in
// voicetest-update's output.
var prunedCacheList = regexp.MustCompile(`(?m)^pruned [0-9]+ unused cache file\(s\):\n((?:  - .*\n)*)`)

// tempFixture is a set of temporary files of killed writers in the greet
// sample (see TestKilledWriterLeftoversArePruned for a real one): two
// stale ones and a fresh one.
type tempFixture struct {
	staleCache, staleGolden, freshCache string
}

func newTempFixture(dir string) tempFixture {
	llm := filepath.Join(dir, "greet", "testdata", "voicetest", "cache", "llm")
	return tempFixture{
		staleCache:  filepath.Join(llm, "."+strings.Repeat("d", 64)+".json.tmp-111"),
		staleGolden: filepath.Join(dir, "greet", "testdata", "golden", ".TestGreeting.golden.tmp-222"),
		freshCache:  filepath.Join(llm, "."+strings.Repeat("e", 64)+".0123456789ab.txt.tmp-333"),
	}
}

// plantStale writes the stale files, last modified long enough ago.
func (f tempFixture) plantStale(t *testing.T) {
	t.Helper()
	for _, p := range []string{f.staleCache, f.staleGolden} {
		write(t, p, "half a file")
		setAge(t, p, staleTempAge+time.Minute)
	}
}

// plantFresh writes the fresh file.
func (f tempFixture) plantFresh(t *testing.T) {
	t.Helper()
	write(t, f.freshCache, "half a file")
}

// checkStale checks that the stale files are there, or gone, and that the
// fresh one is there.
func (f tempFixture) checkStale(t *testing.T, there bool) {
	t.Helper()
	for _, p := range []string{f.staleCache, f.staleGolden} {
		if _, err := os.Stat(p); there && err != nil {
			t.Errorf("stale %s removed: %v", p, err)
		} else if !there && !os.IsNotExist(err) {
			t.Errorf("stale %s not removed: %v", p, err)
		}
	}
	if _, err := os.Stat(f.freshCache); err != nil {
		t.Errorf("fresh temporary file removed: %v", err)
	}
}

// TestEndToEnd runs voicetest-update on the greet sample seven times.
// Where two checks need the same state they share a run, each with
// assertions of its own on its output; where a run was only there to set
// the state for the next one and nothing of it was checked, the files are
// written directly (an entry no test uses, recorded by the cache's own
// writer; the goldens put back; the temporary files of killed writers).
// Each run costs about half a second of CPU, most of it the go command's
// own (loading and hashing the sample's 213 packages, and starting the
// compiler, assembler, cgo, gcc and linker for their versions) even when
// nothing is built.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a sample module's tests")
	}
	t.Parallel()
	s := newSample(t)
	dir := s.dir

	// First run records the cache and writes the goldens.
	out := s.update(t, exitOK)
	mustContain(t, out,
		"=== example.com/sample/greet",
		"  ok   TestGreeting",
		"    ok   TestFarewell/polite",
		"ok   example.com/sample/greet",
		"golden and testdata files: 2 added, 0 changed, 0 removed",
		filepath.Join("greet", "testdata", "golden", "TestFarewell", "polite.golden"),
		"cache files: 4 added, 0 changed, 0 removed",
		"voicetest-update: ok",
	)
	if n := len(cacheFiles(t, dir)); n != 4 {
		t.Fatalf("%d cache files, want 4 (two entries and their bodies)", n)
	}

	// Temporary files of killed writers (see
	// TestKilledWriterLeftoversArePruned for a real one): stale ones are
	// listed and kept with -prune=false, with or without -check, removed
	// otherwise, by -check and by a filtered run too, which they do not
	// fail, and whether or not the tests pass; fresh ones stay. Neither
	// kind is an unused entry or a changed file.
	temps := newTempFixture(dir)
	temps.plantStale(t)
	temps.plantFresh(t)

	// CI check: everything replays and nothing changes, but an entry that
	// a test once recorded and no test uses now fails the check, with
	// -prune=false too. (That failure is only reported for a package whose
	// tests all ran and passed; a check that passes is the last run
	// below.) -check -prune=false keeps the stale temporary files.
	recordAnswer(t, dir, "extra question")
	if n := len(cacheFiles(t, dir)); n != 6 {
		t.Fatalf("%d cache files after recording one more answer, want 6", n)
	}
	out = s.update(t, exitFail, "-check", "-prune=false", "./...")
	mustContain(t, out, "cache replay, goldens compared", "  ok   TestGreeting", "    ok   TestFarewell/polite", "ok   example.com/sample/greet",
		"golden and testdata files: 0 added, 0 changed, 0 removed", "cache files: 0 added, 0 changed, 0 removed")
	mustContain(t, out, "check: 2 cache file(s) unused by any test", "voicetest-update: FAIL")
	mustContain(t, out, "2 stale temporary file(s) left by interrupted writers kept (-prune=false)", "1 temporary file(s) newer than 10m0s kept")
	temps.checkStale(t, true)

	// A filtered run neither prunes nor judges unused entries; it removes
	// stale temporary files all the same.
	out = s.update(t, exitOK, "-run", "TestGreeting")
	// TestFarewell's entry and the extra one, each with its body.
	mustContain(t, out, "4 cache file(s) not used, but not pruned or checked: only some tests ran")
	if n := len(cacheFiles(t, dir)); n != 6 {
		t.Fatalf("filtered run changed the cache: %d files, want 6", n)
	}
	mustContain(t, out, "removed 2 stale temporary file(s) left by interrupted writers (older than 10m0s):")
	temps.checkStale(t, false)

	temps.plantStale(t)
	out = s.update(t, exitOK, "-prune=false")
	mustContain(t, out, "2 unused cache file(s) kept (-prune=false)")
	mustContain(t, out, "2 stale temporary file(s) left by interrupted writers kept (-prune=false)", "1 temporary file(s) newer than 10m0s kept", "voicetest-update: ok")
	if n := len(cacheFiles(t, dir)); n != 6 {
		t.Fatalf("-prune=false removed files: %d left, want 6", n)
	}
	temps.checkStale(t, true)

	// Output that no longer matches a golden fails the check (TestGreeting),
	// and so does a missing entry (TestFarewell's), with the command that
	// records it. TestFarewell's entry goes, its body stays (the update
	// below re-records the entry, which points at that body again).
	temps.plantStale(t)
	greeting := filepath.Join(dir, "greet", "testdata", "golden", "TestGreeting.golden")
	polite := filepath.Join(dir, "greet", "testdata", "golden", "TestFarewell", "polite.golden")
	goldens := map[string][]byte{}
	for _, f := range []string{greeting, polite} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		goldens[f] = b
	}
	s.setenv("SAMPLE_SUFFIX", " (changed)")
	_, entry := greetCache(t, dir, "goodbye")
	if err := os.Remove(entry); err != nil {
		t.Fatal(err)
	}
	out = s.update(t, exitFail, "-check")
	mustContain(t, out, "FAIL TestGreeting", "golden mismatch in "+filepath.Join("testdata", "golden", "TestGreeting.golden"), "FAIL example.com/sample/greet", "voicetest-update: FAIL")
	mustContain(t, out, "FAIL TestFarewell/polite", "no recorded llm answer from sample", "-voicetest.record")
	// Neither the unused entry nor the orphaned body is pruned or judged,
	// because a test failed.
	mustContain(t, out, "3 cache file(s) not used, but not pruned or checked: its tests failed")
	// Replay changes nothing; the stale temporary files go all the same.
	mustContain(t, out, "golden and testdata files: 0 added, 0 changed, 0 removed", "cache files: 0 added, 0 changed, 0 removed",
		"removed 2 stale temporary file(s) left by interrupted writers (older than 10m0s):")
	temps.checkStale(t, false)

	// An update rewrites the goldens and lists them, and re-records the
	// entry; its body, named by its content, is still there and in use
	// again. The run is complete and passes, so it prunes the unused
	// entry and its body, and those only (not the body in use again).
	temps.plantStale(t)
	out = s.update(t, exitOK)
	mustContain(t, out, "golden and testdata files: 0 added, 2 changed, 0 removed", "  ~ "+filepath.Join("greet", "testdata", "golden", "TestGreeting.golden"))
	mustContain(t, out, "cache files: 1 added, 0 changed, 0 removed", "voicetest-update: ok")
	_, extra := greetCache(t, dir, "extra question")
	extra, err := filepath.Rel(dir, extra)
	if err != nil {
		t.Fatal(err)
	}
	pruned := prunedCacheFiles(out)
	if len(pruned) != 2 || pruned[0] != extra || !strings.HasPrefix(pruned[1], strings.TrimSuffix(extra, ".json")+".") {
		t.Errorf("pruned %q, want the unused entry %s and its body, nothing else\n%s", pruned, extra, out)
	}
	if n := len(cacheFiles(t, dir)); n != 4 {
		t.Fatalf("after pruning: %d cache files, want 4", n)
	}
	mustContain(t, out, "removed 2 stale temporary file(s) left by interrupted writers (older than 10m0s):", "1 temporary file(s) newer than 10m0s kept")
	temps.checkStale(t, false)

	// The goldens as they were, and the check passes: the re-recorded
	// entry replays. It removes stale temporary files (listed) and
	// keeps the fresh one, without counting either as a change.
	s.setenv("SAMPLE_SUFFIX", "")
	for f, b := range goldens {
		write(t, f, string(b))
	}
	temps.plantStale(t)
	out = s.update(t, exitOK, "-check")
	mustContain(t, out, "cache replay, goldens compared", "golden and testdata files: 0 added, 0 changed, 0 removed", "cache files: 0 added, 0 changed, 0 removed",
		"removed 2 stale temporary file(s) left by interrupted writers (older than 10m0s):",
		"  - "+filepath.Join("greet", "testdata", "golden", ".TestGreeting.golden.tmp-222"),
		"1 temporary file(s) newer than 10m0s kept", "voicetest-update: ok")
	temps.checkStale(t, false)
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-nope"},
		{"./...", "-v"},
		{"-run", "("},
		{"-timeout", "soon"},
	} {
		var out bytes.Buffer
		if code := run(args, &out, &out); code != exitUsage {
			t.Errorf("voicetest-update %s: exit %d, want %d\n%s", strings.Join(args, " "), code, exitUsage, out.String())
		}
		if !strings.Contains(out.String(), "voicetest-update -h") {
			t.Errorf("voicetest-update %s: no pointer to -h:\n%s", strings.Join(args, " "), out.String())
		}
	}
	var out bytes.Buffer
	if code := run([]string{"-h"}, &out, &out); code != exitOK || !strings.Contains(out.String(), "Exit codes:") {
		t.Errorf("-h: exit %d\n%s", code, out.String())
	}
}

func TestUnusedFiles(t *testing.T) {
	dir := t.TempDir()
	d1, d2 := strings.Repeat("a", 64), strings.Repeat("b", 64)
	write(t, filepath.Join(dir, "llm", d1+".json"), `{"body":{"file":"`+d1+`.0123456789ab.txt"}}`)
	write(t, filepath.Join(dir, "llm", d1+".0123456789ab.txt"), "kept")
	write(t, filepath.Join(dir, "llm", d1+".ba9876543210.txt"), "orphan from an older answer")
	write(t, filepath.Join(dir, "llm", d2+".json"), `{"body":{"file":"`+d2+`.0123456789ab.txt"}}`)
	write(t, filepath.Join(dir, "llm", d2+".0123456789ab.txt"), "unused")
	write(t, filepath.Join(dir, "README.md"), "not a cache file")
	write(t, filepath.Join(dir, "llm", "."+d1+".json.tmp-123"), "fresh temp file of a running writer")
	write(t, filepath.Join(dir, "llm", "."+d2+".json.tmp-456"), "stale temp file of a killed writer")
	// Temporary files are never entries, stale or not: tempFiles
	// removes the stale ones, unusedFiles lists neither.
	setAge(t, filepath.Join(dir, "llm", "."+d2+".json.tmp-456"), 2*time.Hour)
	got, err := unusedFiles(dir, map[string]bool{filepath.Join(dir, "llm", d1+".json"): true})
	if err != nil {
		t.Fatal(err)
	}
	// Entries first, so an interrupted prune never leaves an entry
	// without its body.
	want := []string{
		filepath.Join(dir, "llm", d2+".json"),
		filepath.Join(dir, "llm", d1+".ba9876543210.txt"),
		filepath.Join(dir, "llm", d2+".0123456789ab.txt"),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("unusedFiles:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
