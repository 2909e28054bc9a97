package restaurant

import (
	"context"
	"fmt"
	"strings"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// WidebandRate is the rate TelephoneSTT hands audio to its engine at:
// pocketsphinx's wideband model decodes 16 kHz only.
const WidebandRate = pcm.Rate16k

// comfortLevel is the peak of the faint noise TelephoneSTT adds to
// upsampled telephone audio: about −55 dBFS RMS, far below speech.
const comfortLevel = 96

// TelephoneSTT adapts a wideband speech recognizer to telephone audio.
//
// Telephone audio is 8 kHz µ-law: nothing above 4 kHz survives. A wideband
// model such as pocketsphinx's en-us refuses it (speech.ErrNarrowband), and
// plain upsampling is not enough either: the empty upper band gives the
// model's filter bank log energies far below anything it was trained on,
// and it hears nonsense ("whew" for "a table for two please"). So
// TelephoneSTT upsamples audio below WidebandRate to WidebandRate and adds
// a faint, fixed white noise (the same samples for the same audio, so the
// engine's cache key stays stable), which fills the empty band the way a
// real line's hiss would. It also passes phrases, when not nil, as the
// request's Phrases (a grammar for pocketsphinx, a prompt for OpenAI),
// which makes the poor telephone audio far more recognizable when the
// speaker is known to say some of them.
//
// Audio at WidebandRate or above goes to stt unchanged.
func TelephoneSTT(stt voicetest.STT, phrases []string) voicetest.STT {
	return &telephoneSTT{stt: stt, phrases: phrases}
}

type telephoneSTT struct {
	stt     voicetest.STT
	phrases []string
}

func (p *telephoneSTT) Transcribe(ctx context.Context, req voicetest.TranscriptionRequest) (voicetest.Transcription, error) {
	if p.stt == nil {
		return voicetest.Transcription{}, fmt.Errorf("restaurant: TelephoneSTT has no engine; pass one (speech.STTForTest(t, \"pocketsphinx\"))")
	}
	a, err := Widen(req.Audio)
	if err != nil {
		return voicetest.Transcription{}, err
	}
	req.Audio = a
	if p.phrases != nil && req.Phrases == nil {
		req.Phrases = p.phrases
	}
	tr, err := p.stt.Transcribe(ctx, req)
	if err != nil {
		return tr, fmt.Errorf("restaurant: transcribing %v of telephone audio: %w", a.Duration(), err)
	}
	tr.Text = strings.TrimSpace(tr.Text)
	return tr, nil
}

// Widen returns narrowband audio resampled to WidebandRate with the faint
// fixed noise TelephoneSTT describes; audio already at WidebandRate or
// above is returned as it is.
func Widen(a pcm.Chunk) (pcm.Chunk, error) {
	if err := a.Validate(); err != nil {
		return pcm.Chunk{}, fmt.Errorf("restaurant: telephone audio: %w", err)
	}
	if a.Rate >= WidebandRate {
		return a, nil
	}
	w, err := pcm.Resample(a, WidebandRate)
	if err != nil {
		return pcm.Chunk{}, fmt.Errorf("restaurant: upsampling %d Hz telephone audio to %d Hz: %w", a.Rate, WidebandRate, err)
	}
	// xorshift32 from a fixed seed: the noise is the same for every call.
	x := uint32(2463534242)
	for i, s := range w.Samples {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		n := int32(x%(2*comfortLevel+1)) - comfortLevel
		w.Samples[i] = int16(max(min(int32(s)+n, 32767), -32768))
	}
	return w, nil
}
