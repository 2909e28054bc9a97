package twilio_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/twilio"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/internal/leakcheck"
	"github.com/voicetest-go/voicetest/internal/peers/twiliobot"
	"github.com/voicetest-go/voicetest/voicetest"
)

// Faults of a Twilio Media Streams bot on a WebSocket, seen
// through the whole runner (voicetest.Run), not only the Conn: each ends the
// scenario with a typed error that says what happened, within the configured
// timeouts, with bounded memory and no goroutine or socket left behind.
func TestFaultTwilioBotThroughTheRunner(t *testing.T) {
	cases := []struct {
		fault twiliobot.Fault
		name  string
		check func(t *testing.T, err error)
	}{
		{twiliobot.Abort, "connection dropped without a close handshake", func(t *testing.T, err error) {
			var tc *voicetest.TransportClosedError
			if !errors.As(err, &tc) || tc.Adapter != "twilio" {
				t.Errorf("err = %v, want a *TransportClosedError from twilio", err)
			}
		}},
		{twiliobot.Stall, "bot stalls (no reads, writes or pongs)", func(t *testing.T, err error) {
			// The keepalive (1 s without a pong) gives up before the
			// runner's FirstChunk (3 s).
			var tc *voicetest.TransportClosedError
			if !errors.As(err, &tc) || !strings.Contains(err.Error(), "keepalive") || !strings.Contains(err.Error(), "PongTimeout") {
				t.Errorf("err = %v, want a *TransportClosedError from the keepalive naming PongTimeout", err)
			}
		}},
		{twiliobot.HugeFrame, "2 MiB frame (over MaxFrameBytes)", func(t *testing.T, err error) {
			if err == nil || !strings.Contains(err.Error(), "MaxFrameBytes") {
				t.Errorf("err = %v, want an error naming MaxFrameBytes", err)
			}
		}},
		{twiliobot.MalformedJSON, "frame that is not JSON", func(t *testing.T, err error) {
			var fe *wire.FrameError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), "not a JSON Media Streams message") {
				t.Errorf("err = %v, want an *wire.FrameError saying the frame is not JSON", err)
			}
		}},
		{twiliobot.WrongStreamSid, "media for another stream", func(t *testing.T, err error) {
			var fe *wire.FrameError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), "streamSid") {
				t.Errorf("err = %v, want an *wire.FrameError naming the streamSid", err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			leakcheck.Check(t) // outside the bubble: it sees every goroutine left once the bubble is gone
			synctest.Test(t, func(t *testing.T) { faultThroughTheRunner(t, tc.fault, tc.check) })
		})
	}
}

// faultThroughTheRunner runs one case of TestFaultTwilioBotThroughTheRunner
// in a testing/synctest bubble, on virtual time: the bot in process on an
// in-memory network (memBot), whose connections carry the same WebSocket
// frames as loopback TCP; the keepalive's pings and the runner's timeouts
// run on the bubble's clock. (The conformance suite's RealTimeConversation
// keeps Twilio on loopback TCP and the real clock.)
func faultThroughTheRunner(t *testing.T, fault twiliobot.Fault, check func(t *testing.T, err error)) {
	_, a := memBot(t, twiliobot.Config{Fault: fault, Greeting: 200 * time.Millisecond})
	a.Pacing = twilio.Fast
	a.PingInterval = 200 * time.Millisecond
	a.PongTimeout = time.Second
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := voicetest.Run(ctx, voicetest.Config{
		Agent: a, UserVoice: adaptertest.ToneTTS{}, Pacing: voicetest.PaceFast,
		Script:   []voicetest.Step{voicetest.AgentTurn(), voicetest.UserSays("hello"), voicetest.AgentTurn()},
		Timeouts: voicetest.Timeouts{FirstChunk: 3 * time.Second},
	})
	if ctx.Err() != nil {
		t.Fatalf("Run did not return within a minute: it hangs on this fault (err %v)", err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 32<<20 {
		t.Errorf("%d MB of heap still live after the run", grown>>20)
	}
	if res == nil || res.Success {
		t.Fatalf("the scenario passed despite the fault: %v", err)
	}
	var se *voicetest.StepError
	if !errors.As(err, &se) {
		t.Errorf("err = %v, want it to name the step (a *StepError)", err)
	}
	check(t, err)
	t.Logf("%v", err)
}
