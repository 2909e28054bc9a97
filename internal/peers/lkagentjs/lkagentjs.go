// Package lkagentjs runs a real third-party voice agent for voicetest's
// own tests: a worker built on LiveKit Agents for Node (@livekit/agents
// 1.9.0 with its OpenAI and Silero plugins, pinned in package.json and
// locked in package-lock.json), the vendor's framework unchanged, in
// agent.mjs. It is not a test double. The agent's speech-to-text, model
// and text-to-speech are OpenAI-compatible HTTP APIs, which the test
// points at a loopback server (internal/peers/fakeopenai), so the agent
// runs offline: Silero VAD and the framework's turn-taking run as in
// production, the words come from the test.
//
// The packages are installed by
//
//	npm ci --no-audit --no-fund --prefix internal/peers/lkagentjs
//
// with ONNXRUNTIME_NODE_INSTALL=skip in the environment (as .ci/run
// does; onnxruntime-node ships its CPU binaries in the package and would
// otherwise fetch CUDA ones); about 510 MB. When Node.js or the packages
// are missing, New skips the test with that command, unless
// VOICETEST_LIVEKIT_REQUIRED is set (lkserver.RequiredEnv), in which case
// it fails.
package lkagentjs

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/internal/peers/lkserver"
)

// InstallCommand installs the pinned packages, run from the module root.
const InstallCommand = "ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --prefix internal/peers/lkagentjs"

// Pins are the packages package.json pins, and their versions.
var Pins = map[string]string{
	"@livekit/agents":               "1.9.0",
	"@livekit/agents-plugin-openai": "1.9.0",
	"@livekit/agents-plugin-silero": "1.9.0",
	"@livekit/rtc-node":             "0.13.35",
}

// Config sets what New starts.
type Config struct {
	// URL, APIKey and APISecret reach the LiveKit server.
	URL, APIKey, APISecret string
	// AgentName is the name the worker registers for explicit dispatch.
	AgentName string
	// OpenAIBaseURL ("http://127.0.0.1:port/v1/") and OpenAIKey reach
	// the OpenAI-compatible server the agent's plugins call.
	OpenAIBaseURL, OpenAIKey string
}

// Worker is a running Node.js agent worker.
type Worker struct {
	cmd  *exec.Cmd
	log  *lkserver.Tail
	done chan struct{}
	once sync.Once
	// runtimeDir is the worker's own XDG runtime directory (see
	// workerEnv), removed once the worker has exited.
	runtimeDir string
}

// Dir returns the folder of agent.mjs and its node_modules.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// check returns why the agent cannot run here, or nil.
func check() (node string, err error) {
	node, err = exec.LookPath("node")
	if err != nil {
		return "", fmt.Errorf("lkagentjs: Node.js (20 or later) is not installed: %w", err)
	}
	for name, want := range Pins {
		b, err := os.ReadFile(filepath.Join(Dir(), "node_modules", name, "package.json"))
		if err != nil {
			return "", fmt.Errorf("lkagentjs: %s is not installed; from the module root run:\n\t%s", name, InstallCommand)
		}
		var pkg struct{ Version string }
		if err := json.Unmarshal(b, &pkg); err != nil {
			return "", fmt.Errorf("lkagentjs: node_modules/%s/package.json: %w", name, err)
		}
		if pkg.Version != want {
			return "", fmt.Errorf("lkagentjs: node_modules has %s %s, but package.json pins %s; from the module root run:\n\t%s", name, pkg.Version, want, InstallCommand)
		}
	}
	return node, nil
}

// New starts the worker for tb, stopped when tb ends, and waits until it
// is ready (Ready). It skips tb (or fails it, under lkserver.RequiredEnv)
// when Node.js or the packages are missing.
func New(tb testing.TB, cfg Config) *Worker {
	tb.Helper()
	w, err := Start(cfg)
	if err != nil {
		var me *MissingError
		if errors.As(err, &me) {
			lkserver.Skip(tb, err.Error())
		}
		tb.Fatal(err)
	}
	Adopt(tb, w)
	if err := w.Ready(ReadyTimeout); err != nil {
		tb.Fatal(err)
	}
	return w
}

// ReadyTimeout is how long New waits for the worker to be ready.
const ReadyTimeout = 90 * time.Second

// MissingError is Start's error when Node.js or the pinned packages are
// missing here.
type MissingError struct{ Err error }

func (e *MissingError) Error() string { return e.Err.Error() }
func (e *MissingError) Unwrap() error { return e.Err }

// Start starts the worker outside a test and returns at once, without
// waiting for it (see Ready); the caller must Close it. A test that starts
// its worker before it needs it (its start-up, a few seconds of Node.js
// loading the framework and the VAD model, then overlaps other work)
// hands it to the test that uses it with Adopt. The error is a
// *MissingError when Node.js or the packages are missing.
func Start(cfg Config) (*Worker, error) {
	node, err := check()
	if err != nil {
		return nil, &MissingError{Err: err}
	}
	port, err := lkserver.FreePort("tcp")
	if err != nil {
		return nil, fmt.Errorf("lkagentjs: %w", err)
	}
	runtimeDir, err := os.MkdirTemp("", "lkagentjs-runtime-")
	if err != nil {
		return nil, fmt.Errorf("lkagentjs: the worker's runtime directory: %w", err)
	}
	w := &Worker{log: &lkserver.Tail{}, done: make(chan struct{}), runtimeDir: runtimeDir}
	w.cmd = exec.Command(node, "agent.mjs", "start", "--log-level", "info")
	w.cmd.Dir = Dir()
	w.cmd.Stdout, w.cmd.Stderr = w.log, w.log
	w.cmd.Env = workerEnv(os.Environ(), cfg, port, runtimeDir)
	ownGroup(w.cmd)
	if err := w.cmd.Start(); err != nil {
		os.RemoveAll(runtimeDir)
		return nil, fmt.Errorf("lkagentjs: starting %s agent.mjs: %w", node, err)
	}
	go func() {
		_ = w.cmd.Wait()
		os.RemoveAll(w.runtimeDir)
		close(w.done)
	}()
	return w, nil
}

// workerEnv returns the worker's environment: environ without the names
// the worker takes its settings from (LIVEKIT_, OPENAI_, LKAGENTJS_: only
// the test's count) nor the audio runtime's (XDG_RUNTIME_DIR, PULSE_),
// then cfg's settings, and runtimeDir as the worker's runtime directory.
//
// The audio runtime is the worker's own because LiveKit's native WebRTC
// (@livekit/rtc-node) opens an audio device module when it joins a room,
// which loads the PulseAudio client library where it is installed (a
// Debian machine with ffmpeg or Chromium has it). Without
// XDG_RUNTIME_DIR, that library makes a directory pulse-XXXXXXXXXXXX in
// TMPDIR (a test's temporary directory: left behind) and points a link
// in the user's ~/.config/pulse at it; with the user's own
// XDG_RUNTIME_DIR, it would reach the user's sound server. In runtimeDir
// there is no server: the library finds none and leaves nothing outside
// runtimeDir.
func workerEnv(environ []string, cfg Config, port int, runtimeDir string) []string {
	var env []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "LIVEKIT_"), strings.HasPrefix(name, "OPENAI_"), strings.HasPrefix(name, "LKAGENTJS_"),
			name == "XDG_RUNTIME_DIR", strings.HasPrefix(name, "PULSE_"):
		default:
			env = append(env, kv)
		}
	}
	return append(env,
		"LIVEKIT_URL="+cfg.URL, "LIVEKIT_API_KEY="+cfg.APIKey, "LIVEKIT_API_SECRET="+cfg.APISecret,
		"LKAGENTJS_AGENT_NAME="+cfg.AgentName, "LKAGENTJS_HTTP_PORT="+strconv.Itoa(port),
		"OPENAI_BASE_URL="+cfg.OpenAIBaseURL, "OPENAI_API_KEY="+cfg.OpenAIKey,
		"XDG_RUNTIME_DIR="+runtimeDir,
		"NODE_NO_WARNINGS=1")
}

// Adopt makes tb own w: w is closed when tb ends, and a tb that failed
// shows the end of w's log.
func Adopt(tb testing.TB, w *Worker) {
	tb.Helper()
	tb.Cleanup(func() {
		w.Close()
		if tb.Failed() {
			tb.Logf("lkagentjs: the Node.js worker's log (last 64 KiB):\n%s", w.Log())
		}
	})
}

// Log lines that tell the worker's readiness: the framework's, once the
// server registered the worker, and agent.mjs's own, once an idle job
// process has loaded the Silero VAD model (its prewarm).
const (
	logRegistered = "registered worker"
	logPrewarmed  = "lkagentjs: job process prewarmed"
)

// Ready waits until the server has registered the worker and a job
// process of it is prewarmed (the VAD model loaded), so that a job
// dispatched now starts at once; it fails when the worker exits first or
// timeout passes.
func (w *Worker) Ready(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var registered, prewarmed bool
	for {
		log := w.log.String()
		registered = registered || strings.Contains(log, logRegistered)
		prewarmed = prewarmed || strings.Contains(log, logPrewarmed)
		if registered && prewarmed {
			return nil
		}
		if !time.Now().Before(deadline) {
			what := "register"
			if registered {
				what = "prewarm a job process"
			}
			return fmt.Errorf("lkagentjs: the worker did not %s within %v:\n%s", what, timeout, w.Log())
		}
		select {
		case <-w.done:
			return fmt.Errorf("lkagentjs: the worker exited before it was ready (%v):\n%s", w.cmd.ProcessState, w.Log())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Log returns the end of the worker's log (its job processes' included).
func (w *Worker) Log() string { return w.log.String() }

// Close stops the worker and its job processes: SIGTERM to its process
// group, then SIGKILL after five seconds.
func (w *Worker) Close() {
	w.once.Do(func() {
		if w.cmd.Process == nil {
			return
		}
		terminate(w.cmd, false)
		select {
		case <-w.done:
		case <-time.After(5 * time.Second):
			terminate(w.cmd, true)
			<-w.done
		}
	})
}
