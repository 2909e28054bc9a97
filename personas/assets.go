package personas

import (
	_ "embed"
	"fmt"

	"github.com/voicetest-go/voicetest/pcm"
)

// babbleULaw is four talkers for street babble, raw 8 kHz G.711 µ-law; see
// assets/README.md for how it was made.
//
//go:embed assets/babble.ulaw
var babbleULaw []byte

// Layout of assets/babble.ulaw.
const (
	streetTalkerCount   = 4
	streetTalkerSamples = 12000 // 1.5 s at 8 kHz
)

// streetTalkers decodes the embedded babble talkers. Each call returns new
// chunks.
func streetTalkers() ([]pcm.Chunk, error) {
	if len(babbleULaw) != streetTalkerCount*streetTalkerSamples {
		return nil, fmt.Errorf("personas: embedded assets/babble.ulaw has %d bytes, want %d (%d talkers of %d samples); regenerate it as assets/README.md says",
			len(babbleULaw), streetTalkerCount*streetTalkerSamples, streetTalkerCount, streetTalkerSamples)
	}
	all := pcm.MulawToChunk(babbleULaw)
	out := make([]pcm.Chunk, streetTalkerCount)
	for i := range out {
		out[i] = pcm.Chunk{Rate: all.Rate, Samples: all.Samples[i*streetTalkerSamples : (i+1)*streetTalkerSamples : (i+1)*streetTalkerSamples]}
	}
	return out, nil
}

// streetEffect is the NoisyStreet persona's background: crowd babble at
// 12 dB below the voice and brown-noise traffic rumble at 18 dB below.
// The embedded asset is checked by the package's tests, so an error here
// means a broken build; it panics at init as regexp.MustCompile does.
func streetEffect() pcm.Effect {
	talkers, err := streetTalkers()
	if err != nil {
		panic(err)
	}
	return pcm.Chain(pcm.Babble(talkers, 12, 0x57EE7), pcm.BrownNoise(18, 0x57EE8))
}
