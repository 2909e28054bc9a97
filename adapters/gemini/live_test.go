package gemini_test

import (
	"cmp"
	"os"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/gemini"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// The live test calls the real service, gated on its key, with a caller
// spoken by flite (speech.Flite), like the other protocols' live tests in
// package adapters (adapters/live_test.go). It lives here rather than
// there because this package's test binary links google.golang.org/genai
// anyway. No test needs the internet or a key; run it with
// `GEMINI_API_KEY=… go test ./adapters/gemini -run TestLiveGemini`.

// TestLiveGemini runs a short scenario against the real Gemini Live API,
// to show how a suite points at it: gemini.New(model) with the key from
// GEMINI_API_KEY, a caller spoken by flite, and a spoken answer. It is
// skipped without GEMINI_API_KEY (no test needs the internet or a key);
// VOICETEST_GEMINI_MODEL picks the model (default gemini.DefaultModel).
// Nothing is cached or compared with goldens.
func TestLiveGemini(t *testing.T) {
	if os.Getenv("GEMINI_API_KEY") == "" {
		t.Skip("live test against the Gemini Live API: set GEMINI_API_KEY (and optionally VOICETEST_GEMINI_MODEL) to run it")
	}
	speech.SkipIfNotInstalled(t, "flite")
	agent := gemini.New(cmp.Or(os.Getenv("VOICETEST_GEMINI_MODEL"), gemini.DefaultModel))
	adaptertest.Live(t, agent, speech.Flite(), 0, false)
}
