package vapi_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/vapi"
	"github.com/voicetest-go/voicetest/internal/peers/vapipeer"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// A Vapi assistant is called through Vapi's REST API and its WebSocket
// transport. Here a loopback test double plays Vapi; against Vapi itself,
// leave BaseURL empty and give your private key and assistant.
//
// The call takes 2.6 s of the real clock (the double speaks its reply in
// real time), so go test only compiles this example; TestExampleNew makes
// the same call on virtual time and checks that it prints:
//
//	user: two people
//	agent: A table for two people, booked.
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
}

// TestExampleNew makes ExampleNew's call (the same double, agent and
// Config) over an in-memory network in a testing/synctest bubble, and
// checks the transcript ExampleNew prints.
func TestExampleNew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := adaptertest.NewMemNet(t)
		peer := vapipeer.New(t, vapipeer.Config{Key: "my-private-key", Turns: []vapipeer.Turn{{Reply: "A table for {heard}, booked."}}, Listener: n.Listen()})

		agent := vapi.New("my-private-key", "5b0a4a08-133c-4146-9315-0984f8c6be80")
		agent.BaseURL = peer.URL
		agent.NetDial, agent.HTTPClient = n.Dial, n.HTTPClient()
		res, err := voicetest.Run(t.Context(), voicetest.Config{
			Name: "vapi-example", Agent: agent, UserVoice: fixtures.FakeTTS(), Pacing: voicetest.PaceFast,
			Script: []voicetest.Step{voicetest.UserSays("two people"), voicetest.AgentTurn()},
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := res.TranscriptText(), "user: two people\nagent: A table for two people, booked.\n"; got != want {
			t.Errorf("ExampleNew prints:\n%s\nwant:\n%s", got, want)
		}
	})
}
