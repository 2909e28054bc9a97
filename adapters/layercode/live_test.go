package layercode_test

import (
	"net/http"
	"os"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/layercode"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// TestLive runs a short scenario against a real LayerCode agent, to show
// how a suite points at one: layercode.New(authorizeURL, agentID), where
// the authorize URL is your backend's endpoint that calls LayerCode's
// authorize_session with your LayerCode API key, a caller spoken by flite,
// the agent's greeting and one answer. It is skipped unless
// LAYERCODE_AUTHORIZE_URL and LAYERCODE_AGENT_ID are set;
// LAYERCODE_AUTHORIZE_TOKEN, when set, is sent to the backend as a bearer
// token. No test needs the internet or a key. Nothing is cached or
// compared with goldens.
func TestLive(t *testing.T) {
	authURL, id := os.Getenv("LAYERCODE_AUTHORIZE_URL"), os.Getenv("LAYERCODE_AGENT_ID")
	if authURL == "" || id == "" {
		t.Skip("live test against LayerCode: set LAYERCODE_AUTHORIZE_URL (your backend's authorize endpoint) and LAYERCODE_AGENT_ID (and LAYERCODE_AUTHORIZE_TOKEN if the backend wants one) to run it")
	}
	speech.SkipIfNotInstalled(t, "flite")
	agent := layercode.New(authURL, id)
	if tok := os.Getenv("LAYERCODE_AUTHORIZE_TOKEN"); tok != "" {
		agent.AuthorizeHeader = http.Header{"Authorization": {"Bearer " + tok}}
	}
	adaptertest.Live(t, agent, speech.Flite(), 0, true)
}
