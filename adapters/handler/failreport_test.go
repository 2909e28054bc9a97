package handler_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/voicetest-go/voicetest/adapters/handler"
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
			Agent: handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
				if _, ok := ev.(handler.TextEvent); ok {
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
