package adapters_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters"
	"github.com/voicetest-go/voicetest/internal/peers/layercodepeer"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
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
	audio20 := base64.StdEncoding.EncodeToString(pcm.EncodePCM16(nil, tone(16000, 440, 20*time.Millisecond, 8000).Samples))
	audio100 := base64.StdEncoding.EncodeToString(pcm.EncodePCM16(nil, tone(16000, 440, 100*time.Millisecond, 8000).Samples))
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
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx := r.Context()
		go func() {
			end := []byte(`"vad_end"`)
			for {
				_, data, err := ws.Read(ctx)
				if err != nil {
					return
				}
				if bytes.Contains(data, end) {
					for _, m := range reply {
						ws.Write(ctx, websocket.MessageText, m)
					}
				}
			}
		}()
		blastLoop(ctx, ws, p.blast, chunk)
	})
	srv := benchServer(b, mux)
	p.authorizeURL = srv.URL + "/authorize"
	p.wsURL = srv.WSURL("/ws")
	return p
}

func (p *lcBenchPeer) connect(b *testing.B) voicetest.Conn {
	b.Helper()
	a := adapters.LayerCode(p.authorizeURL, "bench")
	a.WebSocketURL = p.wsURL
	return benchConn(b, a, 24000)
}

// BenchmarkLayerCodeSendFrame measures SendAudio of one 20 ms frame at
// 24 kHz: resampling to 8 kHz and, every fifth frame, a 100 ms client.audio
// message (PCM16, base64, JSON) written to loopback. Bytes are the PCM16
// input.
func BenchmarkLayerCodeSendFrame(b *testing.B) {
	conn := newLCBenchPeer(b).connect(b)
	benchSendFrame(b, conn, tone(24000, 440, 20*time.Millisecond, 9000))
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
	if err := sendUtterance(ctx, conn, frames); err != nil {
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
	speech := tone(24000, 440, 300*time.Millisecond, 9000).Frames(20 * time.Millisecond)
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
	cpu0 := cpuTime(b)
	for b.Loop() {
		lcBenchTurn(b, conn, frames)
	}
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkLayerCodeTurn measures the same turn against
// internal/peers/layercodepeer (JSON parsing, base64, energy detection and reply
// synthesis in the peer); the reply is 20 ms of audio.
func BenchmarkLayerCodeTurn(b *testing.B) {
	peer := layercodepeer.New(b, layercodepeer.Config{WordDuration: 10 * time.Millisecond})
	a := adapters.LayerCode(peer.AuthorizeURL, "agent-test")
	a.WebSocketURL = peer.WebSocketURL
	conn, err := a.Connect(context.Background(), benchSession(24000))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	frames := lcBenchFrames()
	b.ReportAllocs()
	cpu0 := cpuTime(b)
	for b.Loop() {
		lcBenchTurn(b, conn, frames)
	}
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// benchTTS is a TTS that says anything as 20 ms of tone: an engine that
// costs nothing, so the composable agent's own costs dominate.
type benchTTS struct{}

func (benchTTS) Synthesize(_ context.Context, req voicetest.SpeechRequest) (pcm.Chunk, error) {
	return tone(req.Rate, 440, 20*time.Millisecond, 8000), nil
}

// BenchmarkComposableTextTurn measures one text turn of the composable
// agent on the real clock with engines that cost nothing (an in-process
// LLM and a TTS of 20 ms of tone): SendText, the LLM call with the
// history, synthesis, the paced 20 ms frame with its transcript, and
// AgentTurnEnd. Wall time includes the 20 ms the audio takes to play;
// cpu-ns/op is the agent's own cost.
func BenchmarkComposableTextTurn(b *testing.B) {
	conn := benchConn(b, adapters.Composable(fixtures.FakeSTT(), echoLLM(), benchTTS{}), 24000)
	benchTurns(b, conn, func(ctx context.Context) error { return conn.SendText(ctx, "Hello.") },
		isKind(voicetest.AgentTurnEnd))
}
