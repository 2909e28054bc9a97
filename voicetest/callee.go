package voicetest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/voicetest-go/voicetest/internal/inproc"
)

// Every call the runner makes into code it does not control goes through
// call: the User, the Judge, the TTS and STT engines, a Check's function,
// an Interrupter's decision, audio effects, and the agent's Connect, Send
// methods and Close (its Recv runs on the receive goroutine, which the
// runner never waits on without a bound; the sends of a promptConn, which
// only this module can implement and which never block, run inline, see
// send). The callee runs on a goroutine
// of its own with a context that ends at its bound, and the runner waits
// for it, for the bound, or for the scenario's context, whichever comes
// first; so the scenario ends within its bounds, and when cancelled, even
// when the callee ignores its context and never returns. Such a callee is
// left running (a "stray"): its result is dropped, and it gets a copy of
// the conversation (State) that the runner no longer touches.
//
// Inside a testing/synctest bubble the bounds run on the bubble's virtual
// time, which stands still while a callee waits on anything but channels
// and timers (the network, a process), and the bubble ends only once every
// goroutine in it has: a callee that never returns still blocks the
// bubble's end after the scenario has failed. Scenario reports it (see
// strayDeadlock).

// callee describes one call into code voicetest does not control.
type callee struct {
	// name names user code: "Config.Judge", "Check"; or adapter and
	// method name an adapter's method: "the twilio adapter's SendAudio".
	// (Names are put together only for an error: calls are frequent.)
	name, adapter, method string
	phase                 Phase
	turn                  int
	// limit bounds the call; timeout is the bound TimeoutError reports
	// (limit when zero).
	limit, timeout time.Duration
	// advice follows "<name> did not return in time; " in a timeout's
	// hint; hint, when set, is the whole hint instead.
	advice, hint string
}

// who names the callee in errors.
func (c callee) who() string {
	if c.method != "" {
		return "the " + c.adapter + " adapter's " + c.method
	}
	return c.name
}

// strays counts, by name, the callees the runner stopped waiting for that
// have not returned yet. It is safe for concurrent use.
type strays struct {
	mu      sync.Mutex
	running map[string]int
	ever    bool // a callee was left running (it may have returned since)
}

func (s *strays) add(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ever = true
	if s.running == nil {
		s.running = map[string]int{}
	}
	s.running[name]++
}

func (s *strays) done(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running[name]--; s.running[name] <= 0 {
		delete(s.running, name)
	}
}

// any reports whether a callee was ever left running.
func (s *strays) any() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ever
}

// names returns the callees still running, sorted.
func (s *strays) names() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.running))
	for n := range s.running {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// callOutcome is what the callee's goroutine reports.
type callOutcome struct {
	err    error
	goexit bool // it called runtime.Goexit (t.FailNow in a Check)
}

// panicError is the error of a callee that panicked. Its stack is printed
// in the failure report (PanicStack).
type panicError struct {
	callee string
	value  any
	stack  []byte
}

func (e *panicError) Error() string { return fmt.Sprintf("%s panicked: %v", e.callee, e.value) }

// PanicStack returns the stack of the goroutine that panicked.
func (e *panicError) PanicStack() []byte { return e.stack }

// call runs f as c describes (see the top of this file). It returns f's
// error, a *TimeoutError naming c when the bound passes (whether f
// returned a deadline error or had not returned), or, when ctx ends
// first, an error naming c that wraps ctx's cause. A panic in f is
// returned as an error with its stack; a runtime.Goexit in f (t.FailNow
// in a Check) exits the calling goroutine too, as if f had run on it. A
// callee left running is counted in stray (nil: not counted).
func call(ctx context.Context, c callee, stray *strays, f func(context.Context) error) error {
	_, err := callLeaving(ctx, c, stray, f)
	return err
}

// callLeaving is call, which also reports whether it left f running.
func callLeaving(ctx context.Context, c callee, stray *strays, f func(context.Context) error) (left bool, err error) {
	cctx, cancel := context.WithTimeout(ctx, c.limit)
	defer cancel()
	out := make(chan callOutcome, 1)
	go func() {
		returned := false
		defer func() {
			if returned {
				return
			}
			if p := recover(); p != nil {
				out <- callOutcome{err: &panicError{callee: c.who(), value: p, stack: debug.Stack()}}
				return
			}
			out <- callOutcome{goexit: true}
		}()
		err := f(cctx)
		returned = true
		out <- callOutcome{err: err}
	}()
	var o callOutcome
	select {
	case o = <-out:
	case <-cctx.Done():
		select {
		case o = <-out: // it returned at the same instant
		default:
			return true, c.abandon(ctx, stray, out)
		}
	}
	if o.goexit {
		runtime.Goexit()
	}
	if o.err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		return false, c.timeoutError()
	}
	return false, o.err
}

// abandon leaves a callee running after its bound passed or ctx ended,
// counting it in stray until it returns, and says why it was left.
func (c callee) abandon(ctx context.Context, stray *strays, out <-chan callOutcome) error {
	// The bound passed or ctx ended, and f is still running: leave it.
	who := c.who()
	if stray != nil {
		stray.add(who)
		go func() {
			<-out
			stray.done(who)
		}()
	}
	if ctx.Err() != nil {
		return fmt.Errorf("voicetest: the scenario's context ended while it waited for %s (phase %q, turn %d): %w", who, c.phase, c.turn, context.Cause(ctx))
	}
	return c.timeoutError()
}

func (c callee) timeoutError() *TimeoutError {
	timeout := c.timeout
	if timeout == 0 {
		timeout = c.limit
	}
	hint := c.hint
	if hint == "" {
		hint = c.who() + " did not return in time; " + c.advice
	}
	return &TimeoutError{Phase: c.phase, Timeout: timeout, Turn: c.turn, Callee: c.who(), Hint: hint}
}

// engine describes a call into user code bounded by Timeouts.Engine.
func (r *runner) engine(name string, phase Phase) callee {
	return callee{name: name, phase: phase, turn: r.st.turn, limit: r.cfg.Timeouts.Engine,
		advice: "raise Config.Timeouts.Engine if it needs longer, and make it return once its context ends"}
}

// line describes a call of the adapter's method (SendText, EndUtterance,
// ...) bounded by Timeouts.FirstChunk: an adapter that accepts nothing
// for that long is stuck.
func (r *runner) line(method string) callee {
	return callee{adapter: r.adapter(), method: method, phase: PhaseSend, turn: r.st.turn, limit: r.cfg.Timeouts.FirstChunk,
		advice: "the adapter must return once its context ends (Config.Timeouts.FirstChunk bounds each send)"}
}

// call is call for the runner's goroutine: strays are counted in the
// run's.
func (r *runner) call(ctx context.Context, c callee, f func(context.Context) error) error {
	left, err := callLeaving(ctx, c, r.stray, f)
	if left {
		r.view = nil // the callee left running may still read it
	}
	return err
}

// promptConn is implemented by a Conn of this module whose SendText,
// SendDTMF, SendAudio and Interrupt never block and run no user code (the
// handler adapter's: they hand the input to its loop under a lock, and the
// handler's functions run on goroutines of their own). See
// internal/inproc: no Conn of another module can implement it.
type promptConn interface {
	PromptSends(inproc.Token)
}

// promptEnder is implemented by a Conn of this module whose EndUtterance,
// too, never blocks and runs no user code (the fixtures fakes': they plan
// their reply under their lock; not the handler adapter's, whose
// EndUtterance calls the STT). The runner calls it on its own goroutine,
// as it calls a promptConn's sends (endUtterance). See internal/inproc:
// no Conn of another module can implement it.
type promptEnder interface {
	PromptEndUtterance(inproc.Token)
}

// endUtterance calls the adapter's EndUtterance as call does; for a
// promptEnder on the runner's goroutine, with no goroutine hand-off.
func (r *runner) endUtterance(ctx context.Context) error {
	c := r.line("EndUtterance")
	if r.promptEnd {
		return callPrompt(ctx, c, r.conn.EndUtterance)
	}
	return r.call(ctx, c, r.conn.EndUtterance)
}

// promptConnector is implemented by an Agent of this module whose Connect
// never blocks and runs no user code (the handler adapter's: it makes the
// conversation's state in process). The runner calls its Connect on its
// own goroutine, without call's goroutine, as it calls a promptConn's
// sends. See internal/inproc: no Agent of another module can implement it.
type promptConnector interface {
	PromptConnect(inproc.Token)
}

// send calls f, one of the adapter's sending methods (SendText, SendDTMF,
// SendAudio, Interrupt), as call does; for a promptConn on the runner's
// goroutine, with no goroutine hand-off: f returns at once, and a panic in
// it is still returned as an error.
func (r *runner) send(ctx context.Context, c callee, f func(context.Context) error) error {
	if !r.prompt {
		return r.call(ctx, c, f)
	}
	return callPrompt(ctx, c, f)
}

// sendText calls the adapter's SendText as send does, without a closure
// on the heap for a promptConn.
func (r *runner) sendText(ctx context.Context, text string) error {
	c := r.line("SendText")
	if r.prompt {
		return callPrompt(ctx, c, func(ctx context.Context) error { return r.conn.SendText(ctx, text) })
	}
	return r.call(ctx, c, func(ctx context.Context) error { return r.conn.SendText(ctx, text) })
}

// callPrompt calls f on this goroutine, returning a panic in f as an
// error with its stack (a runtime.Goexit in f exits this goroutine, as
// call makes it do).
func callPrompt(ctx context.Context, c callee, f func(context.Context) error) (err error) {
	returned := false
	defer func() {
		if returned {
			return
		}
		if p := recover(); p != nil {
			err = &panicError{callee: c.who(), value: p, stack: debug.Stack()}
		}
	}()
	err = f(ctx)
	returned = true
	return err
}

// close closes conn, waiting at most closeWait for Close to return.
func (r *runner) close(conn Conn) error {
	c := callee{adapter: r.adapter(), method: "Close", phase: PhaseClose, turn: r.st.turn, limit: closeWait,
		advice: "fix the adapter so that Close returns once it has released the connection"}
	left, err := closeLeaving(conn, c, r.stray)
	if left {
		r.view = nil // the callee left running may still read it
	}
	return err
}

// closeWithin closes conn, waiting at most limit for Close to return.
func closeWithin(conn Conn, limit time.Duration) error {
	c := callee{name: "the adapter's Close", phase: PhaseClose, limit: limit}
	_, err := closeLeaving(conn, c, nil)
	return err
}

// promptCloser is implemented by a Conn of this module whose Close only
// hands the close to its loop and then waits for the loop to end (the
// handler adapter's: its StopEvent call runs on the handler's own
// goroutine, or on the coroutine the runner resumes: see resumer).
// StartClose does the first part, never blocks and runs no user code but
// the rest of the handler's coroutine, which the Conn bounds itself in
// real time (see resumer); it returns the channel closed once Close would return. The
// runner calls it on its own goroutine and waits on the channel within
// the bound it puts on Close, without the goroutine call starts. See
// internal/inproc: no Conn of another module can implement it.
type promptCloser interface {
	StartClose(inproc.Token) <-chan struct{}
}

// closeLeaving closes conn as callLeaving(c) would call its Close (it
// runs whether or not the scenario's context has ended), and reports
// whether it left Close running at its bound. A promptCloser is closed
// on this goroutine: StartClose, then a wait for its end within c.limit.
func closeLeaving(conn Conn, c callee, stray *strays) (left bool, err error) {
	pc, ok := conn.(promptCloser)
	if !ok {
		return callLeaving(context.Background(), c, stray, func(context.Context) error { return conn.Close() })
	}
	var done <-chan struct{}
	if err := callPrompt(context.Background(), c, func(context.Context) error {
		done = pc.StartClose(inproc.Token{})
		return nil
	}); err != nil {
		return false, err
	}
	select {
	case <-done:
	default:
		t := time.NewTimer(c.limit)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			select {
			case <-done: // it ended at the same instant
			default:
				return true, c.abandon(context.Background(), stray, closeOutcome(conn, done))
			}
		}
	}
	return false, conn.Close() // returns at once: the loop is over
}

// closeOutcome reports on the channel it returns once done is closed, as
// a callee's goroutine reports its return (see abandon).
func closeOutcome(conn Conn, done <-chan struct{}) <-chan callOutcome {
	out := make(chan callOutcome, 1)
	go func() {
		<-done
		out <- callOutcome{err: conn.Close()}
	}()
	return out
}

// snapshot returns the conversation for a callee: a copy of it, so that
// a callee left running reads it without racing the runner, at one
// address for the whole run (a User may key what it keeps of a
// conversation on its *State; the personas do), refreshed before each
// call, until a callee is left running with it.
func (r *runner) snapshot() *State {
	if r.view == nil {
		r.view = new(State)
	}
	v := r.view
	*v = r.st
	v.transcript = slices.Clone(v.transcript)
	v.timeline = slices.Clone(v.timeline)
	v.items = slices.Clone(v.items)
	return v
}

// strayDeadlock reports whether p, recovered from synctest.Test, is the
// deadlock the bubble reports when goroutines in it remain blocked after
// the scenario returned, and the run left callees running: the scenario
// has failed with a timeout naming them, and the bubble cannot end while
// they run. It returns the message to fail the test with.
func strayDeadlock(p any, res *Result) (string, bool) {
	if res == nil || len(res.strays) == 0 {
		return "", false
	}
	msg := fmt.Sprint(p)
	if !strings.HasPrefix(msg, "deadlock: main bubble goroutine has exited but blocked goroutines remain") {
		return "", false
	}
	who := strings.Join(res.strays, ", ")
	return fmt.Sprintf("voicetest: %s never returned, so the scenario's synctest bubble could not end (synctest reports %q); the scenario failed at its bound, as reported above. Make %s return (once its context ends, where it takes one)",
		who, msg, who), true
}
