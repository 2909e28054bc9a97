package speech

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/internal/openaihttp"
)

// The OpenAI engines send their requests themselves; openai-go, which they
// used before, is the oracle of their requests, retries and errors in
// voicetest/internal/openaioracle (TestOpenAIRequestsMatchOpenAIGo,
// TestOpenAIErrorsAndRetriesMatchOpenAIGo, TestOpenAIErrorBodiesAsOpenAIGo,
// TestTranscriptionNotJSONAsOpenAIGo), so that this package's test binary
// does not link openai-go.

// TestOpenAIAnswerBounds: a speech answer larger than maxSpeechBytes is
// refused by its Content-Length before it is read; one without a length
// is read only to one byte past the bound (lowered here to 1 KiB, so that
// the test does not move 64 MiB) and refused; an answer that is not PCM
// audio is refused; a transcription that is not JSON is refused (as
// openai-go refused it: voicetest/internal/openaioracle's
// TestTranscriptionNotJSONAsOpenAIGo).
func TestOpenAIAnswerBounds(t *testing.T) {
	const lowered = 1 << 10
	big := bytes.Repeat([]byte{1, 0}, lowered/2+1)
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch requests.Add(1) - 1 {
		case 0: // declares more than the bound, sends nothing
			w.Header().Set("Content-Length", fmt.Sprint(maxSpeechBytes+2))
			w.WriteHeader(http.StatusOK)
		case 1: // chunked, past the bound
			w.Header().Set("Content-Type", "audio/pcm")
			_, _ = w.Write(big)
		case 2:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"audio":"no"}`))
		case 3:
			w.Header().Set("Content-Type", "audio/pcm")
			_, _ = w.Write([]byte{1, 2, 3})
		default: // a transcription as text
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("hello"))
		}
	}))
	t.Cleanup(srv.Close)
	base := srv.URL + "/v1/"
	// A client of the caller's (without the keep-alive transport's own
	// bound of a whole response) meets the engine's bound.
	plain := &http.Client{Transport: &http.Transport{}}
	tts, err := NewOpenAITTS(withEnv(noEnv, nil), WithBaseURL(base), WithAPIKey("sk-bounds-key"), WithMaxRetries(0), WithHTTPClient(plain))
	require.NoError(t, err)
	lowTTS, err := NewOpenAITTS(withEnv(noEnv, nil), WithBaseURL(base), WithAPIKey("sk-bounds-key"), WithMaxRetries(0), WithHTTPClient(plain), withMaxSpeechBytes(lowered))
	require.NoError(t, err)
	for i, want := range []string{
		fmt.Sprintf("larger than %d bytes", maxSpeechBytes),
		fmt.Sprintf("larger than %d bytes", lowered),
		"answered application/json instead of PCM audio",
		"answered 3 bytes, which is not 16-bit PCM audio",
	} {
		engine := tts
		if i == 1 {
			engine = lowTTS
		}
		_, err := engine.Synthesize(t.Context(), voicetest.SpeechRequest{Text: "Hi."})
		require.ErrorContains(t, err, want)
		var tooLarge *openaihttp.TooLargeError
		assert.Equal(t, i < 2, errors.As(err, &tooLarge), "%v is a *TooLargeError", err)
	}
	stt, err := NewOpenAISTT(withEnv(noEnv, nil), WithBaseURL(base), WithAPIKey("sk-bounds-key"), WithMaxRetries(0))
	require.NoError(t, err)
	_, err = stt.Transcribe(t.Context(), voicetest.TranscriptionRequest{Audio: pcm.Chunk{Rate: pcm.Rate16k, Samples: make([]int16, 160)}})
	require.ErrorContains(t, err, `content type "text/plain"`)
	assert.Equal(t, int64(5), requests.Load(), "no retries")
}
