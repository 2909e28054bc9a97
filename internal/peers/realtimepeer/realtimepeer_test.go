package realtimepeer_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/internal/peers/peerkit"
	"github.com/voicetest-go/voicetest/internal/peers/realtimepeer"
)

// client is a raw Realtime client for checking the double itself.
type client struct{ *peerkit.Client }

func dial(t *testing.T, s *realtimepeer.Server, header http.Header) *client {
	t.Helper()
	return &client{peerkit.Dial(t, s.URL+"?model=gpt-realtime", header)}
}

// expectError reads events until an error event, and returns its code.
func (c *client) expectError() string {
	c.TB.Helper()
	e := c.Expect("error")["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

const gaSession = `{"type":"session.update","session":{"type":"realtime","model":"gpt-realtime","output_modalities":["audio"],"audio":{"input":{"format":{"type":"audio/pcm","rate":24000},"turn_detection":null},"output":{"format":{"type":"audio/pcm","rate":24000}}}}}`

func TestHandshake(t *testing.T) {
	s := realtimepeer.New(t, realtimepeer.Config{APIKey: "sk-right"})
	for name, tc := range map[string]struct {
		url    string
		header http.Header
		status string
	}{
		"no key":    {s.URL + "?model=m", nil, "401"},
		"wrong key": {s.URL + "?model=m", http.Header{"Authorization": {"Bearer sk-wrong"}}, "401"},
		"no model":  {s.URL, http.Header{"Authorization": {"Bearer sk-right"}}, "400"},
	} {
		_, _, err := websocket.Dial(t.Context(), tc.url, &websocket.DialOptions{HTTPHeader: tc.header})
		if err == nil || !strings.Contains(err.Error(), tc.status) {
			t.Errorf("%s: dial: %v, want HTTP %s", name, err, tc.status)
		}
	}
}

func TestRejectsWhatTheServiceRejects(t *testing.T) {
	s := realtimepeer.New(t, realtimepeer.Config{Greeting: "hello there friend", ReplyDelay: 200 * time.Millisecond, ChunkDelay: 100 * time.Millisecond})
	c := dial(t, s, nil)
	c.Expect("session.created")
	for ev, code := range map[string]string{
		`{"type":"session.update","session":{"type":"realtime","voice":"x"}}`:                                                    "unknown_parameter",
		`{"type":"session.update","session":{"model":"m"}}`:                                                                      "missing_required_parameter",
		`{"type":"session.update","session":{"type":"realtime","audio":{"input":{"format":{"type":"audio/pcm","rate":16000}}}}}`: "invalid_value",
		`{"type":"session.update","session":{"type":"realtime","tools":[{"type":"function"}]}}`:                                  "invalid_value",
		`{"type":"session.update","session":{"type":"realtime","audio":{"input":{"turn_detection":{"type":"psychic"}}}}}`:        "invalid_value",
	} {
		c.Send(ev)
		if got := c.expectError(); got != code {
			t.Errorf("%s: error %q, want %q", ev, got, code)
		}
	}
	c.Send(gaSession)
	c.Expect("session.updated")
	for ev, code := range map[string]string{
		`{"type":"response.cancel"}`:                                              "response_cancel_not_active",
		`{"type":"input_audio_buffer.commit"}`:                                    "input_audio_buffer_commit_empty",
		`{"type":"input_audio_buffer.append","audio":"!!"}`:                       "invalid_value",
		`{"type":"conversation.item.truncate","item_id":"nope","audio_end_ms":1}`: "item_truncate_invalid_item_id",
		`{"type":"dance"}`:                                                        "invalid_value",
		`{"event_id":"x"}`:                                                        "missing_required_parameter",
		`not json`:                                                                "invalid_json",
		`{"type":"conversation.item.create","item":{"type":"function_call_output","call_id":"call_nope","output":"{}"}}`: "invalid_value",
	} {
		c.Send(ev)
		if got := c.expectError(); got != code {
			t.Errorf("%s: error %q, want %q", ev, got, code)
		}
	}
	// One response at a time; cancelling it ends it as cancelled.
	c.Send(`{"type":"response.create"}`)
	c.Send(`{"type":"response.create"}`)
	if got := c.expectError(); got != "conversation_already_has_active_response" {
		t.Errorf("second response.create: %q", got)
	}
	// Truncating beyond the audio sent is an error.
	added := c.Expect("response.output_item.added")
	item := added["item"].(map[string]any)["id"].(string)
	c.Expect("response.output_audio.delta") // 100 ms
	c.Send(`{"type":"conversation.item.truncate","item_id":"` + item + `","content_index":0,"audio_end_ms":60000}`)
	if got := c.expectError(); got != "invalid_value" {
		t.Errorf("truncate beyond the audio: %q", got)
	}
	c.Send(`{"type":"response.cancel"}`)
	done := c.Expect("response.done")["response"].(map[string]any)
	if done["status"] != "cancelled" {
		t.Errorf("response.done after cancel: %v", done)
	}
	ss := s.Sessions()[0]
	if ss.Cancels != 1 || ss.Cancelled != 1 || len(ss.Errors) != 15 {
		t.Errorf("session: %d cancels, %d cancelled, %d errors %q", ss.Cancels, ss.Cancelled, len(ss.Errors), ss.Errors)
	}
}

func TestBetaNames(t *testing.T) {
	s := realtimepeer.New(t, realtimepeer.Config{Greeting: "hi"})
	c := dial(t, s, http.Header{"OpenAI-Beta": {"realtime=v1"}})
	c.Expect("session.created")
	c.Send(gaSession)
	if got := c.expectError(); got != "unknown_parameter" {
		t.Errorf("GA session shape under beta: %q", got)
	}
	c.Send(`{"type":"session.update","session":{"modalities":["audio","text"],"input_audio_format":"pcm16","output_audio_format":"pcm16","turn_detection":null}}`)
	c.Expect("session.updated")
	c.Send(`{"type":"response.create"}`)
	c.Expect("response.audio_transcript.delta")
	c.Expect("response.audio.delta")
	c.Expect("response.audio.done")
	c.Expect("response.done")
	if !s.Sessions()[0].Beta {
		t.Error("session not marked beta")
	}
}
