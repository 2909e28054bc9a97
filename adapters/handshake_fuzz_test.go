package adapters_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/elevenlabs"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/layercode"
	"github.com/voicetest-go/voicetest/adapters/realtime"
	"github.com/voicetest-go/voicetest/voicetest"
)

// The handshake fuzzers feed arbitrary input to the parsers that run
// before a Conn exists (what the agent answers to the opening message, a
// LayerCode backend's authorize answer): Connect must return a usable
// Conn or an error that says something, never panic or hang, and what it
// accepts must be within what the protocol allows.

// scriptedWS starts a loopback WebSocket server that runs script on each
// connection (with the handshake request and a context bounded to ten
// seconds), then reads until the client leaves. It returns the ws:// URL.
func scriptedWS(t *testing.T, script func(ctx context.Context, ws *websocket.Conn, r *http.Request) bool) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		defer cancel()
		if !script(ctx, ws, r) {
			return
		}
		for {
			if _, _, err := ws.Read(ctx); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// writeAll writes text frames in order; false if one fails.
func writeAll(ctx context.Context, ws *websocket.Conn, frames ...string) bool {
	for _, f := range frames {
		if ws.Write(ctx, websocket.MessageText, []byte(f)) != nil {
			return false
		}
	}
	return true
}

// handshakeServer is a fuzzing WebSocket server: it reads the client's
// opening message, answers with frame (binary or text), then with the
// given valid frames, then reads until the client leaves.
func handshakeServer(t *testing.T, frame []byte, binary bool, then ...string) string {
	t.Helper()
	return scriptedWS(t, func(ctx context.Context, ws *websocket.Conn, _ *http.Request) bool {
		if _, _, err := ws.Read(ctx); err != nil {
			return false
		}
		typ := websocket.MessageText
		if binary {
			typ = websocket.MessageBinary
		}
		return ws.Write(ctx, typ, frame) == nil && writeAll(ctx, ws, then...)
	})
}

// connectOrError connects a to a fuzzing peer: a Conn is closed at once,
// an error must say something.
func connectOrError(t *testing.T, a voicetest.Agent) (voicetest.Conn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	conn, err := a.Connect(ctx, voicetest.Session{Name: t.Name(), Rate: fuzzRate, Logf: func(string, ...any) {}})
	if err != nil {
		if err.Error() == "" || strings.Contains(err.Error(), "panicked") {
			t.Fatalf("Connect: %q", err)
		}
		if ctx.Err() != nil {
			t.Fatalf("Connect hung until the test's bound: %v", err)
		}
		return nil, err
	}
	t.Cleanup(func() { conn.Close() })
	return conn, nil
}

func FuzzRealtimeHandshake(f *testing.F) {
	for _, s := range []string{
		`{"type":"session.created","session":{"id":"s1"}}`,
		`{"type":"error","error":{"type":"invalid_request_error","code":"invalid_api_key","message":"bad key"}}`,
		`{"type":"session.updated","session":{}}`,
		`{"type":"session.updated"}`, `{"type":"response.done"}`, `{}`, `[]`, `null`, ``, `not json`,
	} {
		f.Add([]byte(s), false)
	}
	f.Add([]byte{0xff, 0x00}, true)
	f.Fuzz(func(t *testing.T, frame []byte, binary bool) {
		url := handshakeServer(t, frame, binary, `{"type":"session.updated","session":{"id":"s1"}}`)
		a := realtime.New("gpt-realtime")
		a.URL, a.APIKey = url, "sk-fuzz"
		a.DialTimeout = 2 * time.Second
		if conn, err := connectOrError(t, a); err == nil {
			if c := conn.Capabilities(); c.OutputFormat.Rate != 24000 || c.InputFormat.Rate != 24000 {
				t.Fatalf("a Realtime Conn at %+v", c)
			}
		}
	})
}

func FuzzElevenLabsHandshake(f *testing.F) {
	for _, s := range []struct{ frame, in, out string }{
		{`{"type":"ping","ping_event":{"event_id":1}}`, "pcm_16000", "pcm_16000"},
		{`{"type":"conversation_initiation_metadata","conversation_initiation_metadata_event":{"agent_output_audio_format":"pcm_1","user_input_audio_format":"pcm_16000"}}`, "pcm_16000", "pcm_16000"},
		{`{"type":"audio","audio_event":{"audio_base_64":"AAAA","event_id":1}}`, "ulaw_8000", "pcm_48000"},
		{`{}`, "pcm_22050", "pcm_44100"},
		{`{"type":"vad_score"}`, "pcm_0", "ulaw_8000"},
		{``, "pcm_-16000", "pcm_"},
		{`null`, "mp3_44100_128", "pcm_24000"},
	} {
		f.Add([]byte(s.frame), false, s.in, s.out)
	}
	documented := []int{8000, 16000, 22050, 24000, 44100, 48000}
	f.Fuzz(func(t *testing.T, frame []byte, binary bool, in, out string) {
		meta := fmt.Sprintf(`{"type":"conversation_initiation_metadata","conversation_initiation_metadata_event":{"conversation_id":"c","agent_output_audio_format":%q,"user_input_audio_format":%q}}`, out, in)
		a := elevenlabs.New("agent_test")
		a.URL = handshakeServer(t, frame, binary, meta)
		a.DialTimeout = 2 * time.Second
		conn, err := connectOrError(t, a)
		if err != nil {
			return
		}
		c := conn.Capabilities()
		for _, af := range []voicetest.AudioFormat{c.InputFormat, c.OutputFormat} {
			if !slices.Contains(documented, af.Rate) || af.Encoding == "mulaw" && af.Rate != 8000 {
				t.Fatalf("Connect accepted the undocumented format %+v", af)
			}
		}
	})
}

func FuzzLayerCodeAuthorize(f *testing.F) {
	for _, s := range []struct {
		status int
		body   string
	}{
		{200, `{"client_session_key":"lcsk_1","conversation_id":"c1"}`},
		{200, `{"clientSessionKey":"lcsk_1","config":{"transcription":{"trigger":"push_to_talk"}}}`},
		{200, `{"client_session_key":"lcsk_1","config":{"transcription":{"trigger":"telepathy"}}}`},
		{200, `{"client_session_key":""}`},
		{200, `{"client_session_key":5}`},
		{200, `[]`}, {200, ``}, {200, `{`},
		{401, `{"error":"bad token Bearer fuzz-bearer-secret"}`},
		{500, strings.Repeat("x", 5000)},
		{302, ``},
	} {
		f.Add(s.status, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 200 || status > 599 {
			status = 200 + (status%400+400)%400
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			w.Write(body)
		}))
		t.Cleanup(srv.Close)
		a := layercode.New(srv.URL+"/authorize", "agent-fuzz")
		a.WebSocketURL = adaptertest.SilentServer(t)
		a.AuthorizeHeader = http.Header{"Authorization": {"Bearer fuzz-bearer-secret"}}
		a.DialTimeout = 2 * time.Second
		_, err := connectOrError(t, a)
		if err != nil && strings.Contains(err.Error(), "fuzz-bearer-secret") {
			t.Fatalf("the Connect error repeats the bearer token: %v", err)
		}
	})
}
