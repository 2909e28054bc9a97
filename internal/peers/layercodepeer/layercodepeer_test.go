package layercodepeer_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/internal/peers/layercodepeer"
)

// authorize asks the peer for a session and returns its key.
func authorize(t *testing.T, p *layercodepeer.Peer, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(p.AuthorizeURL, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// dial opens the peer's WebSocket with key.
func dial(t *testing.T, p *layercodepeer.Peer, key string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, p.WebSocketURL+"?client_session_key="+key, nil)
	if ws != nil {
		t.Cleanup(func() { ws.CloseNow() })
	}
	return ws, resp, err
}

func send(t *testing.T, ws *websocket.Conn, msg string) {
	t.Helper()
	if err := ws.Write(t.Context(), websocket.MessageText, []byte(msg)); err != nil {
		t.Fatal(err)
	}
}

func TestAuthorize(t *testing.T) {
	p := layercodepeer.New(t, layercodepeer.Config{Token: "tok"})
	if code, _ := authorize(t, p, `{"agent_id":"agent-test"}`); code != http.StatusUnauthorized {
		t.Errorf("no token: HTTP %d, want 401", code)
	}
	req, _ := http.NewRequest("POST", p.AuthorizeURL, strings.NewReader(`{"agent_id":"agent-test","metadata":{"a":1}}`))
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Key    string `json:"client_session_key"`
		Conv   string `json:"conversation_id"`
		Config struct {
			Transcription struct{ Trigger string }
		}
	}
	json.NewDecoder(resp.Body).Decode(&m)
	resp.Body.Close()
	if resp.StatusCode != 200 || m.Key == "" || m.Conv == "" || m.Config.Transcription.Trigger != "automatic" {
		t.Fatalf("authorize: HTTP %d %+v", resp.StatusCode, m)
	}
	// A key opens one connection; a made-up key none.
	if _, _, err := dial(t, p, m.Key); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{m.Key, "made-up"} {
		if _, resp, err := dial(t, p, key); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("dial with key %q: %v, want HTTP 403", key, err)
		}
	}
	if c := p.Calls()[0]; c.Metadata["a"] != 1.0 {
		t.Errorf("metadata %v", c.Metadata)
	}
}

// TestChecksClient checks that the peer records the protocol violations a
// LayerCode server would refuse.
func TestChecksClient(t *testing.T) {
	p := layercodepeer.New(t, layercodepeer.Config{})
	_, m := authorize(t, p, `{"agent_id":"agent-test"}`)
	ws, _, err := dial(t, p, m["client_session_key"].(string))
	if err != nil {
		t.Fatal(err)
	}
	send(t, ws, `{"type":"client.audio","content":"AAAA"}`) // before client.ready
	send(t, ws, `{"type":"client.ready"}`)
	send(t, ws, `{"type":"client.ready"}`)
	send(t, ws, `{"type":"client.audio","content":"AAA="}`) // 2 bytes: fine
	send(t, ws, `{"type":"client.audio","content":"AA=="}`) // 1 byte: odd
	send(t, ws, `{"type":"client.audio","content":"%%%"}`)
	send(t, ws, `{"type":"vad_events","event":"vad_maybe"}`)
	send(t, ws, `{"type":"trigger.turn.start","role":"assistant"}`)
	send(t, ws, `{"type":"trigger.response.audio.replay_finished","reason":"done"}`)
	send(t, ws, `{"type":"trigger.response.audio.replay_finished","reason":"completed","turn_id":"turn-9"}`)
	send(t, ws, `{"type":"client.dance"}`)
	send(t, ws, `not json`)
	ws.Write(t.Context(), websocket.MessageBinary, []byte{1})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	c, err := p.WaitCall(ctx, 0, func(c layercodepeer.Call) bool { return len(c.Errors) >= 11 })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"client.audio before client.ready",
		"client.ready sent twice",
		"client.audio: pcm: odd number of bytes",
		"client.audio content is not base64",
		`vad_events with unknown event "vad_maybe"`,
		`trigger.turn.start with role "assistant", want user`,
		`replay_finished with reason "done"`,
		`replay_finished for turn_id "turn-9", which the server never sent`,
		`unknown message type "client.dance"`,
		"not JSON",
		"binary frame of 1 bytes",
	}
	for i, w := range want {
		if !strings.Contains(c.Errors[i], w) {
			t.Errorf("error %d = %q, want it to say %q", i, c.Errors[i], w)
		}
	}
	if c.AudioMessages != 1 || len(c.Audio) != 1 {
		t.Errorf("audio: %d messages, %d samples; want the one valid one", c.AudioMessages, len(c.Audio))
	}
}

// TestReplies checks a turn from the server side: speech, vad_end, the
// reply messages, and the hang-up after the acknowledgement.
func TestReplies(t *testing.T) {
	p := layercodepeer.New(t, layercodepeer.Config{
		HangUpAfter: 1,
		Replies: func(n int, heard string) layercodepeer.Reply {
			return layercodepeer.Reply{Text: "Two words", Data: json.RawMessage(`{"n":1}`)}
		},
	})
	_, m := authorize(t, p, `{"agent_id":"agent-test"}`)
	ws, _, err := dial(t, p, m["client_session_key"].(string))
	if err != nil {
		t.Fatal(err)
	}
	send(t, ws, `{"type":"client.ready"}`)
	loud := make([]byte, 1600) // 100 ms at 8 kHz of a square wave
	for i := 0; i < len(loud); i += 2 {
		v := int16(8000)
		if i/16%2 == 1 {
			v = -8000
		}
		loud[i], loud[i+1] = byte(v), byte(uint16(v)>>8)
	}
	send(t, ws, `{"type":"client.audio","content":"`+base64.StdEncoding.EncodeToString(loud)+`"}`)
	send(t, ws, `{"type":"vad_events","event":"vad_end"}`)
	var types []string
	var audio int
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var msg struct{ Type, Role, Content, TurnID string }
		json.Unmarshal(data, &msg)
		types = append(types, msg.Type+"/"+msg.Role)
		if msg.Type == "response.audio" {
			b, _ := base64.StdEncoding.DecodeString(msg.Content)
			audio += len(b)
		}
		if msg.Type == "response.end" {
			break
		}
	}
	got := strings.Join(types, " ")
	if want := "turn.start/user turn.end/user turn.start/assistant response.text.delta/ response.text.delta/ response.text/ response.data/ response.audio/"; !strings.HasPrefix(got, want) {
		t.Errorf("server messages: %s\nwant them to start %s", got, want)
	}
	if audio != 2*2*16000*150/1000 { // two words of 150 ms at 16 kHz
		t.Errorf("%d bytes of audio before response.end", audio)
	}
	send(t, ws, `{"type":"trigger.response.audio.replay_finished","reason":"completed"}`)
	_, data, err := ws.Read(ctx)
	if err != nil || !strings.Contains(string(data), `"type":"turn.end"`) || !strings.Contains(string(data), `"role":"assistant"`) {
		t.Errorf("after the ack: %s, %v; want turn.end of the assistant", data, err)
	}
	_, _, err = ws.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Errorf("after the ack: %v, want a normal closure (hang-up)", err)
	}
	c := p.Calls()[0]
	if len(c.Errors) > 0 || c.Replies != 1 || !bytes.Equal([]byte(c.Acks[0].Reason), []byte("completed")) {
		t.Errorf("call %+v", c)
	}
}

// TestSDKAcknowledgements checks the acknowledgements as the SDK sends
// them: "completed" with no turn_id, also when its player stops at a
// barge-in, which must not count as the cut reply played.
func TestSDKAcknowledgements(t *testing.T) {
	p := layercodepeer.New(t, layercodepeer.Config{HangUpAfter: 1})
	_, m := authorize(t, p, `{"agent_id":"agent-test"}`)
	ws, _, err := dial(t, p, m["client_session_key"].(string))
	if err != nil {
		t.Fatal(err)
	}
	send(t, ws, `{"type":"client.ready"}`)
	loud := make([]byte, 1600)
	for i := 0; i < len(loud); i += 2 {
		v := int16(8000)
		if i/16%2 == 1 {
			v = -8000
		}
		loud[i], loud[i+1] = byte(v), byte(uint16(v)>>8)
	}
	speak := `{"type":"client.audio","content":"` + base64.StdEncoding.EncodeToString(loud) + `"}`
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	expect := func(typ, role string) {
		t.Helper()
		for {
			_, data, err := ws.Read(ctx)
			if err != nil {
				t.Fatalf("waiting for %s %s: %v", typ, role, err)
			}
			var msg struct{ Type, Role string }
			json.Unmarshal(data, &msg)
			if msg.Type == "turn.end" && msg.Role == "assistant" && typ != "turn.end" {
				t.Fatalf("turn.end of the assistant while waiting for %s %s", typ, role)
			}
			if msg.Type == typ && msg.Role == role {
				return
			}
		}
	}
	send(t, ws, speak)
	send(t, ws, `{"type":"vad_events","event":"vad_end"}`)
	expect("response.end", "")
	send(t, ws, speak) // a barge-in before the reply played
	expect("turn.start", "user")
	send(t, ws, `{"type":"trigger.response.audio.replay_finished","reason":"completed"}`) // the SDK's player stopped
	send(t, ws, `{"type":"client.response.data","data":{"seat":"window"}}`)
	send(t, ws, `{"type":"vad_events","event":"vad_end"}`)
	expect("response.end", "")
	send(t, ws, `{"type":"trigger.response.audio.replay_finished","reason":"completed"}`)
	expect("turn.end", "assistant")
	if _, _, err := ws.Read(ctx); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Errorf("after the second reply played: %v, want the hang-up", err)
	}
	c := p.Calls()[0]
	if len(c.Errors) > 0 || c.Interruptions != 1 || len(c.Acks) != 2 || len(c.Data) != 1 || string(c.Data[0]) != `{"seat":"window"}` {
		t.Errorf("call: errors %q, %d interruptions, acks %+v, data %s", c.Errors, c.Interruptions, c.Acks, c.Data)
	}
}
