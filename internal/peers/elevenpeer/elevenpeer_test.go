package elevenpeer_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/internal/peers/elevenpeer"
	"github.com/voicetest-go/voicetest/internal/peers/peerkit"
)

func dial(t *testing.T, url string, header http.Header) *peerkit.Client {
	t.Helper()
	return peerkit.Dial(t, url, header)
}

func TestHandshake(t *testing.T) {
	s := elevenpeer.New(t, elevenpeer.Config{APIKey: "xi-right", Signature: "sig"})
	for name, tc := range map[string]struct {
		url    string
		header http.Header
		status string
	}{
		"unknown agent": {s.URL + "?agent_id=nope", http.Header{"xi-api-key": {"xi-right"}}, "404"},
		"no key":        {s.URL + "?agent_id=agent_test", nil, "403"},
		"bad signature": {s.URL + "?agent_id=agent_test&conversation_signature=forged", nil, "403"},
	} {
		_, _, err := websocket.Dial(t.Context(), tc.url, &websocket.DialOptions{HTTPHeader: tc.header})
		if err == nil || !strings.Contains(err.Error(), tc.status) {
			t.Errorf("%s: dial: %v, want HTTP %s", name, err, tc.status)
		}
	}
	c := dial(t, s.SignedURL(), nil)
	c.Send(`{"type":"conversation_initiation_client_data"}`)
	c.Expect("conversation_initiation_metadata")
}

func TestFirstMessageMustBeInitiation(t *testing.T) {
	s := elevenpeer.New(t, elevenpeer.Config{})
	c := dial(t, s.URL+"?agent_id=agent_test", nil)
	c.Send(`{"user_audio_chunk":"AAAA"}`)
	_, _, err := c.WS.Read(t.Context())
	if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Errorf("read after a wrong first message: %v, want a 1008 close", err)
	}
}

func TestRecordsViolations(t *testing.T) {
	s := elevenpeer.New(t, elevenpeer.Config{PingInterval: time.Hour, FirstMessage: "hi"})
	c := dial(t, s.URL+"?agent_id=agent_test", nil)
	c.Send(`{"type":"conversation_initiation_client_data","conversation_config_override":{"agent":{"first_message":"Overridden"}}}`)
	meta := c.Expect("conversation_initiation_metadata")["conversation_initiation_metadata_event"].(map[string]any)
	if meta["agent_output_audio_format"] != "pcm_16000" || meta["user_input_audio_format"] != "pcm_16000" {
		t.Errorf("metadata %v", meta)
	}
	ping := c.Expect("ping")["ping_event"].(map[string]any)
	if resp := c.Expect("agent_response")["agent_response_event"].(map[string]any); resp["agent_response"] != "Overridden" {
		t.Errorf("first message %v, want the override", resp)
	}
	c.Send(`{"type":"pong","event_id":999}`)
	c.Send(`{"type":"pong","event_id":` + jsonNum(ping["event_id"]) + `}`)
	c.Send(`{"type":"user_audio","user_audio_chunk":"AAAAAA=="}`)
	c.Send(`{"user_audio_chunk":"!!"}`)
	c.Send(`{"type":"client_tool_result","tool_call_id":"nope","result":"x","is_error":false}`)
	c.Send(`{"type":"dance"}`)
	c.Send(`{"type":"user_message"}`)
	conv, err := s.Wait(t.Context(), 0, func(c elevenpeer.Conversation) bool { return len(c.Errors) >= 6 && c.Pongs == 1 })
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"event_id", "bare key", "not base64", "no call made", `unknown client message type "dance"`, "without text"} {
		if !strings.Contains(conv.Errors[i], want) {
			t.Errorf("violation %d = %q, want it to mention %q", i, conv.Errors[i], want)
		}
	}
}

func jsonNum(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
