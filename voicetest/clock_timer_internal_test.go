package voicetest

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/internal/inproc"
)

// TestClockTimerIsANewAfterFuncEachReset: the timer the runner's virtual
// Clock gives an in-process agent (NewTimer) fires, each time it is
// reset, as an AfterFunc made then would: at its time, after the timers
// armed before it for the same instant, once; Stop cancels it; and after
// the clock turns real (realize) it runs on the system clock.
func TestClockTimerIsANewAfterFuncEachReset(t *testing.T) {
	c := newVClock()
	start := c.Now()
	var fired []string
	note := func(s string) func() { return func() { fired = append(fired, s) } }
	tm := agentClock{c}.NewTimer(inproc.Token{}, note("timer"))

	if tm.Stop() {
		t.Error("Stop of a timer never armed reported that it cancelled a call")
	}
	tm.Reset(time.Second)
	c.AfterFunc(time.Second, note("after"))
	c.jump(start.Add(time.Second))
	if want := []string{"timer", "after"}; !slices.Equal(fired, want) {
		t.Fatalf("fired %q, want %q (armed first, fires first)", fired, want)
	}
	if tm.Stop() {
		t.Error("Stop after the timer fired reported that it cancelled a call")
	}

	// Armed again for the same instant as a timer armed before: after it,
	// as a new AfterFunc; a second Reset replaces the first.
	fired = nil
	tm.Reset(time.Second)
	c.AfterFunc(2*time.Second, note("after"))
	tm.Reset(2 * time.Second)
	c.jump(start.Add(5 * time.Second))
	if want := []string{"after", "timer"}; !slices.Equal(fired, want) {
		t.Fatalf("fired %q, want %q (the timer fires once, at its last Reset's time, after the timer armed before it)", fired, want)
	}
	if got := c.Now().Sub(start); got != 3*time.Second {
		t.Errorf("the clock jumped to %v, want the timers' 3s", got)
	}

	// Stop cancels.
	fired = nil
	tm.Reset(time.Second)
	if !tm.Stop() {
		t.Error("Stop of an armed timer reported that it cancelled nothing")
	}
	c.jump(start.Add(10 * time.Second))
	if len(fired) > 0 {
		t.Errorf("a stopped timer fired: %q", fired)
	}

	// On the system clock once the clock is real.
	var mu sync.Mutex
	done := make(chan struct{})
	real := agentClock{c}.NewTimer(inproc.Token{}, func() { mu.Lock(); defer mu.Unlock(); close(done) })
	real.Reset(time.Hour)
	c.realize()
	if !real.Stop() {
		t.Error("Stop of a timer armed before the clock turned real cancelled nothing")
	}
	real.Reset(time.Millisecond)
	select {
	case <-done:
	case <-time.After(10 * time.Second): // a bound, not a timing assertion
		t.Fatal("a timer reset on the real clock did not fire")
	}
}
