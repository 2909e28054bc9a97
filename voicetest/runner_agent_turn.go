package voicetest

import (
	"context"
	"fmt"
	"time"
)

// turnOver reports whether the agent's current turn is over by its
// protocol marker (and, on real-time pacing, its audio has played).
func (r *runner) turnOver() bool {
	if r.turnEnds > 0 {
		return !r.realTime() || r.now() >= r.playEnd
	}
	return false
}

// quietDeadline returns when the current agent turn ends if nothing more
// arrives.
func (r *runner) quietDeadline(since time.Duration) time.Duration {
	if r.turnEnds > 0 {
		return r.playEnd
	}
	last := max(r.lastAgentAt, since, r.listeningSince())
	if r.realTime() {
		last = max(last, r.playEnd)
	}
	if r.caps.TurnEnd {
		return last + r.cfg.Timeouts.FirstChunk
	}
	return last + r.cfg.Timeouts.TailSilence
}

// listeningSince returns now while the receive goroutine holds an event
// not yet taken, else 0: the agent cannot be called quiet for a time in
// which nobody was listening to it (a runner slower than a flooding agent,
// with the event queue full). While receive waits in Recv, everything the
// agent sent before has been queued, and pump takes what is queued before
// it calls a turn over; so what ends a turn is the time of the agent's
// last act on it (lastAgentAt), not of its last event of any kind.
func (r *runner) listeningSince() time.Duration {
	if r.listen == nil || r.listen.Load() > 0 {
		return 0
	}
	return r.now()
}

// agentTurn drains one agent turn. With o.greeting it waits
// Timeouts.Greeting, and no greeting (or a silent one) is no error.
func (r *runner) agentTurn(ctx context.Context, o turnOptions) error {
	if r.hungUp {
		return r.closeAndEnd(ctx)
	}
	begin := r.now()
	wait := r.cfg.Timeouts.FirstChunk
	if o.greeting {
		wait = r.cfg.Timeouts.Greeting
	}
	started := func() bool { return r.seg != nil || r.turnEnds > 0 || r.hungUp || r.streamClosed }
	err := r.pump(ctx, started, func() time.Duration { return begin + wait })
	switch {
	case err == errDeadline && o.greeting:
		return nil
	case err == errDeadline:
		return &TimeoutError{Phase: PhaseFirstChunk, Timeout: wait, Turn: r.st.turn,
			Hint: fmt.Sprintf("the %s agent sent no audio; check that it answers, or raise Config.Timeouts.FirstChunk", r.adapter())}
	case err != nil:
		return err
	}
	r.agentTurns++
	maxHit := false
	over := func() bool {
		if r.hungUp || r.streamClosed {
			return true
		}
		if r.turnAudio >= r.cfg.Timeouts.MaxTurnAudio {
			maxHit = true
			return true
		}
		return r.turnOver()
	}
	err = r.pump(ctx, over, func() time.Duration { return r.quietDeadline(begin) })
	if err == errDeadline && r.caps.TurnEnd && r.turnEnds == 0 {
		return &TimeoutError{Phase: PhaseTurn, Timeout: r.cfg.Timeouts.FirstChunk, Turn: r.st.turn,
			Hint: fmt.Sprintf("the %s adapter marks turn ends, but the agent neither spoke, called a tool nor ended its turn for that long (log lines and data do not count); raise Config.Timeouts.FirstChunk if the agent pauses longer", r.adapter())}
	}
	if err != nil && err != errDeadline {
		return err
	}
	ended := r.now()
	r.turnEnds = 0
	if maxHit {
		r.addEvent(Event{At: r.now(), Type: EventMaxTurnAudio, Turn: r.st.turn, Role: RoleAgent,
			Text: fmt.Sprintf("stopped draining after %v of agent audio", r.cfg.Timeouts.MaxTurnAudio)})
	}
	said := len(r.st.transcript)
	if err := r.closeSpeech(ctx); err != nil {
		return err
	}
	silent := len(r.st.transcript) == said
	if err := r.replay(); err != nil {
		return err
	}
	if maxHit && r.cfg.Timeouts.FailOnMaxTurnAudio {
		return &TimeoutError{Phase: PhaseTurn, Timeout: r.cfg.Timeouts.MaxTurnAudio, Turn: r.st.turn,
			Hint: "the agent's turn reached Config.Timeouts.MaxTurnAudio and FailOnMaxTurnAudio is set"}
	}
	if r.streamClosed && !r.hungUp && r.closeErr == nil {
		return &TransportClosedError{Adapter: r.adapter()}
	}
	if r.hungUp {
		r.end("the agent hung up")
		return nil
	}
	if silent && !o.allowSilence && !o.greeting {
		return fmt.Errorf("%w: the %s agent ended its turn at %s (turn %d) without a word, so there is no reply to record; if the agent may stay silent here, use AgentTurn(voicetest.AllowSilence())",
			ErrSilentTurn, r.adapter(), fmtOffset(ended), r.st.turn)
	}
	return nil
}

// expectHangUp runs an ExpectHangUp step: the agent has hung up, or does
// within Timeouts.FirstChunk of its last event; its last words are
// recorded as its turn.
func (r *runner) expectHangUp(ctx context.Context) error {
	if !r.hungUp && !r.streamClosed {
		begin := r.now()
		err := r.pump(ctx, func() bool { return r.hungUp || r.streamClosed },
			func() time.Duration { return max(begin, r.lastAgentAt) + r.cfg.Timeouts.FirstChunk })
		if err == errDeadline {
			if ferr := r.flush(ctx); ferr != nil {
				return ferr
			}
			return &TimeoutError{Phase: PhaseHangUp, Timeout: r.cfg.Timeouts.FirstChunk, Turn: r.st.turn,
				Hint: fmt.Sprintf("the %s agent is still on the line: ExpectHangUp waits Config.Timeouts.FirstChunk after the agent's last act (speech, a tool call, a turn end) for it to hang up", r.adapter())}
		}
		if err != nil {
			return err
		}
	}
	if err := r.flush(ctx); err != nil {
		return err
	}
	if !r.hungUp {
		return &TransportClosedError{Adapter: r.adapter()}
	}
	r.end("the agent hung up")
	return nil
}

// replay handles the events deferred while a finished turn was recorded.
func (r *runner) replay() error {
	for len(r.deferred) > 0 && r.turnEnds == 0 {
		it := r.deferred[0]
		r.deferred = r.deferred[1:]
		r.undefer(it)
		if err := r.handle(it); err != nil {
			return err
		}
	}
	return nil
}

// flush records what the agent said that no step drained: speech still
// open when the script ended, and events already received.
func (r *runner) flush(ctx context.Context) error {
	if err := r.poll(); err != nil {
		return err
	}
	for {
		if err := r.closeSpeech(ctx); err != nil {
			return err
		}
		if len(r.deferred) == 0 {
			return nil
		}
		r.turnEnds = 0
		if err := r.replay(); err != nil {
			return err
		}
	}
}

func (r *runner) closeAndEnd(ctx context.Context) error {
	if err := r.flush(ctx); err != nil {
		return err
	}
	r.end("the agent hung up")
	return nil
}
