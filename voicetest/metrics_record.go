package voicetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// notes are the measurements the runner makes as the agent's events
// arrive, which the transcript and the timeline do not hold: when each
// turn's reply began to arrive, the parts the agent reported, and its
// audio's stalls. They are bounded by the number of turns.
type notes struct {
	turns []turnNote // in turn order, one per turn that has any
	late  LateAudio
	// audio holds when the agent's audio played: contiguous stretches,
	// in order, cut where the agent said it stopped (AgentInterrupted).
	// A message's span can hold gaps (a stall, a reply cleared and a
	// new one begun in the same turn); these are the sound itself.
	audio []span
}

// maxAudioSpans bounds notes.audio: past it, new audio extends the last
// stretch (its gaps are lost, never memory).
const maxAudioSpans = 1 << 14

// playAudio notes agent audio playing from start to end.
func (n *notes) playAudio(start, end time.Duration) {
	if k := len(n.audio); k > 0 && (start-n.audio[k-1].end < sameInstant || k >= maxAudioSpans) {
		n.audio[k-1].end = max(n.audio[k-1].end, end)
		return
	}
	n.audio = append(n.audio, span{start: start, end: end, role: RoleAgent})
}

// stopAudio notes the agent's audio stopping at t: the stretches playing
// then end there (but not before they began).
func (n *notes) stopAudio(t time.Duration) {
	for i := len(n.audio) - 1; i >= 0 && n.audio[i].end > t; i-- {
		n.audio[i].end = max(t, n.audio[i].start)
	}
}

type turnNote struct {
	turn                   int
	firstEvent, firstAudio time.Duration
	hasEvent, hasAudio     bool
	timings                *Timings
}

// turn returns the note of turn, adding it.
func (n *notes) turn(turn int) *turnNote {
	if k := len(n.turns); k > 0 && n.turns[k-1].turn == turn {
		return &n.turns[k-1]
	}
	for i := range n.turns {
		if n.turns[i].turn == turn {
			return &n.turns[i]
		}
	}
	if n.turns == nil {
		n.turns = make([]turnNote, 0, 16) // a turn each: room for most scenarios
	}
	n.turns = append(n.turns, turnNote{turn: turn})
	return &n.turns[len(n.turns)-1]
}

// note measures an agent event as it is handled, before the runner
// records it: the first event and the first audio of the reply to the
// user's latest utterance (for turn 0, since the start), and audio that
// arrived after the reply's audio had run out.
func (r *runner) note(ev AgentEvent, at time.Duration) {
	switch ev.Kind {
	case AgentAudio:
		if ev.Audio.IsEmpty() || ev.Audio.Rate != r.cfg.Rate || r.turnAudio >= r.cfg.Timeouts.MaxTurnAudio {
			return // not played: handle refuses it, or drops it past MaxTurnAudio
		}
		if r.seg != nil && !r.interrupting && at-r.playEnd > LateAudioThreshold {
			r.st.notes.late.Count++
			r.st.notes.late.Gap += at - r.playEnd
		}
		// It plays after what is queued (runner.speak).
		playAt := max(at, r.playEnd)
		r.st.notes.playAudio(playAt, playAt+ev.Audio.Duration())
	case AgentInterrupted:
		r.st.notes.stopAudio(at)
		return
	case AgentTranscript, AgentToolCall, AgentToolResult, AgentData, AgentTurnEnd, AgentHandoff, AgentHangUp:
	default:
		return
	}
	if r.userSpeaking || at < r.userEnd {
		return // not a reply to the user's latest words
	}
	n := r.st.notes.turn(r.st.turn)
	if !n.hasEvent {
		n.hasEvent, n.firstEvent = true, at-r.userEnd
	}
	if ev.Kind == AgentAudio && !n.hasAudio {
		n.hasAudio, n.firstAudio = true, at-r.userEnd
	}
}

// noteTimings records an AgentTimings event against the turn in
// progress.
func (r *runner) noteTimings(ev AgentEvent, at time.Duration) error {
	t := ev.Timings
	if t == nil {
		return fmt.Errorf("the %s adapter sent an agent_timings event with no Timings at %s", r.adapter(), fmtOffset(at))
	}
	if t.STT < 0 || t.LLM < 0 || t.Tools < 0 || t.TTS < 0 {
		return fmt.Errorf("the %s adapter sent agent timings with a negative part at %s: %+v", r.adapter(), fmtOffset(at), *t)
	}
	n := r.st.notes.turn(r.st.turn)
	if n.timings == nil {
		n.timings = &Timings{}
	}
	n.timings.add(*t)
	return nil
}

// handoff records an AgentHandoff event.
func (r *runner) handoff(ev AgentEvent, at time.Duration) error {
	if ev.Text == "" {
		return fmt.Errorf("the %s adapter sent a handoff with no agent name at %s: AgentHandoff names the agent that takes over in Text", r.adapter(), fmtOffset(at))
	}
	if len(ev.Data) > 0 && !json.Valid(ev.Data) {
		return fmt.Errorf("the %s adapter sent a handoff to %q whose Data is not JSON at %s", r.adapter(), ev.Text, fmtOffset(at))
	}
	e := Event{At: at, Type: EventHandoff, Turn: r.st.turn, Role: RoleAgent, Text: ev.Text, Data: ev.Data}
	r.addEvent(e)
	r.addItem(e)
	return nil
}

// HandoffEvent returns the AgentHandoff event of a conversation passing
// from the agent named from ("" when unknown) to the agent named to.
func HandoffEvent(from, to string) AgentEvent {
	ev := AgentEvent{Kind: AgentHandoff, Text: to}
	if from != "" {
		ev.Data, _ = json.Marshal(map[string]string{"from": from, "to": to}) // strings always encode
	}
	return ev
}

// hears reports whether the agent's audio of a message whose text it sent
// is to be transcribed for its word error rate.
func (r *runner) hears(hasText bool, seg *agentSpeech) bool {
	return r.cfg.MeasureAgentWER && hasText && seg.audio > 0 && r.cfg.AgentSTT != nil
}

// setHeard writes what the STT heard of message i.
func (r *runner) setHeard(i int, heard string) {
	m := &r.st.transcript[i]
	m.Heard = &Hearing{Text: heard, Errors: CompareWords(m.Text, heard)}
}

// metrics returns the run's metrics, with the adapter's wire statistics
// when it reports them (the Conn is closed by then).
func (r *runner) metrics(st *State) Metrics {
	m := computeMetrics(st)
	if ws, ok := r.conn.(WireStatsReporter); ok && r.conn != nil {
		w := ws.WireStats()
		if w.Adapter == "" {
			w.Adapter = r.adapter()
		}
		m.Wire = &w
	}
	return m
}

// Recording returns the conversation's audio so far, segment by segment
// in start order (the segments share their audio with the State: do not
// modify it). Judges that listen (an audio-capable LLM judge) read it.
// Its Duration is the end of the last segment.
func (s *State) Recording() Recording {
	rec := Recording{Rate: s.rate}
	if p := s.recordedSegments(); p != nil {
		rec.Segments = *p
	}
	for _, seg := range rec.Segments {
		rec.Duration = max(rec.Duration, seg.End, seg.Start+seg.AudioDuration())
	}
	return rec
}

// recordedSegments returns a sorted copy of the runner's segments, or
// nil.
func (s *State) recordedSegments() *[]Segment {
	if s.segs == nil {
		return nil
	}
	c := slices.Clone(*s.segs)
	sortSegments(c)
	return &c
}
