package voicetest_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
)

const envGoldenWriter = "VOICETEST_FAULT_GOLDEN_DIR"

// bigResult is a result with n turns whose every text carries version v,
// so that a reader can tell which write a golden file comes from and
// whether it is whole (golden files of about 100 kB each).
func bigResult(v, n int) *voicetest.Result {
	res := &voicetest.Result{Name: "big"}
	for i := range n {
		at := time.Duration(i) * time.Second
		res.Transcript = append(res.Transcript,
			voicetest.Message{Turn: i + 1, Role: voicetest.RoleUser, Text: fmt.Sprintf("version %d question %d", v, i), Start: at, End: at + 400*time.Millisecond},
			voicetest.Message{Turn: i + 1, Role: voicetest.RoleAgent, Text: fmt.Sprintf("version %d answer %d", v, i), Start: at + 600*time.Millisecond, End: at + time.Second})
		res.Timeline = append(res.Timeline,
			voicetest.Event{At: at, Type: voicetest.EventUserStartSpeaking, Turn: i + 1, Role: voicetest.RoleUser},
			voicetest.Event{At: at + 500*time.Millisecond, Type: voicetest.EventData, Turn: i + 1, Role: voicetest.RoleAgent, Text: fmt.Sprintf("v%d", v)},
			voicetest.Event{At: at + 600*time.Millisecond, Type: voicetest.EventAgentStartSpeaking, Turn: i + 1, Role: voicetest.RoleAgent, Latency: 200 * time.Millisecond})
	}
	return res
}

func TestFaultProcessKilledMidGoldenWriteKeepsWholeFiles(t *testing.T) {
	t.Parallel()
	if dir := os.Getenv(envGoldenWriter); dir != "" {
		// The child: rewrite the goldens with alternating versions until
		// killed.
		for i := 1; ; i++ {
			if err := bigResult(i, 1500).WriteGolden(dir, voicetest.GoldenOptions{}); err != nil {
				fmt.Println("error:", err)
				os.Exit(2)
			}
			fmt.Println("wrote", i)
		}
	}
	dir := filepath.Join(t.TempDir(), "golden")
	for round, delay := range []time.Duration{0, 2 * time.Millisecond, 5 * time.Millisecond, 13 * time.Millisecond, 31 * time.Millisecond, 67 * time.Millisecond} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFaultProcessKilledMidGoldenWriteKeepsWholeFiles$")
		cmd.Env = append(os.Environ(), envGoldenWriter+"="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		if !sc.Scan() || !strings.HasPrefix(sc.Text(), "wrote ") {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("round %d: the writer said %q", round, sc.Text())
		}
		last, _ := strconv.Atoi(strings.TrimPrefix(sc.Text(), "wrote "))
		time.Sleep(delay)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for sc.Scan() {
			if n, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "wrote ")); err == nil {
				last = n
			}
		}
		cmd.Wait()

		// Each file is one whole version: the last finished write or the
		// one under way when the process died.
		for _, f := range []struct {
			name   string
			render func(*voicetest.Result) []byte
		}{
			{voicetest.GoldenTranscriptFile, func(r *voicetest.Result) []byte { return r.GoldenTranscript(voicetest.GoldenOptions{}) }},
			{voicetest.GoldenTimelineFile, func(r *voicetest.Result) []byte { return r.GoldenTimeline(voicetest.GoldenOptions{}) }},
		} {
			got, err := os.ReadFile(filepath.Join(dir, f.name))
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			if !bytes.Equal(got, f.render(bigResult(last, 1500))) && !bytes.Equal(got, f.render(bigResult(last+1, 1500))) {
				t.Fatalf("round %d: %s (%d bytes) is neither write %d nor write %d whole", round, f.name, len(got), last, last+1)
			}
		}
		t.Logf("round %d: killed %v after write %d; both files whole", round, delay, last)
	}
	tmp, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
	t.Logf("%d temporary files left by killed writers", len(tmp))
}

func TestFaultReadOnlyGoldenDirOnUpdate(t *testing.T) {
	if os.Geteuid() == 0 {
		// Root writes anyway; a directory that is a file fails for root
		// too.
		base := t.TempDir()
		blocker := filepath.Join(base, "testdata")
		if err := os.WriteFile(blocker, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		err := bigResult(1, 2).WriteGolden(filepath.Join(blocker, "golden", "TestX"), voicetest.GoldenOptions{})
		if err == nil || !strings.Contains(err.Error(), blocker) || !strings.Contains(err.Error(), "golden") {
			t.Fatalf("err = %v, want an error naming %s", err, blocker)
		}
		return
	}
	base := t.TempDir()
	if err := os.Chmod(base, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(base, 0o755)
	err := bigResult(1, 2).WriteGolden(filepath.Join(base, "golden"), voicetest.GoldenOptions{})
	if err == nil || !strings.Contains(err.Error(), base) || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("err = %v, want a permission error naming %s", err, base)
	}
}
