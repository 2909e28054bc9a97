package adapters_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/voicetest-go/voicetest/adapters"
	"github.com/voicetest-go/voicetest/internal/peers/wsbot"
	"github.com/voicetest-go/voicetest/voicetest"
)

// Issue 14, item 7: failures read well.

// A panicking handler's stack is in the failure report, with the
// handler's own frame in it.
func TestPanickingHandlerStackIsReported(t *testing.T) {
	var q *quietTB
	synctest.Test(t, func(t *testing.T) {
		q = &quietTB{T: t}
		voicetest.Scenario(q, voicetest.Config{
			Agent: adapters.Handler(func(ctx context.Context, ev adapters.Event, c *adapters.Call) error {
				if _, ok := ev.(adapters.TextEvent); ok {
					panic("the party size is missing")
				}
				return nil
			}),
			Golden: voicetest.GoldenOptions{Disable: true},
			Script: []voicetest.Step{voicetest.UserSays("Two, please."), voicetest.AgentTurn()},
		})
	})
	report := strings.Join(q.errs, "\n")
	for _, want := range []string{"handler panicked handling TextEvent", "panic stack:", "goroutine ", "TestPanickingHandlerStackIsReported.func1.1", "failreport_test.go:"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if strings.Index(report, "panic stack:") > strings.Index(report, "transcript:") {
		t.Errorf("the stack must come with what failed, before the transcript:\n%s", report)
	}
}

// A binary frame with an odd number of bytes is described, not dumped.
func TestOddBinaryFrameErrorHasNoBinary(t *testing.T) {
	bot := wsbot.New(t, wsbot.Config{Mode: wsbot.Raw, Fault: wsbot.OddPCM})
	conn := dialWS(t, adapters.WebSocket(bot.URL, adapters.RawPCM(24000)), session(t, 24000))
	_, err := conn.Recv(t.Context())
	var fe *adapters.FrameError
	if !errors.As(err, &fe) {
		t.Fatalf("Recv: %v, want a FrameError", err)
	}
	msg := err.Error()
	if strings.Contains(msg, `\x01`) || strings.ContainsRune(msg, 1) || !strings.Contains(msg, "<3 bytes of binary: 01 02 03>") {
		t.Errorf("error %q: want the frame described as 3 bytes of binary, no raw bytes", msg)
	}
}
