package twiliophone_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/twiliophone"
	"github.com/voicetest-go/voicetest/internal/peers/twiliobot"
	"github.com/voicetest-go/voicetest/internal/peers/twiliocarrier"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// voicetest calls the agent's number from one of your Twilio numbers and
// talks to it over the call. Here a loopback double plays Twilio (and the
// agent on its line answers each utterance with a short tone); against
// Twilio, leave APIBase empty and set PublicURL to the https address of a
// tunnel to Listen, which Twilio's webhooks and Media Streams reach.
//
// A phone call runs in real time (2.7 s here), so go test only compiles
// this example; TestExampleAgent makes the same call on virtual time and
// checks that it prints:
//
//	user turns: 1 keys the agent got: 1#
func ExampleAgent() {
	bot := twiliobot.Start(twiliobot.Config{})
	defer bot.Close()
	carrier := twiliocarrier.Start(twiliocarrier.Config{
		Numbers: map[string]string{"+15550100001": ""},      // yours
		Agents:  map[string]string{"+15550199999": bot.URL}, // the agent's line
	})
	defer carrier.Close()

	agent := &twiliophone.Agent{
		AccountSid: twiliocarrier.DefaultAccountSid, AuthToken: twiliocarrier.DefaultAuthToken,
		From: "+15550100001", To: "+15550199999",
		APIBase: carrier.URL, // default: https://api.twilio.com
	}
	res, err := voicetest.Run(context.Background(), voicetest.Config{
		Name: "phone-example", Agent: agent, UserVoice: fixtures.FakeTTS(), Pacing: voicetest.PaceFast,
		Script: []voicetest.Step{voicetest.UserSays("Hello?"), voicetest.AgentTurn(), voicetest.DTMF("1#"), voicetest.AgentTurn()},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("user turns:", res.Turns, "keys the agent got:", bot.Calls()[0].DTMF)
}

// TestExampleAgent makes ExampleAgent's call (the same doubles, agent and
// Config) over an in-memory network in a testing/synctest bubble, and
// checks what ExampleAgent prints.
func TestExampleAgent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := adaptertest.NewMemNet(t)
		bot := twiliobot.New(t, twiliobot.Config{Listener: n.Listen()})
		carrier := twiliocarrier.New(t, twiliocarrier.Config{
			Numbers:  map[string]string{"+15550100001": ""},
			Agents:   map[string]string{"+15550199999": bot.URL},
			Listener: n.Listen(), NetDial: n.Dial,
		})

		agent := &twiliophone.Agent{
			AccountSid: twiliocarrier.DefaultAccountSid, AuthToken: twiliocarrier.DefaultAuthToken,
			From: "+15550100001", To: "+15550199999",
			APIBase: carrier.URL,
		}
		agent.Listener, agent.HTTPClient = n.Listen(), n.HTTPClient()
		res, err := voicetest.Run(t.Context(), voicetest.Config{
			Name: "phone-example", Agent: agent, UserVoice: fixtures.FakeTTS(), Pacing: voicetest.PaceFast,
			Script: []voicetest.Step{voicetest.UserSays("Hello?"), voicetest.AgentTurn(), voicetest.DTMF("1#"), voicetest.AgentTurn()},
		})
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprintln("user turns:", res.Turns, "keys the agent got:", bot.Calls()[0].DTMF)
		if want := "user turns: 1 keys the agent got: 1#\n"; got != want {
			t.Errorf("ExampleAgent prints %q, want %q", got, want)
		}
	})
}
