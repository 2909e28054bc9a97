package speech

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

func TestWiden(t *testing.T) {
	a := pcm.Chunk{Rate: pcm.Rate8k, Samples: []int16{1, 2, 3, -4}}
	w, err := Widen(a, pcm.Rate16k)
	require.NoError(t, err)
	assert.Equal(t, pcm.Rate16k, w.Rate)
	assert.Equal(t, []int16{1, 1, 2, 2, 3, 3, -4, -4}, w.Samples, "a zero-order hold")
	same, err := Widen(pcm.Chunk{Rate: pcm.Rate24k, Samples: []int16{5}}, pcm.Rate16k)
	require.NoError(t, err)
	assert.Equal(t, pcm.Rate24k, same.Rate, "wideband audio is left alone")
	_, err = Widen(pcm.Chunk{}, pcm.Rate16k)
	require.ErrorIs(t, err, pcm.ErrBadRate)
	_, err = Widen(a, 0)
	require.ErrorIs(t, err, pcm.ErrBadRate)
}

// recordingSTT keeps the last request.
type recordingSTT struct {
	req voicetest.TranscriptionRequest
}

func (r *recordingSTT) Transcribe(ctx context.Context, req voicetest.TranscriptionRequest) (voicetest.Transcription, error) {
	r.req = req
	return voicetest.Transcription{Text: "ok"}, nil
}

func TestNarrowband(t *testing.T) {
	inner := &recordingSTT{}
	stt := Narrowband(inner, pcm.Rate16k, "yes", "no")
	_, err := stt.Transcribe(t.Context(), voicetest.TranscriptionRequest{Audio: pcm.Silence(pcm.Rate8k, 1e8)})
	require.NoError(t, err)
	assert.Equal(t, pcm.Rate16k, inner.req.Audio.Rate)
	assert.Equal(t, 1600, inner.req.Audio.Len())
	assert.Equal(t, []string{"yes", "no"}, inner.req.Phrases)
	_, err = stt.Transcribe(t.Context(), voicetest.TranscriptionRequest{Audio: pcm.Silence(pcm.Rate8k, 1e8), Phrases: []string{"maybe"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"maybe"}, inner.req.Phrases, "the request's own phrases win")
	_, err = Narrowband(nil, pcm.Rate16k).Transcribe(t.Context(), voicetest.TranscriptionRequest{Audio: pcm.Silence(pcm.Rate8k, 1e8)})
	require.ErrorContains(t, err, "no engine")
}

// TestPocketsphinxTelephone: flite lines sent over an 8 kHz µ-law line
// are transcribed out of the box, with the phrases given once to the
// engine (WithPhrases).
func TestPocketsphinxTelephone(t *testing.T) {
	t.Parallel() // engines run as processes; no process-wide state
	SkipIfNotInstalled(t, "flite")
	SkipIfNotInstalled(t, "pocketsphinx")
	phrases := []string{"a table for two", "a table for four", "please", "tomorrow at eight", "yes that's right", "no", "the name is garcia"}
	p := Pocketsphinx(WithPhrases(phrases...))
	// The three lines go as one call, 0.8 s apart (the grammar accepts a
	// sequence of phrases across a pause): one pocketsphinx run instead of
	// three, each of which loads the model first.
	lines := []string{"A table for four, please.", "Tomorrow at eight.", "The name is Garcia."}
	call := pcm.Chunk{Rate: pcm.Rate8k}
	for i, line := range lines {
		a, err := Flite().Synthesize(t.Context(), voicetest.SpeechRequest{Text: line, Rate: pcm.Rate8k})
		require.NoError(t, err)
		if i > 0 {
			call.Samples = append(call.Samples, pcm.Silence(pcm.Rate8k, 8e8).Samples...)
		}
		call.Samples = append(call.Samples, a.Samples...)
	}
	phone := pcm.MulawToChunk(pcm.EncodeMulaw(nil, pcm.TelephoneBand()(call).Samples))
	tr, err := p.Transcribe(t.Context(), voicetest.TranscriptionRequest{Audio: phone})
	require.NoError(t, err, "8 kHz telephone audio is transcribed, not refused")
	assert.Equal(t, NormalizeWords(strings.Join(lines, " ")), NormalizeWords(tr.Text), "heard on the phone line")
}
