package layercode_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/layercode"
	"github.com/voicetest-go/voicetest/internal/peers/layercodepeer"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// lcBenchPeer is a minimal LayerCode server for benchmarks: it authorizes
// every request, reads and discards the client's messages, and answers each
// vad_end at once, without parsing JSON, with turn.start, one response.text
// and 20 ms of response.audio (16 kHz): an agent that costs next to
// nothing. blast, when sent n, makes it send n 100 ms response.audio
// messages as fast as it can.
type lcBenchPeer struct {
	authorizeURL, wsURL string
	blast               chan int
}

func newLCBenchPeer(b *testing.B) *lcBenchPeer {
	b.Helper()
	p := &lcBenchPeer{blast: make(chan int, 1)}
	audio20 := base64.StdEncoding.EncodeToString(pcm.EncodePCM16(nil, adaptertest.Tone(16000, 440, 20*time.Millisecond, 8000).Samples))
	audio100 := base64.StdEncoding.EncodeToString(pcm.EncodePCM16(nil, adaptertest.Tone(16000, 440, 100*time.Millisecond, 8000).Samples))
	reply := [][]byte{
		[]byte(`{"type":"turn.start","role":"assistant","turn_id":"t"}`),
		[]byte(`{"type":"response.text","content":"Hi.","turn_id":"t"}`),
		[]byte(`{"type":"response.audio","content":"` + audio20 + `","turn_id":"t","delta_id":"d"}`),
	}
	chunk := []byte(`{"type":"response.audio","content":"` + audio100 + `","turn_id":"t","delta_id":"d"}`)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /authorize", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"client_session_key":"k","conversation_id":"c"}`))
	})
	mux.HandleFunc("GET /ws", func(w http.ResponseWriter, r *http.Request) {
		adaptertest.LabelPeer(r)
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		go func() {
			defer cancel() // the client left: stop blasting
			end := []byte(`"vad_end"`)
			adaptertest.ReadLoop(ws, func(data []byte) {
				if bytes.Contains(data, end) {
					for _, m := range reply {
						ws.Write(ctx, websocket.MessageText, m)
					}
				}
			})
		}()
		adaptertest.BlastLoop(ctx, ws, p.blast, chunk)
	})
	srv := adaptertest.BenchServer(b, mux)
	p.authorizeURL = srv.URL + "/authorize"
	p.wsURL = srv.WSURL("/ws")
	return p
}

func (p *lcBenchPeer) connect(b *testing.B) voicetest.Conn {
	b.Helper()
	a := layercode.New(p.authorizeURL, "bench")
	a.WebSocketURL = p.wsURL
	return adaptertest.BenchConn(b, a, 24000)
}

// BenchmarkLayerCodeSendFrame measures SendAudio of one 20 ms frame at
// 24 kHz: resampling to 8 kHz and, every fifth frame, a 100 ms client.audio
// message (PCM16, base64, JSON) written to loopback. Bytes are the PCM16
// input.
func BenchmarkLayerCodeSendFrame(b *testing.B) {
	conn := newLCBenchPeer(b).connect(b)
	adaptertest.BenchSendFrame(b, conn, adaptertest.Tone(24000, 440, 20*time.Millisecond, 9000))
}

// BenchmarkLayerCodeRecvChunk measures receiving one 100 ms response.audio
// message: the loopback read, JSON and base64 decoding, resampling from
// 16 to 24 kHz, the playback clock and the event queue.
func BenchmarkLayerCodeRecvChunk(b *testing.B) {
	p := newLCBenchPeer(b)
	conn := p.connect(b)
	ctx := context.Background()
	b.SetBytes(3200)
	b.ReportAllocs()
	b.ResetTimer()
	p.blast <- b.N
	for i := 0; i < b.N; {
		ev, err := conn.Recv(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if ev.Kind == voicetest.AgentAudio {
			i++
		}
	}
}

// lcBenchTurn sends 300 ms of speech and 300 ms of silence (30 frames at
// 24 kHz), ends the utterance and receives until the reply's text and the
// first of its audio. (The resampler's last 3 ms of each reply follow when
// its audio has played, 20 ms later; they are received during the next
// turn.)
func lcBenchTurn(b *testing.B, conn voicetest.Conn, frames []pcm.Chunk) {
	ctx := context.Background()
	if err := adaptertest.SendUtterance(ctx, conn, frames); err != nil {
		b.Fatal(err)
	}
	text := false
	for {
		ev, err := conn.Recv(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if ev.Kind == voicetest.AgentTranscript {
			text = true
		}
		if text && ev.Kind == voicetest.AgentAudio {
			return
		}
	}
}

func lcBenchFrames() []pcm.Chunk {
	speech := adaptertest.Tone(24000, 440, 300*time.Millisecond, 9000).Frames(20 * time.Millisecond)
	silence := pcm.Silence(24000, 300*time.Millisecond).Frames(20 * time.Millisecond)
	return append(speech, silence...)
}

// BenchmarkLayerCodeTurnMinimalPeer measures the harness's overhead per
// turn on loopback: 300 ms of speech and 300 ms of silence sent (30 frames
// at 24 kHz, six client.audio messages, vad_start and vad_end), then the
// agent's turn.start, text and first audio received, against a peer
// that answers at once and does no work of its own. ns/op is wall time;
// cpu-ns/op is the CPU time of the whole process (adapter and peer) per
// turn.
func BenchmarkLayerCodeTurnMinimalPeer(b *testing.B) {
	conn := newLCBenchPeer(b).connect(b)
	frames := lcBenchFrames()
	b.ReportAllocs()
	cpu0 := adaptertest.CPUTime(b)
	for b.Loop() {
		lcBenchTurn(b, conn, frames)
	}
	b.ReportMetric(float64(adaptertest.CPUTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkLayerCodeTurn measures the same turn against
// internal/peers/layercodepeer (JSON parsing, base64, energy detection and reply
// synthesis in the peer); the reply is 20 ms of audio.
func BenchmarkLayerCodeTurn(b *testing.B) {
	peer := layercodepeer.New(b, layercodepeer.Config{WordDuration: 10 * time.Millisecond})
	a := layercode.New(peer.AuthorizeURL, "agent-test")
	a.WebSocketURL = peer.WebSocketURL
	conn, err := a.Connect(context.Background(), adaptertest.BenchSession(24000))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	frames := lcBenchFrames()
	b.ReportAllocs()
	cpu0 := adaptertest.CPUTime(b)
	for b.Loop() {
		lcBenchTurn(b, conn, frames)
	}
	b.ReportMetric(float64(adaptertest.CPUTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
}
