package elevenlabs_test

import (
	"os"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/elevenlabs"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// TestLive runs a short scenario against a real ElevenLabs Conversational
// AI agent, to show how a suite points at one: elevenlabs.New(agentID),
// with the key from ELEVENLABS_API_KEY for a private agent, a caller
// spoken by flite, the agent's first message and one answer. It is
// skipped unless ELEVENLABS_AGENT_ID is set (ELEVENLABS_API_KEY too for a
// private agent); no test needs the internet or a key. Nothing is cached
// or compared with goldens.
func TestLive(t *testing.T) {
	id := os.Getenv("ELEVENLABS_AGENT_ID")
	if id == "" {
		t.Skip("live test against ElevenLabs Conversational AI: set ELEVENLABS_AGENT_ID (and ELEVENLABS_API_KEY for a private agent) to run it")
	}
	speech.SkipIfNotInstalled(t, "flite")
	agent := elevenlabs.New(id)
	adaptertest.Live(t, agent, speech.Flite(), 0, true)
}
