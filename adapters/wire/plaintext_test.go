package wire

import (
	"strings"
	"testing"
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
		err := CheckPlaintext("twilio", tc.url, tc.opts)
		if (err == nil) != tc.ok {
			t.Errorf("CheckPlaintext(%q, RequireTLS=%v) = %v, want ok=%v", tc.url, tc.opts.RequireTLS, err, tc.ok)
		}
		if err != nil && (!strings.Contains(err.Error(), "RequireTLS") || !strings.Contains(err.Error(), "wss://")) {
			t.Errorf("error %q does not say what refused it and what to do", err)
		}
	}
}
