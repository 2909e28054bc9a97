package speech

import (
	"context"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
)

// benchSentence is about three seconds of speech.
const benchSentence = "Can you call me back at seven thirty tomorrow morning?"

// reportPerAudioSecond reports the time spent per second of audio handled
// (the real-time factor, in ms per audio second) and the audio throughput.
func reportPerAudioSecond(b *testing.B, audio time.Duration, bytesPerOp int) {
	b.Helper()
	b.SetBytes(int64(bytesPerOp))
	perOp := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(perOp)/1e6/audio.Seconds(), "ms/audio-s")
}

func benchTTS(b *testing.B, engine string, tts voicetest.TTS) {
	SkipIfNotInstalled(b, engine)
	ctx := context.Background()
	req := voicetest.SpeechRequest{Text: benchSentence}
	first, err := tts.Synthesize(ctx, req)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := tts.Synthesize(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	reportPerAudioSecond(b, first.Duration(), 2*first.Len())
}

// BenchmarkFliteSynthesize runs flite/slt for every call (no cache).
func BenchmarkFliteSynthesize(b *testing.B) { benchTTS(b, "flite", Flite()) }

// BenchmarkEspeakSynthesize runs espeak-ng for every call (no cache).
func BenchmarkEspeakSynthesize(b *testing.B) { benchTTS(b, "espeak", Espeak()) }

func benchSTT(b *testing.B, phrases []string) {
	SkipIfNotInstalled(b, "flite")
	SkipIfNotInstalled(b, "pocketsphinx")
	ctx := context.Background()
	audio, err := Flite().Synthesize(ctx, voicetest.SpeechRequest{Text: benchSentence})
	if err != nil {
		b.Fatal(err)
	}
	stt := Pocketsphinx()
	req := voicetest.TranscriptionRequest{Audio: audio, Phrases: phrases}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := stt.Transcribe(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	reportPerAudioSecond(b, audio.Duration(), 2*audio.Len())
}

// BenchmarkPocketsphinxTranscribe decodes with the full language model.
func BenchmarkPocketsphinxTranscribe(b *testing.B) { benchSTT(b, nil) }

// BenchmarkPocketsphinxTranscribeGrammar decodes with a phrase grammar.
func BenchmarkPocketsphinxTranscribeGrammar(b *testing.B) {
	benchSTT(b, []string{benchSentence, "Please cancel my order.", "Yes, that's correct."})
}

// recordedCache returns a replaying cache holding the bench sentence's TTS
// (flite) and STT (pocketsphinx) entries, recorded into a temporary
// directory.
func recordedCache(b *testing.B) (*cache.Cache, voicetest.SpeechRequest, voicetest.TranscriptionRequest) {
	b.Helper()
	SkipIfNotInstalled(b, "flite")
	SkipIfNotInstalled(b, "pocketsphinx")
	ctx := context.Background()
	dir := b.TempDir()
	rec, err := cache.Open(dir, cache.WithMode(cache.Record))
	if err != nil {
		b.Fatal(err)
	}
	sreq := voicetest.SpeechRequest{Text: benchSentence}
	audio, err := Flite(WithCache(rec)).Synthesize(ctx, sreq)
	if err != nil {
		b.Fatal(err)
	}
	treq := voicetest.TranscriptionRequest{Audio: audio}
	if _, err := Pocketsphinx(WithCache(rec)).Transcribe(ctx, treq); err != nil {
		b.Fatal(err)
	}
	rep, err := cache.Open(dir, cache.WithMode(cache.Replay))
	if err != nil {
		b.Fatal(err)
	}
	return rep, sreq, treq
}

// BenchmarkFliteCacheHit answers flite TTS from a replaying cache.
func BenchmarkFliteCacheHit(b *testing.B) {
	c, req, _ := recordedCache(b)
	tts := Flite(WithCache(c))
	ctx := context.Background()
	first, err := tts.Synthesize(ctx, req)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := tts.Synthesize(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(2 * first.Len()))
	b.ReportMetric(float64(b.Elapsed()/time.Duration(b.N))/1e3/first.Duration().Seconds(), "µs/audio-s")
}

// BenchmarkPocketsphinxCacheHit answers pocketsphinx STT from a replaying
// cache (the audio is hashed to find the entry).
func BenchmarkPocketsphinxCacheHit(b *testing.B) {
	c, _, req := recordedCache(b)
	stt := Pocketsphinx(WithCache(c))
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := stt.Transcribe(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(2 * req.Audio.Len()))
	b.ReportMetric(float64(b.Elapsed()/time.Duration(b.N))/1e3/req.Audio.Duration().Seconds(), "µs/audio-s")
}

// BenchmarkWordErrorRate compares two ten-word sentences.
func BenchmarkWordErrorRate(b *testing.B) {
	ref := "Please book a table for 2 at 7:30 tonight, thanks."
	hyp := "please look at table for two at seven thirty tonight thanks"
	b.ReportAllocs()
	for b.Loop() {
		WordErrorRate(ref, hyp)
	}
}
