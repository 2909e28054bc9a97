package voicetest

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/internal/inproc"
)

// quietConn is a queuedConn that never has an event.
type quietConn struct{}

func (quietConn) TryRecv(inproc.Token) (AgentEvent, bool, error) { return AgentEvent{}, false, nil }
func (quietConn) Notify(inproc.Token, chan struct{})             {}

// TestPumpLooksAgainAfterATakenIdle: a queuedConn's signals and the
// agent's Idle share one channel (the virtual Clock's), so the signal
// pump's fetch takes may be an Idle that came after pump looked at the
// agent (quiet). pump must look again before it waits: no other signal
// is coming, and its wait would last until its real-time bound.
//
// The interleaving is injected (beforeFetch: the agent goes idle between
// pump's look and its fetch), and the run is in a synctest bubble, whose
// clock is the real clock of the runner's bound: the time of the bubble
// shows a wait at that bound (10 s), exactly, on every run.
func TestPumpLooksAgainAfterATakenIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		r := &runner{clock: newVClock(), listen: new(atomic.Int64), said: new(atomic.Int64)}
		r.cfg.Timeouts.MaxDuration = time.Minute
		r.start = r.clock.Now()
		events := make(chan *recvItem, directQueueStart)
		r.events = events
		r.direct = &direct{conn: quietConn{}, ready: r.clock.idleC, out: events, done: make(chan struct{}), gate: newLocalGate()}
		idled := 0
		r.beforeFetch = func() {
			if idled == 0 && !r.clock.isIdle() {
				idled++
				r.clock.Idle(0) // the agent's Idle, on its own goroutine
			}
		}
		const until = 10 * time.Second
		begin := time.Now()
		err := r.pump(ctx, func() bool { return r.now() >= until }, func() time.Duration { return until })
		if r.timer != nil {
			r.timer.Stop()
		}
		if err != nil {
			t.Fatal(err)
		}
		if idled != 1 {
			t.Fatalf("the agent went idle %d times before pump's fetch, want once", idled)
		}
		if waited := time.Since(begin); waited != 0 {
			t.Errorf("pump waited %v of real time for the agent it had seen go idle, want no wait", waited)
		}
		if got := r.now(); got != until {
			t.Errorf("the conversation's time is %v, want %v", got, until)
		}
	})
}
