package twiliophone_test

import (
	"context"
	"fmt"

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
	// Output:
	// user turns: 1 keys the agent got: 1#
}
