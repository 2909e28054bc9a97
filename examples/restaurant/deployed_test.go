package restaurant_test

// The restaurant agent as a team testing a deployed agent sees it: over
// Twilio Media Streams at the address it is deployed at, through a
// cassette. The conversation was recorded once, into
// testdata/voicetest/cassettes/TestDeployedBooking/, and replays from it
// with no agent running: in CI (replay mode) and on a developer's machine
// (record mode replays a cassette that exists), in milliseconds, on
// virtual time. The test's transcription of the agent (Config.AgentSTT)
// replays from the cache, keyed by the agent's recorded audio.
//
// To record it again (after changing the script, or the agent):
//
//	rm -r examples/restaurant/testdata/voicetest/cassettes/TestDeployedBooking
//	RESTAURANT_AGENT_URL=wss://… go test ./examples/restaurant -run '^TestDeployedBooking$' -voicetest.record
//
// Without RESTAURANT_AGENT_URL, recording calls the example's own agent,
// started on 127.0.0.1 for the test (the engines it needs, flite and
// pocketsphinx, then answer from the cache or must be installed).

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/twilio"
	"github.com/voicetest-go/voicetest/examples/restaurant"
	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cassette"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

func TestDeployedBooking(t *testing.T) {
	t.Parallel()
	phone := twilio.New(os.Getenv("RESTAURANT_AGENT_URL")) // only recording dials it
	phone.Seed = 1
	agent := cassette.New(t, phone)
	started := false
	if !agent.Replaying() && phone.URL == "" {
		// Recording, and no deployed agent to call: call the example's.
		phone.URL = startBot(t).url
		started = true
	}
	tts := speech.TTSForTest(t, "flite/slt")
	res := voicetest.Scenario(t, voicetest.Config{
		Agent:     agent,
		UserVoice: tts,
		Rate:      restaurant.PhoneRate,
		AgentSTT:  restaurant.TelephoneSTT(speech.STTForTest(t, "pocketsphinx"), restaurant.AgentPhrases()),
		Judge: judges.All(
			judges.Says("a table for two"),
			judges.Says("garcia"),
			judges.HungUp(),
		),
		Script: append(phoneBooking(), voicetest.Verdict()),
		Golden: voicetest.GoldenOptions{TimeTolerance: time.Second},
	})
	if !res.Success {
		t.Fatalf("scenario failed: %v", res.Err)
	}
	if agent.Replaying() && started {
		t.Error("the replay started an agent")
	}
	if !strings.Contains(strings.ToLower(res.State.AgentText()), "friday") {
		t.Errorf("the agent's read-back, as transcribed, lacks the day:\n%s", res.TranscriptText())
	}
}

// phoneBooking is a caller booking a table over the phone, as
// TestPhoneBooking and TestDeployedBooking script it.
func phoneBooking() []voicetest.Step {
	return []voicetest.Step{
		voicetest.AgentTurn(), // the greeting
		voicetest.UserSays("A table for two."),
		voicetest.AgentTurn(),
		voicetest.UserSays("Friday at seven thirty."),
		voicetest.AgentTurn(),
		voicetest.UserSays("The name is Garcia."),
		voicetest.AgentTurn(),
		voicetest.UserSays("Yes, that's right."),
		voicetest.AgentTurn(), // goodbye, then the agent hangs up
	}
}
