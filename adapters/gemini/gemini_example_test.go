package gemini_test

import (
	"context"
	"fmt"

	"github.com/voicetest-go/voicetest/adapters/gemini"
	"github.com/voicetest-go/voicetest/internal/peers/geminipeer"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// A Gemini Live model as the agent under test. Here a loopback test double
// of the Live API plays Gemini; against Google's service, leave BaseURL
// empty and set GEMINI_API_KEY.
func ExampleNew() {
	peer := geminipeer.Start(geminipeer.Config{Turns: []geminipeer.Turn{{Reply: "Sure, a table for {heard}"}}})
	defer peer.Close()

	agent := gemini.New("gemini-2.5-flash-native-audio-latest")
	agent.BaseURL = peer.URL  // default: Google's Gemini API
	agent.APIKey = "test-key" // default: $GEMINI_API_KEY
	agent.SystemInstruction = "You take restaurant bookings."
	agent.Voice = "Puck"
	res, err := voicetest.Run(context.Background(), voicetest.Config{
		Agent:     agent,
		UserVoice: fixtures.FakeTTS(), // a real TTS in a real test
		// The model takes audio faster than real time: send it at once.
		Pacing: voicetest.PaceFast,
		Script: []voicetest.Step{
			voicetest.UserSays("two at seven."),
			voicetest.AgentTurn(),
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The model's own transcripts: no STT needed.
	fmt.Print(res.TranscriptText())
	// Output:
	// user: two at seven.
	// agent: Sure, a table for two at seven.
}
