package livekit

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/scrub"
)

// The agent's lk.agent.state read when it joined is its first state, and
// is ignored when a change already came: the SDK reports the join from a
// goroutine of its own and later attribute changes in order, so a change
// may come first. Before, the stale state read at the join was followed
// as a change ("listening → initializing" after "(none) → listening"),
// which failed TestScenarioMultiTurn's check of the states once under
// load.
func TestJoinStateAfterChangeIgnored(t *testing.T) {
	st := &settings{Agent: Agent{MaxQueueBytes: DefaultMaxQueueBytes, MaxFrameBytes: DefaultMaxFrameBytes}}
	newReceiver := func() (*conn, *receiver) {
		c, err := newConn(st, voicetest.Session{Name: t.Name(), Rate: 24000, Logf: t.Logf}, scrub.New())
		if err != nil {
			t.Fatal(err)
		}
		return c, c.recv
	}
	lines := func(c *conn) []string {
		var out []string
		for {
			ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
			ev, err := c.Recv(ctx)
			cancel()
			if errors.Is(err, context.DeadlineExceeded) {
				return out
			}
			if err != nil {
				t.Fatalf("Recv: %v", err)
			}
			if ev.Kind == voicetest.AgentLog {
				out = append(out, ev.Text)
			}
		}
	}
	want := func(c *conn, what string, wantLines ...string) {
		t.Helper()
		got := lines(c)
		if len(got) != len(wantLines) {
			t.Fatalf("%s: agent log %q, want %q", what, got, wantLines)
		}
		for i := range got {
			if got[i] != wantLines[i] {
				t.Errorf("%s: agent log %q, want %q", what, got, wantLines)
			}
		}
	}

	// The join's state came last: a change came first.
	c, r := newReceiver()
	r.agentState("listening", false)
	r.agentState("initializing", true)
	r.agentState("speaking", false)
	want(c, "a change before the join's state", "agent state: (none) → listening", "agent state: listening → speaking")

	// In order: the join's state first, then the changes.
	c, r = newReceiver()
	r.agentState("initializing", true)
	r.agentState("listening", false)
	want(c, "the join's state first", "agent state: (none) → initializing", "agent state: initializing → listening")
}
