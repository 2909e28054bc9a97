package voicetest

import (
	"context"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
)

// User is the simulated caller. The personas package implements it with
// scripted lines, recorded audio and LLM-played personas.
//
// NextUtterance is asked for the user's next turn, with the conversation so
// far in st. It must not keep st after it returns.
type User interface {
	NextUtterance(ctx context.Context, st *State) (Utterance, error)
}

// Utterance is what the user does on one turn.
type Utterance struct {
	// Text is what the user says. With Audio unset, the runner speaks it
	// through the configured user TTS (or sends it as text to a text-only
	// agent).
	Text string
	// Audio, when set, is recorded speech to play instead of synthesising
	// Text; Text then holds its transcript, if known.
	Audio pcm.Chunk
	// Voice overrides the user TTS voice for this utterance.
	Voice string
	// Speed scales the user TTS speaking rate for this utterance
	// (SpeechRequest.Speed); 0 means the engine's default. It does not
	// apply to Audio.
	Speed float64
	// Effects apply to the user's audio after TTS (and after the cache):
	// noise, a telephone band, packet loss.
	Effects pcm.Effect
	// Instructions steer the TTS delivery of Text ("hesitant, elderly")
	// on engines that take them (SpeechRequest.Instructions).
	Instructions string
	// Wait asks the runner to let the agent keep talking for up to this
	// long before the user speaks (the agent said "one moment"). The
	// runner bounds it by its own wait limit. Under Config.TurnTaking a
	// Wait with nothing to say is a counted user_wait, after which the
	// User is asked again (see TurnTaking).
	Wait time.Duration
	// WaitReason says why the user waits, for the timeline's user_wait
	// event under Config.TurnTaking.
	WaitReason string
	// HangUp ends the call after Text (if any) is said.
	HangUp bool
	// Done reports that the user has nothing more to say: a scripted user
	// out of lines. The conversation ends as if the user hung up.
	Done bool
}

// Interrupter is implemented by Users that barge in on their own (an
// impatient caller). Proceed asks it before each agent turn, once the
// user's utterance is sent: when InterruptDecision returns true, Proceed
// asks the User for its next utterance (NextUtterance) and says it over
// the agent's reply, after the agent has spoken for after, as the step
// Interrupt(text, After(after)) would. It must not keep st after it
// returns.
type Interrupter interface {
	InterruptDecision(st *State) (interrupt bool, after time.Duration)
}

// UserFunc adapts a function to the User interface.
type UserFunc func(ctx context.Context, st *State) (Utterance, error)

// NextUtterance calls f.
func (f UserFunc) NextUtterance(ctx context.Context, st *State) (Utterance, error) {
	return f(ctx, st)
}
