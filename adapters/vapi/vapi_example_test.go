package vapi_test

import (
	"context"
	"fmt"

	"github.com/voicetest-go/voicetest/adapters/vapi"
	"github.com/voicetest-go/voicetest/internal/peers/vapipeer"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// A Vapi assistant is called through Vapi's REST API and its WebSocket
// transport. Here a loopback test double plays Vapi; against Vapi itself,
// leave BaseURL empty and give your private key and assistant.
func ExampleNew() {
	peer := vapipeer.Start(vapipeer.Config{Key: "my-private-key", Turns: []vapipeer.Turn{{Reply: "A table for {heard}, booked."}}})
	defer peer.Close()

	agent := vapi.New("my-private-key", "5b0a4a08-133c-4146-9315-0984f8c6be80")
	agent.BaseURL = peer.URL // default: https://api.vapi.ai
	res, err := voicetest.Run(context.Background(), voicetest.Config{
		Name: "vapi-example", Agent: agent, UserVoice: fixtures.FakeTTS(), Pacing: voicetest.PaceFast,
		Script: []voicetest.Step{voicetest.UserSays("two people"), voicetest.AgentTurn()},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(res.TranscriptText())
	// Output:
	// user: two people
	// agent: A table for two people, booked.
}
