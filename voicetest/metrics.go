package voicetest

import (
	"cmp"
	"slices"
	"time"
	"unicode"
	"unicode/utf8"
)

// Metrics measures a conversation the way a caller hears it: who talked
// over whom and who gave way, the silences, how long each answer took and
// what it was made of, how fast and how accurately the agent spoke, and
// what crossed the wire. Result.Metrics holds the metrics of a finished
// run; State.Metrics computes them on the conversation so far, for judges
// and checks.
//
// Everything but Wire is computed from the transcript (who spoke from when
// to when), the timeline and what the runner measured as events arrived,
// so it is exact on virtual time and measured on the real clock. Speech is
// taken as the recorded messages' spans: a user utterance from its first
// frame sent to its last, an agent message from the start of its audio to
// the end of its playback (cut short by a barge-in), or, for a text-only
// agent, its speech time. Under PaceFast user times are transfer times and
// agent audio keeps its playback times, so the timing metrics describe no
// real conversation there; use PaceRealTime (the default) to measure.
type Metrics struct {
	// TalkOver is the speech of both parties at once.
	TalkOver TalkOverMetrics `json:"talk_over"`
	// Pauses are the silences between speech.
	Pauses PauseMetrics `json:"pauses"`
	// Turns holds the measurements of each turn that has any, in turn
	// order (turn 0 is before the first user turn: the greeting).
	Turns []TurnMetrics `json:"turns,omitempty"`
	// Latency summarises the response latency of the turns (end of the
	// user's speech to the agent's first speech, as on
	// agent_start_speaking events). A reply measured at exactly zero is
	// counted as not measured here, as on the timeline; Result.Latency
	// keeps it.
	Latency Percentiles `json:"latency"`
	// TTFB summarises, over the turns, the time from the end of the
	// user's speech to the first byte of the agent's audio (for turn 0,
	// from the start of the call): Turns[i].TTFB.
	TTFB Percentiles `json:"ttfb"`
	// FirstEvent summarises the time from the end of the user's speech to
	// the agent's first event of its reply, of any kind (text, a tool
	// call, audio): Turns[i].FirstEvent.
	FirstEvent Percentiles `json:"first_event"`
	// Parts summarise the parts of the response time the agent measured
	// itself (AgentTimings events: the composable adapter sends them).
	Parts PartMetrics `json:"parts"`
	// Speech measures the words.
	Speech SpeechMetrics `json:"speech"`
	// LateAudio counts the agent's audio that arrived after the audio
	// before it in the same reply had finished playing: the caller heard
	// the reply stall.
	LateAudio LateAudio `json:"late_audio"`
	// Gym holds the numbers LayerCode Gym reports (its TTFAB, turn
	// durations, word counts), measured its way, beside ours; see
	// GymMetrics (metrics_gym.go).
	Gym GymMetrics `json:"gym"`
	// Waits counts the simulated caller's waits under Config.TurnTaking.
	Waits WaitMetrics `json:"waits"`
	// Wire holds the adapter's wire statistics, nil when the adapter
	// reports none (see WireStatsReporter). State.Metrics leaves it nil.
	Wire *WireStats `json:"wire,omitempty"`
}

// TalkOverMetrics is the speech of both parties at once.
type TalkOverMetrics struct {
	// Spans lists every stretch in which both spoke, in time order. A
	// stretch shorter than a millisecond is not one: on the real clock,
	// one party stopping and the other starting at the same moment may be
	// recorded that far apart (as in the timeline's order, events closer
	// than that are simultaneous).
	Spans []TalkOver `json:"spans,omitempty"`
	// Count and Time total the spans.
	Count int           `json:"count"`
	Time  time.Duration `json:"time"`
	// ByUser totals the spans the user started (speaking while the agent
	// was speaking: a barge-in), ByAgent those the agent started (speaking
	// while the user was speaking). Spans that both started at the same
	// instant are in neither.
	ByUser  TalkOverTotal `json:"by_user"`
	ByAgent TalkOverTotal `json:"by_agent"`
	// AgentYielded and UserYielded count the spans that ended with that
	// party falling silent while the other went on.
	AgentYielded int `json:"agent_yielded"`
	UserYielded  int `json:"user_yielded"`
	// BargeIns holds, per user_interrupt (an Interrupt step or an
	// interrupting User), how long the agent took to go quiet and to
	// answer.
	BargeIns []BargeIn `json:"barge_ins,omitempty"`
}

// TalkOverTotal counts the talk-overs one party started.
type TalkOverTotal struct {
	Count int           `json:"count"`
	Time  time.Duration `json:"time"`
}

// TalkOver is one stretch in which both parties spoke.
type TalkOver struct {
	// Start and End are offsets from the start of the conversation.
	Start time.Duration `json:"start"`
	End   time.Duration `json:"end"`
	// Turn is the user turn of the speech that was talked over.
	Turn int `json:"turn"`
	// By is the party that started speaking while the other spoke; ""
	// when both started at the same instant.
	By Role `json:"by,omitempty"`
	// Yielded is the party that fell silent first while the other went
	// on; "" when both stopped at the same instant.
	Yielded Role `json:"yielded,omitempty"`
}

// Duration returns End - Start.
func (t TalkOver) Duration() time.Duration { return t.End - t.Start }

// BargeIn is one barge-in: the user speaking over the agent on purpose.
type BargeIn struct {
	// At is when the user barged in; Turn the user turn it started.
	At   time.Duration `json:"at"`
	Turn int           `json:"turn"`
	// ToQuiet is the time from the barge-in to the agent going quiet (the
	// interrupt response time: its own "interrupted" report, else the end
	// of its audio); Quiet reports that it was measured.
	ToQuiet time.Duration `json:"to_quiet"`
	Quiet   bool          `json:"quiet"`
	// ToAnswer is the time from the barge-in to the agent's next speech;
	// Answered reports that it spoke again.
	ToAnswer time.Duration `json:"to_answer"`
	Answered bool          `json:"answered"`
}

// PauseMetrics are the silences between speech.
type PauseMetrics struct {
	// Spans lists every silence between one stretch of speech and the
	// next, in time order, and the silence after the last words: to the
	// end of a Silence or Sleep step that follows them, or, when the user
	// spoke last (the agent never answered), to the end of the recorded
	// conversation. The wait before the first words is not a pause (it is
	// turn 0's TTFB), nor the runner's wait for the end of the agent's
	// last turn, nor a silence shorter than a millisecond (see
	// TalkOverMetrics.Spans).
	Spans []Pause `json:"spans,omitempty"`
	// Longest is the longest of Spans (zero when there is none).
	Longest Pause `json:"longest"`
	// DeadAir is the total of Spans.
	DeadAir time.Duration `json:"dead_air"`
	// PerTurn totals the dead air of each turn that has any (a pause
	// belongs to the turn of the speech before it).
	PerTurn []TurnDuration `json:"per_turn,omitempty"`
	// Unfilled counts the pauses the agent left unfilled: the user
	// stopped, and the agent said nothing before the user spoke again or
	// the conversation ended. LongestUnfilled is the longest of them.
	Unfilled        int           `json:"unfilled"`
	LongestUnfilled time.Duration `json:"longest_unfilled"`
}

// TurnDuration is a duration that belongs to one turn.
type TurnDuration struct {
	Turn     int           `json:"turn"`
	Duration time.Duration `json:"duration"`
}

// Pause is a silence: neither party spoke from Start to End.
type Pause struct {
	Start time.Duration `json:"start"`
	End   time.Duration `json:"end"`
	// Turn is the turn of the speech before the pause.
	Turn int `json:"turn"`
	// After is who spoke last before it; Before who spoke first after it
	// ("" when nobody did).
	After  Role `json:"after"`
	Before Role `json:"before,omitempty"`
}

// Duration returns End - Start.
func (p Pause) Duration() time.Duration { return p.End - p.Start }

// Unfilled reports whether the agent left the pause unfilled: the user
// spoke last, and the agent did not speak next.
func (p Pause) Unfilled() bool { return p.After == RoleUser && p.Before != RoleAgent }

// TurnMetrics are the measurements of one turn.
type TurnMetrics struct {
	// Turn is the user turn (0: before the first, the greeting).
	Turn int `json:"turn"`
	// Latency is the response latency of the turn's first agent speech
	// (HasLatency false when none was measured).
	Latency    time.Duration `json:"latency"`
	HasLatency bool          `json:"has_latency"`
	// TTFB is the time from the end of the user's speech (the start of
	// the call, for turn 0) to the first byte of the agent's audio in
	// the turn; HasTTFB false when no audio came (a text-only agent).
	TTFB    time.Duration `json:"ttfb"`
	HasTTFB bool          `json:"has_ttfb"`
	// FirstEvent is the time from the same instant to the agent's first
	// event of its reply of any kind: text, a tool call, data, audio, a
	// turn end, a handoff or a hang-up.
	FirstEvent    time.Duration `json:"first_event"`
	HasFirstEvent bool          `json:"has_first_event"`
	// Parts are the parts of the response time the agent reported for
	// the turn (AgentTimings), nil when it reported none.
	Parts *Timings `json:"parts,omitempty"`
	// DeadAir is the silence that belongs to the turn (PauseMetrics.PerTurn).
	DeadAir time.Duration `json:"dead_air"`
	// UserWords and AgentWords count the words each party said in the
	// turn (agent words of messages whose text is known).
	UserWords  int `json:"user_words"`
	AgentWords int `json:"agent_words"`
}

// Timings are the parts of an agent's response time that the agent
// measured itself and reported in an AgentTimings event. A zero part was
// not measured (or took no time).
type Timings struct {
	// STT is the time spent transcribing the user's speech.
	STT time.Duration `json:"stt,omitempty"`
	// LLM is the time from the request to the model's first token (for a
	// model that answers whole, its answer); with several model calls in
	// a turn, their total.
	LLM time.Duration `json:"llm,omitempty"`
	// Tools is the time spent running tools.
	Tools time.Duration `json:"tools,omitempty"`
	// TTS is the time from the text to the first audio of the speech.
	TTS time.Duration `json:"tts,omitempty"`
}

func (t *Timings) add(o Timings) {
	t.STT += o.STT
	t.LLM += o.LLM
	t.Tools += o.Tools
	t.TTS += o.TTS
}

// PartMetrics summarise the parts of the response times over the turns
// that reported them; a part no turn reported has N == 0.
type PartMetrics struct {
	STT   Percentiles `json:"stt"`
	LLM   Percentiles `json:"llm"`
	Tools Percentiles `json:"tools"`
	TTS   Percentiles `json:"tts"`
}

// SpeechMetrics measures the words.
type SpeechMetrics struct {
	// AgentWords counts the words of the agent's messages whose text is
	// known; AgentTurns the turns in which it said any.
	AgentWords int `json:"agent_words"`
	AgentTurns int `json:"agent_turns"`
	// AgentWordsPerTurn is AgentWords / AgentTurns.
	AgentWordsPerTurn float64 `json:"agent_words_per_turn"`
	// AgentWPM is the agent's speaking rate in words per minute, over its
	// messages that were neither interrupted nor without audio or speech
	// time: their words (AgentRatedWords) over the time their audio
	// played (AgentSpeech; stalls left out), or their speech time for a
	// text-only agent.
	AgentWPM        float64       `json:"agent_wpm"`
	AgentRatedWords int           `json:"agent_rated_words"`
	AgentSpeech     time.Duration `json:"agent_speech"`
	// UserWords counts the user's words; UserTurns its utterances with
	// words; UserWordsPerTurn their ratio.
	UserWords        int     `json:"user_words"`
	UserTurns        int     `json:"user_turns"`
	UserWordsPerTurn float64 `json:"user_words_per_turn"`
	// WER compares what the agent claims it said (its transcript stream)
	// with what Config.AgentSTT heard in its audio, over the messages
	// checked under Config.MeasureAgentWER; nil when none was.
	WER *WERMetrics `json:"wer,omitempty"`
}

// WERMetrics is the word error rate of the agent's speech against its
// own transcript.
type WERMetrics struct {
	// Rate is Errors.Rate(): word edits over the words the agent claimed.
	Rate float64 `json:"rate"`
	// Errors totals the word edits of every message checked.
	Errors WordErrors `json:"errors"`
	// Messages is the number of messages checked.
	Messages int `json:"messages"`
	// Worst is the checked message with the highest rate.
	Worst Message `json:"worst"`
}

// LateAudio counts the stalls of the agent's audio: audio that arrived
// more than LateAudioThreshold after the audio before it in the same
// reply had finished playing.
type LateAudio struct {
	// Count is the number of late chunks; Gap the silence they left.
	Count int           `json:"count"`
	Gap   time.Duration `json:"gap"`
}

// LateAudioThreshold is how long after the agent's audio has run out the
// next chunk of the same reply may arrive before it counts as late: a
// stall a jitter buffer of that size would not hide.
const LateAudioThreshold = 60 * time.Millisecond

// Metrics computes the metrics of the conversation so far (without Wire,
// which only the runner can ask the adapter for). It is what
// Result.Metrics holds at the end.
func (s *State) Metrics() Metrics { return computeMetrics(s) }

// span is one stretch of one party's speech.
type span struct {
	start, end time.Duration
	role       Role
	turn       int
}

// speechSpans returns the conversation's speech as spans of each party,
// ordered by start, overlapping spans of one party merged: the user's
// messages, and the agent's messages where the agent's audio played in
// them (audio, in order; a message with no audio, a text-only agent's,
// whole).
func speechSpans(tr []Message, audio []span) (user, agent []span) {
	both := make([]span, 2*len(tr)) // room for every message in either
	user, agent = both[:0:len(tr)], both[len(tr):len(tr)]
	for _, m := range tr {
		if m.End <= m.Start {
			continue
		}
		sp := span{start: m.Start, end: m.End, role: m.Role, turn: m.Turn}
		if m.Role == RoleUser {
			user = append(user, sp)
		} else {
			agent = append(agent, sp)
		}
	}
	user, agent = mergeSpans(user), mergeSpans(agent)
	if len(audio) == 0 {
		return user, agent
	}
	out := make([]span, 0, len(agent)+len(audio))
	j := 0
	for _, m := range agent {
		for j < len(audio) && audio[j].end <= m.start {
			j++
		}
		heard := false
		for k := j; k < len(audio) && audio[k].start < m.end; k++ {
			if s, e := max(audio[k].start, m.start), min(audio[k].end, m.end); e > s {
				out = append(out, span{start: s, end: e, role: RoleAgent, turn: m.turn})
				heard = true
			}
		}
		if !heard {
			out = append(out, m)
		}
	}
	return user, out
}

// spoken returns how much of [start, end) the agent's audio played, or
// end - start when no audio played in it (a text-only agent's speech).
func spoken(audio []span, start, end time.Duration) time.Duration {
	var d time.Duration
	// audio is in time order: start at the first stretch that ends after
	// start.
	i, _ := slices.BinarySearchFunc(audio, start, func(a span, t time.Duration) int { return cmp.Compare(a.end, t+1) })
	for _, a := range audio[i:] {
		if a.start >= end {
			break
		}
		if s, e := max(a.start, start), min(a.end, end); e > s {
			d += e - s
		}
	}
	if d == 0 {
		return end - start
	}
	return d
}

func mergeSpans(s []span) []span {
	slices.SortStableFunc(s, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	out := s[:0]
	for _, sp := range s {
		if n := len(out); n > 0 && sp.start < out[n-1].end {
			out[n-1].end = max(out[n-1].end, sp.end)
			continue
		}
		out = append(out, sp)
	}
	return out
}

func computeMetrics(st *State) Metrics {
	tr, tl := st.ordered()
	user, agent := speechSpans(tr, st.notes.audio)
	var m Metrics
	m.TalkOver = talkOvers(user, agent)
	m.TalkOver.BargeIns = bargeIns(tl)
	m.Pauses = pauses(user, agent, tl)
	words := make([]int, len(tr))
	for i, msg := range tr {
		words[i] = countWords(msg.Text)
	}
	m.Turns = turnMetrics(st, tr, words, tl, m.Pauses)
	var lat, ttfb, first, stt, llm, tools, tts []time.Duration
	for _, t := range m.Turns {
		if t.HasLatency {
			if lat == nil {
				lat = make([]time.Duration, 0, len(m.Turns))
			}
			lat = append(lat, t.Latency)
		}
		if t.HasTTFB {
			ttfb = append(ttfb, t.TTFB)
		}
		if t.HasFirstEvent {
			if first == nil {
				first = make([]time.Duration, 0, len(m.Turns))
			}
			first = append(first, t.FirstEvent)
		}
		if p := t.Parts; p != nil {
			stt = appendPositive(stt, p.STT)
			llm = appendPositive(llm, p.LLM)
			tools = appendPositive(tools, p.Tools)
			tts = appendPositive(tts, p.TTS)
		}
	}
	m.Latency, m.TTFB, m.FirstEvent = SummarizeDurations(lat), SummarizeDurations(ttfb), SummarizeDurations(first)
	m.Parts = PartMetrics{STT: SummarizeDurations(stt), LLM: SummarizeDurations(llm),
		Tools: SummarizeDurations(tools), TTS: SummarizeDurations(tts)}
	m.Speech = speechMetrics(tr, words, st.notes.audio)
	m.LateAudio = st.notes.late
	m.Gym = gymMetrics(st, tr, words)
	m.Waits = waitMetrics(tl)
	return m
}

func appendPositive(ds []time.Duration, d time.Duration) []time.Duration {
	if d > 0 {
		return append(ds, d)
	}
	return ds
}

// talkOvers finds the stretches in which a user span and an agent span
// overlap, walking the two ordered lists together.
func talkOvers(user, agent []span) TalkOverMetrics {
	var t TalkOverMetrics
	i, j := 0, 0
	for i < len(user) && j < len(agent) {
		u, a := user[i], agent[j]
		if s, e := max(u.start, a.start), min(u.end, a.end); e-s >= sameInstant {
			o := TalkOver{Start: s, End: e}
			switch {
			case u.start > a.start:
				o.By, o.Turn = RoleUser, a.turn
			case a.start > u.start:
				o.By, o.Turn = RoleAgent, u.turn
			default:
				o.Turn = min(u.turn, a.turn)
			}
			switch {
			case a.end < u.end:
				o.Yielded = RoleAgent
				t.AgentYielded++
			case u.end < a.end:
				o.Yielded = RoleUser
				t.UserYielded++
			}
			t.Spans = append(t.Spans, o)
			t.Count++
			t.Time += o.Duration()
			switch o.By {
			case RoleUser:
				t.ByUser.Count++
				t.ByUser.Time += o.Duration()
			case RoleAgent:
				t.ByAgent.Count++
				t.ByAgent.Time += o.Duration()
			}
		}
		if u.end < a.end {
			i++
		} else {
			j++
		}
	}
	return t
}

// bargeIns measures each user_interrupt of the timeline: the time to the
// agent's going quiet, as the runner measures it (its own "interrupted"
// report, else the end of its audio), and to its next speech.
func bargeIns(tl []Event) []BargeIn {
	var out []BargeIn
	for i, e := range tl {
		if e.Type != EventUserInterrupt {
			continue
		}
		b := BargeIn{At: e.At, Turn: e.Turn}
		quietAt := -1
		for j := i + 1; j < len(tl); j++ {
			f := tl[j]
			if f.Type == EventUserInterrupt {
				break
			}
			if f.Type == EventAgentInterrupted || (f.Type == EventAgentStopSpeaking && quietAt < 0) {
				b.Quiet, quietAt = true, j
				b.ToQuiet = f.At - e.At
				if f.Latency > 0 {
					b.ToQuiet = f.Latency
				}
				if f.Type == EventAgentInterrupted {
					break
				}
			}
		}
		from := i + 1
		if quietAt >= 0 {
			from = quietAt + 1
		}
		for _, f := range tl[from:] {
			if f.Type == EventAgentStartSpeaking && f.At >= e.At {
				b.Answered, b.ToAnswer = true, f.At-e.At
				break
			}
		}
		out = append(out, b)
	}
	return out
}

// pauses finds the silences between speech, and the one after the user's
// last words when the agent never answered them.
func pauses(user, agent []span, tl []Event) PauseMetrics {
	all := append(append(make([]span, 0, len(user)+len(agent)), user...), agent...)
	slices.SortStableFunc(all, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	p := PauseMetrics{Spans: make([]Pause, 0, len(all))}
	add := func(ps Pause) {
		p.Spans = append(p.Spans, ps)
		p.DeadAir += ps.Duration()
		if ps.Duration() > p.Longest.Duration() {
			p.Longest = ps
		}
		if ps.Unfilled() {
			p.Unfilled++
			p.LongestUnfilled = max(p.LongestUnfilled, ps.Duration())
		}
		if n := len(p.PerTurn); n > 0 && p.PerTurn[n-1].Turn == ps.Turn {
			p.PerTurn[n-1].Duration += ps.Duration()
		} else {
			if p.PerTurn == nil {
				p.PerTurn = make([]TurnDuration, 0, cap(p.Spans)) // at most a pause each
			}
			p.PerTurn = append(p.PerTurn, TurnDuration{Turn: ps.Turn, Duration: ps.Duration()})
		}
	}
	var last span // the span that ends last so far
	for i, sp := range all {
		if i > 0 && sp.start-last.end >= sameInstant {
			add(Pause{Start: last.end, End: sp.start, Turn: last.turn, After: last.role, Before: sp.role})
		}
		if i == 0 || sp.end > last.end || (sp.end == last.end && sp.role == RoleUser) {
			last = sp
		}
	}
	if len(all) > 0 {
		// The silence after the last words: to the end of the user's
		// deliberate silence (a Silence or Sleep step), and, after the
		// user's words, to the end of the recorded conversation.
		end := last.end
		for _, e := range tl {
			if last.role == RoleUser || e.Type == EventSilence || e.Type == EventSleep {
				end = max(end, e.At+e.Duration)
			}
		}
		if end-last.end >= sameInstant {
			add(Pause{Start: last.end, End: end, Turn: last.turn, After: last.role})
		}
	}
	// Pauses are found in time order, and turns only grow with time, but
	// a pause's turn is that of the speech before it, which may be an
	// earlier turn's late speech: keep PerTurn in turn order.
	slices.SortStableFunc(p.PerTurn, func(a, b TurnDuration) int { return a.Turn - b.Turn })
	for i := 1; i < len(p.PerTurn); i++ {
		if p.PerTurn[i].Turn == p.PerTurn[i-1].Turn {
			p.PerTurn[i-1].Duration += p.PerTurn[i].Duration
			p.PerTurn = slices.Delete(p.PerTurn, i, i+1)
			i--
		}
	}
	return p
}

// turnMetrics gathers the per-turn measurements.
func turnMetrics(st *State, tr []Message, words []int, tl []Event, ps PauseMetrics) []TurnMetrics {
	last := st.turn
	for _, e := range tl {
		last = max(last, e.Turn)
	}
	for _, m := range tr {
		last = max(last, m.Turn)
	}
	for _, n := range st.notes.turns {
		last = max(last, n.turn)
	}
	turns := make([]TurnMetrics, last+1)
	seen := make([]bool, last+1)
	get := func(turn int) *TurnMetrics {
		if turn < 0 || turn > last {
			return &TurnMetrics{} // no such turn: dropped
		}
		seen[turn] = true
		turns[turn].Turn = turn
		return &turns[turn]
	}
	for _, e := range tl {
		if e.Type == EventAgentStartSpeaking && e.Latency > 0 {
			if t := get(e.Turn); !t.HasLatency {
				t.Latency, t.HasLatency = e.Latency, true
			}
		}
	}
	for _, n := range st.notes.turns {
		t := get(n.turn)
		t.FirstEvent, t.HasFirstEvent = n.firstEvent, n.hasEvent
		t.TTFB, t.HasTTFB = n.firstAudio, n.hasAudio
		if n.timings != nil {
			p := *n.timings
			t.Parts = &p
		}
	}
	for _, d := range ps.PerTurn {
		get(d.Turn).DeadAir = d.Duration
	}
	for i, m := range tr {
		w := words[i]
		if w == 0 {
			continue
		}
		if m.Role == RoleUser {
			get(m.Turn).UserWords += w
		} else {
			get(m.Turn).AgentWords += w
		}
	}
	out := turns[:0]
	for i, t := range turns {
		if seen[i] {
			out = append(out, t)
		}
	}
	return out
}

// countWords counts the runs of non-space characters in s, as
// len(strings.Fields(s)) does, without allocating.
func countWords(s string) int {
	n, in := 0, false
	for i := 0; i < len(s); i++ {
		// ASCII, the usual text, byte by byte; the rest rune by rune.
		b := s[i]
		if b >= utf8.RuneSelf {
			return n + countWordsFrom(s[i:], in)
		}
		space := b == ' ' || b == '\t' || b == '\n' || b == '\v' || b == '\f' || b == '\r'
		if !space && !in {
			n++
		}
		in = !space
	}
	return n
}

// countWordsFrom counts the words of s as countWords does, s following
// a word's letter when in is set.
func countWordsFrom(s string, in bool) int {
	n := 0
	for _, r := range s {
		space := unicode.IsSpace(r)
		if !space && !in {
			n++
		}
		in = !space
	}
	return n
}

func speechMetrics(tr []Message, words []int, audio []span) SpeechMetrics {
	var s SpeechMetrics
	agentTurns := make([]int, 0, len(tr)) // the turns with agent words
	var wer WERMetrics
	worst := -1.0
	for i, m := range tr {
		w := words[i]
		switch m.Role {
		case RoleUser:
			if w > 0 {
				s.UserWords += w
				s.UserTurns++
			}
		case RoleAgent:
			if w > 0 && !m.AudioOnly {
				s.AgentWords += w
				agentTurns = append(agentTurns, m.Turn)
				if !m.Interrupted && m.End > m.Start {
					s.AgentSpeech += spoken(audio, m.Start, m.End)
					s.AgentRatedWords += w
				}
			}
			if h := m.Heard; h != nil {
				wer.Messages++
				wer.Errors = wer.Errors.plus(h.Errors)
				if r := h.Errors.Rate(); r > worst {
					worst, wer.Worst = r, m
				}
			}
		}
	}
	slices.Sort(agentTurns)
	s.AgentTurns = len(slices.Compact(agentTurns)) // each turn once
	if s.AgentTurns > 0 {
		s.AgentWordsPerTurn = float64(s.AgentWords) / float64(s.AgentTurns)
	}
	if s.AgentSpeech > 0 {
		s.AgentWPM = float64(s.AgentRatedWords) * float64(time.Minute) / float64(s.AgentSpeech)
	}
	if s.UserTurns > 0 {
		s.UserWordsPerTurn = float64(s.UserWords) / float64(s.UserTurns)
	}
	if wer.Messages > 0 {
		wer.Rate = wer.Errors.Rate()
		s.WER = &wer
	}
	return s
}
