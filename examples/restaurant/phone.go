package restaurant

import (
	"context"
	"fmt"
	"strings"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// WidebandRate is the rate TelephoneSTT hands audio to its engine at:
// pocketsphinx's wideband model decodes 16 kHz only.
const WidebandRate = pcm.Rate16k

// TelephoneSTT adapts a wideband speech recognizer to telephone audio.
//
// Telephone audio is 8 kHz µ-law: nothing above 4 kHz survives. A wideband
// model such as pocketsphinx's en-us refuses it (speech.ErrNarrowband), and
// plain upsampling with a proper low-pass filter is not enough either: the
// empty upper band gives the model's filter bank log energies far below
// anything it was trained on, and it hears nonsense ("five people party of
// three" for "a table for two please", even with a grammar). So
// TelephoneSTT widens the audio by holding each sample (a zero-order hold),
// which mirrors the 0–4 kHz speech spectrum into 4–8 kHz, the crudest
// bandwidth extension there is and, measured on this project's phrases,
// by far the most accurate input for pocketsphinx (see Widen). It also
// passes phrases, when not nil, as the request's Phrases (a grammar for
// pocketsphinx, a prompt for OpenAI), which makes telephone audio far more
// recognizable when the speaker is known to say some of them.
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

// Widen returns narrowband audio at WidebandRate by a zero-order hold:
// speech.Widen, which pocketsphinx now applies itself to telephone audio
// (speech.Pocketsphinx with speech.WithPhrases transcribes an 8 kHz call
// as TelephoneSTT does, with the same cache keys). Audio already at
// WidebandRate or above is returned as it is.
func Widen(a pcm.Chunk) (pcm.Chunk, error) {
	w, err := speech.Widen(a, WidebandRate)
	if err != nil {
		return pcm.Chunk{}, fmt.Errorf("restaurant: telephone audio: %w", err)
	}
	return w, nil
}
