package speech_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// roundTripSentences are ten varied sentences: numbers, times, names,
// questions, a contraction.
var roundTripSentences = []string{
	"Hello, I would like to book a table for two people.",
	"Can you call me back at seven thirty tomorrow morning?",
	"My name is Sarah Johnson and my account number is 42.",
	"The meeting starts at 9:15 in room 12.",
	"Please cancel my order and send me a refund.",
	"What time does the pharmacy open on Sunday?",
	"I don't have my card with me right now.",
	"The flight to Boston leaves at 6 in the evening.",
	"Could you repeat that more slowly, please?",
	"Yes, that's correct, thank you very much.",
}

// TestFlitePocketsphinxRoundTrip speaks ten sentences with flite/slt and
// transcribes them with pocketsphinx, plain and with the sentences as a
// phrase grammar, and checks the word error rate. Every call goes through
// the package's committed cache, so with VOICETEST_CACHE=replay it passes
// with neither engine installed.
func TestFlitePocketsphinxRoundTrip(t *testing.T) {
	c := cache.ForTest(t)
	if c.Mode() != cache.Replay {
		speech.SkipIfNotInstalled(t, "flite")
		speech.SkipIfNotInstalled(t, "pocketsphinx")
	}
	tts := speech.Flite(speech.WithCache(c), speech.WithVoice("slt"))
	stt := speech.Pocketsphinx(speech.WithCache(c))

	for _, mode := range []struct {
		name    string
		phrases []string
		limit   float64
	}{
		{"plain", nil, 0.10},
		{"grammar", roundTripSentences, 0.10},
	} {
		t.Run(mode.name, func(t *testing.T) {
			var errs, words int
			for _, s := range roundTripSentences {
				audio, err := tts.Synthesize(t.Context(), voicetest.SpeechRequest{Text: s})
				if err != nil {
					t.Fatal(err)
				}
				tr, err := stt.Transcribe(t.Context(), voicetest.TranscriptionRequest{Audio: audio, Phrases: mode.phrases})
				if err != nil {
					t.Fatal(err)
				}
				w := speech.WordErrorRate(s, tr.Text)
				errs += w.Errors()
				words += w.Reference
				t.Logf("WER %5.1f%%  %q → %q", 100*w.Rate, s, tr.Text)
			}
			wer := float64(errs) / float64(words)
			t.Logf("flite/slt → pocketsphinx (%s): WER %.1f%% (%d errors in %d words)", mode.name, 100*wer, errs, words)
			if wer > mode.limit {
				t.Errorf("WER %.1f%% is above %.0f%%", 100*wer, 100*mode.limit)
			}
		})
	}
}

// TestCommittedCacheMatchesEngines re-runs the installed engines on one of
// the round-trip sentences without the cache and compares with the
// committed entries, so fixtures that no longer match the engines (a new
// flite or pocketsphinx release) are noticed.
func TestCommittedCacheMatchesEngines(t *testing.T) {
	t.Parallel() // engines run as processes; no process-wide state
	speech.SkipIfNotInstalled(t, "flite")
	speech.SkipIfNotInstalled(t, "pocketsphinx")
	c, err := cache.Open(cache.DefaultDir, cache.WithMode(cache.Replay))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{roundTripSentences[4]} {
		req := voicetest.SpeechRequest{Text: s}
		stored, err := speech.Flite(speech.WithCache(c)).Synthesize(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := speech.Flite().Synthesize(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(stored.Samples, fresh.Samples) || stored.Rate != fresh.Rate {
			t.Errorf("flite output for %q differs from the committed cache (%d samples at %d Hz vs %d at %d Hz); re-record with go test ./voicetest/speech -run TestFlitePocketsphinxRoundTrip -voicetest.cache=refresh",
				s, fresh.Len(), fresh.Rate, stored.Len(), stored.Rate)
			continue
		}
		treq := voicetest.TranscriptionRequest{Audio: stored}
		want, err := speech.Pocketsphinx(speech.WithCache(c)).Transcribe(t.Context(), treq)
		if err != nil {
			t.Fatal(err)
		}
		got, err := speech.Pocketsphinx().Transcribe(t.Context(), treq)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("pocketsphinx now hears %q where the committed cache says %q; re-record with -voicetest.cache=refresh", got.Text, want.Text)
		}
	}
}

// TestCommittedTTSEntriesAreTheEngines re-runs the engine each committed
// TTS cache entry of the module names (provider and voice) on the entry's
// text and speed, without the cache, and requires the entry's audio: an
// entry whose audio another engine or voice made, or that a new engine
// release no longer makes, fails. The README says the committed TTS
// entries are the real engines'; this keeps it so.
func TestCommittedTTSEntriesAreTheEngines(t *testing.T) {
	t.Parallel() // engines run as processes; no process-wide state
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module root %s has no go.mod: %v", root, err)
	}
	engines := map[string]func(...speech.Option) voicetest.TTS{
		"flite":  func(o ...speech.Option) voicetest.TTS { return speech.Flite(o...) },
		"espeak": func(o ...speech.Option) voicetest.TTS { return speech.Espeak(o...) },
	}
	checked, same := 0, 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == ".git" || n == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		dir := filepath.Dir(path)
		if filepath.Base(dir) != "tts" || !strings.HasSuffix(filepath.ToSlash(filepath.Dir(dir)), "testdata/voicetest/cache") || !strings.HasSuffix(path, ".json") {
			return nil
		}
		var meta struct {
			Format, Kind, Provider, Model string
			Fields                        struct {
				Text  string
				Speed float64
			}
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if json.Unmarshal(b, &meta) != nil || !strings.HasPrefix(meta.Format, "voicetest-cache/") || meta.Kind != "tts" {
			return nil // a body, not an entry
		}
		rel, _ := filepath.Rel(root, path)
		engine, ok := engines[meta.Provider]
		if !ok {
			t.Errorf("%s: provider %q is not a local engine; its audio cannot be checked here", rel, meta.Provider)
			return nil
		}
		speech.SkipIfNotInstalled(t, meta.Provider)
		c, err := cache.Open(filepath.Dir(dir), cache.WithMode(cache.Replay))
		if err != nil {
			return err
		}
		req := voicetest.SpeechRequest{Text: meta.Fields.Text, Speed: meta.Fields.Speed, Voice: meta.Model}
		stored, err := engine(speech.WithCache(c)).Synthesize(t.Context(), req)
		if err != nil {
			t.Errorf("%s: replaying it as %s/%s: %v", rel, meta.Provider, meta.Model, err)
			return nil
		}
		fresh, err := engine().Synthesize(t.Context(), req)
		if err != nil {
			return fmt.Errorf("%s: %s/%s: %w", rel, meta.Provider, meta.Model, err)
		}
		checked++
		if stored.Rate != fresh.Rate || !slices.Equal(stored.Samples, fresh.Samples) {
			t.Errorf("%s: its audio (%d samples at %d Hz) is not what %s/%s makes of %q at speed %g (%d samples at %d Hz): record it again with -voicetest.cache=refresh",
				rel, stored.Len(), stored.Rate, meta.Provider, meta.Model, meta.Fields.Text, meta.Fields.Speed, fresh.Len(), fresh.Rate)
			return nil
		}
		same++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("found no committed tts cache entry: the scan looks in the wrong place")
	}
	t.Logf("%d committed tts entries checked, %d of them their engines' audio", checked, same)
}
