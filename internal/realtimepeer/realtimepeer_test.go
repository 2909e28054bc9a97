package realtimepeer_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/internal/realtimepeer"
)

// client is a raw Realtime client for checking the double itself.
type client struct {
	t  *testing.T
	ws *websocket.Conn
}

func dial(t *testing.T, s *realtimepeer.Server, header http.Header) *client {
	t.Helper()
	ws, _, err := websocket.Dial(t.Context(), s.URL+"?model=gpt-realtime", &websocket.DialOptions{HTTPHeader: header})
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(1 << 20)
	t.Cleanup(func() { ws.CloseNow() })
	return &client{t, ws}
}

func (c *client) send(ev string) {
	c.t.Helper()
	if err := c.ws.Write(c.t.Context(), websocket.MessageText, []byte(ev)); err != nil {
		c.t.Fatal(err)
	}
}

// expect reads events until one of type typ, and returns it.
func (c *client) expect(typ string) map[string]any {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.t.Context(), 5*time.Second)
	defer cancel()
	for {
		_, data, err := c.ws.Read(ctx)
		if err != nil {
			c.t.Fatalf("waiting for %s: %v", typ, err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			c.t.Fatalf("server sent non-JSON %q", data)
		}
		if m["type"] == typ {
			return m
		}
	}
}

// expectError reads events until an error event, and returns its code.
func (c *client) expectError() string {
	c.t.Helper()
	e := c.expect("error")["error"].(map[string]any)
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
	c.expect("session.created")
	for ev, code := range map[string]string{
		`{"type":"session.update","session":{"type":"realtime","voice":"x"}}`:                                                    "unknown_parameter",
		`{"type":"session.update","session":{"model":"m"}}`:                                                                      "missing_required_parameter",
		`{"type":"session.update","session":{"type":"realtime","audio":{"input":{"format":{"type":"audio/pcm","rate":16000}}}}}`: "invalid_value",
		`{"type":"session.update","session":{"type":"realtime","tools":[{"type":"function"}]}}`:                                  "invalid_value",
		`{"type":"session.update","session":{"type":"realtime","audio":{"input":{"turn_detection":{"type":"psychic"}}}}}`:        "invalid_value",
	} {
		c.send(ev)
		if got := c.expectError(); got != code {
			t.Errorf("%s: error %q, want %q", ev, got, code)
		}
	}
	c.send(gaSession)
	c.expect("session.updated")
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
		c.send(ev)
		if got := c.expectError(); got != code {
			t.Errorf("%s: error %q, want %q", ev, got, code)
		}
	}
	// One response at a time; cancelling it ends it as cancelled.
	c.send(`{"type":"response.create"}`)
	c.send(`{"type":"response.create"}`)
	if got := c.expectError(); got != "conversation_already_has_active_response" {
		t.Errorf("second response.create: %q", got)
	}
	// Truncating beyond the audio sent is an error.
	added := c.expect("response.output_item.added")
	item := added["item"].(map[string]any)["id"].(string)
	c.expect("response.output_audio.delta") // 100 ms
	c.send(`{"type":"conversation.item.truncate","item_id":"` + item + `","content_index":0,"audio_end_ms":60000}`)
	if got := c.expectError(); got != "invalid_value" {
		t.Errorf("truncate beyond the audio: %q", got)
	}
	c.send(`{"type":"response.cancel"}`)
	done := c.expect("response.done")["response"].(map[string]any)
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
	c.expect("session.created")
	c.send(gaSession)
	if got := c.expectError(); got != "unknown_parameter" {
		t.Errorf("GA session shape under beta: %q", got)
	}
	c.send(`{"type":"session.update","session":{"modalities":["audio","text"],"input_audio_format":"pcm16","output_audio_format":"pcm16","turn_detection":null}}`)
	c.expect("session.updated")
	c.send(`{"type":"response.create"}`)
	c.expect("response.audio_transcript.delta")
	c.expect("response.audio.delta")
	c.expect("response.audio.done")
	c.expect("response.done")
	if !s.Sessions()[0].Beta {
		t.Error("session not marked beta")
	}
}
