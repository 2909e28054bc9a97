package gemini_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/gemini"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/voicetest"
)

// minimalLive is a Live server for benchmarks that does next to no work:
// it answers setup with setupComplete, discards what it reads, and for
// every n sent on blast sends n messages of 100 ms of 24 kHz audio as fast
// as it can. It answers each activityEnd at once as the Live API reference
// (ai.google.dev/api/live) has the server answer a turn, each message JSON
// in a binary frame: serverContent with 20 ms of audio in modelTurn, its
// outputTranscription (the session asks for it), generationComplete and
// turnComplete.
func minimalLive(b *testing.B) (url string, blast chan int) {
	b.Helper()
	blast = make(chan int, 1)
	data := base64.StdEncoding.EncodeToString(make([]byte, 4800))
	audio := []byte(`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"` + data + `"}}]}}}`)
	reply := [][]byte{
		[]byte(`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"` + base64.StdEncoding.EncodeToString(make([]byte, 960)) + `"}}]}}}`),
		[]byte(`{"serverContent":{"outputTranscription":{"text":"Okay."}}}`),
		[]byte(`{"serverContent":{"generationComplete":true}}`),
		[]byte(`{"serverContent":{"turnComplete":true}}`),
	}
	srv := adaptertest.BenchServer(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		adaptertest.LabelPeer(r)
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ws.SetReadLimit(1 << 20)
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		go func() {
			defer cancel() // the client left: stop blasting
			adaptertest.ReadLoop(ws, func(msg []byte) {
				switch {
				case bytes.HasPrefix(msg, []byte(`{"setup"`)):
					ws.Write(ctx, websocket.MessageBinary, []byte(`{"setupComplete":{}}`))
				case bytes.Contains(msg, []byte(`"activityEnd"`)):
					for _, m := range reply {
						ws.Write(ctx, websocket.MessageBinary, m)
					}
				}
			})
		}()
		adaptertest.BlastLoop(ctx, ws, blast, audio)
	}))
	return srv.WSURL(""), blast
}

func benchGeminiConn(b *testing.B, url string, rate int) voicetest.Conn {
	b.Helper()
	a := gemini.New("")
	a.BaseURL, a.APIKey = url, "bench-key"
	return adaptertest.BenchConn(b, a, rate)
}

// BenchmarkGeminiSendFrame measures SendAudio of one 20 ms frame at the
// session rate: resampling to 16 kHz, PCM16 encoding and the SDK's
// realtimeInput message (which marshals, converts and marshals again).
// Bytes are the PCM16 input.
func BenchmarkGeminiSendFrame(b *testing.B) {
	for _, rate := range []int{24000, 16000} {
		b.Run(strconv.Itoa(rate/1000)+"kHz", func(b *testing.B) {
			url, _ := minimalLive(b)
			adaptertest.BenchSendFrame(b, benchGeminiConn(b, url, rate), adaptertest.Tone(rate, 440, 20*time.Millisecond, 9000))
		})
	}
}

// BenchmarkGeminiRecvAudio measures receiving one server message of
// 100 ms of audio: the SDK's Receive (JSON to a map and back to its
// types), PCM16 decoding and the queue. Bytes are the message's audio.
func BenchmarkGeminiRecvAudio(b *testing.B) {
	url, blast := minimalLive(b)
	conn := benchGeminiConn(b, url, 24000)
	b.SetBytes(4800)
	b.ReportAllocs()
	b.ResetTimer()
	blast <- b.N
	for range b.N {
		ev, err := conn.Recv(b.Context())
		if err != nil || ev.Kind != voicetest.AgentAudio {
			b.Fatalf("Recv: %v %v", ev.Kind, err)
		}
	}
}

// BenchmarkGeminiTurnMinimalPeer measures one turn's harness overhead:
// 600 ms of user audio at 24 kHz in 30 frames (activityStart, 30
// realtimeInput audio messages, activityEnd) and the reply (20 ms of
// audio, its transcription, generationComplete and turnComplete) drained
// to AgentTurnEnd; the server answers at once.
func BenchmarkGeminiTurnMinimalPeer(b *testing.B) {
	url, _ := minimalLive(b)
	conn := benchGeminiConn(b, url, 24000)
	frames := adaptertest.Tone(24000, 440, 600*time.Millisecond, 9000).Frames(20 * time.Millisecond)
	adaptertest.BenchTurns(b, conn, func(ctx context.Context) error {
		return adaptertest.SendUtterance(ctx, conn, frames)
	}, adaptertest.IsKind(voicetest.AgentTurnEnd))
}
