package speech

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A speech program that prints more on stdout than the bound is an error
// that names the program and the bound; one that prints up to it is not.
func TestRunBoundsStdout(t *testing.T) {
	t.Parallel()
	out, err := runBounded(t.Context(), 1000, nil, "sh", "-c", "head -c 1000 /dev/zero")
	if err != nil || len(out) != 1000 {
		t.Fatalf("1000 bytes under a bound of 1000: %d bytes, %v", len(out), err)
	}
	out, err = runBounded(t.Context(), 1000, nil, "sh", "-c", "head -c 3000000 /dev/zero")
	if err == nil || !strings.Contains(err.Error(), "more than 1000 bytes") || !strings.Contains(err.Error(), "sh printed") {
		t.Fatalf("3 MB under a bound of 1000: %d bytes, error %v; want an error naming the program and the bound", len(out), err)
	}
}

// A failing program's stderr is kept as its last stderrLimit bytes only,
// and the error quotes its end.
func TestRunKeepsOnlyTheTailOfStderr(t *testing.T) {
	t.Parallel()
	_, err := run(t.Context(), "sh", "-c", `head -c 4000000 /dev/zero | tr '\0' x >&2; echo the-last-words >&2; exit 3`)
	if err == nil {
		t.Fatal("a program that exited 3 did not fail")
	}
	msg := err.Error()
	if !strings.Contains(msg, "the-last-words") || !strings.Contains(msg, "exit status 3") {
		t.Errorf("the error does not quote stderr's end and the exit: %.200q", msg)
	}
	if len(msg) > stderrLimit+200 {
		t.Errorf("the error is %d bytes; want stderr quoted to at most %d", len(msg), stderrLimit)
	}
}

// tailBuffer holds the last max bytes of whatever is written, in pieces
// of any size, and never more.
func TestTailBuffer(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		tb := &tailBuffer{max: 64}
		var all []byte
		for range r.IntN(20) {
			p := make([]byte, r.IntN(150))
			for i := range p {
				p[i] = byte(r.IntN(256))
			}
			if n, err := tb.Write(p); n != len(p) || err != nil {
				t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(p))
			}
			all = append(all, p...)
			if len(tb.b) > tb.max {
				t.Fatalf("round %d: holds %d bytes, bound %d", round, len(tb.b), tb.max)
			}
		}
		want := all[max(len(all)-64, 0):]
		if !bytes.Equal(tb.b, want) {
			t.Fatalf("round %d: holds %x, want the last %d bytes %x", round, tb.b, len(want), want)
		}
	}
}

// readTail reads only the end of a long log.
func TestReadTail(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "decode.log")
	b := bytes.Repeat([]byte("INFO: a line of the decoder's log\n"), 1000)
	b = append(b, "ERROR: the end\n"...)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	got := readTail(p, 100)
	if len(got) != 100 || !bytes.HasSuffix(got, []byte("ERROR: the end\n")) {
		t.Errorf("readTail(100) = %d bytes %q; want the file's last 100", len(got), got)
	}
	if got := readTail(filepath.Join(t.TempDir(), "missing"), 100); got != nil {
		t.Errorf("readTail of a missing file = %q, want nil", got)
	}
	if got := errorLines(readTail(p, 100)); got != "ERROR: the end" {
		t.Errorf("errorLines of the tail = %q", got)
	}
}

// TestEngineEnv: a local TTS engine keeps what it inherits but the audio
// runtime's variables, and runs in the runtime directory it is given, so
// neither the user's sound server (XDG_RUNTIME_DIR, PULSE_SERVER) nor
// TMPDIR and ~/.config/pulse see it.
func TestEngineEnv(t *testing.T) {
	environ := []string{
		"PATH=/usr/bin", "HOME=/home/u", "XDG_RUNTIME_DIR=/run/user/1000",
		"PULSE_SERVER=unix:/run/user/1000/pulse/native", "PULSE_RUNTIME_PATH=/run/user/1000/pulse", "TMPDIR=/tmp/t",
	}
	got := engineEnv(environ, "/tmp/t/voicetest-espeak-ng-1")
	want := []string{"PATH=/usr/bin", "HOME=/home/u", "TMPDIR=/tmp/t", "XDG_RUNTIME_DIR=/tmp/t/voicetest-espeak-ng-1"}
	if !slices.Equal(got, want) {
		t.Errorf("engineEnv = %q, want %q", got, want)
	}
}
