package sdkcheck_test

import (
	"slices"
	"strings"
	"testing"
)

// Chromium's TMPDIR and XDG_RUNTIME_DIR are the test's directory, not the
// user's (their sound server), and no PULSE_ setting reaches it; the rest
// of the environment does.
func TestBrowserEnv(t *testing.T) {
	environ := []string{"PATH=/usr/bin", "HOME=/home/u", "TMPDIR=/tmp", "XDG_RUNTIME_DIR=/run/user/1000", "PULSE_SERVER=unix:/run/user/1000/pulse/native"}
	env := browserEnv(environ, "/tmp/cr1")
	got := map[string][]string{}
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		got[name] = append(got[name], value)
	}
	for name, want := range map[string]string{"PATH": "/usr/bin", "HOME": "/home/u", "TMPDIR": "/tmp/cr1", "XDG_RUNTIME_DIR": "/tmp/cr1"} {
		if !slices.Equal(got[name], []string{want}) {
			t.Errorf("%s = %q, want exactly %q", name, got[name], want)
		}
	}
	if v, ok := got["PULSE_SERVER"]; ok {
		t.Errorf("Chromium inherits PULSE_SERVER=%q", v)
	}
	if environ[2] != "TMPDIR=/tmp" {
		t.Errorf("browserEnv changed its argument: %q", environ)
	}
}
