package speech

import (
	"context"
	"fmt"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// Widen returns narrowband audio (8 kHz telephone audio) at rate, each
// output sample holding the input sample at its time (a zero-order hold).
// That mirrors the 0–4 kHz speech spectrum, attenuated, into the empty
// upper band, the crudest bandwidth extension there is, and, measured on
// the restaurant example's phrases, by far the most accurate input for a
// wideband recognizer such as pocketsphinx: an empty upper band (a proper
// resampler's output) gives its filter bank log energies far below
// anything it was trained on, and it hears nonsense. The result depends
// only on the input. Audio already at rate or above is returned as it is.
func Widen(a pcm.Chunk, rate int) (pcm.Chunk, error) {
	if err := a.Validate(); err != nil {
		return pcm.Chunk{}, fmt.Errorf("speech: widening audio: %w", err)
	}
	if rate <= 0 {
		return pcm.Chunk{}, fmt.Errorf("speech: widening audio to %d Hz: %w", rate, pcm.ErrBadRate)
	}
	if a.Rate >= rate {
		return a, nil
	}
	n := int(int64(len(a.Samples)) * int64(rate) / int64(a.Rate))
	out := make([]int16, n)
	for i := range out {
		out[i] = a.Samples[int64(i)*int64(a.Rate)/int64(rate)]
	}
	return pcm.Chunk{Rate: rate, Samples: out}, nil
}

// Narrowband returns stt wrapped for telephone audio: audio below rate is
// widened to rate (Widen) before stt hears it, and requests without
// Phrases get phrases, when not nil. Use it for a wideband engine that
// refuses or garbles 8 kHz audio; pocketsphinx does both itself
// (WithPhrases).
func Narrowband(stt voicetest.STT, rate int, phrases ...string) voicetest.STT {
	return &narrowband{stt: stt, rate: rate, phrases: append([]string(nil), phrases...)}
}

type narrowband struct {
	stt     voicetest.STT
	rate    int
	phrases []string
}

func (n *narrowband) Transcribe(ctx context.Context, req voicetest.TranscriptionRequest) (voicetest.Transcription, error) {
	if n.stt == nil {
		return voicetest.Transcription{}, fmt.Errorf("speech: Narrowband has no engine; pass one (speech.STTForTest(t, \"openai\"))")
	}
	a, err := Widen(req.Audio, n.rate)
	if err != nil {
		return voicetest.Transcription{}, err
	}
	req.Audio = a
	if len(req.Phrases) == 0 && len(n.phrases) > 0 {
		req.Phrases = n.phrases
	}
	return n.stt.Transcribe(ctx, req)
}
