package restaurant_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/examples/restaurant"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// TestTelephoneRecognition pins what the agent's ears hear: caller lines
// spoken by flite, carried as 8 kHz µ-law, widened and transcribed by
// pocketsphinx with the agent's phrase grammar, on a clean and on a noisy
// line, and, for comparison, widened by a proper resampler instead of the
// zero-order hold TelephoneSTT uses. It is a regression test of the speech
// front end and the measurement behind the choices in TelephoneSTT and
// TestPhoneNoisyLine (examples/README.md has the table). The mistakes are
// pinned too: a change that fixes one shows up as a diff to review.
func TestTelephoneRecognition(t *testing.T) {
	t.Parallel()
	tts := speech.TTSForTest(t, "flite/slt")
	stt := speech.STTForTest(t, "pocketsphinx")
	ears := restaurant.TelephoneSTT(stt, restaurant.CallerPhrases())
	lines := []string{
		"A table for two.", "A table for four, please.", "Friday at seven thirty.",
		"Tomorrow at eight.", "The name is Garcia.", "The name is Chen.", "Yes, that's right.",
	}
	conditions := []struct {
		name  string
		line  pcm.Effect // applied to the caller's 8 kHz audio
		widen func(pcm.Chunk) (pcm.Chunk, error)
		want  []string // what is heard, line by line
	}{
		{"clean", nil, nil, []string{
			"a table for two", "a table for four please", "friday at seven thirty",
			"tomorrow at eight", "the name is garcia", "the name is chen", "yes that's right"}},
		{"band+pink20", pcm.Chain(pcm.TelephoneBand(), pcm.PinkNoise(20, 7)), nil, []string{
			"a table for two what", "a table for one please", "friday at seven thirty",
			"tomorrow at eight", "the name is garcia hello", "the name is nguyen", "yes that's right hello"}},
		{"pink15", pcm.PinkNoise(15, 7), nil, nil},
		{"clean, resampled", nil, func(c pcm.Chunk) (pcm.Chunk, error) { return pcm.Resample(c, restaurant.WidebandRate) }, nil},
	}
	for _, cond := range conditions {
		heard := make([]string, len(lines))
		correct, errs, words := 0, 0, 0
		for i, line := range lines {
			a, err := tts.Synthesize(t.Context(), voicetest.SpeechRequest{Text: line, Rate: restaurant.PhoneRate})
			if err != nil {
				t.Fatal(err)
			}
			if cond.line != nil {
				a = cond.line(a)
			}
			a = pcm.MulawToChunk(pcm.EncodeMulaw(nil, a.Samples)) // the phone line
			a.Rate = restaurant.PhoneRate
			req := voicetest.TranscriptionRequest{Audio: a}
			var tr voicetest.Transcription
			if cond.widen == nil {
				tr, err = ears.Transcribe(t.Context(), req)
			} else {
				if req.Audio, err = cond.widen(a); err != nil {
					t.Fatal(err)
				}
				req.Phrases = restaurant.CallerPhrases()
				tr, err = stt.Transcribe(t.Context(), req)
			}
			if err != nil {
				t.Fatal(err)
			}
			heard[i] = tr.Text
			if tr.Text == strings.Join(speech.NormalizeWords(line), " ") {
				correct++
			}
			w := speech.WordErrorRate(line, tr.Text)
			errs, words = errs+w.Errors(), words+w.Reference
		}
		t.Logf("%-18s WER %3.0f%%, %d/%d lines exact: %q", cond.name, 100*float64(errs)/float64(words), correct, len(lines), heard)
		if cond.want != nil && fmt.Sprint(heard) != fmt.Sprint(cond.want) {
			t.Errorf("%s: heard\n  %q\nwant\n  %q", cond.name, heard, cond.want)
		}
		// The two conditions without pinned transcripts are the ones the
		// agent is not built for; they must stay clearly worse, or the
		// choices they justify should be revisited.
		if cond.want == nil && correct > len(lines)/2 {
			t.Errorf("%s: %d/%d lines exact; the README says this condition fails, update it", cond.name, correct, len(lines))
		}
	}
}
