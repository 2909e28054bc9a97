package restaurant

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// BenchmarkDialogueBooking runs one whole booking conversation (six
// caller lines, a correction and a repeat) through the state machine.
func BenchmarkDialogueBooking(b *testing.B) {
	lines := []string{"A table for two, please.", "Friday at seven thirty.", "The name is Garcia.",
		"Sorry, make it eight.", "What?", "Yes, that's right."}
	b.ReportAllocs()
	for b.Loop() {
		d := NewDialogue()
		d.Start()
		for _, l := range lines {
			if r := d.Hear(l); r.Book != nil {
				d.Booked(nil)
			}
		}
		if !d.Done() {
			b.Fatal("the booking did not finish")
		}
	}
}

// BenchmarkWiden widens two seconds of 8 kHz telephone audio to 16 kHz.
func BenchmarkWiden(b *testing.B) {
	a := tone(2 * PhoneRate)
	b.SetBytes(int64(2 * len(a.Samples)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Widen(a); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallMedia is the agent's receive-side work for two seconds of
// call audio: 100 media frames (one second of speech, one of digital
// silence) through the VAD, the utterance buffer and the silence timer,
// and the cut of the utterance. Engines are not involved. Its throughput
// is in µ-law bytes: the line carries 8000 a second.
func BenchmarkCallMedia(b *testing.B) {
	s, err := NewServer(ServerConfig{TTS: nopEngine{}, STT: nopEngine{}})
	if err != nil {
		b.Fatal(err)
	}
	c := &call{s: s, ctx: context.Background(), dlg: NewDialogue(), events: make(chan callEvent, 1024),
		silenceLimit: 1 << 62, speechStart: -1, speechEnd: -1, started: true}
	c.vad, _ = pcm.NewVAD(PhoneRate, s.cfg.VAD)
	speech := tone(PhoneRate)
	frames := make([][]int16, 0, 100)
	for i := 0; i < len(speech.Samples); i += frameSamples {
		frames = append(frames, speech.Samples[i:i+frameSamples])
	}
	silent := make([]int16, frameSamples)
	for range 50 {
		frames = append(frames, silent)
	}
	go func() { // the brain's side: take the events, do nothing
		for range c.events {
			c.mu.Lock()
			c.busy--
			c.mu.Unlock()
		}
	}()
	b.SetBytes(int64(len(frames)) * frameSamples) // one µ-law byte a sample
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range frames {
			c.feed(f)
		}
	}
	close(c.events)
}

// tone returns n samples of a 440 Hz tone at −12 dBFS, loud enough for
// the VAD to take as speech.
func tone(n int) pcm.Chunk {
	s := make([]int16, n)
	for i := range s {
		s[i] = int16(8000 * math.Sin(2*math.Pi*440*float64(i)/PhoneRate))
	}
	return pcm.Chunk{Rate: PhoneRate, Samples: s}
}

// nopEngine stands in for engines the benchmarks never call.
type nopEngine struct{}

func (nopEngine) Synthesize(context.Context, voicetest.SpeechRequest) (pcm.Chunk, error) {
	return pcm.Chunk{}, errors.New("nopEngine: not for use")
}

func (nopEngine) Transcribe(context.Context, voicetest.TranscriptionRequest) (voicetest.Transcription, error) {
	return voicetest.Transcription{}, errors.New("nopEngine: not for use")
}
