package livekit_test

import (
	"os"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/livekit"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// TestLiveLiveKit calls a real LiveKit agent, deployed (LiveKit Cloud) or
// running on your own server, to show how a suite points at one:
// livekit.New with the server's URL and API key and secret (here read from
// LIVEKIT_URL, LIVEKIT_API_KEY and LIVEKIT_API_SECRET) and the name the
// agent registered for explicit dispatch, a caller spoken by flite, the
// agent's greeting and one answer. It is skipped unless those and
// LIVEKIT_AGENT_NAME are set; no test needs the internet or a key.
// Nothing is cached or compared with goldens.
func TestLiveLiveKit(t *testing.T) {
	for _, name := range []string{"LIVEKIT_URL", "LIVEKIT_API_KEY", "LIVEKIT_API_SECRET", "LIVEKIT_AGENT_NAME"} {
		if os.Getenv(name) == "" {
			t.Skipf("live test against a LiveKit agent: set %s (and the other LIVEKIT_* variables: LIVEKIT_URL, LIVEKIT_API_KEY, LIVEKIT_API_SECRET, LIVEKIT_AGENT_NAME) to run it", name)
		}
	}
	speech.SkipIfNotInstalled(t, "flite")
	adaptertest.Live(t, livekit.New("", "", "", os.Getenv("LIVEKIT_AGENT_NAME")), speech.Flite(), 0, true)
}
