package voicetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/voicetest-go/voicetest/internal/inproc"
)

// VirtualTimer is implemented by agents that can run on virtual time
// (testing/synctest). Scenario asks it before connecting, because the
// connection must be made inside the synctest bubble; the agent's
// Capabilities.VirtualTime must agree.
type VirtualTimer interface {
	VirtualTime() bool
}

// hooks lets Scenario observe a run.
type hooks struct {
	// opened, if set, gets every Conn as soon as it is open.
	opened *[]Conn
	logf   func(format string, args ...any)
	// virtual offers the agent a virtual Clock (Session.Clock): the run
	// is outside a synctest bubble and the agent runs in process.
	virtual bool
	// bubble says that the run is inside a synctest bubble: its times are
	// virtual, and events at one instant share it exactly.
	bubble bool
}

// Run runs the scenario described by cfg outside of a test (a plain
// program, a benchmark) or inside a synctest bubble the caller made, and
// returns its result. An invalid cfg returns a nil Result and the
// validation error; otherwise the error is Result.Err: nil on success,
// else the first error or the failed verdict (errors.Is ErrFailed).
//
// An in-process agent that can share the runner's virtual Clock
// (Capabilities.SessionClock, as handler.New's agents do) runs on virtual
// time outside a bubble too: its speech, think time and the user's pauses
// cost no wall time, and the timeline is the one a bubble gives. Other
// agents run on the real clock (the bubble's, inside one). Inside a
// bubble, Run calls synctest.Wait (see Scenario): no other goroutine of
// the bubble may call it while Run runs.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	logf := cfg.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	bubble := inBubble()
	res, err := runAll(ctx, cfg, hooks{logf: logf, bubble: bubble, virtual: cfg.Agent != nil && runsOnVirtualTime(cfg.Agent) && !bubble})
	if err != nil {
		return nil, err
	}
	return res, res.Err
}

// runAll validates cfg and runs it Repeat.Runs times.
func runAll(ctx context.Context, cfg Config, h hooks) (*Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if h.logf == nil {
		h.logf = func(string, ...any) {}
	}
	runs := max(cfg.Repeat.Runs, 1)
	if runs == 1 {
		res := runOnce(ctx, cfg, h)
		res.PassRate = 0
		if res.Success {
			res.PassRate = 1
		}
		return res, nil
	}
	all := make([]*Result, 0, runs)
	passed := 0
	for i := range runs {
		res := runOnce(ctx, cfg, h)
		all = append(all, res)
		if res.Success {
			passed++
		}
		h.logf("voicetest: run %d of %d: %s", i+1, runs, res.Status)
		if ctx.Err() != nil {
			break
		}
	}
	rep := all[len(all)-1]
	for _, r := range all {
		if !r.Success {
			rep = r
			break
		}
	}
	agg := *rep
	agg.Runs = all
	agg.PassRate = float64(passed) / float64(runs)
	agg.Success = agg.PassRate >= cfg.Repeat.MinPassRate
	agg.Latency = Latency{}
	for _, r := range all {
		agg.Latency.PerTurn = append(agg.Latency.PerTurn, r.Latency.PerTurn...)
		agg.Latency.InterruptResponse = append(agg.Latency.InterruptResponse, r.Latency.InterruptResponse...)
	}
	agg.Latency.TTFB = all[0].Latency.TTFB
	agg.Latency.Summarize()
	if agg.Success {
		agg.Status = StatusPass
		agg.Err = nil
	} else {
		agg.Status = StatusFail
		if agg.Err == nil {
			agg.Err = fmt.Errorf("%w: %d of %d runs passed, below Config.Repeat.MinPassRate %.2f", ErrFailed, passed, len(all), cfg.Repeat.MinPassRate)
		}
	}
	return &agg, nil
}

// closeWait bounds the wait for the receiver goroutine after Close.
const closeWait = 5 * time.Second

// runOnce connects, runs the script and closes.
func runOnce(parent context.Context, cfg Config, h hooks) *Result {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	r := &runner{cfg: cfg, clock: newVClock(), logf: h.logf, bubble: h.bubble, stray: &strays{}}
	if !h.virtual {
		r.clock.realize()
	}
	r.start = r.clock.Now()
	r.st.name, r.st.description = cfg.Name, cfg.Description
	r.st.view = cfg.DataView
	r.st.segs, r.st.rate = &r.segs, cfg.Rate
	// Room for what a script of spoken turns records, so that the slices
	// do not grow step by step (about two timeline events, one message
	// and one segment a step).
	steps := len(cfg.Script) + 2
	r.st.timeline = make([]Event, 0, 2*steps)
	r.st.transcript = make([]Message, 0, steps)
	r.segs = make([]Segment, 0, steps)
	r.latencies = make([]time.Duration, 0, steps/2) // about one agent turn in two steps

	err := r.connect(ctx, h)
	if err == nil {
		done := make(chan struct{})
		r.listen, r.said = new(atomic.Int64), new(atomic.Int64)
		r.received = done
		if q, ok := r.conn.(queuedConn); ok && r.clock.isVirtual() {
			// On the runner's virtual Clock the time moves only when
			// the runner jumps it, after it has taken every event the
			// agent sent: taking them on this goroutine stamps them as
			// receive would. Only this goroutine uses the queue, which
			// fetch grows as it fills, up to maxQueuedEvents.
			events := make(chan *recvItem, directQueueStart)
			r.events = events
			q.Notify(inproc.Token{}, r.clock.idleC) // one channel for its events and its Idle
			r.direct = &direct{conn: q, ready: r.clock.idleC, out: events, done: done, gate: newLocalGate(), signalled: true, free: make([]*recvItem, 0, 4)}
			r.direct.resume, _ = q.(resumer)
			r.listen.Store(1) // listening since the start
		} else {
			events := make(chan *recvItem, maxQueuedEvents) // pointers: 8 KiB of queue, not 1024 items' worth
			r.events = events
			queued := make(chan struct{}, 1)
			r.queued = queued
			go receive(ctx, r.conn, r.clock, r.start, r.listen, r.said, events, queued, done)
		}
		// Close even if a step panics or calls runtime.Goexit (t.FailNow
		// in a Check): no goroutine or socket outlives the run.
		closed := false
		shut := func() error {
			if closed {
				return nil
			}
			closed = true
			cancel()
			if r.timer != nil {
				r.timer.Stop() // armWait leaves it armed
			}
			if d := r.direct; d != nil {
				// Nothing receives once the Conn is closed.
				r.direct = nil
				close(d.done)
			}
			r.closeSender()
			if cerr := r.close(r.conn); cerr != nil {
				var te *TimeoutError
				if errors.As(cerr, &te) {
					return cerr
				}
				if errors.Is(cerr, ErrLimit) {
					// A bound the agent went past is never silent, even
					// when no step was left to read it from Recv.
					return fmt.Errorf("the %s adapter ended the connection: %w", r.adapter(), cerr)
				}
				h.logf("voicetest: closing the %s connection: %v", r.adapter(), cerr)
			}
			select {
			case <-done:
				return nil // (at once, most often: no timer made)
			default:
			}
			wait := time.NewTimer(closeWait)
			defer wait.Stop()
			select {
			case <-done:
				return nil
			case <-wait.C:
				h.logf("voicetest: the %s adapter's Recv did not return within %v of Close; its goroutine leaks", r.adapter(), closeWait)
				return fmt.Errorf("the %s adapter's Recv did not return within %v of Close and ctx cancellation: fix the adapter so Close ends Recv", r.adapter(), closeWait)
			}
		}
		defer r.waitSTT() // after shut has cancelled ctx
		defer shut()
		err = r.runScript(ctx)
		if ferr := r.flush(ctx); ferr != nil && err == nil && (!errors.Is(ferr, ErrTransportClosed) || errors.Is(ferr, ErrLimit)) {
			err = fmt.Errorf("after the script: %w", ferr)
		}
		if serr := r.settle(ctx); serr != nil && err == nil {
			err = fmt.Errorf("after the script: %w", serr)
		}
		if serr := shut(); serr != nil && err == nil {
			err = serr
		}
		r.waitSTT()
	}
	r.reportSide()
	res := r.result(err)
	res.strays = r.stray.names()
	res.EventsNotKept = r.side.notKept
	res.Sections = reportSections(r.cfg)
	return res
}

func (r *runner) connect(ctx context.Context, h hooks) error {
	sess := Session{Name: r.cfg.Name, Rate: r.cfg.Rate, Logf: h.logf, Capture: r.cfg.Capture}
	if r.clock.isVirtual() {
		sess.Clock = agentClock{r.clock}
	}
	c := callee{name: "Agent.Connect", phase: PhaseConnect, limit: r.cfg.Timeouts.Connect,
		hint: "the agent did not accept the connection; check that it runs, or raise Config.Timeouts.Connect"}
	// A Connect left running past its bound closes the Conn it returns
	// at last: nobody else will.
	var mu sync.Mutex
	var conn Conn
	gone := false
	connect := func(ctx context.Context) error {
		cn, err := r.cfg.Agent.Connect(ctx, sess)
		mu.Lock()
		defer mu.Unlock()
		if gone || err != nil {
			if cn != nil {
				_ = cn.Close()
			}
			return err
		}
		conn = cn
		return nil
	}
	var err error
	if _, ok := r.cfg.Agent.(promptConnector); ok {
		err = callPrompt(ctx, c, connect) // on this goroutine (see promptConnector)
	} else {
		err = r.call(ctx, c, connect)
	}
	if err != nil {
		mu.Lock()
		gone = true
		late := conn
		mu.Unlock()
		if late != nil {
			_ = r.close(late)
		}
		var te *TimeoutError
		if errors.As(err, &te) && te.Callee == c.name {
			return err
		}
		return fmt.Errorf("connecting to the agent: %w", err)
	}
	if conn == nil {
		return errors.New("connecting to the agent: Agent.Connect returned a nil Conn and no error")
	}
	if h.opened != nil {
		*h.opened = append(*h.opened, conn)
	}
	r.conn = conn
	_, r.prompt = conn.(promptConn)
	_, r.promptEnd = conn.(promptEnder)
	r.caps = conn.Capabilities()
	if !r.caps.SessionClock {
		// The agent keeps its own time: so does the runner.
		r.clock.realize()
	}
	if v := runsOnVirtualTime(r.cfg.Agent); v != r.caps.VirtualTime {
		h.logf("voicetest: the %s agent's VirtualTime() is %v but its Capabilities.VirtualTime is %v; they should agree", r.adapter(), v, r.caps.VirtualTime)
	}
	if !r.caps.Audio && !r.caps.Text {
		_ = conn.Close()
		return fmt.Errorf("the %s adapter declares neither Audio nor Text input, so the user cannot speak to it: fix its Capabilities", r.adapter())
	}
	return nil
}

// runScript runs the steps; it returns the first error, as a *StepError.
//
// Nothing is skipped silently. A step that needs the line (Step.line)
// after the agent hung up fails with a *HangUpError; after the user hung
// up or the judge gave its final verdict it is not run, and is listed
// with the reason. Steps that only read the conversation always run.
// After a failure or Succeed, the rest is listed as not run.
func (r *runner) runScript(ctx context.Context) error {
	steps := r.cfg.Script
	for i, s := range steps {
		if r.stopped != "" {
			r.skipFrom(i, r.stopped)
			return nil
		}
		if s.line {
			// A hang-up that has already arrived ends the line now, not
			// halfway through this step.
			if err := r.poll(); err != nil {
				return r.stepFailed(i, err)
			}
			switch {
			case r.hungUp && s.drains && r.unrecorded():
				// An AgentTurn records the agent's last words.
			case r.hungUp:
				return r.stepFailed(i, r.hangUpError())
			case r.ended != "":
				r.skip(i, r.endReason)
				continue
			}
		}
		r.stepAt = i + 1 // named only when needed (stepName)
		if r.now() >= r.cfg.Timeouts.MaxDuration {
			return r.stepFailed(i, r.overtime())
		}
		var err error
		if !s.blind {
			err = r.settle(ctx)
		}
		if err == nil {
			err = s.run(ctx, r)
		}
		if err != nil {
			return r.stepFailed(i, err)
		}
	}
	return nil
}

// stepFailed returns err as the *StepError of step i and lists the steps
// after it as not run.
func (r *runner) stepFailed(i int, err error) error {
	s := r.cfg.Script[i]
	r.skipFrom(i+1, fmt.Sprintf("step %d %s failed", i+1, s))
	return &StepError{Index: i + 1, Step: s.String(), Err: err}
}

// skip lists step i as not run, for why.
func (r *runner) skip(i int, why string) {
	r.skipped = append(r.skipped, fmt.Sprintf("step %d %s", i+1, r.cfg.Script[i]))
	if r.skipReason == "" {
		r.skipReason = why
	} else if !strings.Contains(r.skipReason, why) {
		r.skipReason += "; " + why
	}
}

// skipFrom lists the steps from i on as not run, for why.
func (r *runner) skipFrom(i int, why string) {
	for ; i < len(r.cfg.Script); i++ {
		r.skip(i, why)
	}
}

// hangUpError describes the agent's hang-up to a step that needs the
// line.
func (r *runner) hangUpError() error {
	return &HangUpError{At: r.hangUpAt, Reason: r.hangUpReason, Turn: r.hangUpTurn, Step: r.hangUpStep}
}

// result builds the Result of a finished run.
func (r *runner) result(err error) *Result {
	st := r.st.own(r.stray.any())
	window := sameInstant
	if r.bubble || r.clock.isVirtual() {
		window = 0
	}
	orderTimeline(st.timeline, window)
	res := &Result{
		Name:         r.cfg.Name,
		Err:          err,
		Ended:        r.ended,
		SkippedSteps: r.skipped,
		SkipReason:   r.skipReason,
		State:        st,
		Transcript:   st.transcript,
		Timeline:     st.timeline,
		Duration:     r.now(),
		Turns:        r.st.turn,
		Capabilities: r.caps,
		Verdict:      r.verdict,
	}
	if r.ended == "the judge gave its verdict" {
		res.Ended = ""
	}
	for _, c := range r.criteria {
		switch c.Status {
		case StatusPass:
			res.Passed = append(res.Passed, c)
		case StatusFail:
			res.Failed = append(res.Failed, c)
		default:
			res.Inconclusive = append(res.Inconclusive, c)
		}
	}
	var segs []Segment
	if st.segs != nil {
		segs = *st.segs // sorted by own, shared with the State as the transcript is
	}
	res.Recording = Recording{Rate: r.cfg.Rate, Segments: segs, Duration: res.Duration}
	res.Latency = Latency{PerTurn: r.latencies, InterruptResponse: r.interrupts}
	if len(r.latencies) == 0 {
		res.Latency.PerTurn = nil // no turn measured: nil, as ever (runOnce made its room)
	}
	if r.haveTTFB {
		res.Latency.TTFB = r.ttfb
	}
	res.Latency.Summarize()
	res.Metrics = r.metrics(st)
	switch {
	case err != nil:
		res.Success, res.Status = false, StatusFail
		res.Reasoning = err.Error()
		if r.verdict != nil && r.verdict.Reasoning != "" {
			res.Reasoning = r.verdict.Reasoning
		}
	case r.verdict != nil:
		res.Status = r.verdict.Status()
		res.Success = res.Status == StatusPass
		res.Reasoning = r.verdict.Reasoning
		if !res.Success {
			res.Err = fmt.Errorf("%w: final verdict %s: %s", ErrFailed, res.Status, verdictDetail(*r.verdict))
		}
	case r.decided:
		res.Success, res.Status, res.Reasoning = r.success, StatusPass, r.reason
	default:
		res.Success, res.Status = true, StatusPass
	}
	if !res.Success {
		res.Status = StatusFail
		if r.verdict != nil && r.verdict.Status() == StatusInconclusive && err == nil {
			res.Status = StatusInconclusive
		}
	}
	return res
}

func verdictDetail(v Judgment) string {
	if f := failures(v); f != "" {
		return f
	}
	if v.Reasoning != "" {
		return v.Reasoning
	}
	return summarize(v)
}

func sortSegments(s []Segment) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].Start < s[j-1].Start; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
