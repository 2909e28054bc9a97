package peerkit

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// Ear is a double's voice activity detection: it takes the user's audio
// as it arrives and finds the utterances in it by energy, as a bot's VAD
// does. An utterance starts with a packet whose RMS is above Threshold
// and ends after EndSilence of quieter audio, counted in samples (not on
// the wall clock, which a loaded machine stretches). It is not safe for
// concurrent use: one reader goroutine feeds it.
type Ear struct {
	// Rate is the audio's rate; Threshold the RMS of speech; EndSilence
	// the silence that ends an utterance.
	Rate       int
	Threshold  float64
	EndSilence time.Duration

	utter  []int16
	on     bool
	silent int
}

// Hear takes one packet. started reports that an utterance began with
// it; utterance, when not nil, is an utterance that ended with it.
func (e *Ear) Hear(samples []int16) (started bool, utterance []int16) {
	var sum float64
	for _, v := range samples {
		sum += float64(v) * float64(v)
	}
	voiced := len(samples) > 0 && math.Sqrt(sum/float64(len(samples))) > e.Threshold
	switch {
	case voiced && !e.on:
		e.on, e.silent, started = true, 0, true
	case voiced:
		e.silent = 0
	case e.on:
		e.silent += len(samples)
	}
	if e.on {
		e.utter = append(e.utter, samples...)
	}
	if e.on && pcm.DurationOf(e.silent, e.Rate) >= e.EndSilence {
		e.on = false
		utterance, e.utter = e.utter, nil
	}
	return started, utterance
}

// Transcribe returns what fixtures.FakeSTT hears in an utterance at
// rate, or its length when it hears no words.
func Transcribe(ctx context.Context, rate int, utterance []int16) string {
	audio := pcm.Chunk{Rate: rate, Samples: utterance}
	if tr, err := fixtures.FakeSTT().Transcribe(ctx, voicetest.TranscriptionRequest{Audio: audio}); err == nil {
		return tr.Text
	}
	return fmt.Sprintf("(%v of audio)", audio.Duration())
}
