package elevenlabs_test

import (
	"os"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/elevenlabs"
	"github.com/voicetest-go/voicetest/voicetest"
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
	res := voicetest.Scenario(t, voicetest.Config{
		Agent:     agent,
		UserVoice: speech.Flite(),
		Golden:    voicetest.GoldenOptions{Disable: true},
		Script:    []voicetest.Step{voicetest.AgentTurn(voicetest.AllowSilence()), voicetest.UserSays("Hello, can you hear me?"), voicetest.AgentTurn()},
	})
	if !res.Success {
		t.Fatalf("the live scenario failed: %v", res.Err)
	}
	spoke := false
	for _, m := range res.Transcript {
		if m.Role == voicetest.RoleAgent && (m.Text != "" || m.AudioOnly) {
			spoke = true
		}
	}
	if !spoke {
		t.Fatalf("the agent said nothing:\n%s", res.TranscriptText())
	}
	t.Logf("the live agent answered:\n%s", res.TranscriptText())
}
