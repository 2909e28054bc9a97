package pipecat

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/pipecat/pipecatpb"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"google.golang.org/protobuf/proto"
)

// TestAppendAudioFrameMatchesMarshal wants appendAudioFrame's bytes to be
// exactly proto.Marshal's for the same Frame, for frames of every size up
// to 300 samples and 20 ms and 1 s ones, at the standard rates (varints of
// two and three bytes) and rate 0 (the field left out), after a non-empty
// buffer.
func TestAppendAudioFrameMatchesMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 80))
	sizes := []int{0, 1, 63, 64, 8191, 8192, 320, 480, 16000}
	for n := range 300 {
		sizes = append(sizes, n)
	}
	for _, rate := range []int{0, 8000, 16000, 24000, 48000} {
		for _, n := range sizes {
			samples := make([]int16, n)
			for i := range samples {
				samples[i] = int16(rng.Uint32())
			}
			want, err := proto.MarshalOptions{}.MarshalAppend([]byte("prefix"), &pipecatpb.Frame{Frame: &pipecatpb.Frame_Audio{
				Audio: &pipecatpb.AudioRawFrame{Audio: wire.AppendPCM16(nil, samples), SampleRate: uint32(rate), NumChannels: 1}}})
			if err != nil {
				t.Fatal(err)
			}
			if got := appendAudioFrame([]byte("prefix"), samples, rate); !bytes.Equal(got, want) {
				t.Fatalf("%d samples at %d Hz: appendAudioFrame gives\n%x\nproto.Marshal\n%x", n, rate, got[:min(len(got), 40)], want[:min(len(want), 40)])
			}
		}
	}
}
