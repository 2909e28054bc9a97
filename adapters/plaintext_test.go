package adapters

import (
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/voicetest"
)

func TestRequireTLS(t *testing.T) {
	on := WSOptions{RequireTLS: true}
	for _, tc := range []struct {
		url  string
		opts WSOptions
		ok   bool
	}{
		{"ws://agent.example.com/media", WSOptions{}, true}, // the default allows it
		{"ws://agent.example.com/media", on, false},
		{"http://10.0.0.7/authorize", on, false},
		{"wss://agent.example.com/media", on, true},
		{"https://api.example.com/authorize", on, true},
		{"ws://127.0.0.1:8080/media", on, true},
		{"ws://127.9.9.9/media", on, true},
		{"ws://[::1]:9000/media", on, true},
		{"ws://localhost:9000/media", on, true},
	} {
		err := checkPlaintext("twilio", tc.url, tc.opts)
		if (err == nil) != tc.ok {
			t.Errorf("checkPlaintext(%q, RequireTLS=%v) = %v, want ok=%v", tc.url, tc.opts.RequireTLS, err, tc.ok)
		}
		if err != nil && (!strings.Contains(err.Error(), "RequireTLS") || !strings.Contains(err.Error(), "wss://")) {
			t.Errorf("error %q does not say what refused it and what to do", err)
		}
	}
}

// TestRequireTLSRefusesBeforeDialing: every adapter refuses a remote
// plain-text URL before any network traffic, when asked to.
func TestRequireTLSRefusesBeforeDialing(t *testing.T) {
	on := WSOptions{RequireTLS: true}
	s := voicetest.Session{Name: "tls", Rate: 24000, Logf: t.Logf}
	for name, a := range map[string]voicetest.Agent{
		"twilio":     &TwilioAgent{URL: "ws://agent.example.com/media", WSOptions: on},
		"websocket":  &WebSocketAgent{URL: "ws://agent.example.com/ws", Codec: RawPCM(24000), WSOptions: on},
		"realtime":   &RealtimeAgent{URL: "ws://realtime.example.com/v1/realtime", APIKey: "sk-test", Model: "m", WSOptions: on},
		"layercode":  &LayerCodeAgent{AuthorizeURL: "http://backend.example.com/authorize", AgentID: "a", WSOptions: on},
		"elevenlabs": &ElevenLabsAgent{URL: "ws://convai.example.com/v1/convai/conversation", AgentID: "a", WSOptions: on},
	} {
		c, err := a.Connect(t.Context(), s)
		if err == nil {
			c.Close()
			t.Errorf("%s: connected to a remote plain-text URL with RequireTLS set", name)
			continue
		}
		if !strings.Contains(err.Error(), "RequireTLS") {
			t.Errorf("%s: error %q does not name RequireTLS", name, err)
		}
	}
}
