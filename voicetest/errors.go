package voicetest

import (
	"errors"
	"fmt"
	"time"
)

// ErrTimeout matches every *TimeoutError with errors.Is.
var ErrTimeout = errors.New("voicetest: timeout")

// ErrTransportClosed matches every *TransportClosedError with errors.Is.
var ErrTransportClosed = errors.New("voicetest: transport closed")

// ErrUnsupported matches every *UnsupportedError with errors.Is.
var ErrUnsupported = errors.New("voicetest: unsupported capability")

// Phase names the part of a conversation a timeout happened in.
type Phase string

// The phases a TimeoutError can name. PhaseCheck, PhaseEffects and
// PhaseClose name calls into a Check's function, audio effects and the
// adapter's Close; PhaseScenario the whole conversation
// (Timeouts.MaxDuration).
const (
	PhaseConnect     Phase = "connect"
	PhaseFirstChunk  Phase = "first agent audio"
	PhaseTurn        Phase = "agent turn"
	PhaseWaitSpeech  Phase = "wait for agent speech"
	PhaseSend        Phase = "send user audio"
	PhaseUser        Phase = "user utterance"
	PhaseSynthesize  Phase = "user speech synthesis"
	PhaseTranscribe  Phase = "agent speech transcription"
	PhaseJudge       Phase = "judge"
	PhaseInterrupted Phase = "interrupt response"
	PhaseHangUp      Phase = "agent hang-up"
	PhaseCheck       Phase = "check"
	PhaseEffects     Phase = "user audio effects"
	PhaseClose       Phase = "close"
	PhaseScenario    Phase = "scenario"
)

// TimeoutError reports that the agent (or an engine) did not act within a
// configured time. It names the phase, the timeout and the turn.
type TimeoutError struct {
	Phase   Phase
	Timeout time.Duration
	// Callee names the user code or adapter method that did not return
	// in time ("Config.Judge", "Check", "the twilio adapter's SendAudio"),
	// or is empty when the wait was for the agent itself.
	Callee string
	// Turn is the user turn number (1-based) the timeout happened in; 0
	// before the first user turn.
	Turn int
	// Hint says what to change, e.g. which Config field sets the timeout.
	Hint string
}

func (e *TimeoutError) Error() string {
	msg := fmt.Sprintf("voicetest: timeout in phase %q after %v (turn %d)", e.Phase, e.Timeout, e.Turn)
	if e.Callee != "" {
		msg += " waiting for " + e.Callee
	}
	if e.Hint != "" {
		msg += ": " + e.Hint
	}
	return msg
}

// Is reports whether target is ErrTimeout.
func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

// TransportClosedError reports that the connection to the agent closed.
type TransportClosedError struct {
	// Adapter names the adapter.
	Adapter string
	// Err is the underlying cause, nil for a clean close.
	Err error
}

func (e *TransportClosedError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("voicetest: %s transport closed", e.Adapter)
	}
	return fmt.Sprintf("voicetest: %s transport closed: %v", e.Adapter, e.Err)
}

// Unwrap returns the underlying cause.
func (e *TransportClosedError) Unwrap() error { return e.Err }

// Is reports whether target is ErrTransportClosed.
func (e *TransportClosedError) Is(target error) bool { return target == ErrTransportClosed }

// UnsupportedError reports that a step needs a capability the adapter lacks.
type UnsupportedError struct {
	// Adapter names the adapter, Capability what it lacks.
	Adapter, Capability string
	// Alternative says what to do instead.
	Alternative string
}

func (e *UnsupportedError) Error() string {
	msg := fmt.Sprintf("voicetest: adapter %q does not support %s", e.Adapter, e.Capability)
	if e.Alternative != "" {
		msg += "; " + e.Alternative
	}
	return msg
}

// Is reports whether target is ErrUnsupported.
func (e *UnsupportedError) Is(target error) bool { return target == ErrUnsupported }

// ErrHungUp matches every *HangUpError with errors.Is.
var ErrHungUp = errors.New("voicetest: the agent hung up")

// HangUpError reports a step that needs the line (UserSays, AgentTurn,
// Silence, ...) after the agent hung up. The scenario fails with it,
// wrapped in a *StepError naming that step, unless the script says the
// hang-up is expected there with ExpectHangUp.
type HangUpError struct {
	// At is when the agent hung up, from the start of the scenario.
	At time.Duration
	// Reason is why, when the protocol says (empty otherwise).
	Reason string
	// Turn is the user turn the hang-up happened in.
	Turn int
	// Step is the step during which the agent hung up, as "step N
	// Name()".
	Step string
}

func (e *HangUpError) Error() string {
	why := ""
	if e.Reason != "" {
		why = fmt.Sprintf(" (%q)", e.Reason)
	}
	during := ""
	if e.Step != "" {
		during = " during " + e.Step
	}
	fix := "put voicetest.ExpectHangUp() where the agent hangs up"
	if e.Step != "" {
		fix = "put voicetest.ExpectHangUp() after " + e.Step
	}
	return fmt.Sprintf("voicetest: the agent hung up at %s%s%s (turn %d), so this step has no line to use; if the hang-up is expected there, %s (steps that only read the conversation still run after it)",
		fmtOffset(e.At), why, during, e.Turn, fix)
}

// Is reports whether target is ErrHungUp.
func (e *HangUpError) Is(target error) bool { return target == ErrHungUp }
