package voicetest

import (
	"encoding/json"
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
	Turn int    `json:"turn"`
	Role Role   `json:"role"`
	Text string `json:"text"`
	// Start and End are offsets from the start of the scenario.
	Start time.Duration `json:"start"`
	End   time.Duration `json:"end"`
	// Interrupted marks agent speech cut short by a barge-in.
	Interrupted bool `json:"interrupted,omitempty"`
}

// EventType names a timeline event.
type EventType string

// Event is one entry in the timeline.
type Event struct {
	// At is the offset from the start of the scenario.
	At   time.Duration   `json:"at"`
	Type EventType       `json:"type"`
	Turn int             `json:"turn"`
	Text string          `json:"text,omitempty"`
	Tool *ToolCall       `json:"tool,omitempty"`
	Data json.RawMessage `json:"data,omitempty"`
	// Latency is set on agent_start_speaking: first agent audio minus the
	// end of the user's audio.
	Latency time.Duration `json:"latency,omitempty"`
}

// State is the conversation so far, as steps, checks, users and judges see
// it.
type State struct {
	transcript []Message
	timeline   []Event
}

// Transcript returns the messages so far, oldest first.
func (s *State) Transcript() []Message { return s.transcript }

// Timeline returns the events so far, oldest first.
func (s *State) Timeline() []Event { return s.timeline }
