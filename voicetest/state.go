package voicetest

import (
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// Role is a party to the conversation.
type Role string

// The conversation roles.
const (
	RoleUser  Role = "user"
	RoleAgent Role = "agent"
)

// Message is one utterance in the transcript.
type Message struct {
	// Turn is the user turn number the message belongs to (1-based; the
	// agent's greeting is turn 0).
	Turn int `json:"turn"`
	// Role is who spoke.
	Role Role `json:"role"`
	// Text is what was said ("" when unknown; see AudioOnly).
	Text string `json:"text"`
	// Start is the offset from the start of the scenario at which the
	// speech started.
	Start time.Duration `json:"start"`
	// End is the offset at which it ended.
	End time.Duration `json:"end"`
	// Interrupted marks agent speech cut short by a barge-in.
	Interrupted bool `json:"interrupted,omitempty"`
	// AudioOnly marks a message whose words are unknown: the agent sent
	// audio without a transcript and no Config.AgentSTT was set, or the
	// user played a recording without its text and no Config.UserSTT (or
	// AgentSTT) was set. Text is then empty and renderings show "(audio
	// only)".
	AudioOnly bool `json:"audio_only,omitempty"`
	// Latency is, on the first agent message of a turn, the time from the
	// end of the user's speech to the agent's first audio (or first spoken
	// text for text-only agents); zero when not measured.
	Latency time.Duration `json:"latency,omitempty"`
	// Injected marks a message put into the history by Inject, not said
	// on the line.
	Injected bool `json:"injected,omitempty"`
	// NothingHeard marks an agent message whose audio Config.AgentSTT
	// transcribed to no words at all (a mumble, noise, a language the
	// engine does not know): Text is empty and renderings show "(STT heard
	// nothing)", not silence.
	NothingHeard bool `json:"nothing_heard,omitempty"`
	// Heard is, under Config.MeasureAgentWER, what Config.AgentSTT heard
	// in the audio of an agent message whose text the agent sent (Text),
	// with the word errors between them; nil otherwise.
	Heard *Hearing `json:"heard,omitempty"`
}

// DisplayText returns the message's text as renderings show it:
// "(audio only)" for an agent message whose words are unknown, "(STT
// heard nothing)" for agent audio the STT found no words in, and
// "(silence)" for an empty message.
func (m Message) DisplayText() string {
	switch {
	case m.AudioOnly:
		return "(audio only)"
	case m.NothingHeard:
		return "(STT heard nothing)"
	case m.Text == "":
		return "(silence)"
	}
	return m.Text
}

// EventType names a timeline event.
type EventType string

// The timeline event types. Every event the runner records has one of
// these; Events() (the agent's conversation items) also uses EventMessage.
const (
	EventUserStartSpeaking  EventType = "user_start_speaking"
	EventUserStopSpeaking   EventType = "user_stop_speaking"
	EventAgentStartSpeaking EventType = "agent_start_speaking"
	EventAgentStopSpeaking  EventType = "agent_stop_speaking"
	EventUserInterrupt      EventType = "user_interrupt"
	EventAgentInterrupted   EventType = "agent_interrupted"
	EventToolCall           EventType = "tool_call"
	EventToolResult         EventType = "tool_result"
	EventData               EventType = "data"
	EventDTMF               EventType = "dtmf"
	EventSilence            EventType = "silence"
	EventSleep              EventType = "sleep"
	EventAgentHangUp        EventType = "agent_hang_up"
	EventUserHangUp         EventType = "user_hang_up"
	EventJudgeCheckpoint    EventType = "judge_checkpoint"
	EventVerdict            EventType = "verdict"
	// EventUserTranscript is the agent's own transcription of the user.
	EventUserTranscript EventType = "user_transcript"
	// EventAgentLog is a log line the agent sent.
	EventAgentLog EventType = "agent_log"
	// EventMaxTurnAudio marks an agent turn cut off by Timeouts.MaxTurnAudio.
	EventMaxTurnAudio EventType = "max_turn_audio"
	// EventHandoff marks the conversation passing to another agent: Text
	// names it, Data holds the handoff's details (see HandoffEvent).
	EventHandoff EventType = "handoff"
	// EventHistory is a message injected into the history (Inject).
	EventHistory EventType = "history"
	// EventMessage is a whole message; it appears in State.Events, not in
	// the timeline.
	EventMessage EventType = "message"
)

// Event is one entry in the timeline.
type Event struct {
	// At is the offset from the start of the scenario.
	At time.Duration `json:"at"`
	// Type says what happened.
	Type EventType `json:"type"`
	// Turn is the user turn number at the time (0 before the first).
	Turn int `json:"turn"`
	// Role is the party the event is about, when there is one.
	Role Role `json:"role,omitempty"`
	// Text is the event's text: what the user said when interrupting, the
	// DTMF keys, a tool's name, a data payload's name, a hang-up reason, a
	// judge's summary.
	Text string `json:"text,omitempty"`
	// Tool is the call or result of tool_call and tool_result events.
	Tool *ToolCall `json:"tool,omitempty"`
	// Data is the payload of data events.
	Data json.RawMessage `json:"data,omitempty"`
	// Latency is set on agent_start_speaking: first agent audio minus the
	// end of the user's audio. The interrupt response time of a barge-in
	// (the user's interrupt to the agent stopping) is on one event: the
	// agent_interrupted event when the agent reports that it stopped (the
	// interrupted turn's agent_stop_speaking then has none), otherwise the
	// interrupted turn's agent_stop_speaking.
	Latency time.Duration `json:"latency,omitempty"`
	// Duration is set on silence and sleep events.
	Duration time.Duration `json:"duration,omitempty"`
}

// State is the conversation so far, as steps, checks, users and judges see
// it. Its methods return copies that the caller may keep; the State itself
// must not be kept after the call it was passed to returns. Every call of
// one run gets the same *State (a copy of the runner's, refreshed before
// each call), so a User or Judge may key what it keeps of a conversation
// on the pointer (weakly: the personas package does).
type State struct {
	name        string
	description string
	transcript  []Message
	timeline    []Event
	// items are the agent's conversation items (messages, tool calls and
	// results, data), in order of arrival.
	items []Event
	turn  int

	// notes are the runner's measurements that the transcript and
	// timeline do not hold (metrics_record.go).
	notes notes
	// segs, when set, are the runner's recorded segments, at rate
	// (State.Recording).
	segs *[]Segment
	rate int

	// view is Config.DataView (dataview.go).
	view DataView
}

// Name returns the scenario's name.
func (s *State) Name() string { return s.name }

// Description returns the scenario's description (Config.Description).
func (s *State) Description() string { return s.description }

// Turn returns the number of user turns so far.
func (s *State) Turn() int { return s.turn }

// Transcript returns the messages so far in conversational order: by
// turn, then by start time within a turn (the greeting is turn 0; an agent
// reply cut off by a barge-in keeps the turn it started in, so it comes
// before the interrupting user message). The order does not depend on the
// timing mode: under PaceFast on the real clock the agent's speech keeps
// its playback times, which run ahead of the user's transfer times, so
// ordering by start time alone would list a later user turn before an
// earlier agent reply.
func (s *State) Transcript() []Message {
	out := slices.Clone(s.transcript)
	sortMessages(out)
	return out
}

// ordered returns what Transcript and Timeline return, without their
// copies when s's slices are in that order already (a finished run's
// State is): for readers that do not modify them.
func (s *State) ordered() ([]Message, []Event) {
	tr, tl := s.transcript, s.timeline
	if !messagesSorted(tr) {
		tr = s.Transcript()
	}
	if !eventsSorted(tl) {
		tl = s.Timeline()
	}
	return tr, tl
}

func cmpMessages(a, b Message) int {
	if a.Turn != b.Turn {
		return a.Turn - b.Turn
	}
	return cmpDur(a.Start, b.Start)
}

func cmpEvents(a, b Event) int { return cmpDur(a.At, b.At) }

// sortMessages puts a transcript in the order of State.Transcript.
func sortMessages(m []Message) {
	if !messagesSorted(m) {
		slices.SortStableFunc(m, cmpMessages)
	}
}

// sortEvents puts events in the order of State.Timeline.
func sortEvents(e []Event) {
	if !eventsSorted(e) {
		slices.SortStableFunc(e, cmpEvents)
	}
}

// messagesSorted is slices.IsSortedFunc(m, cmpMessages) without copying
// the messages for each comparison: a run's transcript is most often in
// order already, and a stable sort of a sorted slice changes nothing.
func messagesSorted(m []Message) bool {
	for i := 1; i < len(m); i++ {
		if a, b := &m[i-1], &m[i]; a.Turn > b.Turn || a.Turn == b.Turn && a.Start > b.Start {
			return false
		}
	}
	return true
}

// eventsSorted is slices.IsSortedFunc(e, cmpEvents) without copying the
// events for each comparison (see messagesSorted).
func eventsSorted(e []Event) bool {
	for i := 1; i < len(e); i++ {
		if e[i].At < e[i-1].At {
			return false
		}
	}
	return true
}

// Timeline returns the events so far, ordered by time. While the
// scenario runs, events at the same time keep the order they were
// recorded in; in a Result's State (as in Result.Timeline), events at one
// instant are in a fixed order, by turn and then in the order a turn
// unfolds (the agent stops before the user barges in, the user speaks
// before the agent answers), whichever goroutine recorded its event
// first, so that a timeline reads the same on every run.
func (s *State) Timeline() []Event {
	out := slices.Clone(s.timeline)
	sortEvents(out)
	return out
}

// Events returns the agent's conversation items in order: its messages
// (Type EventMessage, Role RoleAgent), tool calls, tool results, data
// payloads and handoffs. User messages are not included; see Transcript.
func (s *State) Events() []Event {
	out := slices.Clone(s.items)
	sortEvents(out)
	return out
}

// LastMessage returns the last message by role and true, or false when
// that role has said nothing yet.
func (s *State) LastMessage(role Role) (Message, bool) {
	tr := s.Transcript()
	for i := len(tr) - 1; i >= 0; i-- {
		if tr[i].Role == role {
			return tr[i], true
		}
	}
	return Message{}, false
}

// LastAgentText returns the text of the agent's last message, or "" when
// it has said nothing (or only audio with no transcript).
func (s *State) LastAgentText() string {
	m, _ := s.LastMessage(RoleAgent)
	return m.Text
}

// AgentText returns everything the agent said, its messages joined by
// newlines.
func (s *State) AgentText() string {
	var parts []string
	for _, m := range s.Transcript() {
		if m.Role == RoleAgent && m.Text != "" {
			parts = append(parts, m.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// ToolCalls returns the tool calls the agent made, oldest first.
func (s *State) ToolCalls() []ToolCall {
	var out []ToolCall
	for _, e := range s.Events() {
		if e.Type == EventToolCall && e.Tool != nil {
			out = append(out, *e.Tool)
		}
	}
	return out
}

// HasToolCall reports whether the agent called the named tool.
func (s *State) HasToolCall(name string) bool {
	for _, c := range s.ToolCalls() {
		if c.Name == name {
			return true
		}
	}
	return false
}

// LastToolCall returns the agent's last tool call and true, or false when
// it made none.
func (s *State) LastToolCall() (ToolCall, bool) {
	calls := s.ToolCalls()
	if len(calls) == 0 {
		return ToolCall{}, false
	}
	return calls[len(calls)-1], true
}

// clone returns a deep enough copy of s for a Result: the slices are
// copied, their elements shared.
// own returns s as the State of a finished run's Result, without
// copying what the runner recorded: the transcript, timeline and items
// are put in order in place (the orders of Transcript, Timeline and
// Events), and the notes are s's own. Only for a runner that
// records nothing more into s (the callees' snapshots have copies of
// these slices). The segments, which a callee's snapshot shares, are
// copied when shared is set (a callee was left running, and may still
// read them), else put in order in place too.
func (s *State) own(shared bool) *State {
	c := *s
	sortMessages(c.transcript)
	sortEvents(c.timeline)
	sortEvents(c.items)
	if shared || s.segs == nil {
		c.segs = s.recordedSegments()
	} else {
		// A header of its own: s.segs points into the runner, which
		// the Result must not keep alive.
		segs := *s.segs
		sortSegments(segs)
		c.segs = &segs
	}
	return &c
}

func cmpDur(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
