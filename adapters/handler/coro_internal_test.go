package handler

import (
	"testing"
	"time"
)

// The rescue's timer may fire while a resume is under way but the resumed
// body has not yet stored coRunning (the state is still coResuming: on a
// loaded machine the switch can take longer than rescueAfter). The watch
// must keep watching then: were it to stand down, the body would go on to
// block with no timer armed, and the runner would stay parked in it for
// good (seen under load: two runners parked in resume, their handlers
// blocked on a channel and in a sleep, nothing watching).
func TestWatchKeepsWatchingAResumeUnderWay(t *testing.T) {
	co := &coro{}
	fired := make(chan struct{}, 1)
	co.timer = time.AfterFunc(time.Hour, func() { fired <- struct{}{} })
	defer co.timer.Stop()
	co.started.Store(1)
	co.watching.Store(true)
	co.watchSeq.Store(1)
	co.state.Store(coResuming)
	co.watch()
	if !co.watching.Load() {
		t.Fatal("the watch stood down while a resume was under way (coResuming): nothing would rescue the runner once the body blocks")
	}
	select {
	case <-fired:
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not re-arm its timer for a resume under way")
	}
}
