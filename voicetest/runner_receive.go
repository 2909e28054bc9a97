package voicetest

import (
	"context"
	"runtime/metrics"
	"sync/atomic"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/internal/inproc"
)

// recvItem is one result of Conn.Recv with the time it returned.
type recvItem struct {
	ev  AgentEvent
	at  time.Duration
	err error
	// said is how many user utterances the runner had begun to send
	// when Recv returned it (see runner.said).
	said int64

	gate *recvGate // released when the runner takes the item (bounds.go)
	size int64
}

// receive runs Conn.Recv in a loop and forwards what it returns, with the
// time it returned, until ctx is done, the agent hangs up or Recv fails.
// listen holds 1 + the offset at which it last called Recv while it waits
// in Recv, and 0 from Recv's return until the event is in out (while the
// queue is full, the agent goes unheard). It signals queued (without
// blocking) each time it has queued an event.
func receive(ctx context.Context, conn Conn, clock Clock, start time.Time, listen, said *atomic.Int64, out chan<- *recvItem, queued chan<- struct{}, done chan<- struct{}) {
	defer close(done)
	defer close(out)
	gate := newRecvGate()
	for {
		listen.Store(int64(clock.Now().Sub(start)) + 1)
		ev, err := conn.Recv(ctx)
		it := recvItem{ev: ev, at: clock.Now().Sub(start), err: err, said: said.Load(), gate: gate, size: ev.Size()}
		listen.Store(0)
		if err != nil && ctx.Err() != nil || !gate.acquire(ctx, it.size) {
			return
		}
		select {
		case out <- &it:
		case <-ctx.Done():
			return
		}
		select {
		case queued <- struct{}{}:
		default:
		}
		if err != nil || ev.Kind == AgentHangUp {
			return
		}
	}
}

// queuedConn is implemented by a Conn of this module whose events wait in
// a queue in process (the handler adapter's): on the runner's virtual
// Clock the runner takes them itself (fetch), without a receive goroutine
// and the two hand-offs per event it costs. Its methods never block, so
// the runner calls them on its own goroutine (see internal/inproc).
type queuedConn interface {
	// TryRecv returns what Recv would return now, reporting false when
	// Recv would wait.
	TryRecv(inproc.Token) (ev AgentEvent, ok bool, err error)
	// Notify makes the Conn signal ch (without blocking: ch has room for
	// one signal) whenever TryRecv may have something new to return (an
	// event, the end of the stream), from now on, instead of the channel
	// its Recv waits on. The runner passes the channel of its Clock on
	// which it waits for the agent to go idle: one channel wakes it for
	// both, so that its waits select on one channel less.
	Notify(inproc.Token, chan struct{})
}

// resumer is a queuedConn whose agent runs user code as a coroutine that
// the runner resumes on its own goroutine (the handler adapter's calls):
// Resume runs it until it parks again, if it can go on now, and reports
// whether it ran it. The runner calls it before it waits for the agent.
// The Conn bounds it itself (a coroutine that does not park in time is
// handed to a goroutine of its own).
type resumer interface {
	Resume(inproc.Token) bool
}

// direct is the receive side of a run whose Conn is a queuedConn: the
// runner's goroutine does what receive does for other Conns.
type direct struct {
	conn queuedConn
	// ready is the virtual Clock's idle channel (clock.idleC), which the
	// Conn signals too (Notify): a signal taken from it may be either.
	ready <-chan struct{}
	out   chan *recvItem  // the runner's events (r.events), grown by fetch
	done  chan<- struct{} // closed with out, or at Close
	gate  *recvGate
	held  *recvItem // taken from conn, waiting for room in out
	// signalled: ready fired while the runner waited on it; TryRecv is
	// asked only then, or when ready holds a signal (the Conn signals it
	// whenever it has something after TryRecv reported nothing).
	signalled bool
	free      []*recvItem // items taken and handled, for fetch to reuse
	resume    resumer     // conn, if it is one
}

// resumed resumes the agent's coroutine, if it has one that can go on
// (see resumer), and reports whether it did.
func (r *runner) resumed() bool {
	d := r.direct
	return d != nil && d.resume != nil && d.resume.Resume(inproc.Token{})
}

// takeItem takes one item from r.events; an item fetch made is reused.
func (r *runner) takeItem(it *recvItem) error {
	err := r.take(*it)
	if d := r.direct; d != nil && it.gate == d.gate && len(d.free) < cap(d.free) {
		*it = recvItem{}
		d.free = append(d.free, it)
	}
	return err
}

// fetch moves onto r.events what the queuedConn has ready, stamped as
// receive stamps it, as long as there is room (the same bounds as for
// receive: the queue's capacity and maxInFlightBytes). It never blocks.
// As receive, it keeps listen at 0 while it holds an event it could not
// queue, and it ends the stream after an error or a hang-up.
//
// It reports whether it took a signal from the Clock's idle channel,
// which the Conn shares (Notify): that signal may have been the agent's
// Idle, so a caller that checked whether the agent is idle before fetch
// must check again before it waits on the channel.
func (r *runner) fetch() (took bool) {
	d := r.direct
	if d == nil {
		return false
	}
	if d.held == nil && !d.signalled {
		select {
		case <-d.ready:
			took = true
		default:
			return false // nothing new since TryRecv last reported nothing
		}
	}
	d.signalled = false
	for {
		if d.held == nil {
			ev, ok, err := d.conn.TryRecv(inproc.Token{})
			if !ok {
				if r.listen.Load() == 0 {
					r.listen.Store(int64(r.now()) + 1)
				}
				return took
			}
			var it *recvItem
			if n := len(d.free); n > 0 {
				it, d.free = d.free[n-1], d.free[:n-1]
			} else {
				it = new(recvItem) // only when none is free to reuse
			}
			*it = recvItem{ev: ev, at: r.now(), err: err, said: r.said.Load(), gate: d.gate, size: ev.Size()}
			d.held = it
			r.listen.Store(0)
		}
		it := d.held
		if len(d.out) == cap(d.out) || !d.gate.tryAcquire(it.size) {
			return took
		}
		d.held = nil
		d.out <- it
		if len(d.out) == cap(d.out) && cap(d.out) < maxQueuedEvents {
			r.growDirect()
		}
		if it.err != nil || it.ev.Kind == AgentHangUp {
			r.endDirect()
			return took
		}
	}
}

// maxQueuedEvents bounds the events received and not yet handled (the
// queue between receive, or fetch, and the runner); directQueueStart is
// the room a queuedConn's queue starts with, which fetch doubles each
// time it fills, up to maxQueuedEvents: a text conversation keeps a few
// events queued at a time.
const (
	maxQueuedEvents  = 1024
	directQueueStart = 8
)

// growDirect moves the events of the full queue of a queuedConn to one
// twice its size (at most maxQueuedEvents), in order. Only the runner's
// goroutine uses that queue (fetch fills it, the runner takes from
// r.events), so no event is in flight while it moves.
func (r *runner) growDirect() {
	d := r.direct
	q := make(chan *recvItem, min(2*cap(d.out), maxQueuedEvents))
	for len(d.out) > 0 {
		q <- <-d.out
	}
	d.out, r.events = q, q
}

// endDirect ends the stream of a queuedConn: what is queued is handled,
// then the runner sees the stream closed, as when receive returns.
func (r *runner) endDirect() {
	if d := r.direct; d != nil {
		r.direct = nil
		close(d.out)
		close(d.done)
	}
}

// jump jumps the virtual clock to (see vclock.jump). A jump that fires
// the agent's timers takes the stale signal of an earlier Idle from the
// Clock's idle channel, which a queuedConn's signals share: fetch asks
// the Conn again after it.
func (r *runner) jump(to time.Time) {
	if r.clock.jump(to) && r.direct != nil {
		r.direct.signalled = true
	}
}

// pump handles agent events until stop reports true (nil) or the offset
// returned by deadline passes (errDeadline). stop and deadline are asked
// again after every event. Events already received are handled even when
// the deadline has passed on entry: a runner that is late everywhere (a
// line slower than real time, an overloaded machine) must still see the
// agent's events as they come, not only once it catches up.
//
// On a virtual clock shared with the agent, while the agent is idle and
// every event it sent has been taken, the time jumps to the deadline or to
// the agent's next timer, whichever comes first; otherwise pump waits for
// events, for the agent to go idle, or, in real time, for the deadline or
// the agent's next timer (work that outlasts them lets the time run as the
// real clock does).
func (r *runner) pump(ctx context.Context, stop func() bool, deadline func() time.Duration) error {
	virtual := r.clock != nil && r.clock.isVirtual()
	var idle <-chan struct{}
	if virtual {
		idle = r.clock.idleC
	}
	// No wait goes past the scenario's bound.
	limit := r.cfg.Timeouts.MaxDuration
	wait := deadline
	deadline = func() time.Duration { return min(wait(), limit) }
	for {
		if stop() {
			return nil
		}
		if r.now() >= limit {
			if err := r.poll(); err != nil {
				return err
			}
			if stop() {
				return nil
			}
			return r.overtime()
		}
		r.playBackground(ctx)
		d := deadline() - r.now()
		if d <= 0 {
			if err := r.poll(); err != nil {
				return err
			}
			if stop() {
				return nil
			}
			if deadline() > r.now() {
				continue // the events moved the deadline (agent activity)
			}
			return errDeadline
		}
		limit := deadline()
		if due, ok := r.backgroundDue(); ok && due < limit {
			// Wake for the next frame of background scene.
			limit, d = due, max(due-r.now(), 0)
		}
		if virtual {
			to := r.start.Add(limit)
			if r.quiet() {
				r.jump(to)
				continue
			}
			if next, ok := r.clock.next(); ok && next.Before(to) {
				d = max(next.Sub(r.clock.Now()), 0)
			}
		}
		if r.beforeFetch != nil {
			r.beforeFetch()
		}
		took := r.fetch()
		if r.direct != nil && len(r.events) > 0 {
			// fetch queued it on this goroutine: no need to wait (but
			// an ended scenario ends here too, as the select below ends
			// it).
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := r.takeItem(<-r.events); err != nil {
				return err
			}
			continue
		}
		if took {
			// The signal fetch took may have been the agent's Idle,
			// which came after quiet looked: look again before waiting.
			continue
		}
		if r.resumed() {
			continue // the agent ran: look again
		}
		waited := r.armWait(d, virtual)
		events := r.events
		if r.direct != nil {
			events = nil // only fetch, on this goroutine, queues on it
		}
		wake := r.wake
		if virtual {
			wake = nil // r.wake is idle: one case for both
		}
		select {
		case it, ok := <-events:
			if !ok {
				r.events = nil
				r.streamClosed = true
				continue
			}
			if err := r.takeItem(it); err != nil {
				return err
			}
		case <-idle: // the agent went idle (time may jump), or the bound, or a queuedConn has something new
			if r.direct != nil {
				r.direct.signalled = true
			}
			if r.wokeAfter(waited, d) && !r.clock.isIdle() {
				// The agent worked for longer than the wait, in real
				// time: so much time has passed.
				r.jump(r.clock.Now().Add(d))
			}
		case <-wake: // the real clock's bound (armWait)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// overtime is the error of a scenario that went on past
// Timeouts.MaxDuration.
func (r *runner) overtime() error {
	return &TimeoutError{Phase: PhaseScenario, Timeout: r.cfg.Timeouts.MaxDuration, Turn: r.st.turn,
		Hint: "the conversation went on for longer than Config.Timeouts.MaxDuration, the bound on every scenario (an agent that never stops talking, never ends its turn or never hangs up ends here); raise Config.Timeouts.MaxDuration if the conversation really lasts that long"}
}

// quiet reports whether nothing can happen until the virtual clock moves:
// the agent is idle, and every event it sent has been handled.
func (r *runner) quiet() bool {
	r.fetch()
	if r.events == nil {
		return true // the agent's stream is over
	}
	return len(r.events) == 0 && r.clock.quiet(r.took)
}

// waitUntil handles agent events until the offset t.
func (r *runner) waitUntil(ctx context.Context, t time.Duration) error {
	err := r.pump(ctx, func() bool { return false }, func() time.Duration { return t })
	if err == errDeadline {
		return nil
	}
	return err
}

// catchUp lets everything the agent does at this instant reach the
// queue before the runner looks at it, so that what the runner sees is
// decided by a rule, not by the goroutine scheduler. Inside a synctest
// bubble it waits (synctest.Wait) until every other goroutine of the
// bubble is durably blocked: the agent has done all it does at this
// virtual instant, and receive has queued it and waits in Recv (or for
// room in the queue). poll then handles all of it, on every run alike.
// On the runner's virtual Clock (Capabilities.SessionClock, outside a
// bubble) it waits until the agent says it is idle and every event its
// Recv has returned is queued, for at most catchUpWait of real time in
// which the agent was waiting on something (see catchUpBudget). An agent
// still at work then (a model over the network, a task that lasts the
// call) runs on real time, as the Clock lets it: catchUp does not wait for
// it again until it has been idle. On the real clock it does nothing.
func (r *runner) catchUp() {
	switch {
	case r.bubble:
		synctest.Wait()
	case r.clock != nil && r.clock.isVirtual() && r.events != nil:
		if r.agentAtWork {
			if !r.clock.isIdle() {
				return
			}
			r.agentAtWork = false
		}
		var budget *catchUpBudget
		r.fetch()
		for !r.clock.caughtUp(r.took+int64(len(r.events))) && len(r.events) < cap(r.events) {
			if r.resumed() {
				r.fetch()
				continue
			}
			if budget == nil {
				budget = newCatchUpBudget()
				defer budget.timer.Stop()
			}
			spent := false
			select {
			case <-r.clock.idleC: // or a queuedConn has something new (Notify)
				if r.direct != nil {
					r.direct.signalled = true
				}
			case <-r.queued:
			case <-r.received:
				return // all it received is queued
			case <-budget.timer.C:
				spent = budget.spent()
			}
			r.fetch()
			if spent && !r.clock.caughtUp(r.took+int64(len(r.events))) {
				r.agentAtWork = true
				return
			}
		}
	}
}

// catchUpWait bounds, in real time, catchUp's wait for an agent on the
// runner's virtual Clock to finish what it does at one instant: the time
// in which the agent was waiting on something of its own (catchUpBudget).
// catchUpTick is how often the wait looks; catchUpMax bounds the whole
// wait, however busy the process is.
const (
	catchUpWait = 100 * time.Millisecond
	catchUpTick = 10 * time.Millisecond
	catchUpMax  = time.Second
)

// catchUpBudget is the real time catchUp's wait has counted against
// catchUpWait. It counts only the time in which the agent can have been
// waiting on something (a model over the network, a task of its own):
// every catchUpTick the runner looks at the process's scheduler, and a
// tick in which another goroutine was running or ready to run is not
// counted, for the agent's may be that one (a loaded machine that does
// not run its thread, a goroutine waiting for a processor); a tick that
// came late is counted as at most two ticks, for the runner itself was
// not run, nor then was the agent. So a starved agent cannot lose what
// it did at an instant to the runner's next step, and a quiet wait is
// counted as before. The whole wait stays under catchUpMax.
type catchUpBudget struct {
	timer   *time.Timer
	start   time.Time
	last    time.Time
	counted time.Duration
	sched   []metrics.Sample // running and runnable goroutines
}

func newCatchUpBudget() *catchUpBudget {
	now := time.Now()
	return &catchUpBudget{timer: time.NewTimer(catchUpTick), start: now, last: now, sched: []metrics.Sample{
		{Name: "/sched/goroutines/running:goroutines"},
		{Name: "/sched/goroutines/runnable:goroutines"},
	}}
}

// spent counts the tick that has just fired, and reports whether the
// wait has used up its budget; if not, it arms the next tick.
func (b *catchUpBudget) spent() bool {
	now := time.Now()
	step := min(now.Sub(b.last), 2*catchUpTick)
	b.last = now
	metrics.Read(b.sched)
	running, runnable := b.sched[0].Value, b.sched[1].Value
	// This goroutine is one of the running ones. A runtime without these
	// metrics has every tick counted, as before they were read.
	if running.Kind() != metrics.KindUint64 || runnable.Kind() != metrics.KindUint64 ||
		running.Uint64() <= 1 && runnable.Uint64() == 0 {
		b.counted += step
	}
	if b.counted >= catchUpWait || now.Sub(b.start) >= catchUpMax {
		return true
	}
	b.timer.Reset(catchUpTick)
	return false
}

// poll handles the agent events already waiting, without blocking; inside
// a synctest bubble, every event sent up to this instant (catchUp). It
// handles at most those queued when it is called (and notices a closed
// stream), so an agent that sends events as fast as they are handled cannot
// keep it, and the runner's memory, growing forever.
func (r *runner) poll() error {
	r.catchUp()
	r.fetch()
	for budget := len(r.events) + 1; budget > 0 && r.events != nil; budget-- {
		select {
		case it, ok := <-r.events:
			if !ok {
				r.events = nil
				r.streamClosed = true
				return nil
			}
			if err := r.takeItem(it); err != nil {
				return err
			}
		default:
			return nil
		}
	}
	return nil
}
