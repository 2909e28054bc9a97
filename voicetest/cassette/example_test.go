package cassette_test

import (
	"os"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/twilio"
	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cassette"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// testDeployedAgent is a test of an agent deployed behind Twilio Media
// Streams (in a _test.go file it would be TestDeployedAgent). The first
// run, with the agent reachable at AGENT_URL, records the conversation into
// testdata/voicetest/cassettes/TestDeployedAgent/; every later run, and CI,
// replays it with no agent, on virtual time. The caller's voice and the
// transcription of the agent come from the cache.
func testDeployedAgent(t *testing.T) {
	agent := cassette.New(t, twilio.New(os.Getenv("AGENT_URL")))
	res := voicetest.Scenario(t, voicetest.Config{
		Agent:     agent,
		UserVoice: speech.TTSForTest(t, "flite/slt"),
		AgentSTT:  speech.STTForTest(t, "pocketsphinx"),
		Rate:      16000,
		Judge:     judges.All(judges.Says("table for two"), judges.HungUp()),
		Script: []voicetest.Step{
			voicetest.AgentTurn(),
			voicetest.UserSays("A table for two tonight, please."),
			voicetest.AgentTurn(),
			voicetest.Verdict(),
		},
	})
	if agent.Replaying() {
		t.Logf("replayed from %s: %s", agent.Path(), res.Status)
	}
}

// Example shows a test of a deployed agent through a cassette (the
// function above).
func Example() {
	_ = testDeployedAgent
}
