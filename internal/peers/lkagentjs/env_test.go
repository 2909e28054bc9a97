package lkagentjs

import (
	"slices"
	"strings"
	"testing"
)

// The worker's environment keeps what it inherits but the names it takes
// its settings from and the audio runtime's, which it gets from the test:
// the user's XDG_RUNTIME_DIR (a sound server) and PULSE_ settings must
// not reach it, and its runtime directory must be the one given.
func TestWorkerEnv(t *testing.T) {
	environ := []string{
		"PATH=/usr/bin", "HOME=/home/u", "XDG_RUNTIME_DIR=/run/user/1000",
		"PULSE_SERVER=unix:/run/user/1000/pulse/native", "PULSE_RUNTIME_PATH=/run/user/1000/pulse",
		"LIVEKIT_URL=ws://elsewhere", "OPENAI_API_KEY=sk-real", "LKAGENTJS_AGENT_NAME=other",
	}
	cfg := Config{URL: "ws://127.0.0.1:7880", APIKey: "k", APISecret: "s", AgentName: "a", OpenAIBaseURL: "http://127.0.0.1:9/v1/", OpenAIKey: "fake"}
	env := workerEnv(environ, cfg, 8081, "/tmp/rt")
	values := map[string][]string{}
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		values[name] = append(values[name], value)
	}
	want := map[string]string{
		"PATH": "/usr/bin", "HOME": "/home/u", "XDG_RUNTIME_DIR": "/tmp/rt",
		"LIVEKIT_URL": cfg.URL, "LIVEKIT_API_KEY": "k", "LIVEKIT_API_SECRET": "s",
		"OPENAI_API_KEY": "fake", "OPENAI_BASE_URL": cfg.OpenAIBaseURL,
		"LKAGENTJS_AGENT_NAME": "a", "LKAGENTJS_HTTP_PORT": "8081",
	}
	for name, v := range want {
		if !slices.Equal(values[name], []string{v}) {
			t.Errorf("%s = %q, want exactly %q", name, values[name], v)
		}
	}
	for name := range values {
		if strings.HasPrefix(name, "PULSE_") {
			t.Errorf("the worker inherits %s=%q; the audio runtime must be its own", name, values[name])
		}
	}
}
