package voicetest

import (
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
)

// Agent is the voice agent under test. Packages such as adapters implement
// it for in-process Go agents and for agents reached over a wire protocol.
//
// Connect opens one conversation. It is called once per scenario run; the
// runner closes the returned Conn when the run ends, whatever the outcome.
type Agent interface {
	Connect(ctx context.Context, s Session) (Conn, error)
}

// Session describes the conversation the runner is about to hold, for the
// agent adapter's use.
type Session struct {
	// Name is the scenario's name (the test's full name under Scenario).
	Name string
	// Rate is the sample rate of every pcm.Chunk exchanged through the Conn:
	// audio sent to the agent arrives at this rate, and audio the agent sends
	// back must be converted to it by the adapter.
	Rate int
	// Logf writes a line to the scenario's log (the test's under Scenario,
	// attributed to the test's line that called Scenario). It is never
	// nil. A test that connects an adapter by hand sets it with
	// TestLogf(t) rather than t.Logf, which would attribute each line to
	// the adapter's own code.
	Logf func(format string, args ...any)
	// Capture, when not nil, receives the raw wire exchange of the run as
	// JSON lines with times relative to the start of the session, for
	// debugging a failing agent. Adapters without a wire write nothing.
	Capture io.Writer
	// Clock, when not nil, is the conversation's virtual time, offered to
	// an in-process agent (a VirtualTimer) that runs outside a
	// testing/synctest bubble: under Run, or a scenario in a testing.B.
	// An agent that takes every time from it and keeps its protocol (see
	// Clock) declares Capabilities.SessionClock, and the conversation
	// then costs no wall time for its pauses. Nil means the system clock
	// (the bubble's, inside one).
	Clock Clock
}

// Conn is one open conversation with the agent under test.
//
// The runner calls the Send methods and Interrupt from one goroutine and
// Recv from one goroutine (possibly another); adapters must allow those two
// to run concurrently. A method that needs a capability the adapter lacks
// returns an *UnsupportedError.
type Conn interface {
	// Capabilities reports what the adapter supports. It must not change
	// during the conversation.
	Capabilities() Capabilities

	// SendAudio sends part of the user's speech, at Session.Rate. The runner
	// paces the chunks itself (in real time or as fast as the agent
	// accepts); the adapter converts them to the wire format.
	SendAudio(ctx context.Context, c pcm.Chunk) error
	// EndUtterance tells the agent that the user stopped speaking, where the
	// protocol has a way to say so (an input commit, a mark). Adapters whose
	// agent detects the end of speech itself return nil.
	EndUtterance(ctx context.Context) error
	// SendText sends a whole user message as text, for agents that take
	// text (Capabilities.Text).
	SendText(ctx context.Context, text string) error
	// SendDTMF sends key presses ("0"–"9", "*", "#", "A"–"D") as protocol
	// events, for agents whose protocol carries them (Capabilities.DTMF).
	SendDTMF(ctx context.Context, digits string) error
	// Interrupt cancels the agent's current response through the protocol's
	// own cancel (Capabilities.NativeInterrupt).
	Interrupt(ctx context.Context) error

	// Recv returns the agent's next event, waiting until one arrives or ctx
	// is done. A ctx that is done returns ctx.Err() and leaves the Conn
	// usable. Once the agent has hung up or the transport has closed, Recv
	// returns an *TransportClosedError (errors.Is ErrTransportClosed), after
	// any events that arrived before.
	Recv(ctx context.Context) (AgentEvent, error)

	// Close ends the conversation and releases every goroutine and socket
	// the Conn holds. It is safe to call more than once. An error that
	// matches ErrLimit (the agent went past one of the adapter's bounds)
	// fails the scenario, even when no step read it from Recv; other
	// errors are logged.
	Close() error
}

// Capabilities declares what an adapter supports, honestly: a step that
// needs a missing capability fails with an *UnsupportedError naming the
// adapter, the capability and the alternative, never a silent downgrade.
type Capabilities struct {
	// Adapter names the adapter in errors and reports, e.g. "twilio".
	Adapter string

	// Audio reports that the agent takes user speech as audio.
	Audio bool
	// Text reports that the agent takes user messages as text.
	Text bool
	// InputFormat and OutputFormat describe the wire audio, for reports.
	InputFormat, OutputFormat AudioFormat

	// StreamingTranscripts reports that the agent sends the transcript of
	// its own speech (AgentTranscript events), so no STT is needed.
	StreamingTranscripts bool
	// TranscriptAhead reports that the agent's transcript runs ahead of
	// its audio: its AgentTranscript text arrives as it is generated or as
	// a whole reply, before the audio that says it has played (OpenAI
	// Realtime, ElevenLabs, LayerCode). AfterWords then does not count the
	// words received but estimates the words heard: the text's words
	// spread evenly over the turn's audio, whose length is taken to be the
	// audio received so far or, while the turn is not marked over
	// (AgentTurnEnd), at least the words' length at
	// Config.WordsPerMinute, whichever is longer. In-process agents that
	// send text in step with audio leave it false.
	TranscriptAhead bool
	// NativeVAD reports that the agent detects the end of user speech
	// itself.
	NativeVAD bool
	// DTMF reports that SendDTMF carries key presses as protocol events.
	DTMF bool
	// NativeInterrupt reports that Interrupt cancels the agent's response
	// through the protocol. Without it, barge-in is overlapping audio.
	NativeInterrupt bool
	// TurnEnd reports that the agent marks the end of each of its turns
	// with an AgentTurnEnd event, so the runner need not wait for tail
	// silence.
	TurnEnd bool
	// ToolEvents reports that the agent exposes its tool calls and results.
	ToolEvents bool
	// VirtualTime reports that the agent runs in process, blocks only on
	// channels and timers, and so can run on virtual time
	// (testing/synctest). Remote agents leave it false.
	VirtualTime bool
	// SessionClock reports that the agent takes every time from
	// Session.Clock when it is given one, and keeps the Clock's protocol,
	// so that the runner may run it on that virtual clock outside a
	// synctest bubble. Without it the runner keeps to the real clock.
	SessionClock bool
}

// AudioFormat names an audio encoding and its sample rate on the wire.
type AudioFormat struct {
	// Encoding is "pcm16", "mulaw", "alaw" or another adapter-defined name.
	Encoding string
	// Rate is the sample rate in samples per second.
	Rate int
}

// EventKind says what an AgentEvent carries.
type EventKind uint8

// The kinds of AgentEvent.
const (
	// AgentAudio carries agent speech in Audio, at Session.Rate.
	AgentAudio EventKind = iota + 1
	// AgentTranscript carries text of the agent's speech in Text: a delta,
	// or the whole utterance when Final is set. A text-only agent sends its
	// speech as AgentTranscript events with Speech set to how long the text
	// takes to say.
	AgentTranscript
	// UserTranscript carries the agent's own transcription of the user's
	// speech in Text (Final marks the final version), where the protocol
	// exposes it.
	UserTranscript
	// AgentToolCall carries a tool call the agent made, in Tool.
	AgentToolCall
	// AgentToolResult carries the result of a tool call, in Tool.
	AgentToolResult
	// AgentData carries a structured payload the agent sent (UI data,
	// custom events), in Data, with its name in Text when it has one.
	AgentData
	// AgentTurnEnd marks the end of the agent's turn, where the protocol
	// says so.
	AgentTurnEnd
	// AgentInterrupted reports that the agent stopped its response because
	// of a barge-in (Twilio clear, an interruption event).
	AgentInterrupted
	// AgentHangUp reports that the agent ended the call. Reason says why
	// when the protocol tells. No events follow it.
	AgentHangUp
	// AgentLog carries a log line from the agent in Text, for the report.
	AgentLog
	// AgentTimings carries, in Timings, the parts of the agent's response
	// time that the agent measured itself (speech to text, the model,
	// tools, text to speech), for the turn in progress. Several in one
	// turn add up. It is a measurement, not a conversation item: it
	// appears in Metrics, not in the timeline.
	AgentTimings
	// AgentHandoff reports that the conversation passed to another agent
	// (a LiveKit-style handoff): Text names the agent that takes over,
	// Data may carry a JSON object with details ({"from": "greeter"}).
	// See HandoffEvent.
	AgentHandoff
)

// String returns the kind's name as it appears in timelines.
func (k EventKind) String() string {
	switch k {
	case AgentAudio:
		return "agent_audio"
	case AgentTranscript:
		return "agent_transcript"
	case UserTranscript:
		return "user_transcript"
	case AgentToolCall:
		return "tool_call"
	case AgentToolResult:
		return "tool_result"
	case AgentData:
		return "data"
	case AgentTurnEnd:
		return "agent_turn_end"
	case AgentInterrupted:
		return "agent_interrupted"
	case AgentHangUp:
		return "agent_hang_up"
	case AgentLog:
		return "agent_log"
	case AgentTimings:
		return "agent_timings"
	case AgentHandoff:
		return "handoff"
	}
	return "unknown"
}

// AgentEvent is one thing the agent under test sent. Which fields are set
// depends on Kind.
type AgentEvent struct {
	Kind EventKind
	// Audio is agent speech (AgentAudio). The runner keeps its samples
	// as they are, in the Recording, for as long as the Result lives: an
	// adapter hands over samples of their own, never a view of a buffer
	// it reuses for the next frame.
	Audio pcm.Chunk
	// Text is a transcript (AgentTranscript, UserTranscript), a payload
	// name (AgentData), a log line (AgentLog), a hang-up reason
	// (AgentHangUp) or the agent taking over (AgentHandoff).
	Text string
	// Final marks a complete transcript rather than a delta.
	Final bool
	// BeforeSpeech marks an event (a tool call or result, a data
	// payload) that the agent made before it began the speech the runner
	// is receiving, but that reached the adapter after that speech's first
	// audio: a protocol that carries events and audio on separate
	// channels (LiveKit's data channel and audio track) does not order
	// the two. The runner places it at that speech's start, ahead of the
	// message, instead of where it arrived; the speech's own times, and
	// so the latency, are those of its arrival. Without speech in
	// progress it changes nothing. An adapter sets it only on the
	// agent's own evidence (a creation time the protocol carries), never
	// to reorder events by guess.
	BeforeSpeech bool
	// Speech is how long the text of an AgentTranscript takes to say, for
	// text-only agents that send no audio; zero otherwise.
	Speech time.Duration
	// Tool is the call (AgentToolCall) or its result (AgentToolResult).
	Tool *ToolCall
	// Data is a structured payload (AgentData), or the details of a
	// handoff (AgentHandoff).
	Data json.RawMessage
	// Timings are the parts of the response time the agent measured
	// (AgentTimings).
	Timings *Timings
}

// ToolCall is a tool call made by the agent under test, or its result.
type ToolCall struct {
	// ID ties a result to its call, when the protocol has one.
	ID string `json:"id,omitempty"`
	// Name is the tool's name.
	Name string `json:"name"`
	// Arguments are the call's arguments as a JSON object.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Result is the tool's output (AgentToolResult only).
	Result json.RawMessage `json:"result,omitempty"`
	// IsError marks a result that reports a failure.
	IsError bool `json:"is_error,omitempty"`
}
