package realtime_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/realtime"
	"github.com/voicetest-go/voicetest/internal/peers/realtimepeer"
	"github.com/voicetest-go/voicetest/voicetest"
)

// minimalRealtime is a Realtime server for benchmarks that does next to no
// work: it confirms the session, discards audio, and answers each
// response.create at once with one 20 ms audio delta, the transcript and
// response.done, matching frames with bytes.Contains rather than parsing
// JSON. blast, when sent n, makes it send n audio deltas as fast as it can.
func minimalRealtime(b *testing.B) (url string, blast chan int) {
	b.Helper()
	blast = make(chan int, 1)
	delta := base64.StdEncoding.EncodeToString(make([]byte, 960))
	audio := []byte(`{"type":"response.output_audio.delta","event_id":"e","response_id":"r","item_id":"i","output_index":0,"content_index":0,"delta":"` + delta + `"}`)
	reply := [][]byte{
		[]byte(`{"type":"response.created","event_id":"e","response":{"id":"r","status":"in_progress","output":[]}}`),
		audio,
		[]byte(`{"type":"response.output_audio_transcript.done","event_id":"e","response_id":"r","item_id":"i","output_index":0,"content_index":0,"transcript":"Okay."}`),
		[]byte(`{"type":"response.done","event_id":"e","response":{"id":"r","status":"completed","output":[]}}`),
	}
	base := adaptertest.BenchServer(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		adaptertest.LabelPeer(r)
		w, burst := adaptertest.BigReads(w)
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		ws.Write(ctx, websocket.MessageText, []byte(`{"type":"session.created","event_id":"e","session":{}}`))
		go func() {
			defer cancel() // the client left: stop blasting
			adaptertest.ReadLoop(ws, func(data []byte) {
				switch {
				case bytes.Contains(data, []byte(`"session.update"`)):
					ws.Write(ctx, websocket.MessageText, []byte(`{"type":"session.updated","event_id":"e","session":{}}`))
				case bytes.Contains(data, []byte(`"response.create"`)):
					burst.Begin() // the reply's events in one write
					for _, m := range reply {
						ws.Write(context.Background(), websocket.MessageText, m) // no timer per write
					}
					burst.End()
				}
			})
		}()
		adaptertest.BlastLoop(ctx, ws, blast, audio)
	}))
	return base.WSURL(""), blast
}

func benchRealtimeConn(b *testing.B, url string, rate int) voicetest.Conn {
	b.Helper()
	a := realtime.New("gpt-realtime")
	a.URL, a.APIKey = url, "sk-bench"
	return adaptertest.BenchConn(b, a, rate)
}

// BenchmarkRealtimeSendFrame measures SendAudio of one 20 ms frame at the
// session rate: resampling to 24 kHz (for 16 kHz), PCM16 and base64
// encoding, the append event and the loopback write. Bytes are the PCM16
// input.
func BenchmarkRealtimeSendFrame(b *testing.B) {
	for _, rate := range []int{24000, 16000} {
		b.Run(strconv.Itoa(rate/1000)+"kHz", func(b *testing.B) {
			url, _ := minimalRealtime(b)
			adaptertest.BenchSendFrame(b, benchRealtimeConn(b, url, rate), adaptertest.Tone(rate, 440, 20*time.Millisecond, 9000))
		})
	}
}

// BenchmarkRealtimeRecvDelta measures receiving one 20 ms audio delta:
// the loopback read, JSON and base64 decoding, PCM16 decoding and the event
// queue (no resampling: the session is at 24 kHz).
func BenchmarkRealtimeRecvDelta(b *testing.B) {
	url, blast := minimalRealtime(b)
	conn := benchRealtimeConn(b, url, 24000)
	ctx := context.Background()
	b.SetBytes(960)
	b.ReportAllocs()
	b.ResetTimer()
	blast <- b.N
	for range b.N {
		ev, err := conn.Recv(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if ev.Kind != voicetest.AgentAudio || ev.Audio.Len() != 480 {
			b.Fatalf("event %+v, want 20 ms of agent audio", ev.Kind)
		}
	}
}

// benchRealtimeTurn runs turns of 600 ms of user audio (30 frames of
// 20 ms), EndUtterance (commit + response.create), and the agent's reply
// drained to its AgentTurnEnd.
func benchRealtimeTurn(b *testing.B, conn voicetest.Conn, rate int) {
	b.Helper()
	frames := adaptertest.BenchTurnFrames(rate)
	adaptertest.BenchTurns(b, conn, func(ctx context.Context) error { return adaptertest.SendUtterance(ctx, conn, frames) },
		adaptertest.IsKind(voicetest.AgentTurnEnd))
}

// BenchmarkRealtimeTurnMinimalPeer measures the harness's overhead per
// turn on loopback: 600 ms of user audio in 30 appends, the commit and
// response.create, and a reply of one 20 ms delta, its transcript and
// response.done, against a server that answers at once and does no work of
// its own. ns/op is wall time (loopback round trip and goroutine wake-ups
// included); cpu-ns/op is the CPU time of the whole process (adapter and
// server) per turn.
func BenchmarkRealtimeTurnMinimalPeer(b *testing.B) {
	for _, rate := range []int{24000, 16000} {
		b.Run(strconv.Itoa(rate/1000)+"kHz", func(b *testing.B) {
			url, _ := minimalRealtime(b)
			benchRealtimeTurn(b, benchRealtimeConn(b, url, rate), rate)
		})
	}
}

// BenchmarkRealtimeTurn is the same turn against internal/peers/realtimepeer,
// which validates every event, keeps the input buffer and streams a
// one-word (400 ms) reply in 100 ms deltas with transcript deltas: an
// upper bound, since the server runs in the same process.
func BenchmarkRealtimeTurn(b *testing.B) {
	peer := realtimepeer.New(b, realtimepeer.Config{})
	benchRealtimeTurn(b, benchRealtimeConn(b, peer.URL, 24000), 24000)
}
