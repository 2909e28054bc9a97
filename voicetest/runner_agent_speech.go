package voicetest

import (
	"context"
	"strings"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
)

// piece is agent audio placed on the conversation's time axis.
type piece struct {
	at time.Duration
	c  pcm.Chunk
}

// agentSpeech is the agent segment being recorded.
type agentSpeech struct {
	turn        int
	start       time.Duration
	pieces      []piece
	sent        []pcm.Chunk   // the agent's frames as they came, unclipped
	audio       time.Duration // total audio received
	latency     time.Duration
	interrupted bool
}

// speak places dur of agent speech (audio c, or none for a text-only
// agent) that arrived at at: it plays after what is already queued.
func (r *runner) speak(at time.Duration, c pcm.Chunk, dur time.Duration) {
	playAt := max(at, r.playEnd)
	if !r.haveTTFB {
		r.haveTTFB = true
		r.ttfb = at
	}
	if r.seg == nil {
		// A new stretch of agent speech. Latency is measured only for one
		// that starts after the user stopped: speech that began earlier
		// (late audio, a greeting talked over) is not a response to it.
		if s := r.spareSeg; s != nil {
			r.spareSeg = nil
			*s = agentSpeech{turn: r.st.turn, start: playAt}
			r.seg = s
		} else {
			r.seg = &agentSpeech{turn: r.st.turn, start: playAt}
		}
		e := Event{At: playAt, Type: EventAgentStartSpeaking, Turn: r.st.turn, Role: RoleAgent}
		if r.awaitLatency && at >= r.userEnd {
			r.awaitLatency = false
			r.seg.latency = at - r.userEnd
			e.Latency = r.seg.latency
			r.latencies = append(r.latencies, r.seg.latency)
		}
		r.addEvent(e)
	}
	if !c.IsEmpty() {
		r.seg.pieces = append(r.seg.pieces, piece{at: playAt, c: c})
		r.seg.sent = append(r.seg.sent, c)
		r.seg.audio += dur
	}
	r.turnAudio += dur
	r.playEnd = playAt + dur
}

// clip stops the agent's playback at t: audio queued to play after t is
// discarded (a native cancel, or the agent reporting it stopped).
func (r *runner) clip(t time.Duration) {
	if r.playEnd <= t {
		return
	}
	r.playEnd = max(t, r.lastAudioStart())
	if r.seg == nil {
		return
	}
	for i := range r.seg.pieces {
		p := &r.seg.pieces[i]
		if end := p.at + p.c.Duration(); end > r.playEnd {
			p.c = p.c.Slice(0, max(r.playEnd-p.at, 0))
		}
	}
}

func (r *runner) lastAudioStart() time.Duration {
	if r.seg == nil {
		return 0
	}
	return r.seg.start
}

// closeSpeech ends the agent's current segment (if any) and records its
// message, transcribing it when needed.
func (r *runner) closeSpeech(ctx context.Context) error {
	text, hasText, textAt := r.agentText(), r.hasText, r.textAt
	r.turnText.Reset()
	r.committed = r.committed[:0]
	r.hasText = false
	seg := r.seg
	r.seg = nil
	r.turnAudio = 0
	r.turnEvents = 0
	if seg == nil {
		if !hasText || strings.TrimSpace(text) == "" {
			return nil
		}
		// Text with no speech: a transcript-only message.
		m := Message{Turn: r.st.turn, Role: RoleAgent, Text: strings.TrimSpace(text), Start: textAt, End: textAt}
		r.st.transcript = append(r.st.transcript, m)
		r.addItem(Event{At: textAt, Type: EventMessage, Turn: m.Turn, Role: RoleAgent, Text: m.Text})
		return nil
	}
	end := r.playEnd
	audio := r.segmentAudio(seg, end)
	m := Message{Turn: seg.turn, Role: RoleAgent, Text: strings.TrimSpace(text), Start: seg.start, End: end,
		Interrupted: seg.interrupted, Latency: seg.latency}
	if !hasText && seg.audio > 0 {
		if r.cfg.AgentSTT != nil {
			// Transcribed beside the conversation: the user answers as
			// soon as the agent stops, not once an STT engine has read
			// the turn; settle fills the text in before anything reads it.
			r.transcribe(ctx, seg.turn, canonicalAgentAudio(r.cfg.Rate, seg.sent), len(r.st.transcript), len(r.st.items), len(r.segs))
		} else {
			m.AudioOnly = true
		}
	} else if r.hears(hasText, seg) {
		audio = segmentAudio{whole: audio.chunk()} // laid out once, for the STT and the Result
		r.transcribe(ctx, seg.turn, audio.whole, len(r.st.transcript), len(r.st.items), len(r.segs))
		r.stt[len(r.stt)-1].heard = true
	}
	r.st.transcript = append(r.st.transcript, m)
	r.addItem(Event{At: seg.start, Type: EventMessage, Turn: m.Turn, Role: RoleAgent, Text: m.Text})
	stop := Event{At: end, Type: EventAgentStopSpeaking, Turn: seg.turn, Role: RoleAgent}
	r.addEvent(stop)
	r.segs = append(r.segs, Segment{Role: RoleAgent, Turn: seg.turn, Start: seg.start, End: end,
		Text: m.Text, AudioOnly: m.AudioOnly, audio: audio, Interrupted: seg.interrupted})
	r.spareSeg = seg // nothing keeps it (its slices, which the segment keeps, are not reused)
	return nil
}

// segmentAudio returns the segment's speech from its start to end: the
// agent's frames as they came, laid out on one buffer (silence in the
// gaps) only when someone asks for Segment.Audio. The frames are the
// adapter's: an adapter never reuses the buffer of an AgentAudio event it
// returned (TestRecordingKeepsEachFrame).
func (r *runner) segmentAudio(seg *agentSpeech, end time.Duration) segmentAudio {
	if seg.audio == 0 {
		return segmentAudio{}
	}
	return placedAudio(r.cfg.Rate, pcm.SamplesFor(r.cfg.Rate, end-seg.start), seg.start, seg.pieces)
}

// unrecorded reports whether the agent said something that no step has
// recorded yet: speech open, or deferred to the next turn.
func (r *runner) unrecorded() bool {
	if r.seg != nil || (r.hasText && strings.TrimSpace(r.agentText()) != "") {
		return true
	}
	for _, it := range r.deferred {
		switch it.ev.Kind {
		case AgentAudio:
			if !it.ev.Audio.IsEmpty() {
				return true
			}
		case AgentTranscript:
			if strings.TrimSpace(it.ev.Text) != "" {
				return true
			}
		}
	}
	return false
}

// agentText returns the text of the agent's current turn so far.
func (r *runner) agentText() string {
	p := strings.TrimSpace(r.turnText.String())
	switch {
	case len(r.committed) == 0:
		return p
	case len(r.committed) == 1 && p == "":
		return r.committed[0] // the usual turn: one final text, no copy
	}
	parts := append([]string(nil), r.committed...)
	if p != "" {
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}
