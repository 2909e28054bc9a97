package webrtc_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/webrtc"
	"github.com/voicetest-go/voicetest/internal/peers/webrtcpeer"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// A bot served over WebRTC is reached at its offer endpoint; RTVI adds
// its transcripts and turn ends from the data channel. Here, a Pipecat
// bot with SmallWebRTCTransport run by its development runner
// ("-t webrtc"), which answers "Seven it is.". TestExampleNew makes this
// call to a loopback double of such a bot, on virtual time, and checks
// what it prints.
func ExampleNew() {
	agent := webrtc.New("http://localhost:7860/api/offer")
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
}

// TestExampleNew makes ExampleNew's call (the same Config) to the
// loopback double of a Pipecat bot with RTVI, on virtual time: the
// transcript ExampleNew prints, and the bot heard the user's words
// through Opus.
func TestExampleNew(t *testing.T) {
	onVirtualTime(t, func(t *testing.T, n *network) {
		bot := n.bot(t, webrtcpeer.Config{RTVI: true, Turns: []webrtcpeer.Turn{{Reply: "Seven it is."}}})
		agent := n.agent(bot.URL)
		agent.RTVI = true
		res, err := voicetest.Run(t.Context(), voicetest.Config{
			Name: "webrtc-example", Agent: agent, UserVoice: fixtures.FakeTTS(), Pacing: voicetest.PaceFast,
			Script: []voicetest.Step{voicetest.UserSays("A table at seven."), voicetest.AgentTurn()},
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := res.TranscriptText(), "user: A table at seven.\nagent: Seven it is.\n"; got != want {
			t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
		}
		if heard := bot.Calls()[0].Heard; len(heard) != 1 || heard[0] != "A table at seven." {
			t.Errorf("the bot heard %q, want [A table at seven.]", heard)
		}
	})
}
