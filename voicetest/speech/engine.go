package speech

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// ErrNotInstalled reports a local engine whose program is not installed.
// Errors of type *NotInstalledError match it with errors.Is.
var ErrNotInstalled = errors.New("speech: engine not installed")

// NotInstalledError says which local engine is missing and which Debian
// package installs it.
type NotInstalledError struct {
	// Engine is the engine's name ("flite", "espeak", "pocketsphinx").
	Engine string
	// Program is the program or file that was not found.
	Program string
	// Package is the Debian package that provides it.
	Package string
	// Err is the underlying lookup error.
	Err error
}

// Error implements error.
func (e *NotInstalledError) Error() string {
	return fmt.Sprintf("speech: %s is not installed (%s not found): install the Debian package %s (apt-get install %s), or use a cache that holds this call",
		e.Engine, e.Program, e.Package, e.Package)
}

// Is reports whether target is ErrNotInstalled.
func (e *NotInstalledError) Is(target error) bool { return target == ErrNotInstalled }

// Unwrap returns the lookup error.
func (e *NotInstalledError) Unwrap() error { return e.Err }

// localEngine describes a program a local engine runs.
type localEngine struct {
	name, program, pkg string
}

var (
	fliteEngine        = localEngine{"flite", "flite", "flite"}
	espeakEngine       = localEngine{"espeak", "espeak-ng", "espeak-ng"}
	pocketsphinxEngine = localEngine{"pocketsphinx", "pocketsphinx_continuous", "pocketsphinx"}
)

func lookPath(name string) (string, error) { return exec.LookPath(name) }

// resolve returns the program's path: the configured one, or the usual name
// looked up in PATH.
func (e localEngine) resolve(cfg config) (string, error) {
	name := e.program
	if cfg.program != "" {
		name = cfg.program
	}
	p, err := cfg.lookPath(name)
	if err != nil {
		return "", &NotInstalledError{Engine: e.name, Program: name, Package: e.pkg, Err: err}
	}
	return p, nil
}

// Installed reports whether the local engine named engine ("flite",
// "espeak", "pocketsphinx") can run here: nil, or a *NotInstalledError
// naming the Debian package to install.
func Installed(engine string) error {
	cfg := newConfig(nil)
	for _, e := range []localEngine{fliteEngine, espeakEngine, pocketsphinxEngine} {
		if e.name == engine {
			if _, err := e.resolve(cfg); err != nil {
				return err
			}
			if e.name == pocketsphinxEngine.name {
				return checkModelDir(defaultModelDir)
			}
			return nil
		}
	}
	return fmt.Errorf("speech: unknown local engine %q; known: flite, espeak, pocketsphinx", engine)
}

// SkipIfNotInstalled skips t, with the message naming the Debian package,
// when the local engine is not installed.
func SkipIfNotInstalled(t testing.TB, engine string) {
	t.Helper()
	if err := Installed(engine); err != nil {
		t.Skip(err.Error())
	}
}

// stderrLimit bounds how much of a program's stderr an error quotes.
const stderrLimit = 2048

// maxStdout bounds what a speech program may print on its standard output
// (pocketsphinx's transcript: a few hundred bytes for an utterance).
const maxStdout = 1 << 20

// run runs program with args and returns its standard output. A failure
// says which program failed, how, and the tail of its standard error.
// Neither stream can fill memory: stdout beyond maxStdout is an error,
// and only the last stderrLimit bytes of stderr are kept.
func run(ctx context.Context, program string, args ...string) ([]byte, error) {
	return runBounded(ctx, maxStdout, nil, program, args...)
}

// runBounded is run with stdout bounded at limit bytes, and env as the
// program's environment (nil: this process's).
func runBounded(ctx context.Context, limit int, env []string, program string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Env = env
	stdout := &capped{max: limit}
	stderr := &tailBuffer{max: stderrLimit}
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("speech: %s stopped: %w", program, ctxErr)
		}
		return nil, fmt.Errorf("speech: %s failed: %w; stderr: %s", program, err, tail(stderr.b))
	}
	if stdout.over {
		return nil, fmt.Errorf("speech: %s printed more than %d bytes on its standard output; a speech program prints a transcript, not this much: check the program and its arguments", program, limit)
	}
	return stdout.b, nil
}

// engineEnv returns the environment of a local TTS engine: environ
// without the audio runtime's variables (XDG_RUNTIME_DIR, PULSE_*), and
// runtimeDir, a directory of the call's own, as XDG_RUNTIME_DIR.
//
// espeak-ng opens the PulseAudio client library even when it only writes
// a file (Debian's espeak-ng plays through libpcaudio). Without
// XDG_RUNTIME_DIR that library makes pulse-XXXXXXXXXXXX in TMPDIR, left
// behind, and links ~/.config/pulse to it; with the user's, it reaches the
// user's sound server. In runtimeDir it does neither, and the directory is
// removed with the call's other files.
func engineEnv(environ []string, runtimeDir string) []string {
	env := make([]string, 0, len(environ)+1)
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if name != "XDG_RUNTIME_DIR" && !strings.HasPrefix(name, "PULSE_") {
			env = append(env, kv)
		}
	}
	return append(env, "XDG_RUNTIME_DIR="+runtimeDir)
}

// capped keeps the first max bytes written to it and notes whether more
// came; it takes everything, so the program is never blocked on a full
// pipe.
type capped struct {
	b    []byte
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	n := len(p)
	if room := c.max - len(c.b); n > room {
		c.over = true
		p = p[:max(room, 0)]
	}
	c.b = append(c.b, p...)
	return n, nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	b   []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

// tail returns the last stderrLimit bytes of b as trimmed text.
func tail(b []byte) string {
	if len(b) > stderrLimit {
		b = b[len(b)-stderrLimit:]
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "(empty)"
	}
	return s
}
