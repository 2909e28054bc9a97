package vapi_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/vapi"
	"github.com/voicetest-go/voicetest/voicetest"
)

// minimalVapi is Vapi for the per-turn benchmark, doing next to no work:
// POST /call answers a Call whose transport.websocketCallUrl is its
// WebSocket (docs.vapi.ai/calls/websocket-transport); on the WebSocket it
// counts the bytes of the user's PCM16 frames (without decoding them)
// and, once every turnBytes of them (the user's speech and the silence
// after it, which Vapi's endpointing waits for), answers at once with the
// assistant's client messages around 20 ms of PCM16 at 16 kHz:
// speech-update started, the audio, a final transcript, speech-update
// stopped. got counts the PCM16 bytes it read.
func minimalVapi(b *testing.B, turnBytes int64) (base string, got *atomic.Int64) {
	b.Helper()
	got = new(atomic.Int64)
	reply := []struct {
		typ websocket.MessageType
		msg []byte
	}{
		{websocket.MessageText, []byte(`{"type":"speech-update","status":"started","role":"assistant","turn":0}`)},
		{websocket.MessageBinary, make([]byte, 640)},
		{websocket.MessageText, []byte(`{"type":"transcript","role":"assistant","transcriptType":"final","transcript":"Okay."}`)},
		{websocket.MessageText, []byte(`{"type":"speech-update","status":"stopped","role":"assistant","turn":0}`)},
	}
	var wsURL string
	mux := http.NewServeMux()
	mux.HandleFunc("POST /call", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"id":"call-1","status":"queued","transport":{"provider":"vapi.websocket","websocketCallUrl":"` + wsURL + `"}}`))
	})
	mux.HandleFunc("GET /call-1/transport", func(w http.ResponseWriter, r *http.Request) {
		adaptertest.LabelPeer(r)
		w, burst := adaptertest.BigReads(w)
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		var n int64
		adaptertest.ReadLoop(ws, func(data []byte) {
			if len(data) == 0 || data[0] == '{' { // the hangup at the end
				return
			}
			got.Add(int64(len(data)))
			before := n
			if n += int64(len(data)); n/turnBytes > before/turnBytes {
				burst.Begin() // the reply's messages in one write
				for _, m := range reply {
					ws.Write(context.Background(), m.typ, m.msg) // no timer per write
				}
				burst.End()
			}
		})
	})
	srv := adaptertest.BenchServer(b, mux)
	wsURL = srv.WSURL("/call-1/transport")
	return srv.URL, got
}

// BenchmarkVapiTurnMinimalPeer measures the harness's overhead per turn on
// loopback: 600 ms of user audio at 24 kHz (30 frames, resampled to the
// call's 16 kHz PCM16), EndUtterance's second of silence (ten 100 ms
// frames, for Vapi's endpointing), and the assistant's reply
// (speech-update, 20 ms of audio, the final transcript, speech-update
// stopped) received to its AgentTurnEnd, against a Vapi that answers at
// once and does no work of its own. ns/op is wall time; cpu-ns/op is the
// CPU time of the whole process (adapter and peer) per turn.
func BenchmarkVapiTurnMinimalPeer(b *testing.B) {
	const turnBytes = 2 * (9600 + 16000) // 600 ms and 1 s at 16 kHz, PCM16
	base, got := minimalVapi(b, turnBytes)
	a := vapi.New("bench-key", "asst-1")
	a.BaseURL = base
	conn := adaptertest.BenchConn(b, a, 24000)
	frames := adaptertest.BenchTurnFrames(24000)
	adaptertest.BenchTurns(b, conn, func(ctx context.Context) error { return adaptertest.SendUtterance(ctx, conn, frames) },
		adaptertest.IsKind(voicetest.AgentTurnEnd))
	if want := int64(b.N) * turnBytes; got.Load() != want {
		b.Fatalf("the peer read %d bytes of audio in %d turns, want %d: turns and replies are out of step", got.Load(), b.N, want)
	}
}
