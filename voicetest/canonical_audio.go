package voicetest

import "github.com/voicetest-go/voicetest/pcm"

// canonicalSilence is the largest sample magnitude that counts as silence
// at the edges of an agent utterance when its audio is made canonical for
// Config.AgentSTT: 64 of 32768, about -54 dBFS, above the idle noise of a
// G.711 line and below any speech sound.
const canonicalSilence = 64

// canonicalAgentAudio returns the audio that Config.AgentSTT transcribes
// for one agent utterance, and so the audio that keys its cache entry: the
// agent's own frames, concatenated in the order they arrived, with the
// silence at both edges trimmed (samples whose magnitude is at most
// canonicalSilence). It depends only on the samples the agent sent,
// never on when they arrived: a frame that came late, a burst after a
// pause, or a gap in the stream adds no silence of its own, so a
// deterministic agent keys the same transcription on every run.
//
// An utterance that is all silence is returned whole (the engine still
// gets the audio the agent sent, and hears nothing in it). Frames at
// another rate than rate, or empty, are skipped: the runner has rejected
// the former already. The result shares no memory with frames.
func canonicalAgentAudio(rate int, frames []pcm.Chunk) pcm.Chunk {
	n := 0
	for _, f := range frames {
		if f.Rate == rate {
			n += f.Len()
		}
	}
	if n == 0 {
		return pcm.Chunk{}
	}
	all := make([]int16, 0, n)
	for _, f := range frames {
		if f.Rate == rate {
			all = append(all, f.Samples...)
		}
	}
	first, last := 0, len(all)
	for first < last && quiet(all[first]) {
		first++
	}
	for last > first && quiet(all[last-1]) {
		last--
	}
	if first == last {
		return pcm.Chunk{Rate: rate, Samples: all}
	}
	return pcm.Chunk{Rate: rate, Samples: all[first:last:last]}
}

// quiet reports whether s is silence at an utterance's edge.
func quiet(s int16) bool {
	return s >= -canonicalSilence && s <= canonicalSilence
}
