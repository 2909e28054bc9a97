package wire

import (
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// Downstream converts the agent's audio to the session rate with a
// streaming resampler, made when the agent's rate is first seen and made
// anew (after the old one's tail) when the agent changes rate. Protocols
// whose audio states its own rate (Gemini Live's mimeType, Pipecat's
// AudioRawFrame) use it; the zero value with Rate set is ready. It is not
// safe for concurrent use: adapters call it from their reader goroutine.
type Downstream struct {
	// Rate is the session rate.
	Rate int
	r    *pcm.Resampler
	from int
}

// Append appends to evs the AgentAudio event of samples, which are at
// rate, converted to the session rate (nothing when the resampler holds
// all of them back). At the session rate the event holds samples itself.
func (d *Downstream) Append(evs []voicetest.AgentEvent, rate int, samples []int16) ([]voicetest.AgentEvent, error) {
	if d.r != nil && d.from != rate {
		evs = d.Flush(evs)
		d.r = nil
	}
	if rate == d.Rate {
		d.from = rate
		return append(evs, voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: pcm.Chunk{Rate: rate, Samples: samples}}), nil
	}
	if d.r == nil {
		r, err := pcm.NewResampler(rate, d.Rate)
		if err != nil {
			return evs, err
		}
		d.r, d.from = r, rate
	}
	out := d.r.Process(make([]int16, 0, d.r.MaxOut(len(samples))), samples)
	if len(out) == 0 {
		return evs, nil
	}
	return append(evs, voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: pcm.Chunk{Rate: d.Rate, Samples: out}}), nil
}

// Flush appends the resampler's held-back tail, if any, to evs: at the
// end of the agent's turn, or before a marker that must follow all of its
// audio.
func (d *Downstream) Flush(evs []voicetest.AgentEvent) []voicetest.AgentEvent {
	if d.r == nil {
		return evs
	}
	if tail := d.r.Flush(nil); len(tail) > 0 {
		evs = append(evs, voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: pcm.Chunk{Rate: d.Rate, Samples: tail}})
	}
	return evs
}

// Reset drops what the resampler holds: the agent's audio was cut off.
func (d *Downstream) Reset() {
	if d.r != nil {
		d.r.Reset()
	}
}
