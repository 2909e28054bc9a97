package pipecat_test

import (
	"context"
	"fmt"

	"github.com/voicetest-go/voicetest/adapters/pipecat"
	"github.com/voicetest-go/voicetest/internal/peers/pipecatpeer"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// A Pipecat bot over its WebSocket transport with the protobuf serializer
// and RTVI. Here a loopback test double plays the bot; a real one is, for
// example, a FastAPIWebsocketTransport with ProtobufFrameSerializer and an
// RTVIProcessor, at ws://127.0.0.1:7860/ws.
func ExampleNew() {
	bot := pipecatpeer.Start(pipecatpeer.Config{RTVI: true, Turns: []pipecatpeer.Turn{{Reply: "Sure, a table for {heard}"}}})
	defer bot.Close()

	agent := pipecat.New(bot.URL, pipecat.Protobuf) // or pipecat.Twilio
	agent.RTVI = true                               // transcripts, speaking state, function calls
	res, err := voicetest.Run(context.Background(), voicetest.Config{
		Agent:     agent,
		UserVoice: fixtures.FakeTTS(), // a real TTS in a real test
		// The bot takes audio faster than real time: send it at once.
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
	fmt.Print(res.TranscriptText())
	// Output:
	// user: two at seven.
	// agent: Sure, a table for two at seven.
}
