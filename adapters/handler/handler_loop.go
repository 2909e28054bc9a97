package handler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/voicetest-go/voicetest/internal/inproc"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// agentLoop owns the state of one conversation. It has no goroutine of its
// own: whoever has something for it (the runner through the Conn, a handler
// call or task through its Call, a timer of the clock) runs it, one at a
// time under handlerConn.mu, as step does; so a message reaches the loop
// without a goroutine hand-off, and a timer the runner's virtual clock fires
// is handled before the clock's jump returns. The loop never blocks and
// never runs user code (handler calls and tasks run on goroutines of their
// own), so the time it holds the lock is short. It takes the
// conversation's time from clock (Session.Clock, or the system clock) and
// keeps its protocol: Busy when woken by a message, Idle when nothing is
// due and no handler call or task runs user code; only closing waits on the
// system clock.
type agentLoop struct {
	c     *handlerConn
	clock voicetest.Clock
	start time.Time

	armed     bool         // the clock timer is armed
	wakeAt    time.Time    // when the armed clock timer is due
	wake      inproc.Timer // the runner's clock's timer, armed again for each wait
	stopWake  func() bool  // cancels the armed AfterFunc of another clock
	wakeFunc  func()       // the AfterFunc's callback (made once)
	sent      int64        // events Recv has returned
	exited    bool         // the loop is over (loopDone is closed)
	fromView  bool         // the loop runs for a Call view's message (deliver)
	closeWake *time.Timer  // wakes the loop while closing (system clock)

	outbox []voicetest.AgentEvent // events Recv has not taken yet
	inbox  []Event                // events waiting for the handler

	call     *callState
	callSeq  int
	calls    chan callJob // to the goroutine that runs handler calls
	handlerQ []*outReq    // outputs of the running handler call, not yet emitted
	taskQ    []*outReq    // outputs of background tasks, held or not yet emitted
	sp       *speech      // what the agent is saying now
	taskTurn bool         // a task spoke since the last AgentTurnEnd

	lastInput time.Time
	idleSince time.Time
	wasIdle   bool
	timeouts  int
	settling  bool
	settleFor time.Time
	settleT   func() bool

	tasks   map[int]bool // live background tasks by rank
	taskSeq int

	stopped     bool  // no more events: hung up, failed or closed
	term        error // what Recv reports once stopped
	endedClosed bool

	closing       bool
	closeDeadline time.Time
	stopSent      bool
	stopCtx       context.Context
	stopCancel    context.CancelFunc
	closeErrs     []error
}

// deliver runs m through the loop and returns its answer (see handle). It
// reports ErrCallEnded once the loop is over.
func (l *agentLoop) deliver(m message) error {
	c := l.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if l.exited {
		return ErrCallEnded
	}
	l.clock.Busy()
	// A message of a Call view comes from a goroutine other than the
	// runner's (launch then wakes the runner for its coroutine).
	l.fromView = m.from != nil || m.kind >= msgOutput && m.kind != msgClose
	err := l.handle(m, l.clock.Now())
	l.step()
	l.fromView = false
	return err
}

// wakeUp runs the loop for a timer that fired.
func (l *agentLoop) wakeUp() {
	c := l.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if l.armed && !l.clock.Now().Before(l.wakeAt) {
		// The armed timer is due: it has fired (this may be it), or
		// fires at once. (A timer disarmed after it had fired may call
		// wakeUp earlier.)
		l.armed, l.stopWake = false, nil
	}
	l.step()
}

// settleUp runs the loop for the inactivity timeout's settling timer.
func (l *agentLoop) settleUp() {
	c := l.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if l.exited {
		return
	}
	l.settled()
	l.step()
}

// take returns the first event of the outbox, if any, for Recv.
func (l *agentLoop) take() (voicetest.AgentEvent, bool) {
	c := l.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(l.outbox) == 0 {
		return voicetest.AgentEvent{}, false
	}
	ev := l.outbox[0]
	l.outbox[0] = voicetest.AgentEvent{}
	if len(l.outbox) == 1 {
		l.outbox = l.outbox[:0] // the next push reuses the array
	} else {
		l.outbox = l.outbox[1:]
	}
	c.queued.Store(int64(len(l.outbox)))
	l.sent++
	l.step()
	return ev, true
}

// step does what is due now, arms the next wake-up, and tells the clock
// when the agent is idle. It runs under handlerConn.mu after every change
// (a message, a timer, an event taken).
func (l *agentLoop) step() {
	if l.exited {
		return
	}
	c := l.c
	now := l.clock.Now()
	l.advance(now)
	if l.closing {
		if l.closeStep(time.Now()) {
			l.exit()
			return
		}
	} else {
		l.pump(now)
		l.checkIdle(now)
	}
	if l.stopped && len(l.outbox) == 0 {
		l.endEvents()
	}
	// Closing is bounded on the system clock (nobody moves a shared
	// clock while the runner waits for Close); the conversation's
	// deadlines on the conversation's clock.
	if l.closing {
		l.disarm()
		if l.closeWake == nil {
			l.closeWake = time.AfterFunc(max(time.Until(l.closeDeadline), 0), l.wakeUp)
		}
	} else if d, ok := l.nextDeadline(); !ok {
		l.disarm()
	} else if !l.armed || !d.Equal(l.wakeAt) {
		// (A timer armed for d already is kept.)
		l.arm(d, now)
	}
	if len(l.outbox) > 0 {
		select {
		case c.ready <- struct{}{}:
		default:
		}
	} else if !l.closing && l.quiescent() {
		l.clock.Idle(l.sent)
	}
}

// exit ends the loop: timers stop, contexts are cancelled, Recv reports
// the end and Close returns.
func (l *agentLoop) exit() {
	c := l.c
	l.exited = true
	if l.closeWake != nil {
		l.closeWake.Stop()
	}
	l.disarm()
	if l.settleT != nil {
		l.settleT()
	}
	if l.stopCancel != nil {
		l.stopCancel()
	}
	c.cancel()
	if l.calls != nil {
		// The worker returns once it has no call to run (a call that
		// outlived Close's wait still runs there; nothing is queued: the
		// loop starts a call only once the last has returned).
		close(l.calls)
	}
	l.endEvents()
	if err := errors.Join(l.closeErrs...); err != nil {
		c.closeErr = fmt.Errorf("adapters: %s: Close: %w", c.who(), err)
	}
	close(c.loopDone)
}

// timerClock is implemented by the runner's virtual Clock: a timer armed
// again for each wait (see internal/inproc).
type timerClock interface {
	NewTimer(inproc.Token, func()) inproc.Timer
}

// arm sets the clock timer to wake the loop at d (it is now), in place
// of the one armed, if any.
func (l *agentLoop) arm(d, now time.Time) {
	l.wakeAt, l.armed = d, true
	if l.wake == nil {
		if tc, ok := l.clock.(timerClock); ok {
			l.wake = tc.NewTimer(inproc.Token{}, l.wakeUp)
		}
	}
	if l.wake != nil {
		l.wake.Reset(max(d.Sub(now), 0)) // a new wait, as a new AfterFunc
		return
	}
	if l.stopWake != nil {
		l.stopWake()
	}
	if l.wakeFunc == nil {
		l.wakeFunc = l.wakeUp
	}
	l.stopWake = l.clock.AfterFunc(max(d.Sub(now), 0), l.wakeFunc)
}

// disarm cancels the armed clock timer, if any.
func (l *agentLoop) disarm() {
	if !l.armed {
		return
	}
	l.armed = false
	if l.wake != nil {
		l.wake.Stop()
		return
	}
	l.stopWake()
	l.stopWake = nil
}

// quiescent reports whether the conversation has nothing to do until a
// timer fires or the runner calls the Conn: no event to send, and no
// handler call or task running user code (each is thinking, or waiting
// for speech it asked for).
func (l *agentLoop) quiescent() bool {
	if len(l.outbox) > 0 {
		return false
	}
	running := len(l.tasks)
	if cs := l.call; cs != nil && cs.started && !cs.done {
		running++
	}
	for _, r := range l.held() {
		if r.reply != nil {
			running-- // its view waits for the answer
		}
	}
	return running <= 0
}

// held returns the output requests the loop holds: speaking, or queued.
func (l *agentLoop) held() []*outReq {
	var rs []*outReq
	if l.sp != nil {
		rs = append(rs, l.sp.req)
	}
	rs = append(rs, l.handlerQ...)
	return append(rs, l.taskQ...)
}

// endEvents makes Recv report l.term from now on.
func (l *agentLoop) endEvents() {
	if l.endedClosed {
		return
	}
	l.endedClosed = true
	if l.term == nil {
		l.term = &voicetest.TransportClosedError{Adapter: l.c.caps.Adapter}
	}
	l.c.termErr = l.term
	close(l.c.ended)
	select {
	case l.c.ready <- struct{}{}: // for TryRecv's caller
	default:
	}
}

func (l *agentLoop) push(ev voicetest.AgentEvent) {
	if !l.stopped {
		l.outbox = append(l.outbox, ev)
		l.c.queued.Store(int64(len(l.outbox)))
	}
}

func (l *agentLoop) logf(format string, args ...any) {
	l.c.sess.Logf("%s: "+format, append([]any{l.c.who()}, args...)...)
}

// handle applies one message, and returns the answer of one that waits
// for it (an input, Call.Go).
func (l *agentLoop) handle(m message, now time.Time) error {
	switch m.kind {
	case msgInput, msgUtterance, msgInterrupt, msgVoiced:
		if l.stopped || l.closing {
			if m.from != nil {
				return ErrCallEnded // Emit from a Call
			}
			return l.endErr()
		}
		if m.from != nil {
			if err := l.checkView(m.from); err != nil {
				return err
			}
		}
		switch m.kind {
		case msgInput:
			l.inbox = append(l.inbox, m.ev)
		case msgUtterance:
			l.push(voicetest.AgentEvent{Kind: voicetest.UserTranscript, Text: m.text, Final: true})
			l.inbox = append(l.inbox, TextEvent{Text: m.text, Source: SourceSpeech})
		case msgInterrupt:
			l.interrupt(now)
		case msgVoiced:
			l.advance(now) // speech that ends now is not barged in on
			if l.sp != nil {
				l.interrupt(now)
			}
		}
		if m.from == nil {
			l.lastInput = now
			l.timeouts = 0
		}
		return nil
	case msgOutput:
		l.output(m.out, now)
	case msgCallDone:
		if l.call != nil && l.call.id == m.callID {
			l.call.done = true
			l.call.err, l.call.stack = m.err, m.stack
		}
	case msgTaskStart:
		if l.stopped || l.closing {
			return ErrCallEnded
		}
		l.startTask(m.text, m.task)
		return nil
	case msgTaskDone:
		delete(l.tasks, m.callID)
		if l.benign(m.err) {
			return nil
		}
		herr := &Error{Agent: l.c.cfg.name, Task: m.text, Err: m.err, Stack: m.stack}
		l.fail(herr)
	case msgClose:
		l.beginClose(now)
	}
	return nil
}

// endErr is what an input gets once the conversation is over.
func (l *agentLoop) endErr() error {
	if l.term != nil {
		return l.term
	}
	return &voicetest.TransportClosedError{Adapter: l.c.caps.Adapter}
}

// checkView reports a Call view used outside its lifetime.
func (l *agentLoop) checkView(v *Call) error {
	if v.task != "" || v.rank > 0 {
		if !l.tasks[v.rank] {
			return fmt.Errorf("adapters: %s: the Call of background task %q was used after the task returned", l.c.who(), v.task)
		}
		return nil
	}
	if l.call == nil || l.call.id != v.callID || l.call.done {
		return fmt.Errorf("adapters: %s: a Call was used after its handler call returned; use Call.Go for work that outlives the call", l.c.who())
	}
	return nil
}

// benign reports whether a handler or task error is a normal ending.
func (l *agentLoop) benign(err error) bool {
	if err == nil || errors.Is(err, ErrInterrupted) || errors.Is(err, ErrCallEnded) {
		return true
	}
	return (l.closing || l.c.ctx.Err() != nil) && errors.Is(err, context.Canceled)
}

// fail ends the conversation with err, or records it when it is already
// over.
func (l *agentLoop) fail(err error) {
	if l.stopped || l.closing {
		l.closeErrs = append(l.closeErrs, err)
		return
	}
	l.stop(err)
}

// stop ends the event stream with term after what is already in the outbox.
func (l *agentLoop) stop(term error) {
	l.stopped = true
	l.term = term
	l.abortSpeech(ErrCallEnded)
	l.inbox = nil
}

// abortSpeech answers every pending or queued output with err.
func (l *agentLoop) abortSpeech(err error) {
	if l.sp != nil {
		l.sp.req.answer(err)
		l.sp = nil
	}
	for _, r := range l.handlerQ {
		r.answer(err)
	}
	for _, r := range l.taskQ {
		r.answer(err)
	}
	l.handlerQ, l.taskQ = nil, nil
	l.taskTurn = false
}

// output routes an output request.
func (l *agentLoop) output(r *outReq, now time.Time) {
	if l.closing {
		if l.call != nil && l.call.stop && r.from.callID == l.call.id {
			l.logf("after Close: %s", describeOutput(r))
			r.answer(nil)
			return
		}
		r.answer(ErrCallEnded)
		return
	}
	if l.stopped {
		r.answer(ErrCallEnded)
		return
	}
	if err := l.checkView(r.from); err != nil {
		r.answer(err)
		return
	}
	if !r.isSpeech() && r.kind != outHangUp {
		// Accepted: queued in order; the caller need not wait.
		r.answer(nil)
	}
	if r.from.callID > 0 {
		if l.call.interrupted && r.isSpeech() && r.interruptible {
			r.answer(ErrInterrupted)
			return
		}
		l.handlerQ = append(l.handlerQ, r)
		return
	}
	l.taskQ = append(l.taskQ, r)
}

// describeOutput says what an output was, for logs.
func describeOutput(r *outReq) string {
	switch r.kind {
	case outSay:
		return fmt.Sprintf("say %q", r.text)
	case outPlay:
		return fmt.Sprintf("play %v of audio", r.dur)
	case outSilence:
		return fmt.Sprintf("silence %v", r.dur)
	case outHangUp:
		return fmt.Sprintf("hang up (%s)", r.text)
	}
	return fmt.Sprintf("%s %s", r.ev.Kind, r.ev.Text)
}

// pump emits what can be emitted now and starts the next handler call.
func (l *agentLoop) pump(now time.Time) {
	for !l.stopped && l.sp == nil {
		switch {
		case len(l.handlerQ) > 0:
			r := l.handlerQ[0]
			l.handlerQ = shift(l.handlerQ)
			l.emit(r, now)
		case l.call != nil && !l.call.started:
			if now.Before(l.call.thinkUntil) {
				return
			}
			l.launch(l.call)
		case l.call != nil && !l.call.done:
			return
		case l.call != nil:
			cs := l.call
			l.call = nil
			if !l.benign(cs.err) {
				l.fail(&Error{Agent: l.c.cfg.name, Event: eventName(cs.ev), Err: cs.err, Stack: cs.stack})
				return
			}
			if cs.spoke || (answersUser(cs.ev) && !cs.interrupted) {
				l.push(voicetest.AgentEvent{Kind: voicetest.AgentTurnEnd})
			}
		case len(l.taskQ) > 0:
			r := l.taskQ[0]
			l.taskQ = l.taskQ[1:]
			if r.isSpeech() {
				l.taskTurn = true
			}
			l.emit(r, now)
		case l.taskTurn:
			l.taskTurn = false
			l.push(voicetest.AgentEvent{Kind: voicetest.AgentTurnEnd})
		case len(l.inbox) > 0:
			ev := l.inbox[0]
			l.inbox = shift(l.inbox)
			l.startCall(ev, false, now)
		default:
			return
		}
	}
}

// shift drops the first element of q, keeping its array for the next
// append (the queues hold a few elements: moving them costs less than a
// new array each time the old one runs out).
func shift[T any](q []T) []T {
	n := copy(q, q[1:])
	var zero T
	q[n] = zero
	return q[:n]
}

// answersUser reports whether a handler call for ev answers the user, so
// that its end is a turn end even when it said nothing. StartEvent does
// not: an agent that does not greet has taken no turn, and a turn end
// there would make every reply look like the answer to the line before.
func answersUser(ev Event) bool {
	switch ev.(type) {
	case TextEvent, DTMFEvent:
		return true
	}
	return false
}

// emit sends one output; speech starts the agent speaking.
func (l *agentLoop) emit(r *outReq, now time.Time) {
	if r.isSpeech() && l.call != nil && r.from.callID == l.call.id {
		l.call.spoke = true
	}
	switch r.kind {
	case outEvent:
		l.push(r.ev)
	case outHangUp:
		l.push(voicetest.AgentEvent{Kind: voicetest.AgentHangUp, Text: r.text})
		r.answer(nil)
		l.stop(&voicetest.TransportClosedError{Adapter: l.c.caps.Adapter})
	case outSay:
		if l.c.cfg.audio {
			// The transcript follows the audio: a delta per word as it is
			// played, the whole text when the speech ends.
			r.sp = speech{req: r, start: now, end: now.Add(r.dur), words: wordMarks(r.text, r.dur)}
			l.sp = &r.sp
			l.advance(now)
			return
		}
		l.push(voicetest.AgentEvent{Kind: voicetest.AgentTranscript, Text: r.text, Final: true, Speech: r.dur})
		l.startSpeech(r, now)
	case outPlay:
		if !l.c.cfg.audio {
			l.push(voicetest.AgentEvent{Kind: voicetest.AgentLog, Text: fmt.Sprintf("playing %v of audio (text mode: no audio is sent)", r.dur)})
		}
		l.startSpeech(r, now)
	case outSilence:
		l.startSpeech(r, now)
	}
}

func (l *agentLoop) startSpeech(r *outReq, now time.Time) {
	r.sp = speech{req: r, start: now, end: now.Add(r.dur)}
	l.sp = &r.sp
	l.advance(now)
}

// advance emits the audio frames that are due and finishes speech whose
// time is up.
func (l *agentLoop) advance(now time.Time) {
	for l.sp != nil {
		sp := l.sp
		if a := sp.req.audio; l.c.cfg.audio && len(a.Samples) > 0 {
			spf := max(pcm.SamplesFor(a.Rate, frameDur), 1)
			n := (len(a.Samples) + spf - 1) / spf
			for sp.sent < n && !now.Before(sp.start.Add(time.Duration(sp.sent)*frameDur)) {
				i := sp.sent * spf
				j := min(i+spf, len(a.Samples))
				l.push(voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: pcm.Chunk{Rate: a.Rate, Samples: a.Samples[i:j]}})
				sp.sent++
			}
		}
		for sp.said < len(sp.words) && !now.Before(sp.start.Add(sp.words[sp.said].at)) {
			l.push(voicetest.AgentEvent{Kind: voicetest.AgentTranscript, Text: sp.words[sp.said].text})
			sp.said++
		}
		if now.Before(sp.end) {
			return
		}
		if sp.words != nil {
			l.push(voicetest.AgentEvent{Kind: voicetest.AgentTranscript, Text: sp.req.text, Final: true})
		}
		l.sp = nil
		sp.req.answer(nil)
	}
}

// spokenSoFar is the text of the words of sp already played.
func (sp *speech) spokenSoFar() string {
	var b strings.Builder
	for _, w := range sp.words[:sp.said] {
		b.WriteString(w.text)
	}
	return strings.TrimSpace(b.String())
}

// nextDeadline is when the loop must next wake up by itself.
func (l *agentLoop) nextDeadline() (time.Time, bool) {
	if l.closing {
		return l.closeDeadline, true
	}
	if sp := l.sp; sp != nil {
		next := sp.end
		if a := sp.req.audio; l.c.cfg.audio && len(a.Samples) > 0 {
			spf := max(pcm.SamplesFor(a.Rate, frameDur), 1)
			if sp.sent*spf < len(a.Samples) {
				next = sp.start.Add(time.Duration(sp.sent) * frameDur)
			}
		}
		if sp.said < len(sp.words) {
			if w := sp.start.Add(sp.words[sp.said].at); w.Before(next) {
				next = w
			}
		}
		return next, true
	}
	if cs := l.call; cs != nil && !cs.started {
		return cs.thinkUntil, true
	}
	if l.wasIdle && l.c.cfg.timeout > 0 && !l.settling {
		return l.timeoutDeadline(), true
	}
	return time.Time{}, false
}

func (l *agentLoop) idle() bool {
	return !l.stopped && !l.closing && l.call == nil && l.sp == nil &&
		len(l.handlerQ) == 0 && len(l.taskQ) == 0 && len(l.inbox) == 0 && !l.taskTurn
}

func (l *agentLoop) timeoutDeadline() time.Time {
	from := l.lastInput
	if l.idleSince.After(from) {
		from = l.idleSince
	}
	return from.Add(l.c.cfg.timeout)
}

// checkIdle tracks idleness and arms the inactivity timeout. A timeout that
// is due waits 1 ns of (virtual) time, so that user input arriving at the
// same instant is seen first and wins.
func (l *agentLoop) checkIdle(now time.Time) {
	if !l.idle() {
		l.wasIdle = false
		return
	}
	if !l.wasIdle {
		l.wasIdle = true
		l.idleSince = now
	}
	if l.c.cfg.timeout == 0 || l.settling {
		return
	}
	deadline := l.timeoutDeadline()
	if now.Before(deadline) {
		return
	}
	l.settling, l.settleFor = true, deadline
	l.settleT = l.clock.AfterFunc(time.Nanosecond, l.settleUp)
}

// settled delivers the inactivity timeout if nothing happened meanwhile.
func (l *agentLoop) settled() {
	if !l.settling {
		return
	}
	l.settling = false
	if !l.idle() || !l.wasIdle || !l.timeoutDeadline().Equal(l.settleFor) {
		return
	}
	l.timeouts++
	l.inbox = append(l.inbox, TimeoutEvent{Count: l.timeouts, SinceInput: l.settleFor.Sub(l.lastInput)})
}

// interrupt cuts the current response short.
func (l *agentLoop) interrupt(now time.Time) {
	l.advance(now)
	sp := l.sp
	if sp != nil && !sp.req.interruptible {
		l.logf("barge-in ignored: the agent is saying something uninterruptible")
		return
	}
	callActive := l.call != nil && !l.call.done
	if sp == nil && !callActive {
		return // nothing to interrupt
	}
	ev := InterruptEvent{}
	var from *Call // whose speech it cut (read before the answer: see answer)
	if sp != nil {
		from = sp.req.from
		l.sp = nil
		if sp.req.kind == outSay {
			ev.Text = sp.req.text
		}
		if said := sp.spokenSoFar(); said != "" {
			// The final transcript of cut speech is what was played.
			l.push(voicetest.AgentEvent{Kind: voicetest.AgentTranscript, Text: said, Final: true})
		}
		ev.Played = now.Sub(sp.start)
		ev.Task = from.task
		sp.req.answer(ErrInterrupted)
	}
	if sp != nil && from.callID == 0 {
		l.taskTurn = false // AgentInterrupted ends the task's turn
	}
	if callActive && (sp == nil || from.callID == l.call.id) {
		l.call.interrupted = true
		l.call.spoke = false // AgentInterrupted ends what it said
		kept := l.handlerQ[:0]
		for _, r := range l.handlerQ {
			if r.isSpeech() && r.interruptible {
				r.answer(ErrInterrupted)
				continue
			}
			kept = append(kept, r)
		}
		l.handlerQ = kept
	}
	l.push(voicetest.AgentEvent{Kind: voicetest.AgentInterrupted})
	l.inbox = append(l.inbox, ev)
}

// startCall makes the handler call for ev, which starts (on a goroutine
// apart from the runner's, see launch) once the think time (WithThinkTime) has passed on the
// conversation's clock; the loop keeps that time, so that a thinking
// agent is only waiting.
func (l *agentLoop) startCall(ev Event, stop bool, now time.Time) {
	l.callSeq++
	cs := &callState{id: l.callSeq, ev: ev, stop: stop}
	l.call = cs
	if think := l.c.cfg.think; think > 0 && !stop {
		cs.thinkUntil = now.Add(think)
		return
	}
	l.launch(cs)
}

// launch runs the handler call cs on the conversation's call worker.
func (l *agentLoop) launch(cs *callState) {
	c := l.c
	cs.started = true
	ctx := c.ctx
	if cs.stop {
		ctx = l.stopCtx
	}
	cs.view = Call{c: c, ctx: ctx, callID: cs.id, stop: cs.stop}
	if co := c.co.Load(); co != nil && co.state.Load() == coIdle && co.job.Load() == nil {
		// The runner runs it on the coroutine (Resume) before it waits
		// for the agent; one that waits already is woken (not when the
		// runner itself runs the loop: it resumes the call next).
		co.job.Store(cs)
		if l.fromView {
			select {
			case c.ready <- struct{}{}:
			default:
			}
		}
		return
	}
	job := callJob{ctx: ctx, ev: cs.ev, view: &cs.view}
	if l.calls == nil {
		l.calls = make(chan callJob, 1)
		go c.callWorker(l.calls)
	}
	select {
	case l.calls <- job: // the worker runs it once it has returned the last one
	default:
		// The worker is still in a call (one that outlived Close's
		// wait): this one gets a goroutine of its own.
		go c.runCall(job)
	}
}

// callJob is one handler call for callWorker.
type callJob struct {
	ctx  context.Context
	ev   Event
	view *Call
}

// callWorker runs the handler calls of a conversation, one after the
// other (the loop starts a call only once the last has returned), on one
// goroutine instead of one each, until the loop is over (exit closes
// jobs).
func (c *handlerConn) callWorker(jobs <-chan callJob) {
	growStack()
	for job := range jobs {
		c.runCall(job)
	}
}

// workerStack is about the stack a handler call takes on the call worker
// (the handler's function, a Say, and the loop it runs under the lock).
const workerStack = 8 << 10

// growStack grows the calling goroutine's stack, once, to workerStack:
// a new goroutine starts with a small stack, which a handler call would
// otherwise grow (and copy) twice or more, in every conversation.
//
//go:noinline
func growStack() {
	var frame [workerStack]byte
	touchStack(frame[:])
}

// touchStack keeps growStack's frame from being optimised away.
//
//go:noinline
func touchStack(b []byte) { b[len(b)-1] = 1 }

// runCall runs one handler call and reports its end to the loop.
func (c *handlerConn) runCall(job callJob) {
	stack, err := runProtected(func() error { return c.fn(job.ctx, job.ev, job.view) })
	_ = c.send(message{kind: msgCallDone, callID: job.view.callID, err: err, stack: stack})
}

// startTask runs a background task on its own goroutine.
func (l *agentLoop) startTask(name string, fn TaskFunc) {
	c := l.c
	l.taskSeq++
	rank := l.taskSeq
	if l.tasks == nil {
		l.tasks = make(map[int]bool) // made by the first task
	}
	l.tasks[rank] = true
	view := &Call{c: c, ctx: c.ctx, task: name, rank: rank}
	go func() {
		stack, err := runProtected(func() error { return fn(c.ctx, view) })
		_ = c.send(message{kind: msgTaskDone, text: name, callID: rank, err: err, stack: stack})
	}()
}

// beginClose starts closing: the event stream ends, speech stops, contexts
// are cancelled.
func (l *agentLoop) beginClose(now time.Time) {
	failed := false
	var herr *Error
	if errors.As(l.term, &herr) {
		failed = true
	}
	if !l.stopped {
		l.stop(&voicetest.TransportClosedError{Adapter: l.c.caps.Adapter})
	}
	if cs := l.call; cs != nil && !cs.started {
		cs.done = true // still thinking: it never runs
	}
	l.closing = true
	l.stopSent = failed // a crashed handler gets no StopEvent
	// On the system clock: nobody moves a shared clock during Close.
	l.closeDeadline = time.Now().Add(l.c.cfg.stopTimeout)
	l.outbox = nil
	l.c.queued.Store(0)
	l.endEvents()
	l.abortSpeech(ErrCallEnded)
	l.stopCtx, l.stopCancel = context.WithDeadline(context.Background(), l.closeDeadline)
	l.c.cancel()
}

// closeStep waits for the running call, runs the StopEvent call, then waits
// for the tasks. It reports whether the loop may exit.
func (l *agentLoop) closeStep(now time.Time) bool {
	timedOut := !now.Before(l.closeDeadline)
	if l.call != nil && !l.call.done {
		if timedOut {
			l.closeErrs = append(l.closeErrs, fmt.Errorf("the handler call for %s did not return within %v of Close (its goroutine is leaked; make the handler honour ctx)", eventName(l.call.ev), l.c.cfg.stopTimeout))
			return true
		}
		return false
	}
	if cs := l.call; cs != nil {
		l.call = nil
		if !l.benign(cs.err) && !(cs.stop && errors.Is(cs.err, context.DeadlineExceeded)) {
			l.closeErrs = append(l.closeErrs, &Error{Agent: l.c.cfg.name, Event: eventName(cs.ev), Err: cs.err, Stack: cs.stack})
		}
	}
	if !l.stopSent {
		l.stopSent = true
		l.startCall(StopEvent{}, true, now)
		return false
	}
	if len(l.tasks) > 0 {
		if timedOut {
			l.closeErrs = append(l.closeErrs, fmt.Errorf("%d background task(s) did not return within %v of Close (their goroutines are leaked; make tasks honour ctx)", len(l.tasks), l.c.cfg.stopTimeout))
			return true
		}
		return false
	}
	return true
}
