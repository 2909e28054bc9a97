package realtime_test

import (
	"cmp"
	"os"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/realtime"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// TestLive runs a short scenario against OpenAI's own Realtime API, to show
// how a suite points at the real service: realtime.New(model) with the key
// from OPENAI_API_KEY, a caller spoken by flite, and a spoken answer. It
// is skipped without OPENAI_API_KEY (no test needs the internet or a key);
// VOICETEST_REALTIME_MODEL picks the model (default realtime.DefaultModel).
// Nothing is cached or compared with goldens: a live model answers
// differently each time.
func TestLive(t *testing.T) {
	if os.Getenv("OPENAI_API_KEY") == "" {
		t.Skip("live test against the OpenAI Realtime API: set OPENAI_API_KEY (and optionally VOICETEST_REALTIME_MODEL) to run it")
	}
	speech.SkipIfNotInstalled(t, "flite")
	agent := realtime.New(cmp.Or(os.Getenv("VOICETEST_REALTIME_MODEL"), realtime.DefaultModel))
	agent.Instructions = "You answer phone calls for a restaurant. Answer in one short sentence."
	adaptertest.Live(t, agent, speech.Flite(), 0, false)
}
