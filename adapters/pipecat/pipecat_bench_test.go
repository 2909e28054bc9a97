package pipecat_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/pipecat"
	"github.com/voicetest-go/voicetest/adapters/pipecat/pipecatpb"
	"github.com/voicetest-go/voicetest/voicetest"
	"google.golang.org/protobuf/proto"
)

// minimalBot is a Pipecat bot for benchmarks that does next to no work: it
// discards what it reads and, for every n sent on blast, sends n
// AudioRawFrames of 20 ms at 24 kHz as fast as it can.
func minimalBot(b *testing.B) (url string, blast chan int) {
	b.Helper()
	blast = make(chan int, 1)
	audio, err := proto.Marshal(&pipecatpb.Frame{Frame: &pipecatpb.Frame_Audio{Audio: &pipecatpb.AudioRawFrame{Audio: make([]byte, 960), SampleRate: 24000, NumChannels: 1}}})
	if err != nil {
		b.Fatal(err)
	}
	srv := adaptertest.BenchServer(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		go func() {
			defer cancel() // the client left: stop blasting
			for {
				if _, _, err := ws.Read(ctx); err != nil {
					return
				}
			}
		}()
		for {
			select {
			case n := <-blast:
				for range n {
					if ws.Write(ctx, websocket.MessageBinary, audio) != nil {
						return
					}
				}
			case <-ctx.Done():
				return
			}
		}
	}))
	return srv.WSURL("/ws"), blast
}

// BenchmarkPipecatSendFrame measures SendAudio of one 20 ms frame at
// 24 kHz: resampling to the wire rate, then a protobuf AudioRawFrame
// (16 kHz PCM16) or a Twilio media message (8 kHz µ-law in base64 JSON),
// and the loopback write. Bytes are the PCM16 input.
func BenchmarkPipecatSendFrame(b *testing.B) {
	for _, ser := range []pipecat.Serializer{pipecat.Protobuf, pipecat.Twilio} {
		b.Run(ser.String(), func(b *testing.B) {
			url, _ := minimalBot(b)
			conn := adaptertest.BenchConn(b, pipecat.New(url, ser), 24000)
			adaptertest.BenchSendFrame(b, conn, adaptertest.Tone(24000, 440, 20*time.Millisecond, 9000))
		})
	}
}

// BenchmarkPipecatRecvAudio measures receiving one protobuf AudioRawFrame
// of 20 ms at 24 kHz: the loopback read, protobuf decoding, PCM16
// decoding and the queue. Bytes are the frame's audio.
func BenchmarkPipecatRecvAudio(b *testing.B) {
	url, blast := minimalBot(b)
	conn := adaptertest.BenchConn(b, pipecat.New(url, pipecat.Protobuf), 24000)
	b.SetBytes(960)
	b.ReportAllocs()
	b.ResetTimer()
	blast <- b.N
	for range b.N {
		ev, err := conn.Recv(b.Context())
		if err != nil || ev.Kind != voicetest.AgentAudio || ev.Audio.Len() != 480 {
			b.Fatalf("Recv: %v %v", ev.Kind, err)
		}
	}
}
