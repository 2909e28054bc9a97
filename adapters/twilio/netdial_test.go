package twilio_test

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/twilio"
	"github.com/voicetest-go/voicetest/internal/peers/twiliobot"
	"github.com/voicetest-go/voicetest/voicetest"
)

// TestNetDialReplacesTheTCPDial shows wire.WSOptions.NetDial at work: the
// agent's URL names a loopback port where nothing listens, and the call
// still reaches the bot, through the connection NetDial opens (here a dial
// of the bot's address on an in-memory network, in a testing/synctest
// bubble; examples/restaurant hands out one end of a net.Pipe, to the
// same end).
func TestNetDialReplacesTheTCPDial(t *testing.T) { synctest.Test(t, testNetDialReplacesTheTCPDial) }

func testNetDialReplacesTheTCPDial(t *testing.T) {
	n := adaptertest.NewMemNet(t)
	bot := twiliobot.New(t, twiliobot.Config{Listener: n.Listen(), Greeting: 100 * time.Millisecond, HangUpAfter: 1, ReplyDuration: 200 * time.Millisecond})
	addr := strings.TrimPrefix(strings.TrimSuffix(bot.URL, "/media"), "ws://")
	a := twilio.New("ws://127.0.0.2:9/media")
	a.Pacing = twilio.Fast
	a.EndSilence = 200 * time.Millisecond
	var dials atomic.Int32
	var asked atomic.Value
	a.NetDial = func(ctx context.Context, network, address string) (net.Conn, error) {
		dials.Add(1)
		asked.Store(address)
		return n.Dial(ctx, network, addr)
	}
	res := voicetest.Scenario(t, voicetest.Config{
		Agent: a, UserVoice: adaptertest.ToneTTS{}, Pacing: voicetest.PaceFast,
		Golden: voicetest.GoldenOptions{Disable: true},
		Script: []voicetest.Step{voicetest.AgentTurn(), voicetest.UserSays("hello"), voicetest.AgentTurn()},
	})
	if !res.Success {
		t.Fatalf("scenario failed: %v", res.Err)
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("NetDial called %d times, want once", n)
	}
	if got := asked.Load(); got != "127.0.0.2:9" {
		t.Errorf("NetDial asked for %v, want the URL's host and port 127.0.0.2:9", got)
	}
}
