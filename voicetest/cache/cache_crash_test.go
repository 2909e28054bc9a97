//go:build unix

package cache

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A writer process SIGKILLed in the middle of writing a temporary file:
// the test stops the child exactly there (the midWrite hook), so the kill
// lands mid-write every time, not by luck of timing.

const (
	envCrashDir   = "VOICETEST_CRASH_DIR"   // child: the cache directory
	envCrashUsage = "VOICETEST_CRASH_USAGE" // child: the usage directory
	envCrashAt    = "VOICETEST_CRASH_AT"    // child: which write to stop in (1 body, 2 entry)
	envCrashText  = "VOICETEST_CRASH_TEXT"  // child: the key's text
)

// crashKey is the key the child records: a TTS answer of crashAudio.
func crashKey(text string) Key {
	return Key{Kind: "tts", Provider: "crash", Model: "big", Fields: map[string]any{"text": text, "rate": 24000}}
}

// crashAudio is two seconds of 24 kHz audio (96 kB), big enough that half
// of it is clearly not a whole file.
func crashAudio() Audio { return Audio{Rate: 24000, PCM: testPCM(48000, 3)} }

// crashChild records crashKey, stopping in its nth file write once half of
// it is written: it prints the temporary file's name and waits to be
// killed.
func crashChild(dir, usage string, nth int, text string) {
	calls := 0
	hook := func(tmp string) {
		calls++
		if calls != nth {
			return
		}
		fmt.Printf("temp %s\n", tmp)
		time.Sleep(10 * time.Minute) // the parent kills us long before
		fmt.Println("error: not killed")
		os.Exit(3)
	}
	c, err := Open(dir, WithMode(Record), WithUsageDir(usage), withMidWrite(hook))
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	_, err = c.Audio(context.Background(), crashKey(text), func(context.Context) (Audio, error) { return crashAudio(), nil })
	fmt.Println("error: the write finished:", err)
	os.Exit(2)
}

// killMidWrite runs crashChild and SIGKILLs it once it has written half
// of its nth temporary file; it returns that file's name.
func killMidWrite(t *testing.T, dir, usage string, nth int, text string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a safety net, not an assertion
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCrashKilledWriterLeavesHarmlessTempFiles$")
	cmd.Env = append(os.Environ(), envCrashDir+"="+dir, envCrashUsage+"="+usage, envCrashAt+"="+strconv.Itoa(nth), envCrashText+"="+text)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	var tmp string
	for sc.Scan() {
		if s, ok := strings.CutPrefix(sc.Text(), "temp "); ok {
			tmp = s
			break
		}
		t.Logf("child: %s", sc.Text())
	}
	if tmp == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the writer did not stop mid-write (err %v); stderr:\n%s", sc.Err(), stderr.String())
	}
	// The temporary file holds half the data now: a partial file.
	fi, err := os.Stat(tmp)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the temporary file being written: %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("writer: %v, want killed", err)
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("writer ended with %v, want killed by SIGKILL", err)
	}
	t.Logf("killed the writer with %d bytes in %s", fi.Size(), filepath.Base(tmp))
	return tmp
}

func TestCrashKilledWriterLeavesHarmlessTempFiles(t *testing.T) {
	if dir := os.Getenv(envCrashDir); dir != "" {
		nth, _ := strconv.Atoi(os.Getenv(envCrashAt))
		crashChild(dir, os.Getenv(envCrashUsage), nth, os.Getenv(envCrashText))
		return
	}
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	dir, usage := t.TempDir(), t.TempDir()

	// Entries recorded before the crash.
	existing := map[string]string{}
	rec, err := Open(dir, WithMode(Record), WithUsageDir(""))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		q, a := fmt.Sprintf("question %d", i), fmt.Sprintf("answer %d", i)
		existing[q] = a
		if _, err := rec.Text(t.Context(), textKey(q), func(context.Context) (string, error) { return a, nil }); err != nil {
			t.Fatal(err)
		}
	}
	oldAudio := crashKey("recorded before")
	if _, err := rec.Audio(t.Context(), oldAudio, func(context.Context) (Audio, error) { return crashAudio(), nil }); err != nil {
		t.Fatal(err)
	}
	rec.Close()
	before := files(t, dir)

	// Kill one writer in the body file, another in the entry file.
	bodyTmp := killMidWrite(t, dir, usage, 1, "killed in the body")
	entryTmp := killMidWrite(t, dir, usage, 2, "killed in the entry")
	for _, tmp := range []string{bodyTmp, entryTmp} {
		name := filepath.Base(tmp)
		if !strings.HasPrefix(name, ".") || !strings.Contains(name, tempMarker) {
			t.Errorf("temporary file %s is not named .<name>%s<digits>", name, tempMarker)
		}
		if _, err := os.Stat(tmp); err != nil {
			t.Errorf("the killed writer's temporary file: %v", err)
		}
	}
	if !strings.Contains(filepath.Base(bodyTmp), ".wav"+tempMarker) {
		t.Fatalf("first write was %s, want the body (.wav)", bodyTmp)
	}
	if !strings.Contains(filepath.Base(entryTmp), ".json"+tempMarker) {
		t.Fatalf("second write was %s, want the entry (.json)", entryTmp)
	}

	// What the killed writers left: the two temporary files and, from
	// the second, a whole body (renamed before its entry was written).
	after := files(t, dir)
	var added []string
	for _, f := range after {
		if !slices.Contains(before, f) {
			added = append(added, f)
		}
	}
	if len(added) != 3 {
		t.Fatalf("the killed writers left %d files, want 3 (two temporary files, one body): %v", len(added), added)
	}

	// Replay of the existing entries is unaffected, and the killed keys
	// are plain misses: a temporary file is never read as an entry.
	c, err := Open(dir, WithMode(Replay), WithUsageDir(usage))
	if err != nil {
		t.Fatal(err)
	}
	for q, a := range existing {
		if got, err := c.Text(t.Context(), textKey(q), nil); err != nil || got != a {
			t.Errorf("replay %q after the crash: %q, %v; want %q", q, got, err, a)
		}
	}
	if got, err := c.Audio(t.Context(), oldAudio, nil); err != nil || !bytes.Equal(got.PCM, crashAudio().PCM) {
		t.Errorf("replay of the audio recorded before the crash: %d bytes, %v", len(got.PCM), err)
	}
	for _, text := range []string{"killed in the body", "killed in the entry"} {
		_, err := c.Audio(t.Context(), crashKey(text), nil)
		var miss *MissError
		if !errors.As(err, &miss) {
			t.Errorf("replay of the key whose writer was killed (%s): %v, want a *MissError", text, err)
		}
	}
	c.Close()

	// Usage tracking names real entries only.
	usageFiles, _ := filepath.Glob(filepath.Join(usage, "usage-*.txt"))
	var lines []string
	for _, f := range usageFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.Fields(string(b))...)
	}
	if len(lines) != len(existing)+1 {
		t.Errorf("usage lists %d entries, want %d: %v", len(lines), len(existing)+1, lines)
	}
	for _, l := range lines {
		if strings.Contains(l, tempMarker) || !strings.HasSuffix(l, ".json") {
			t.Errorf("usage names %s, not an entry file", l)
		}
	}

	// Recording the killed keys again works beside the leftovers.
	rec, err = Open(dir, WithMode(Record), WithUsageDir(""))
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"killed in the body", "killed in the entry"} {
		if _, err := rec.Audio(t.Context(), crashKey(text), func(context.Context) (Audio, error) { return crashAudio(), nil }); err != nil {
			t.Fatalf("recording %q after the crash: %v", text, err)
		}
	}
	rec.Close()
	c, err = Open(dir, WithMode(Replay), WithUsageDir(""))
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"killed in the body", "killed in the entry"} {
		if got, err := c.Audio(t.Context(), crashKey(text), nil); err != nil || !bytes.Equal(got.PCM, crashAudio().PCM) {
			t.Errorf("replay of %q once recorded again: %d bytes, %v", text, len(got.PCM), err)
		}
	}
	c.Close()
}
