package voicetest

import (
	"container/heap"
	"sync"
	"sync/atomic"
	"time"

	"github.com/voicetest-go/voicetest/internal/inproc"
)

// Clock is the time of one conversation. The runner gives it to an
// in-process agent in Session.Clock so that the conversation runs on
// virtual time where testing/synctest cannot be used (Run in a plain
// program, a scenario inside a testing.B): time stands still while the
// agent or the runner works, and jumps ahead, at once, through every
// stretch in which both only wait (the agent's speech playing, its think
// time, the user's pauses, timeouts). An agent that takes its time from
// the Clock declares Capabilities.SessionClock; the runner then relies on
// it to say, with Idle, when it has nothing to do.
//
// The agent must read the time only with Now, wait only with AfterFunc
// (or on the runner, through its Conn), and keep to this protocol:
//
//   - when it wakes for anything but one of its AfterFunc timers (a call
//     of its Conn, work of its own), it calls Busy before it acts;
//   - when it has done everything due at Now and will do nothing more
//     until an AfterFunc timer fires or the runner calls its Conn, it
//     calls Idle with the number of events its Recv has returned so far.
//
// Time cannot jump while the agent is busy. Work that outlasts the next
// thing due (a model called over the network, a background task that
// waits on something of its own) lets the time run as the real clock
// does, until the agent is idle again. AfterFunc timers fire, in the
// order of their times, when the time reaches them. An Idle that comes
// after a timer fired but before the agent read Now again is ignored:
// the agent has not yet done what became due.
type Clock interface {
	// Now returns the current time of the conversation.
	Now() time.Time
	// AfterFunc calls f once the clock has reached Now()+d, and returns a
	// function that cancels the call and reports whether it did. f must
	// not block (send on a buffered channel): the runner may call it from
	// its own goroutine. Firing a timer marks the agent busy.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
	// Busy tells the clock that the agent has work to do: time does not
	// jump until the agent calls Idle.
	Busy()
	// Idle tells the clock that the agent has nothing to do until one of
	// its timers fires or the runner calls its Conn, and that its Recv has
	// returned events events so far (the runner jumps only once it has
	// taken them all).
	Idle(events int64)
}

// SystemClock returns the clock of the system: time.Now and
// time.AfterFunc, with Busy and Idle doing nothing. An agent uses it when
// Session.Clock is nil. Inside a testing/synctest bubble it runs on the
// bubble's virtual time.
func SystemClock() Clock { return systemClock{} }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

func (systemClock) Busy()      {}
func (systemClock) Idle(int64) {}

// vclock is the Clock a runner gives an in-process agent outside a
// synctest bubble. It starts virtual; connect turns it into the system
// clock (real) when the agent does not declare Capabilities.SessionClock.
// Only the runner's goroutine moves it (jump).
type vclock struct {
	mu      sync.Mutex
	virtual bool
	now     time.Time // while virtual
	// real and offset mirror !virtual and now (base+offset) for Now,
	// which reads them without the lock; they change under it.
	real   atomic.Bool
	base   time.Time
	offset atomic.Int64
	timers vtimers
	seq    uint64
	idle   bool
	sent   int64
	// fires counts the jumps that fired a timer (changed under mu, after
	// the time moved); seen is fires when the agent last read Now. Both
	// are atomic so that the agent's Now, which it reads at every step,
	// takes no lock.
	fires atomic.Uint64
	seen  atomic.Uint64
	idleC chan struct{} // signalled by Idle
	due   []*vtimer     // jump's list of the timers it fires, kept for the next jump
}

// agentClock is the view of a vclock given to the agent: its Now records
// which timer firings the agent has seen, so that a stale Idle is ignored.
type agentClock struct{ c *vclock }

// Now returns the conversation's time and records that the agent has
// seen the timer firings so far. It takes no lock: fires is read before the time, and jump moves the
// time before it counts a firing, so an agent that has seen a firing
// reads the time it fired at (or a later one). Reading the count of an
// earlier firing with the time of a later one makes an Idle look stale,
// which only delays it until the agent's next step (the timer's callback
// runs one); the agent calls Now only from its loop, one at a time.
func (a agentClock) Now() time.Time {
	c := a.c
	c.seen.Store(c.fires.Load())
	if c.real.Load() {
		return time.Now()
	}
	return c.base.Add(time.Duration(c.offset.Load()))
}

func (a agentClock) AfterFunc(d time.Duration, f func()) func() bool { return a.c.AfterFunc(d, f) }
func (a agentClock) Busy()                                           { a.c.Busy() }

func (a agentClock) Idle(events int64) {
	c := a.c
	c.mu.Lock()
	stale := c.seen.Load() != c.fires.Load()
	if !stale {
		c.idle, c.sent = true, events
	}
	c.mu.Unlock()
	if stale {
		return
	}
	select {
	case c.idleC <- struct{}{}:
	default:
	}
}

// NewTimer returns a timer of the clock that calls f, not armed: an
// in-process agent of this module (the handler agent) arms it with Reset
// for each of its waits, where AfterFunc would make a timer and a stop
// function each time. See internal/inproc.
func (a agentClock) NewTimer(_ inproc.Token, f func()) inproc.Timer {
	return &vtimer{c: a.c, f: f, index: -1}
}

func newVClock() *vclock {
	now := time.Now()
	return &vclock{virtual: true, now: now, base: now, idleC: make(chan struct{}, 1)}
}

// vtimer is one AfterFunc of a virtual clock, or a timer NewTimer made.
type vtimer struct {
	c     *vclock
	when  time.Time
	seq   uint64
	f     func()
	index int // in the heap, -1 once fired or stopped
	real  *time.Timer
}

type vtimers []*vtimer

func (h vtimers) Len() int { return len(h) }
func (h vtimers) Less(i, j int) bool {
	if !h[i].when.Equal(h[j].when) {
		return h[i].when.Before(h[j].when)
	}
	return h[i].seq < h[j].seq
}
func (h vtimers) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *vtimers) Push(x any) {
	t := x.(*vtimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *vtimers) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	t.index = -1
	*h = old[:len(old)-1]
	return t
}

// Now is the runner's reading of the time (the agent reads it through
// agentClock). It takes no lock: the runner reads it often.
func (c *vclock) Now() time.Time {
	if c.real.Load() {
		return time.Now()
	}
	return c.base.Add(time.Duration(c.offset.Load()))
}

func (c *vclock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.virtual {
		return time.AfterFunc(d, f).Stop
	}
	c.seq++
	t := &vtimer{c: c, when: c.now.Add(max(d, 0)), seq: c.seq, f: f}
	heap.Push(&c.timers, t)
	return t.Stop
}

// Reset arms t to fire at Now()+d, after the timers armed before it for
// the same instant, as a new AfterFunc would (inproc.Timer).
func (t *vtimer) Reset(d time.Duration) {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.virtual {
		if t.real != nil {
			t.real.Reset(max(d, 0))
		} else {
			t.real = time.AfterFunc(max(d, 0), t.f)
		}
		return
	}
	c.seq++
	t.when, t.seq = c.now.Add(max(d, 0)), c.seq
	if t.index >= 0 {
		heap.Fix(&c.timers, t.index)
	} else {
		heap.Push(&c.timers, t)
	}
}

// Stop cancels t's call and reports whether it did.
func (t *vtimer) Stop() bool {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.real != nil {
		return t.real.Stop()
	}
	if t.index < 0 {
		return false
	}
	heap.Remove(&c.timers, t.index)
	return true
}

func (c *vclock) Busy() {
	c.mu.Lock()
	c.idle = false
	c.mu.Unlock()
}

func (c *vclock) Idle(events int64) { agentClock{c}.Idle(events) }

// next returns when the earliest timer is due.
func (c *vclock) next() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.timers) == 0 {
		return time.Time{}, false
	}
	return c.timers[0].when, true
}

// isVirtual reports whether the clock runs on virtual time.
func (c *vclock) isVirtual() bool { return !c.real.Load() }

// realize turns the clock into the system clock from now on: time goes on
// from the real time, and pending timers fire on it.
func (c *vclock) realize() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.virtual {
		return
	}
	c.virtual = false
	c.real.Store(true)
	now := time.Now()
	for _, t := range c.timers {
		t.index = -1
		t.real = time.AfterFunc(t.when.Sub(now), t.f)
	}
	c.timers = nil
}

// quiet reports whether the agent is idle and every event it sent has
// been taken (took).
func (c *vclock) quiet(took int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.idle && c.sent == took
}

// isIdle reports whether the agent last said it is idle.
func (c *vclock) isIdle() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.idle
}

// caughtUp reports whether the agent is idle and has returned no more
// events from Recv than n (those the runner has taken or queued).
func (c *vclock) caughtUp(n int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.idle && c.sent <= n
}

// jump moves the time to min(to, the earliest timer), when that is later,
// and fires the timers due then. It reports whether it fired any (the
// agent is then busy until it says it is idle again).
func (c *vclock) jump(to time.Time) bool {
	c.mu.Lock()
	if len(c.timers) > 0 && c.timers[0].when.Before(to) {
		to = c.timers[0].when
	}
	if to.After(c.now) {
		c.now = to
		c.offset.Store(int64(to.Sub(c.base)))
	}
	// Only the runner's goroutine jumps: the list is taken, so that a
	// callback that jumped again would not share it.
	due := c.due[:0]
	c.due = nil
	for len(c.timers) > 0 && !c.timers[0].when.After(c.now) {
		due = append(due, heap.Pop(&c.timers).(*vtimer))
	}
	if len(due) > 0 {
		c.idle = false
		c.fires.Add(1) // after the time moved (see agentClock.Now)
		// A signal of an earlier Idle is stale now: the waits that read
		// idleC check the state (quiet, caughtUp) before they block, so
		// taking it loses no wake-up, and spares one turn of their loop.
		select {
		case <-c.idleC:
		default:
		}
	}
	c.mu.Unlock()
	for _, t := range due {
		t.f()
	}
	fired := len(due) > 0
	clear(due)
	c.due = due[:0]
	return fired
}
