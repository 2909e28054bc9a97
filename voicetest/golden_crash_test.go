//go:build unix

package voicetest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A process SIGKILLed while -update writes a golden file: the child stops
// itself halfway through a temporary file (the midWrite hook), so the kill
// lands mid-write every time.

const (
	envGoldenCrashDir = "VOICETEST_GOLDEN_CRASH_DIR" // child: the golden directory
	envGoldenCrashAt  = "VOICETEST_GOLDEN_CRASH_AT"  // child: which file write to stop in
)

// crashResult is a result of 200 turns whose texts carry version v
// (golden files of about 10 kB).
func crashResult(v int) *Result {
	res := &Result{Name: "crash"}
	for i := range 200 {
		at := time.Duration(i) * time.Second
		res.Transcript = append(res.Transcript,
			Message{Turn: i + 1, Role: RoleUser, Text: fmt.Sprintf("version %d question %d", v, i), Start: at, End: at + 400*time.Millisecond},
			Message{Turn: i + 1, Role: RoleAgent, Text: fmt.Sprintf("version %d answer %d", v, i), Start: at + 600*time.Millisecond, End: at + time.Second})
		res.Timeline = append(res.Timeline,
			Event{At: at, Type: EventUserStartSpeaking, Turn: i + 1, Role: RoleUser},
			Event{At: at + 500*time.Millisecond, Type: EventData, Turn: i + 1, Role: RoleAgent, Text: fmt.Sprintf("v%d", v)},
			Event{At: at + 600*time.Millisecond, Type: EventAgentStartSpeaking, Turn: i + 1, Role: RoleAgent, Latency: 200 * time.Millisecond})
	}
	return res
}

var crashOpts = GoldenOptions{Match: GoldenExact}

// goldenCrashChild writes version 2's goldens into dir, stopping in its
// nth file write once half of it is written.
func goldenCrashChild(dir string, nth int) {
	calls := 0
	err := crashResult(2).writeGolden(dir, crashOpts, func(tmp string) {
		calls++
		if calls != nth {
			return
		}
		fmt.Printf("temp %s\n", tmp)
		time.Sleep(10 * time.Minute) // the parent kills us long before
		fmt.Println("error: not killed")
		os.Exit(3)
	})
	fmt.Println("error: the write finished:", err)
	os.Exit(2)
}

// killGoldenWriter runs goldenCrashChild and SIGKILLs it mid-write; it
// returns the temporary file it was writing.
func killGoldenWriter(t *testing.T, dir string, nth int) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestGoldenCrashKilledWriterKeepsWholeFiles$")
	cmd.Env = append(os.Environ(), envGoldenCrashDir+"="+dir, envGoldenCrashAt+"="+strconv.Itoa(nth))
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
		t.Fatalf("the golden writer did not stop mid-write (err %v); stderr:\n%s", sc.Err(), stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("golden writer: %v, want killed", err)
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("golden writer ended with %v, want killed by SIGKILL", err)
	}
	return tmp
}

func TestGoldenCrashKilledWriterKeepsWholeFiles(t *testing.T) {
	if dir := os.Getenv(envGoldenCrashDir); dir != "" {
		nth, _ := strconv.Atoi(os.Getenv(envGoldenCrashAt))
		goldenCrashChild(dir, nth)
		return
	}
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	t.Parallel() // after the child's branch; each run in its own directory
	dir := filepath.Join(t.TempDir(), "golden")
	v1, v2 := crashResult(1), crashResult(2)
	if err := v1.WriteGolden(dir, crashOpts); err != nil {
		t.Fatal(err)
	}

	// Killed in the transcript: both files are still version 1, whole.
	tmp := killGoldenWriter(t, dir, 1)
	if name := filepath.Base(tmp); !strings.HasPrefix(name, "."+GoldenTranscriptFile+goldenTempMarker) {
		t.Errorf("temporary file %s, want .%s%s<digits>", name, GoldenTranscriptFile, goldenTempMarker)
	}
	partial, err := os.ReadFile(tmp)
	if err != nil {
		t.Fatalf("the killed writer's temporary file: %v", err)
	}
	if whole := v2.GoldenTranscript(crashOpts); len(partial) != len(whole)/2 || !bytes.HasPrefix(whole, partial) {
		t.Errorf("temporary file holds %d bytes, want the first half (%d) of the new transcript", len(partial), len(whole)/2)
	}
	if err := v1.CompareGolden(dir, crashOpts); err != nil {
		t.Errorf("goldens after a writer died mid-transcript: %v", err)
	}

	// Killed in the timeline: the transcript is version 2, the timeline
	// version 1, each whole; comparing either version reports the other
	// file as a mismatch, never a partial file as valid.
	killGoldenWriter(t, dir, 2)
	for _, f := range []struct {
		name string
		want []byte
	}{
		{GoldenTranscriptFile, v2.GoldenTranscript(crashOpts)},
		{GoldenTimelineFile, v1.GoldenTimeline(crashOpts)},
	} {
		got, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, f.want) {
			t.Errorf("%s after the crash: %d bytes, not the whole file written last (%d bytes)", f.name, len(got), len(f.want))
		}
	}
	for _, res := range []*Result{v1, v2} {
		err := res.CompareGolden(dir, crashOpts)
		var ge *GoldenError
		if !errors.Is(err, ErrGoldenMismatch) || !errors.As(err, &ge) {
			t.Errorf("comparing a half-updated golden pair: %v, want a mismatch", err)
		}
	}

	// The leftovers are hidden, ignored by -clean, and in the way of
	// nothing: -update writes the goldens again beside them.
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var temps int
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") && strings.Contains(e.Name(), goldenTempMarker) {
			temps++
		}
	}
	if temps != 2 {
		t.Errorf("%d temporary files in %s, want the 2 the killed writers left: %v", temps, dir, ents)
	}
	if err := cleanGoldenDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := v2.WriteGolden(dir, crashOpts); err != nil {
		t.Fatal(err)
	}
	if err := v2.CompareGolden(dir, crashOpts); err != nil {
		t.Errorf("after writing again: %v", err)
	}
	if ents2, _ := os.ReadDir(dir); len(ents2) != len(ents) {
		t.Errorf("directory went from %d to %d files; -clean or -update touched the leftovers", len(ents), len(ents2))
	}
}
