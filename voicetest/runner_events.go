package voicetest

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
)

// actsOnTurn reports whether ev is the agent acting on its turn: speech
// (audio, a transcript with words or speech time), a tool call or result,
// the end of its turn or of its speech, a hang-up. Only these keep a turn
// open (Timeouts.TailSilence, FirstChunk between events, ExpectHangUp's
// wait): log lines, data and the agent's transcripts of the user do not,
// so that a peer that logs every 200 ms cannot hold a turn open forever.
func actsOnTurn(ev AgentEvent) bool {
	switch ev.Kind {
	case AgentLog, AgentData, UserTranscript:
		return false
	case AgentAudio:
		return !ev.Audio.IsEmpty()
	case AgentTranscript:
		return ev.Speech > 0 || strings.TrimSpace(ev.Text) != ""
	}
	return true
}

// maxTurnEvents bounds the events an agent may send between two recorded
// agent turns, so that an agent flooding the runner with events (logs,
// data, transcript deltas) fails the scenario instead of growing its memory
// without bound.
const maxTurnEvents = 100_000

// take counts and handles one event received from the agent.
func (r *runner) take(it recvItem) error {
	it.gate.release(it.size)
	if it.err == nil {
		r.took++
	}
	r.turnEvents++
	if r.turnEvents > maxTurnEvents && it.err == nil {
		return fmt.Errorf("the %s adapter sent more than %d events in one agent turn (the last a %s at %s, turn %d): it floods the runner; fix the agent or the adapter", r.adapter(), maxTurnEvents, it.ev.Kind, fmtOffset(it.at), r.st.turn)
	}
	return r.handle(it)
}

// handle records one agent event.
func (r *runner) handle(it recvItem) error {
	if it.err != nil {
		r.streamClosed = true
		if errors.Is(it.err, ErrTransportClosed) {
			if r.hungUp {
				return nil
			}
			r.closeErr = it.err
			return fmt.Errorf("the %s connection closed without a hang-up at %s (turn %d): %w", r.adapter(), fmtOffset(it.at), r.st.turn, it.err)
		}
		r.closeErr = it.err
		return fmt.Errorf("receiving from the %s adapter at %s (turn %d): %w", r.adapter(), fmtOffset(it.at), r.st.turn, it.err)
	}
	if r.turnEnds > 0 && it.ev.Kind != AgentHangUp {
		// The agent ended its turn; what follows is its next turn's, and
		// is handled once this one is recorded. A hang-up ends everything
		// at once.
		return r.deferItem(it)
	}
	ev, at := it.ev, it.at
	if r.userGone && at >= r.userGoneAt && r.seg == nil && (ev.Kind == AgentAudio || ev.Kind == AgentTranscript) {
		// The user hung up: speech the agent begins from then on is
		// not heard (userHangsUp).
		return nil
	}
	if actsOnTurn(ev) {
		r.lastAgentAt = max(r.lastAgentAt, at)
	}
	turn := r.st.turn
	r.note(ev, at)
	switch ev.Kind {
	case AgentAudio:
		if err := ev.Audio.Validate(); err != nil {
			return fmt.Errorf("the %s adapter sent agent audio with no valid sample rate at %s: %w (adapters must send audio at Session.Rate, %d Hz)", r.adapter(), fmtOffset(at), err, r.cfg.Rate)
		}
		if ev.Audio.Rate != r.cfg.Rate {
			return fmt.Errorf("the %s adapter sent agent audio at %d Hz at %s, but the session rate is %d Hz: adapters must convert audio to Session.Rate", r.adapter(), ev.Audio.Rate, fmtOffset(at), r.cfg.Rate)
		}
		if ev.Audio.IsEmpty() {
			return nil
		}
		if r.turnAudio >= r.cfg.Timeouts.MaxTurnAudio {
			// The turn is cut at MaxTurnAudio when it is drained; keeping
			// more (audio that arrived while the user spoke) would let an
			// agent that floods audio grow memory without bound.
			return nil
		}
		r.speak(at, ev.Audio, ev.Audio.Duration())
	case AgentTranscript:
		if ev.Speech < 0 {
			return fmt.Errorf("the %s adapter sent an agent transcript with negative speech time %v at %s", r.adapter(), ev.Speech, fmtOffset(at))
		}
		if !r.hasText {
			r.textAt = at
		}
		r.hasText = true
		if ev.Final {
			// The final text of an utterance replaces its deltas; a turn
			// may hold several utterances.
			r.committed = append(r.committed, strings.TrimSpace(ev.Text))
			r.turnText.Reset()
		} else {
			r.turnText.WriteString(ev.Text)
		}
		if ev.Speech > 0 && r.turnAudio < r.cfg.Timeouts.MaxTurnAudio {
			// Text-only speech counts towards MaxTurnAudio as audio
			// does; past it, its time is not kept (its text is).
			r.speak(at, pcm.Chunk{}, ev.Speech)
		}
	case UserTranscript:
		if r.keepSide(ev) {
			r.addEvent(Event{At: at, Type: EventUserTranscript, Turn: turn, Role: RoleUser, Text: ev.Text})
		}
	case AgentToolCall, AgentToolResult:
		if ev.Tool == nil {
			return fmt.Errorf("the %s adapter sent a %s event with no Tool at %s", r.adapter(), ev.Kind, fmtOffset(at))
		}
		if !r.keepSide(ev) {
			return nil
		}
		typ := EventToolCall
		if ev.Kind == AgentToolResult {
			typ = EventToolResult
		}
		at = r.beforeSpeech(ev, at)
		tc := *ev.Tool
		e := Event{At: at, Type: typ, Turn: turn, Role: RoleAgent, Text: tc.Name, Tool: &tc}
		r.addEvent(e)
		r.addItem(e)
	case AgentData:
		if !r.keepSide(ev) {
			return nil
		}
		e := Event{At: r.beforeSpeech(ev, at), Type: EventData, Turn: turn, Role: RoleAgent, Text: ev.Text, Data: ev.Data}
		r.addEvent(e)
		r.addItem(e)
	case AgentTurnEnd:
		if r.seg == nil && !r.hasText && (it.said < r.said.Load() || r.userSpeaking || at < r.userEnd) {
			// A turn end without a word that came before the user's
			// latest utterance was over cannot answer it: the agent's
			// silence is not a turn (an agent that did not greet, an
			// adapter that marks the start of a session). Counting it
			// would end the next AgentTurn at once and record every
			// reply in the turn after its question.
			r.agentLogf("voicetest: ignored the %s agent's turn end at %s (turn %d): it said nothing, before the user's utterance was over", r.adapter(), fmtOffset(at), turn)
			return nil
		}
		r.turnEnds++
	case AgentInterrupted:
		e := Event{At: at, Type: EventAgentInterrupted, Turn: turn, Role: RoleAgent}
		if r.interrupting && !r.gotInterrupt {
			r.gotInterrupt = true
			r.interruptStop = at
			e.Latency = at - r.interruptAt
		}
		r.addEvent(e)
		r.clip(at)
	case AgentHangUp:
		r.hungUp = true
		r.hangUpAt = at
		r.hangUpReason, r.hangUpTurn, r.hangUpStep = ev.Text, turn, r.stepName()
		r.addEvent(Event{At: at, Type: EventAgentHangUp, Turn: turn, Role: RoleAgent, Text: ev.Text})
	case AgentLog:
		if r.keepSide(ev) {
			r.addEvent(Event{At: at, Type: EventAgentLog, Turn: turn, Role: RoleAgent, Text: ev.Text})
		}
		r.agentLogf("agent log at %s: %s", fmtOffset(at), ev.Text)
	case AgentTimings:
		return r.noteTimings(ev, at)
	case AgentHandoff:
		return r.handoff(ev, at)
	default:
		return fmt.Errorf("the %s adapter sent an event of unknown kind %d at %s: adapters must send only the EventKinds voicetest defines", r.adapter(), ev.Kind, fmtOffset(at))
	}
	return nil
}

// beforeSpeech returns the time at which to record ev, which arrived at
// at: the start of the agent's speech in progress when the adapter says
// the agent made ev before it (AgentEvent.BeforeSpeech) and that speech
// began earlier in the same turn, else at. Recorded at the same instant
// as the speech's start, and before its message (which closeSpeech
// records when the speech ends), it comes first in the turn's items.
func (r *runner) beforeSpeech(ev AgentEvent, at time.Duration) time.Duration {
	if !ev.BeforeSpeech || r.seg == nil || r.seg.turn != r.st.turn {
		return at
	}
	return min(at, r.seg.start)
}

// dropSilentTurnEnd forgets a turn end without a word that the runner
// took before the user begins an utterance, and handles what was deferred
// behind it: like one that comes while the user speaks (handle), it
// cannot answer the utterance. Which of the two a turn end at the instant
// the user begins is must not depend on when the receive goroutine ran.
func (r *runner) dropSilentTurnEnd() error {
	if r.turnEnds == 0 || r.seg != nil || r.hasText {
		return nil
	}
	r.agentLogf("voicetest: ignored the %s agent's turn end (turn %d): it said nothing, before the user's utterance at %s", r.adapter(), r.st.turn, fmtOffset(r.now()))
	r.turnEnds = 0
	return r.replay()
}
