package wire

import (
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// AudioEvent returns an AgentAudio event owning a copy of samples.
func AudioEvent(rate int, samples []int16) voicetest.AgentEvent {
	return voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: pcm.Chunk{Rate: rate, Samples: append([]int16(nil), samples...)}}
}
