package voicetest

import (
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
)

// benchAheadRunner returns a runner holding a turn of the default
// MaxTurnAudio (30 s) of agent audio received in 20 ms pieces, with the 75
// words that take at 150 a minute, as a transcript ahead of the audio.
func benchAheadRunner() *runner {
	r := &runner{cfg: Config{Rate: pcm.Rate16k, WordsPerMinute: DefaultWordsPerMinute}, caps: Capabilities{TranscriptAhead: true}}
	r.hasText = true
	r.committed = []string{strings.TrimSpace(strings.Repeat("word ", 75))}
	frame := pcm.Silence(pcm.Rate16k, 20*time.Millisecond)
	for range int(DefaultMaxTurnAudio / (20 * time.Millisecond)) {
		r.speak(0, frame, frame.Duration())
	}
	r.start = time.Now().Add(-15 * time.Second) // half of it played
	return r
}

// BenchmarkAfterWordsAhead measures what the runner computes after every
// agent event while an AfterWords barge-in waits on a transcript ahead of
// its audio, for the longest turn: the words heard (the condition) and
// when they reach n (the wake-up deadline). The in-step count (words of
// the text alone) is the baseline.
func BenchmarkAfterWordsAhead(b *testing.B) {
	r := benchAheadRunner()
	b.Run("heardWords", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if r.heardWords() <= 0 {
				b.Fatal("no words heard")
			}
		}
	})
	b.Run("heardAt", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := r.heardAt(60); !ok {
				b.Fatal("heardAt found no time")
			}
		}
	})
	b.Run("textWords", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if r.textWords() != 75 {
				b.Fatal("wrong word count")
			}
		}
	})
}
