package handler

import (
	"iter"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/voicetest-go/voicetest/internal/inproc"
)

// Issue 21: on the runner's virtual Clock (Notify), a conversation's
// handler calls run as a coroutine (iter.Pull) that the runner resumes on
// its own goroutine (Resume), instead of on a worker goroutine that the
// runner wakes and that wakes the runner back, four times a turn. A
// coroutine switch goes through neither the run queue nor an idle P.
//
// The coroutine is only a faster way to hand control over: the channels
// stay the truth. A Say posts its speech as on the worker, then yields to
// the runner; once resumed, it reads its reply channel as on the worker.
// So a goroutine that yields or resumes at the wrong moment costs speed,
// never a wrong answer.
//
// Who holds the coroutine is kept in coro.state:
//
//   - coIdle: the body waits (parked) for a job; the runner holds it.
//   - coResuming: the runner is resuming it (Resume); the resumed
//     goroutine stores coRunning.
//   - coRunning: the runner is parked in next; some goroutine runs handler
//     code. The one that moves the state away from coRunning (a Say that
//     parks, the body that goes idle, the rescue, a Goexit) yields, and
//     only it: one yield per next.
//   - coParked: a Say parked after posting its speech (its reply channel
//     is waitRC); the runner resumes it once the reply is there.
//   - coOff: the coroutine is given up (rescued, closed, or the body
//     gave up); nobody yields any more, later calls go to the worker.
//     The goroutine parked on the coroutine, if any, is released when the
//     body returns.
//   - coGone: the handler called runtime.Goexit (t.FailNow) in the body;
//     a goroutine of its own lets it finish dying.
//
// The rescue: a handler that blocks on anything but its own speech (a
// channel, a mutex, time.Sleep) would hold the runner, parked in next,
// out of reach of its bounds and of ctx. A real-clock timer armed while
// the runner resumes the coroutine finds a resume that has lasted longer
// than rescueAfter, takes the state (coRunning → coOff) and yields in the
// body's place: the runner goes on as with the worker (its bounds,
// TimeoutError), the handler finishes its call on what is now a goroutine
// of its own, on the channels, and then returns from the body, which
// releases the timer's goroutine, parked in that yield.
const (
	coIdle int32 = iota
	coResuming
	coRunning
	coParked
	coOff
	coGone
)

// rescueAfter is how long, on the real clock, a resume of the coroutine
// may last before the rescue takes the runner back (between one and two
// times this: the timer is armed once and looks again each period).
const rescueAfter = 5 * time.Millisecond

// coro is a conversation's handler-call coroutine.
type coro struct {
	c     *handlerConn
	next  func() (int32, bool)
	stop  func()
	yield func(int32) bool // set by the body before it stores coRunning

	state  atomic.Int32
	job    atomic.Pointer[callState] // the call launch left to it (under c.mu, while coIdle)
	waitRC atomic.Pointer[replyChan] // the parked Say's reply, stored before coParked

	// started counts the runner's nexts, returned those that returned:
	// the body waits until they are equal before it returns (so that the
	// runner's reads of iter.Pull's state in next happen before the
	// body's exit writes it).
	started  atomic.Uint64
	returned atomic.Uint64

	// The rescue's timer, armed by the runner when it is not (watching),
	// with the resume it saw then (watchSeq).
	timer    *time.Timer
	watching atomic.Bool
	watchSeq atomic.Uint64
}

func newCoro(c *handlerConn) *coro {
	co := &coro{c: c}
	co.next, co.stop = iter.Pull(iter.Seq[int32](co.body))
	return co
}

// body runs the jobs launch leaves pending, one per resume, until it is
// stopped or given up.
func (co *coro) body(yield func(int32) bool) {
	co.yield = yield
	growStack() // as the worker: a new goroutine's stack would grow, and be copied, in every conversation
	for {
		co.state.CompareAndSwap(coResuming, coRunning)
		if cs := co.job.Swap(nil); cs != nil {
			co.run(callJob{ctx: cs.view.ctx, ev: cs.ev, view: &cs.view})
		}
		if !co.idle() {
			return
		}
	}
}

// run runs one handler call in the body, and guards the runner against a
// runtime.Goexit in it.
func (co *coro) run(job callJob) {
	finished := false
	defer func() {
		if !finished {
			co.exiting()
		}
	}()
	co.c.runCall(job)
	finished = true
}

// exiting runs while the body dies of runtime.Goexit: were the body to
// end while the runner is parked in next, next would Goexit the runner.
// The body yields instead (the runner then lets a goroutine of its own
// resume it, and that goroutine ends with it), or, when it no longer
// holds the runner, ends as when it gives up.
func (co *coro) exiting() {
	for {
		switch co.state.Load() {
		case coRunning:
			if co.state.CompareAndSwap(coRunning, coGone) {
				co.yield(coGone)
				return
			}
		case coParked:
			if co.state.CompareAndSwap(coParked, coOff) {
				co.waitAck()
				return
			}
		case coResuming:
			runtime.Gosched()
		default:
			co.waitAck()
			return
		}
	}
}

// idle parks the body, after a job, until the runner resumes it for the
// next; it reports false when the body must return (stopped, or given
// up: it no longer holds the runner).
func (co *coro) idle() bool {
	for {
		switch co.state.Load() {
		case coRunning:
			if co.state.CompareAndSwap(coRunning, coIdle) {
				return co.yield(coIdle)
			}
		case coParked:
			// A goroutine the handler started parked in a Say while the
			// body ran (the body cannot tell it from itself): give the
			// coroutine up; the body's return resumes that goroutine,
			// which reads its reply as on the worker.
			if co.state.CompareAndSwap(coParked, coOff) {
				co.waitAck()
				return false
			}
		case coResuming:
			runtime.Gosched() // the runner is switching: the resumed goroutine stores coRunning
		default:
			co.waitAck()
			return false
		}
	}
}

// waitAck waits until the runner's last next has returned.
func (co *coro) waitAck() {
	for co.returned.Load() != co.started.Load() {
		runtime.Gosched()
	}
}

// park yields a Say's goroutine to the runner after it posted its speech
// (reply rc), if it holds the runner; it returns once the runner resumed
// it (the reply is there), or at once. The caller then reads rc.
func (co *coro) park(rc *replyChan) {
	if co.state.Load() != coRunning || len(rc.ch) > 0 {
		// (Not holding the runner: a call on the worker, or a rescued
		// one; or the speech is answered already.)
		return
	}
	co.waitRC.Store(rc)
	if !co.state.CompareAndSwap(coRunning, coParked) {
		return
	}
	if co.yield(coParked) {
		co.state.CompareAndSwap(coResuming, coRunning)
	}
}

// resume runs the coroutine on the runner's goroutine until it yields:
// the rescue's timer watches it meanwhile. The caller has moved the
// state to coResuming.
func (co *coro) resume() {
	seq := co.started.Add(1)
	if co.watching.CompareAndSwap(false, true) {
		co.watchSeq.Store(seq)
		if co.timer == nil {
			// Made stopped and armed once stored: its function (watch)
			// uses co.timer, and may run before AfterFunc has returned.
			co.timer = time.AfterFunc(time.Hour, co.watch)
			co.timer.Stop()
		}
		co.timer.Reset(rescueAfter)
	}
	v, ok := co.next()
	co.returned.Store(seq)
	if ok && v == coGone {
		// The body is dying of runtime.Goexit, parked: a goroutine of
		// its own resumes it and ends with it.
		go func() { co.next() }()
	}
}

// watch is the rescue's timer: a resume seen at its last look that still
// runs is rescued; one that began since, or one under way whose body has
// not stored coRunning yet (coResuming: on a loaded machine the switch may
// outlast rescueAfter), is looked at again a period later.
func (co *coro) watch() {
	seq := co.started.Load()
	switch co.state.Load() {
	case coRunning:
		if seq == co.watchSeq.Load() && co.state.CompareAndSwap(coRunning, coOff) {
			co.yield(coOff) // parked until the body returns
			return
		}
		co.watchSeq.Store(seq)
		co.timer.Reset(rescueAfter)
		return
	case coResuming:
		co.watchSeq.Store(seq)
		co.timer.Reset(rescueAfter)
		return
	}
	co.watching.Store(false)
	if s := co.state.Load(); (s == coRunning || s == coResuming) && co.watching.CompareAndSwap(false, true) {
		// A resume began after the look.
		co.watchSeq.Store(co.started.Load())
		co.timer.Reset(rescueAfter)
	}
}

// Resume runs the handler's coroutine until it parks again, when it can
// go on (a call is pending, or the speech a parked Say waits for has been
// answered), and reports whether it ran it: the runner calls it before it
// waits for the agent (see internal/inproc). A handler that blocks on
// anything but its speech is rescued within twice rescueAfter.
func (c *handlerConn) Resume(inproc.Token) bool {
	co := c.co.Load()
	if co == nil {
		return false
	}
	switch co.state.Load() {
	case coIdle:
		if co.job.Load() == nil || !co.state.CompareAndSwap(coIdle, coResuming) {
			return false
		}
	case coParked:
		if rc := co.waitRC.Load(); len(rc.ch) == 0 && !isClosed(c.loopDone) {
			return false
		}
		if !co.state.CompareAndSwap(coParked, coResuming) {
			return false
		}
	default:
		return false
	}
	co.resume()
	return true
}

// closeCoro runs what the coroutine still has to do at Close (the call
// Close cut short, the StopEvent call), then stops it; it runs on the
// runner's goroutine, after the close was delivered to the loop (which
// answers every speech at once from then on).
func (c *handlerConn) closeCoro() {
	co := c.co.Load()
	if co == nil {
		return
	}
	var stop bool
	for {
		for c.Resume(inproc.Token{}) {
		}
		// Under the loop's lock, so that launch (a call's end on another
		// goroutine may launch the StopEvent call now) either left its
		// call to the coroutine already, and it runs, or sees it off.
		c.mu.Lock()
		pending := co.job.Load() != nil
		if !pending {
			stop = co.state.CompareAndSwap(coIdle, coOff)
		}
		c.mu.Unlock()
		if !pending {
			break
		}
	}
	if stop {
		co.stop() // the body returns from its idle yield
	}
	if co.timer != nil && co.watching.Load() {
		co.timer.Stop()
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
