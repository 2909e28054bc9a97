package webrtc

import (
	"math"
	"testing"

	"gopkg.in/hraban/opus.v2"
)

// BenchmarkOpusFrame measures the codec work of one 20 ms frame each
// way at 48 kHz, mono, as the pacer encodes the user's speech at
// DefaultBitrate and the reader decodes the agent's. Bytes are the PCM16
// of the frame.
func BenchmarkOpusFrame(b *testing.B) {
	frame := make([]int16, frameSamples)
	for i := range frame {
		frame[i] = int16(8000 * math.Sin(2*math.Pi*440*float64(i)/opusRate))
	}
	enc, err := opus.NewEncoder(opusRate, 1, opus.AppVoIP)
	if err != nil {
		b.Fatal(err)
	}
	enc.SetBitrate(DefaultBitrate)
	dec, err := opus.NewDecoder(opusRate, 1)
	if err != nil {
		b.Fatal(err)
	}
	packet := make([]byte, 1500)
	out := make([]int16, maxOpusSamples)
	b.SetBytes(2 * frameSamples)
	b.ReportAllocs()
	for b.Loop() {
		n, err := enc.Encode(frame, packet)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := dec.Decode(packet[:n], out); err != nil {
			b.Fatal(err)
		}
	}
}
