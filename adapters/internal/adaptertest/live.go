package adaptertest

import (
	"testing"

	"github.com/voicetest-go/voicetest/voicetest"
)

// Live runs the short scenario of the adapters' live tests
// (TestLive<Protocol> in package adapters, gated on the real service's
// credentials) against agent: the agent's greeting when greets (an agent
// that has none may stay silent), one line spoken by voice at rate (0: the
// runner's default), and the agent's answer, with no golden comparison (a live model answers differently
// each time). It fails t unless the scenario passes and the agent said
// something, and logs the transcript.
func Live(t *testing.T, agent voicetest.Agent, voice voicetest.TTS, rate int, greets bool) {
	t.Helper()
	var script []voicetest.Step
	if greets {
		script = append(script, voicetest.AgentTurn(voicetest.AllowSilence()))
	}
	script = append(script, voicetest.UserSays("Hello, can you hear me?"), voicetest.AgentTurn())
	res := voicetest.Scenario(t, voicetest.Config{
		Agent: agent, UserVoice: voice, Rate: rate,
		Golden: voicetest.GoldenOptions{Disable: true},
		Script: script,
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
