package sdkcheck_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// installCommand installs the pinned SDKs, from the repository's root.
const installCommand = "npm ci --ignore-scripts --no-audit --no-fund --prefix internal/peers/sdkcheck"

// requiredEnv, set to "1" (as .ci/run does), turns a missing Node.js or
// SDK into a failure: CI must never skip a conformance test.
const requiredEnv = "VOICETEST_SDKCHECK_REQUIRED"

// missing skips t, or fails it when requiredEnv is set, saying what is
// missing and the command that installs it.
func missing(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(requiredEnv) == "1" {
		t.Fatalf("%s (%s=1 forbids skipping)", msg, requiredEnv)
	}
	t.Skip(msg)
}

// requireNode returns the node binary, after checking that every SDK of
// package.json is installed at its pinned version.
func requireNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node not found: install Node.js 20 or later (Debian: apt-get install nodejs npm), then run %s", installCommand)
	}
	checkPins(t)
	return node
}

// checkPins compares node_modules with the exact versions package.json
// pins: an absent SDK skips (or fails under requiredEnv), a different
// version fails.
func checkPins(t *testing.T) {
	t.Helper()
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	b, err := os.ReadFile("package.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatalf("package.json: %v", err)
	}
	for name, want := range pkg.Dependencies {
		b, err := os.ReadFile(filepath.Join("node_modules", name, "package.json"))
		if errors.Is(err, os.ErrNotExist) {
			missing(t, "the SDK %s is not installed: run %s", name, installCommand)
		}
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("node_modules/%s/package.json: %v", name, err)
		}
		if got.Version != want {
			t.Fatalf("node_modules has %s %s, but package.json pins %s: run %s", name, got.Version, want, installCommand)
		}
	}
}

// report is what a conformance script reports: its failed checks, and
// counts and values of what the SDK saw.
type report struct {
	Name     string                     `json:"name"`
	Failures []string                   `json:"failures"`
	Counts   map[string]int             `json:"counts"`
	Values   map[string]json.RawMessage `json:"values"`
}

// value decodes the value under key into v, failing the test if it is
// absent or of another shape.
func (r *report) value(t *testing.T, key string, v any) {
	t.Helper()
	raw, ok := r.Values[key]
	if !ok {
		t.Fatalf("%s reported no %q (values: %s)", r.Name, key, r.keys())
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s reported %q as %.200s: %v", r.Name, key, raw, err)
	}
}

func (r *report) keys() string {
	var ks []string
	for k := range r.Values {
		ks = append(ks, k)
	}
	return strings.Join(ks, ", ")
}

// checkFailures fails t for every check the script failed.
func (r *report) checkFailures(t *testing.T) {
	t.Helper()
	for _, f := range r.Failures {
		t.Errorf("%s: %s", r.Name, f)
	}
}

// runNode runs a conformance script with extra environment variables and
// returns its report. A script that exits non-zero still reports; its
// standard error is logged.
func runNode(t *testing.T, script string, env ...string) *report {
	t.Helper()
	node := requireNode(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil || testing.Verbose() {
		t.Logf("%s stderr:\n%s", script, tail(stderr.String(), 6000))
	}
	out := bytes.TrimSpace(stdout.Bytes())
	if i := bytes.LastIndexByte(out, '\n'); i >= 0 {
		out = out[i+1:]
	}
	var r report
	if jerr := json.Unmarshal(out, &r); jerr != nil {
		t.Fatalf("%s: %v; its last line of output is not a report (%v): %.500s", script, err, jerr, out)
	}
	if err != nil && len(r.Failures) == 0 {
		t.Errorf("%s: %v with no failed check reported", script, err)
	}
	return &r
}

// ended waits, 10 s at most, until record i of a double (its Wait or
// WaitCall method) reports the connection over, and returns the record.
func ended[R any](t *testing.T, wait func(context.Context, int, func(R) bool) (R, error), i int, over func(R) bool) R {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	rec, err := wait(ctx, i, over)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
