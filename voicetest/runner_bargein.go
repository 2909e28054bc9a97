package voicetest

import (
	"context"
	"fmt"
	"time"
)

// interrupt runs an Interrupt step: it barges in with u.
func (r *runner) interrupt(ctx context.Context, u Utterance, when InterruptWhen) error {
	content := u.Text
	if r.hungUp {
		r.end("the agent hung up")
		return nil
	}
	begin := r.now()
	speaking := func() bool {
		return r.hungUp || r.streamClosed || (r.seg != nil && r.seg.start <= r.now())
	}
	err := r.pump(ctx, speaking, func() time.Duration {
		if r.seg != nil { // queued behind audio still playing
			return max(begin+r.cfg.Timeouts.WaitForSpeech, r.seg.start)
		}
		return begin + r.cfg.Timeouts.WaitForSpeech
	})
	if err == errDeadline {
		return &TimeoutError{Phase: PhaseWaitSpeech, Timeout: r.cfg.Timeouts.WaitForSpeech, Turn: r.st.turn,
			Hint: "the agent did not start speaking, so there was nothing to interrupt; raise Config.Timeouts.WaitForSpeech or add an AgentTurn before"}
	}
	if err != nil {
		return err
	}
	if r.hungUp {
		return r.agentTurn(ctx, turnOptions{})
	}
	if r.streamClosed {
		return &TransportClosedError{Adapter: r.adapter()}
	}
	r.agentTurns++
	segStart := r.seg.start
	var cond func() bool
	var deadline func() time.Duration
	finished := false
	switch when.kind {
	case whenSpeechStarts:
		cond = func() bool { return true }
		deadline = func() time.Duration { return r.now() + time.Hour }
	case whenAfter:
		cond = func() bool { return r.now() >= segStart+when.after }
		deadline = func() time.Duration { return segStart + when.after }
	case whenWords:
		cond = func() bool {
			if r.spokenWords() >= when.words {
				return true
			}
			if r.turnEnds > 0 && r.now() >= r.playEnd {
				finished = true
				return true
			}
			return false
		}
		deadline = func() time.Duration {
			d := r.quietDeadline(begin)
			if r.estimatesWords() || r.countsHeard() {
				// Words are counted as the audio plays: the turn is not
				// over before what has arrived has played, whatever the
				// pacing (PaceFast does not wait for playback otherwise).
				d = max(d, r.playEnd)
			}
			if r.estimatesWords() {
				// The estimate grows with playback: wake when it reaches n.
				need := r.seg.start + time.Duration(when.words)*time.Minute/time.Duration(r.cfg.WordsPerMinute)
				d = min(d, max(need, r.now()+time.Millisecond))
			} else if r.countsHeard() {
				// So does the estimate of words heard, until the audio
				// received so far runs out.
				if need, ok := r.heardAt(when.words); ok {
					d = min(d, max(need, r.now()+time.Millisecond))
				}
			}
			return d
		}
	}
	err = r.pump(ctx, func() bool { return r.hungUp || cond() }, deadline)
	switch {
	case err == errDeadline && when.kind == whenWords:
		finished = true
	case err == errDeadline:
	case err != nil:
		return err
	}
	if r.hungUp {
		return r.closeAndEnd(ctx)
	}
	if finished {
		return r.finishedEarly(when)
	}
	at := r.now()
	r.interrupting, r.gotInterrupt, r.interruptAt = true, false, at
	defer func() { r.interrupting = false }()
	r.addEvent(Event{At: at, Type: EventUserInterrupt, Turn: r.st.turn, Role: RoleUser, Text: content})
	if r.seg != nil {
		r.seg.interrupted = true
	}
	if r.caps.NativeInterrupt {
		if err := r.send(ctx, r.line("Interrupt"), r.conn.Interrupt); err != nil && !r.hungUpAfter(ctx, err) {
			return r.sendErr("interrupting the agent", err)
		}
		r.clip(at)
	}
	if err := r.say(ctx, u); err != nil {
		return err
	}
	// The interrupted reply is over: close it, whatever came of it.
	// The agent stopped when it said so (AgentInterrupted), else when its
	// audio ran out.
	stop := r.playEnd
	if r.gotInterrupt {
		stop = r.interruptStop
		r.clip(stop)
	}
	stop = max(stop, at)
	resp := stop - at
	r.interrupts = append(r.interrupts, resp)
	r.turnEnds = 0
	if r.seg != nil {
		r.seg.interrupted = true
		if err := r.closeSpeech(ctx); err != nil {
			return err
		}
		// closeSpeech recorded agent_stop_speaking; without an
		// agent_interrupted event (which carries it) give it the response
		// time.
		for i := len(r.st.timeline) - 1; i >= 0 && !r.gotInterrupt; i-- {
			if r.st.timeline[i].Type == EventAgentStopSpeaking {
				r.st.timeline[i].Latency = resp
				break
			}
		}
		// The reply to the barge-in is measured from the user's end.
		r.awaitLatency = true
	} else if r.hasText {
		if err := r.closeSpeech(ctx); err != nil {
			return err
		}
	}
	if err := r.replay(); err != nil {
		return err
	}
	if r.hungUp {
		r.end("the agent hung up")
	}
	return nil
}

// finishedEarly is the error of an AfterWords barge-in whose turn ended
// before the agent said the words it waits for.
func (r *runner) finishedEarly(when InterruptWhen) error {
	said := r.spokenWords()
	if r.countsHeard() {
		// The turn is over, so every word of its text was said.
		said = r.textWords()
		played, total := r.playedAudio(r.now())
		rate := scale(int64(said), int64(time.Minute), int64(max(total, 1)))
		if said >= when.words && total > 0 && rate > int64(r.cfg.WordsPerMinute) {
			// The estimate of words heard lagged: the agent speaks
			// faster than Config.WordsPerMinute.
			return fmt.Errorf("the agent finished its turn of %d words (%v of audio) before voicetest reckoned %d of them heard: the %s adapter's transcript runs ahead of its audio, so the words heard are estimated from the audio played at no more than Config.WordsPerMinute (%d), and this agent spoke about %d words a minute; set Config.WordsPerMinute to the agent's rate, or use After(d)",
				said, total, when.words, r.adapter(), r.cfg.WordsPerMinute, rate)
		}
		if said >= when.words {
			return fmt.Errorf("the agent's turn of %d words ended after %v of its %v of audio had played, before %d of them were heard (the %s adapter's transcript runs ahead of its audio, so words count as their audio plays); interrupt a longer answer or use After(d)",
				said, played, total, when.words, r.adapter())
		}
	}
	return fmt.Errorf("the agent finished its turn after %d words, before the %d that %v waits for; lower the count or interrupt a longer answer", said, when.words, when)
}
