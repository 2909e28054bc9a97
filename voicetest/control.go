package voicetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
)

// Control is a script's hold on a running scenario, given to a custom step
// (Do) and to Proceed's callbacks (OnTurn, OnStep): it reads the
// conversation, changes the caller's sound for the turns to come, injects
// history, reaches the adapter's own connection, runs steps, and ends the
// scenario with a verdict and a reason. It is valid only during the call
// it is passed to: a function left running past Timeouts.MaxDuration (see
// Do) holds a Control that no longer acts on the scenario.
type Control struct {
	r *runner
	// mu guards dead and busy. Every method that acts on the scenario
	// counts itself in busy while it runs (a count, not a lock held, so
	// that a callback of the steps c.Run runs may use c again), so that
	// the runner, once it gives up on a function that did not return,
	// can end the Control (dead) after the methods still running return.
	mu     sync.Mutex
	idle   sync.Cond // signalled when busy drops to 0
	dead   bool
	busy   int
	ended  bool
	failed bool
	reason string
}

// errControlEnded is what a Control's methods return once the scenario
// gave up on the function holding it.
var errControlEnded = errors.New("voicetest: the Control is no longer valid: its step or callback was left running past Config.Timeouts.MaxDuration")

// State returns the conversation so far (a copy; empty once the Control
// is no longer valid).
func (c *Control) State() *State {
	if !c.enter() {
		return new(State)
	}
	defer c.leave()
	return c.r.snapshot()
}

// Conn returns the adapter's connection, for its own controls: type-assert
// it to the adapter's Conn (or use ConnAs, which looks through wrappers
// such as a cassette's) to reach, say, a Realtime session's events.
func (c *Control) Conn() Conn { return c.r.conn }

// Capabilities returns the adapter's capabilities.
func (c *Control) Capabilities() Capabilities { return c.r.caps }

// Logf writes a line to the scenario's log.
func (c *Control) Logf(format string, args ...any) { c.r.logf(format, args...) }

// SetEffects replaces Config.Effects from the next user utterance on:
// the caller moves into a noisier place, or the line degrades, turn by
// turn (nil for clean audio).
func (c *Control) SetEffects(e pcm.Effect) {
	if c.enter() {
		defer c.leave()
		c.r.cfg.Effects = e
	}
}

// Inject adds a message to the conversation's history as if it had been
// said, for a conversation that starts in the middle, or to plant what a
// caller or agent "already said". It is in the transcript (marked
// Injected), the timeline (a history event), and what the User and the
// Judge see. An adapter whose Conn implements HistoryInjector is told as
// well, so the agent has it in its context; otherwise only voicetest
// knows it, and the log says so.
func (c *Control) Inject(ctx context.Context, role Role, text string) error {
	if !c.enter() {
		return errControlEnded
	}
	defer c.leave()
	return c.r.inject(ctx, role, text)
}

// Run runs steps now, as part of the current step; the first error is
// returned (wrapped in a *StepError naming the sub-step).
func (c *Control) Run(ctx context.Context, steps ...Step) error {
	if !c.enter() {
		return errControlEnded
	}
	defer c.leave()
	for i, s := range steps {
		if s.run == nil {
			return fmt.Errorf("Control.Run: step %d is a zero Step", i+1)
		}
		if s.err != nil {
			return fmt.Errorf("Control.Run: step %d %s: %w", i+1, s, s.err)
		}
		if s.line && (c.r.hungUp || c.r.ended != "") {
			if c.r.hungUp {
				return &StepError{Index: i + 1, Step: s.String(), Err: c.r.hangUpError()}
			}
			return fmt.Errorf("Control.Run: step %d %s needs the line, but %s", i+1, s, c.r.endReason)
		}
		if !s.blind {
			if err := c.r.settle(ctx); err != nil {
				return err
			}
		}
		if err := s.run(ctx, c.r); err != nil {
			return &StepError{Index: i + 1, Step: s.String(), Err: err}
		}
	}
	return nil
}

// Succeed ends the scenario as a success with reason, once the callback
// or step returns.
func (c *Control) Succeed(reason string) { c.end(false, reason) }

// Fail ends the scenario as a failure with reason, once the callback or
// step returns.
func (c *Control) Fail(reason string) { c.end(true, reason) }

func (c *Control) end(failed bool, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dead {
		c.ended, c.failed, c.reason = true, failed, reason
	}
}

// enter counts a method in, unless the Control has ended; leave counts
// it out.
func (c *Control) enter() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return false
	}
	c.busy++
	return true
}

func (c *Control) leave() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.busy--; c.busy == 0 {
		c.idle.Broadcast()
	}
}

// kill ends the Control once no method is running (they end with the
// function's ctx).
func (c *Control) kill() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dead = true
	for c.busy > 0 {
		c.idle.Wait()
	}
}

// runControl runs fn, a Do step's function or a Proceed callback, with a
// new Control: on a goroutine of its own, so that a panic in it fails the
// scenario with an error naming it and its stack instead of crashing the
// test binary, and bounded by what is left of Timeouts.MaxDuration (it
// may run whole turns with Control.Run, so Timeouts.Engine does not
// apply). A function that has not returned by then is left running, its
// Control no longer acts on the scenario, and the scenario fails with a
// *TimeoutError naming it.
func (r *runner) runControl(ctx context.Context, name string, fn func(context.Context, *Control) error) (*Control, error) {
	c := &Control{r: r}
	c.idle.L = &c.mu
	cl := callee{name: name, phase: PhaseScenario, turn: r.st.turn, limit: max(r.cfg.Timeouts.MaxDuration-r.now(), time.Millisecond),
		timeout: r.cfg.Timeouts.MaxDuration,
		advice:  "make it return once its context ends (Config.Timeouts.MaxDuration bounds the scenario, the steps it runs included)"}
	left, err := callLeaving(ctx, cl, r.stray, func(ctx context.Context) error { return fn(ctx, c) })
	if left {
		c.kill()
		r.view = nil // the function left running may still read it
	}
	return c, err
}

// finish applies the outcome the callback set: a failure is an error
// wrapping ErrFailed; a success decides the scenario and stops the
// script. It reports whether the scenario ended.
func (c *Control) finish(what string) (bool, error) {
	if !c.ended {
		return false, nil
	}
	if c.failed {
		return true, fmt.Errorf("%w: %s", ErrFailed, c.reason)
	}
	c.r.decide(true, c.reason)
	c.r.stopped = what + " ended the script: " + c.reason
	return true, nil
}

// Do is a custom step: fn runs with a Control of the scenario. It can read
// the conversation, run steps, inject history, use the adapter's own
// connection, and end the scenario with c.Succeed or c.Fail and a reason;
// an error it returns fails the scenario (wrapped in a *StepError naming
// the step), as does a panic in it (with its stack). It may run whole
// turns, so Timeouts.Engine does not bound it; it must return once ctx
// ends: one still running when Timeouts.MaxDuration passes is left
// behind, and the scenario fails with a *TimeoutError naming it. name
// names the step in reports.
func Do(name string, fn func(ctx context.Context, c *Control) error) Step {
	s := Step{name: "Do(" + quote(name) + ")"}
	if fn == nil {
		s.err = errors.New("Do needs a function")
	}
	if strings.TrimSpace(name) == "" {
		s.err = errors.New("Do needs a name for reports")
	}
	s.run = func(ctx context.Context, r *runner) error {
		c, err := r.runControl(ctx, s.String(), fn)
		if err != nil {
			return err
		}
		_, err = c.finish(r.stepName())
		return err
	}
	return s
}

// Inject is a step that adds a message to the history as if it had been
// said; see Control.Inject.
func Inject(role Role, text string) Step {
	s := Step{name: fmt.Sprintf("Inject(%s, %s)", role, quote(text)), blind: true}
	switch {
	case role != RoleUser && role != RoleAgent:
		s.err = fmt.Errorf("Inject(%q): the role must be RoleUser or RoleAgent", role)
	case strings.TrimSpace(text) == "":
		s.err = errors.New("Inject needs the text of the message")
	}
	s.run = func(ctx context.Context, r *runner) error { return r.inject(ctx, role, text) }
	return s
}

// HistoryInjector is implemented by Conns that can put a message into the
// agent's own conversation history (the handler adapter delivers a
// handler.HistoryEvent); Inject calls it.
type HistoryInjector interface {
	InjectHistory(ctx context.Context, role Role, text string) error
}

// inject records an injected message and tells the agent when it can.
func (r *runner) inject(ctx context.Context, role Role, text string) error {
	at := r.now()
	if hi, ok := r.conn.(HistoryInjector); ok {
		if err := hi.InjectHistory(ctx, role, text); err != nil {
			return fmt.Errorf("injecting a %s message into the %s agent's history: %w", role, r.adapter(), err)
		}
	} else {
		r.logf("voicetest: %s: the %s adapter cannot put messages into the agent's history (its Conn is no HistoryInjector); the %s message %s is known to the user and the judge only", r.stepName(), r.adapter(), role, quote(text))
	}
	m := Message{Turn: r.st.turn, Role: role, Text: strings.TrimSpace(text), Start: at, End: at, Injected: true}
	r.st.transcript = append(r.st.transcript, m)
	r.addEvent(Event{At: at, Type: EventHistory, Turn: r.st.turn, Role: role, Text: m.Text})
	if role == RoleAgent {
		r.addItem(Event{At: at, Type: EventMessage, Turn: r.st.turn, Role: RoleAgent, Text: m.Text})
	}
	return nil
}

// ConnAs returns the adapter's connection as a T (an adapter's own Conn
// type, or an interface of its extensions), looking through wrappers
// that have an Unwrap() Conn method, and whether it found one.
func ConnAs[T any](c Conn) (T, bool) {
	for c != nil {
		if t, ok := c.(T); ok {
			return t, true
		}
		u, ok := c.(interface{ Unwrap() Conn })
		if !ok {
			break
		}
		c = u.Unwrap()
	}
	var zero T
	return zero, false
}

// ProceedOption changes how Proceed runs: build it with OnTurn, OnStep or
// Until.
type ProceedOption struct {
	name  string
	apply func(*proceedOptions)
}

type proceedOptions struct {
	onTurn, onStep func(ctx context.Context, c *Control) error
	until          func(*State) bool
}

// OnTurn calls fn after each of Proceed's turns (the user spoke, the agent
// answered, the judge was asked), with a Control: it may change the
// caller's effects for the next turn (c.SetEffects), inject history, or
// end the scenario (c.Succeed, c.Fail, or an error).
func OnTurn(fn func(ctx context.Context, c *Control) error) ProceedOption {
	return ProceedOption{name: "OnTurn(…)", apply: func(o *proceedOptions) { o.onTurn = fn }}
}

// OnStep calls fn after each step within Proceed's turns: after the user
// speaks and after the agent answers, as OnTurn.
func OnStep(fn func(ctx context.Context, c *Control) error) ProceedOption {
	return ProceedOption{name: "OnStep(…)", apply: func(o *proceedOptions) { o.onStep = fn }}
}

// Until stops Proceed after a turn at which stop reports true (the agent
// booked the table), and the script goes on with its next step. It is
// asked after OnTurn.
func Until(stop func(*State) bool) ProceedOption {
	return ProceedOption{name: "Until(…)", apply: func(o *proceedOptions) { o.until = stop }}
}

// callback runs a Proceed callback and applies its outcome; it reports
// whether the scenario ended.
func (r *runner) callback(ctx context.Context, fn func(context.Context, *Control) error, what string) (bool, error) {
	if fn == nil {
		return false, nil
	}
	if err := r.settle(ctx); err != nil {
		return false, err
	}
	c, err := r.runControl(ctx, what, fn)
	if err != nil {
		return true, fmt.Errorf("%s: %w", what, err)
	}
	return c.finish(r.stepName() + " " + what)
}
