package vapi

import (
	"math"
	"testing"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/pcm"
)

// BenchmarkDecode measures what the reader does with one message of the
// call: 20 ms of the assistant's PCM16 at 16 kHz resampled to a 24 kHz
// session, and a partial transcript turned into a delta. Bytes are the
// message's.
func BenchmarkDecode(b *testing.B) {
	samples := make([]int16, 320)
	for i := range samples {
		samples[i] = int16(8000 * math.Sin(2*math.Pi*440*float64(i)/16000))
	}
	audio := pcm.EncodePCM16(nil, samples)
	b.Run("audio", func(b *testing.B) {
		c := &conn{wireRate: 16000, down: wire.Downstream{Rate: 24000}}
		b.SetBytes(int64(len(audio)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.decode(websocket.MessageBinary, audio); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("transcript", func(b *testing.B) {
		c := &conn{wireRate: 16000, down: wire.Downstream{Rate: 24000}}
		msg := []byte(`{"type":"transcript","role":"assistant","transcriptType":"partial","transcript":"We open at nine"}`)
		b.SetBytes(int64(len(msg)))
		b.ReportAllocs()
		for b.Loop() {
			c.partial = "We open at"
			if evs, err := c.decode(websocket.MessageText, msg); err != nil || len(evs) != 1 {
				b.Fatal(evs, err)
			}
		}
	})
}
