package elevenlabs_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/elevenlabs"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/voicetest"
)

// minimalEleven is a ConvAI server for benchmarks that does next to no
// work: it answers the initiation data with metadata (input pcm_16000,
// output pcm_24000, so the benchmark's 24 kHz session resamples user audio
// but not agent audio), discards audio, and after every turnChunks
// user_audio_chunk messages sends one 20 ms audio event, matching frames
// with bytes.Contains rather than parsing JSON.
func minimalEleven(b *testing.B, turnChunks int) string {
	b.Helper()
	audio := []byte(`{"type":"audio","audio_event":{"audio_base_64":"` + base64.StdEncoding.EncodeToString(make([]byte, 960)) + `","event_id":1}}`)
	srv := adaptertest.BenchServer(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		adaptertest.LabelPeer(r)
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx := r.Context()
		n := 0
		adaptertest.ReadLoop(ws, func(data []byte) {
			switch {
			case bytes.Contains(data, []byte(`"conversation_initiation_client_data"`)):
				ws.Write(ctx, websocket.MessageText, []byte(`{"type":"conversation_initiation_metadata","conversation_initiation_metadata_event":{"conversation_id":"c","agent_output_audio_format":"pcm_24000","user_input_audio_format":"pcm_16000"}}`))
			case bytes.Contains(data, []byte(`"user_audio_chunk"`)):
				if n++; n%turnChunks == 0 {
					ws.Write(ctx, websocket.MessageText, audio)
				}
			}
		})
	}))
	return srv.WSURL("/?agent_id=bench")
}

// BenchmarkElevenLabsSendFrame measures SendAudio of one 20 ms frame at
// 24 kHz: resampling to the agent's 16 kHz, PCM16 and base64 encoding,
// the user_audio_chunk message and the loopback write. Bytes are the PCM16
// input.
func BenchmarkElevenLabsSendFrame(b *testing.B) {
	conn := adaptertest.BenchConn(b, &elevenlabs.Agent{URL: minimalEleven(b, 1<<30)}, 24000)
	adaptertest.BenchSendFrame(b, conn, adaptertest.Tone(24000, 440, 20*time.Millisecond, 9000))
}

// BenchmarkElevenLabsTurnMinimalPeer measures the harness's overhead per
// turn on loopback: 600 ms of user audio at 24 kHz in 30 chunks, the
// EndUtterance silence (330 ms in 4 chunks), and the agent's 20 ms audio
// event received, against a server that answers at once and does no work
// of its own. ns/op is wall time; cpu-ns/op is the CPU time of the whole
// process (adapter and server) per turn.
func BenchmarkElevenLabsTurnMinimalPeer(b *testing.B) {
	conn := adaptertest.BenchConn(b, &elevenlabs.Agent{URL: minimalEleven(b, 34)}, 24000)
	frames := adaptertest.BenchTurnFrames(24000)
	adaptertest.BenchTurns(b, conn, func(ctx context.Context) error { return adaptertest.SendUtterance(ctx, conn, frames) },
		adaptertest.IsKind(voicetest.AgentAudio))
}
