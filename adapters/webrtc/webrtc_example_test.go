package webrtc_test

import (
	"context"
	"fmt"

	"github.com/voicetest-go/voicetest/adapters/webrtc"
	"github.com/voicetest-go/voicetest/internal/peers/webrtcpeer"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// A bot served over WebRTC is reached at its offer endpoint; RTVI adds
// its transcripts and turn ends from the data channel. Here a loopback
// double plays a Pipecat bot with SmallWebRTCTransport; against a real
// one, use its URL (the development runner's is
// http://localhost:7860/api/offer).
func ExampleNew() {
	bot, err := webrtcpeer.Start(webrtcpeer.Config{RTVI: true, Turns: []webrtcpeer.Turn{{Reply: "Seven it is."}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer bot.Close()

	agent := webrtc.New(bot.URL)
	agent.RTVI = true
	res, err := voicetest.Run(context.Background(), voicetest.Config{
		Name: "webrtc-example", Agent: agent, UserVoice: fixtures.FakeTTS(), Pacing: voicetest.PaceFast,
		Script: []voicetest.Step{voicetest.UserSays("A table at seven."), voicetest.AgentTurn()},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(res.TranscriptText())
	fmt.Println("the bot heard:", bot.Calls()[0].Heard)
	// Output:
	// user: A table at seven.
	// agent: Seven it is.
	// the bot heard: [A table at seven.]
}
