package speech

import (
	"testing"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// BenchmarkOpenAITTSLoopback is one OpenAI TTS call (cache off) against
// the loopback fakeopenai double with the engine's default HTTP client: a
// short line, so that the HTTP exchange (a new connection per call, or a
// kept-alive one) weighs more than the double's synthesis.
func BenchmarkOpenAITTSLoopback(b *testing.B) {
	srv := fakeopenai.New(b)
	tts, err := NewOpenAITTS(withEnv(noEnv, nil), WithBaseURL(srv.BaseURL()), WithAPIKey(srv.APIKey()), WithMaxRetries(0))
	if err != nil {
		b.Fatal(err)
	}
	req := voicetest.SpeechRequest{Text: "Yes."}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tts.Synthesize(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenAISTTLoopback is one OpenAI STT call (cache off, 0.1 s of
// 16 kHz audio) against the loopback fakeopenai double with the engine's
// default HTTP client.
func BenchmarkOpenAISTTLoopback(b *testing.B) {
	srv := fakeopenai.New(b)
	srv.HandleTranscription(func(fakeopenai.TranscriptionRequest) (string, error) { return "yes", nil })
	stt, err := NewOpenAISTT(withEnv(noEnv, nil), WithBaseURL(srv.BaseURL()), WithAPIKey(srv.APIKey()), WithMaxRetries(0))
	if err != nil {
		b.Fatal(err)
	}
	req := voicetest.TranscriptionRequest{Audio: pcm.Chunk{Rate: pcm.Rate16k, Samples: make([]int16, 1600)}, Language: "en"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := stt.Transcribe(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
}
