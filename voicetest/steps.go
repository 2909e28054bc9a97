package voicetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/voicetest-go/voicetest/pcm"
)

// Step is one step of a scenario's script. Build steps with the functions
// of this package (UserSays, AgentTurn, Interrupt, ...); the zero Step is
// invalid.
type Step struct {
	name string
	// says is the text of a UserSays without options, whose name String
	// makes when it is asked for (a report, an error): most never are.
	says string
	run  func(ctx context.Context, r *runner) error
	// err is a construction error (a bad argument), reported when the
	// scenario starts, before connecting.
	err error
	// blind marks a step that reads nothing the agent said before it
	// (a fixed utterance, a wait), so it need not wait for transcriptions
	// of earlier turns still running.
	blind bool
	// line marks a step that needs the line: it speaks to the agent or
	// waits for it to speak. After the agent hangs up such a step fails
	// (a *HangUpError); after the user hangs up or the judge decides it
	// is not run, and the Result says so. Steps without it (Check,
	// Checkpoint, Verdict, ExpectHangUp, Sleep) run on the final state.
	line bool
	// hangUp marks ExpectHangUp: no line step may follow it.
	hangUp bool
	// drains marks AgentTurn: after a hang-up it still records the last
	// words the agent said before hanging up, when no step has yet.
	drains bool
}

// String describes the step as reports show it, e.g. `UserSays("Hi")`.
func (s Step) String() string {
	if s.name == "" {
		if s.says != "" {
			return "UserSays(" + quote(s.says) + ")"
		}
		return "Step{}"
	}
	return s.name
}

// StepError reports the step a scenario failed in.
type StepError struct {
	// Index is the step's 1-based position in the script.
	Index int
	// Step describes the step.
	Step string
	// Err is what went wrong.
	Err error
}

// Error says which step failed and why.
func (e *StepError) Error() string {
	return fmt.Sprintf("step %d %s: %v", e.Index, e.Step, e.Err)
}

// Unwrap returns the underlying error.
func (e *StepError) Unwrap() error { return e.Err }

// ErrFailed matches the error of a Fail step, of a failed Checkpoint and
// of a failed final verdict, with errors.Is.
var ErrFailed = errors.New("voicetest: scenario failed")

func quote(s string) string {
	const max = 40
	if utf8.RuneCountInString(s) > max {
		r := []rune(s)
		s = string(r[:max-1]) + "…"
	}
	return strconv.Quote(s) // as %q: no copy of s into an interface
}

// UserSays makes the user say text: spoken through Config.UserVoice to an
// audio agent, sent as text to a text-only agent. Options change how
// this utterance is spoken (WithVoice, WithSpeed, WithEffects,
// WithInstructions). For recorded speech use UserAudio.
func UserSays(text string, opts ...SayOption) Step {
	s := Step{blind: true, line: true}
	if len(opts) == 0 {
		// The common case, with fewer allocations: the step captures
		// only the text, and its name is made when asked for.
		s.says = text
		s.run = func(ctx context.Context, r *runner) error {
			return r.userTurn(ctx, Utterance{Text: text}, false)
		}
	} else {
		u := Utterance{Text: text}
		names, err := sayOptions(&u, opts)
		s.name, s.err = "UserSays("+quote(text)+names+")", err
		s.run = func(ctx context.Context, r *runner) error {
			return r.userTurn(ctx, u, false)
		}
	}
	if strings.TrimSpace(text) == "" {
		s.err = errors.New("UserSays needs text; use Silence or Sleep for a pause")
	}
	return s
}

// UserTurn asks Config.User for the user's next utterance and says it.
// A user that is Done hangs up, which ends the script. Under
// Config.TurnTaking the user first waits for the agent to be done.
func UserTurn() Step {
	return Step{name: "UserTurn()", line: true, run: func(ctx context.Context, r *runner) error {
		u, err := r.askUserTurn(ctx)
		if err != nil {
			return err
		}
		return r.userTurn(ctx, u, false)
	}}
}

// UserAudio plays recorded speech as the user's next utterance: the
// path of an audio file (a WAV file of any rate and channels, or MP3,
// Ogg, FLAC and anything else ffmpeg reads; see pcm.ReadAudioFile), a
// pcm.Chunk, or an Audio (AudioFile, AudioChunk, MuLawAudio, ALawAudio,
// with Says for its known text). The transcript shows its text: the
// known text, else what Config.UserSTT (or Config.AgentSTT) hears in it,
// else "(audio only)". Config.Effects and Config.Background apply to it
// as to spoken text.
func UserAudio[S AudioSource](src S) Step {
	a := audioOf(src)
	s := Step{name: "UserAudio(" + a.String() + ")", blind: true, line: true, err: a.validate()}
	if a.kind == audioFile {
		s.name = "UserAudio(" + quote(a.path) + ")"
		if a.text != "" {
			s.name = "UserAudio(" + a.String() + ")"
		}
	}
	s.run = func(ctx context.Context, r *runner) error {
		u, err := r.recorded(ctx, a)
		if err != nil {
			return fmt.Errorf("UserAudio: %w", err)
		}
		return r.userTurn(ctx, u, false)
	}
	return s
}

// AgentTurn waits for the agent's reply and records it: it fails with a
// *TimeoutError (PhaseFirstChunk) if the agent does not start within
// Timeouts.FirstChunk, then drains the agent's events until the
// protocol's turn end, Timeouts.TailSilence of quiet after its audio has
// played, or Timeouts.MaxTurnAudio of audio. Agent events that arrived
// earlier (a greeting, late audio) belong to this turn.
//
// An agent's silence is not a reply: a turn that ends (by the protocol's
// turn end) with no agent speech at all fails with an error wrapping
// ErrSilentTurn, unless the step is AgentTurn(AllowSilence()). A turn
// in which the agent hangs up without a word is not silent: the hang-up
// is its outcome.
func AgentTurn(opts ...TurnOption) Step {
	if len(opts) == 0 {
		// The common case: nothing to capture, nothing to allocate.
		return Step{name: "AgentTurn()", blind: true, line: true, drains: true, run: plainAgentTurn}
	}
	var o turnOptions
	names := make([]string, 0, len(opts))
	for _, opt := range opts {
		if opt.apply == nil {
			return Step{name: "AgentTurn(?)", line: true, err: errors.New("AgentTurn: a zero TurnOption; build options with AllowSilence"),
				run: func(context.Context, *runner) error { return nil }}
		}
		opt.apply(&o)
		names = append(names, opt.name)
	}
	return Step{name: "AgentTurn(" + strings.Join(names, ", ") + ")", blind: true, line: true, drains: true, run: func(ctx context.Context, r *runner) error {
		return r.agentTurn(ctx, turnOptions{allowSilence: o.allowSilence})
	}}
}

// plainAgentTurn runs an AgentTurn without options.
func plainAgentTurn(ctx context.Context, r *runner) error {
	return r.agentTurn(ctx, turnOptions{})
}

// TurnOption changes how an AgentTurn treats the agent's turn. Build it
// with AllowSilence.
type TurnOption struct {
	name  string
	apply func(*turnOptions)
}

// turnOptions are what an agent turn accepts.
type turnOptions struct {
	// allowSilence makes a turn with no agent speech no error.
	allowSilence bool
	// greeting waits Timeouts.Greeting, not FirstChunk, and makes no
	// greeting at all no error (Proceed's first turn).
	greeting bool
}

// AllowSilence makes an AgentTurn accept a turn in which the agent says
// nothing: the agent ends its turn (or, for adapters that do not mark
// turn ends, is quiet for Timeouts.TailSilence after it acted) without
// speech, for instance a turn with only a tool call. Without it such a
// turn fails with ErrSilentTurn. The agent must still act (speak, call
// a tool, end its turn) within Timeouts.FirstChunk.
func AllowSilence() TurnOption {
	return TurnOption{name: "AllowSilence()", apply: func(o *turnOptions) { o.allowSilence = true }}
}

// ErrSilentTurn matches, with errors.Is, the error of an AgentTurn whose
// turn ended with no agent speech (see AllowSilence).
var ErrSilentTurn = errors.New("voicetest: the agent's turn ended with no speech")

// ExpectHangUp says that the agent hangs up here, as the goal of the
// conversation: it passes when the agent has hung up (during an earlier
// step or now, after any last words, which are recorded as its turn),
// and fails with a *TimeoutError (PhaseHangUp) when the agent is still
// on the line Timeouts.FirstChunk after the agent's last act (speech, a
// tool call, a turn end). Only steps that do not need the line (Check,
// Checkpoint, Verdict, Sleep, Succeed, Fail, Inject, Do) may follow it; a
// step that needs the line after it (UserSays, UserTurn, UserAudio,
// AgentTurn, Interrupt, Silence, DTMF, Proceed) is a script error that
// Run reports before the call starts.
//
// Without ExpectHangUp a hang-up is still the normal end of a call:
// steps that read the conversation run on the final state, and the next
// step that needs the line fails with a *HangUpError.
func ExpectHangUp() Step {
	return Step{name: "ExpectHangUp()", hangUp: true, blind: true, run: func(ctx context.Context, r *runner) error {
		return r.expectHangUp(ctx)
	}}
}

// InterruptWhen says when an Interrupt barges in. Build it with
// AfterWords, AfterSpeechStarts or After.
type InterruptWhen struct {
	words int
	after time.Duration
	kind  int
	err   error
}

const (
	whenSpeechStarts = iota
	whenWords
	whenAfter
)

// String describes the condition as the step function that built it.
func (w InterruptWhen) String() string {
	switch w.kind {
	case whenWords:
		return fmt.Sprintf("AfterWords(%d)", w.words)
	case whenAfter:
		return fmt.Sprintf("After(%v)", w.after)
	}
	return "AfterSpeechStarts()"
}

// AfterWords barges in once the agent has said n words of its reply. The
// words are counted in the agent's streamed transcript; for an agent that
// streams no transcript, and for a text-only agent (whose text arrives
// before it is said), they are estimated from its speech time at
// Config.WordsPerMinute (150 by default, so 400 ms a word). For an adapter
// whose transcript runs ahead of its audio (Capabilities.TranscriptAhead:
// OpenAI Realtime, ElevenLabs, LayerCode) the words received are spread
// over the audio and counted as it plays, so the barge-in comes when the
// nth word has been heard, not when its text arrived.
func AfterWords(n int) InterruptWhen {
	w := InterruptWhen{kind: whenWords, words: n}
	if n <= 0 {
		w.err = fmt.Errorf("AfterWords(%d): the word count must be positive; use AfterSpeechStarts to barge in at once", n)
	}
	return w
}

// AfterSpeechStarts barges in as soon as the agent starts speaking.
func AfterSpeechStarts() InterruptWhen { return InterruptWhen{kind: whenSpeechStarts} }

// After barges in d after the agent starts speaking.
func After(d time.Duration) InterruptWhen {
	w := InterruptWhen{kind: whenAfter, after: d}
	if d < 0 {
		w.err = fmt.Errorf("After(%v): the delay must not be negative", d)
	}
	return w
}

// Interrupt barges in on the agent's reply: it waits (at most
// Timeouts.WaitForSpeech) for the agent to start speaking, then until
// when holds, and then says content. An adapter with NativeInterrupt gets
// Conn.Interrupt first (Realtime response.cancel, a protobuf Pipecat
// bot's InterruptionFrame, an in-process handler's cancel), which also
// discards agent audio still buffered for playback; otherwise (Twilio,
// ElevenLabs, LayerCode) the user's audio overlaps the agent's and the agent
// must hear it and stop (a Twilio bot then sends "clear", which the
// adapter reports as AgentInterrupted). The timeline records
// user_interrupt, the interrupted turn's agent_stop_speaking, and the
// interrupt response time (the user's barge-in to the agent stopping) on
// exactly one event: the agent_interrupted event when the agent reports
// that it stopped, otherwise that agent_stop_speaking (see Event.Latency;
// Result.Latency.InterruptResponse lists it either way).
//
// content is text to speak (a string, through Config.UserVoice, with
// opts as for UserSays) or recorded speech (a pcm.Chunk or an Audio, as
// for UserAudio; a string is always text, so play a file with
// AudioFile(path)).
func Interrupt[C Content](content C, when InterruptWhen, opts ...SayOption) Step {
	var u Utterance
	var a Audio
	recorded := false
	label := ""
	switch v := any(content).(type) {
	case pcm.Chunk:
		a, recorded = AudioChunk(v), true
	case Audio:
		a, recorded = v, true
	default:
		u.Text = fmt.Sprint(v)
		label = quote(u.Text)
	}
	if recorded {
		label = a.String()
	}
	names, err := sayOptions(&u, opts)
	s := Step{name: fmt.Sprintf("Interrupt(%s, %v%s)", label, when, names), blind: true, line: true, err: err}
	switch {
	case when.err != nil:
		s.err = when.err
	case recorded:
		if verr := a.validate(); verr != nil {
			s.err = fmt.Errorf("Interrupt: %w", verr)
		}
	case strings.TrimSpace(u.Text) == "":
		s.err = errors.New("Interrupt needs the text the user barges in with, or recorded audio (AudioFile, AudioChunk)")
	}
	s.run = func(ctx context.Context, r *runner) error {
		if !recorded {
			return r.interrupt(ctx, u, when)
		}
		ru, err := r.recorded(ctx, a)
		if err != nil {
			return fmt.Errorf("Interrupt: %w", err)
		}
		ru.Effects = u.Effects
		return r.interrupt(ctx, ru, when)
	}
	return s
}

// Silence sends d of silent audio to the agent, in 20 ms frames, as a
// caller who says nothing (the agent may re-prompt). For a text-only
// agent it waits d. Agent speech during it belongs to the next AgentTurn.
func Silence(d time.Duration) Step {
	s := Step{name: fmt.Sprintf("Silence(%v)", d), blind: true, line: true}
	if d <= 0 {
		s.err = fmt.Errorf("Silence(%v): the duration must be positive", d)
	}
	s.run = func(ctx context.Context, r *runner) error { return r.silence(ctx, d) }
	return s
}

// Sleep waits d without sending anything (no audio frames at all, unlike
// Silence). Agent speech during it belongs to the next AgentTurn.
func Sleep(d time.Duration) Step {
	s := Step{name: fmt.Sprintf("Sleep(%v)", d), blind: true}
	if d <= 0 {
		s.err = fmt.Errorf("Sleep(%v): the duration must be positive", d)
	}
	s.run = func(ctx context.Context, r *runner) error { return r.sleep(ctx, d) }
	return s
}

// DTMF presses keys ("0"–"9", "*", "#", "A"–"D"): as protocol events when
// the adapter has Capabilities.DTMF, else as in-band tones in the user's
// audio (pcm.GenerateDTMF: 100 ms tone, 50 ms gap per key, no
// EndUtterance after them). A text-only agent without DTMF fails with an
// *UnsupportedError.
func DTMF(digits string) Step {
	s := Step{name: "DTMF(" + quote(digits) + ")", blind: true, line: true}
	if digits == "" {
		s.err = errors.New("DTMF needs at least one key")
	}
	for _, c := range digits {
		if !strings.ContainsRune("0123456789*#ABCD", c) {
			s.err = fmt.Errorf("DTMF(%q): %q is not a key; use 0-9, *, # or A-D", digits, c)
			break
		}
	}
	s.run = func(ctx context.Context, r *runner) error { return r.dtmf(ctx, digits) }
	return s
}

// Checkpoint asks Config.Judge about criteria now: all pass → the script
// goes on; any fail → the scenario fails here; inconclusive → the script
// goes on and the result reports it.
func Checkpoint(criteria ...string) Step {
	s := Step{name: fmt.Sprintf("Checkpoint(%d criteria)", len(criteria))}
	if len(criteria) == 0 {
		s.err = errors.New("Checkpoint needs at least one criterion")
	}
	crit := append([]string(nil), criteria...)
	s.run = func(ctx context.Context, r *runner) error { return r.checkpoint(ctx, crit) }
	return s
}

// Verdict asks Config.Judge for its final verdict on its own criteria
// and ends the scenario with it: pass succeeds, fail or inconclusive does
// not.
func Verdict() Step {
	return Step{name: "Verdict()", run: func(ctx context.Context, r *runner) error {
		return r.finalVerdict(ctx)
	}}
}

// Proceed runs n automatic turns: the User speaks, the agent answers, and
// the judge (if any) is asked whether it can decide. n = 0 goes on until
// the judge decides, the user or agent hangs up, or Config.MaxTurns user
// turns have been taken; on the last allowed turn the judge must decide.
// Before the first user turn of the scenario it waits Timeouts.Greeting
// for an agent that speaks first. A User that implements Interrupter is
// asked after each of its utterances whether to barge in on the agent's
// reply; if so its next utterance interrupts the reply (as Interrupt with
// After does) and the agent's answer to it ends the turn, so that turn
// takes two user turns.
//
// Options add callbacks after each turn (OnTurn) and each step (OnStep)
// of the loop, and a stop condition (Until).
func Proceed(n int, opts ...ProceedOption) Step {
	var o proceedOptions
	name := fmt.Sprintf("Proceed(%d", n)
	var err error
	for _, opt := range opts {
		if opt.apply == nil {
			err = errors.New("Proceed: a zero ProceedOption; build options with OnTurn, OnStep or Until")
			continue
		}
		opt.apply(&o)
		name += ", " + opt.name
	}
	s := Step{name: name + ")", line: true, err: err}
	if n < 0 {
		s.err = fmt.Errorf("Proceed(%d): use a positive number of turns, or 0 for until the verdict or MaxTurns", n)
	}
	s.run = func(ctx context.Context, r *runner) error { return r.proceed(ctx, n, o) }
	return s
}

// Succeed ends the scenario as a success with reason.
func Succeed(reason string) Step {
	return Step{name: "Succeed(" + quote(reason) + ")", run: func(ctx context.Context, r *runner) error {
		r.decide(true, reason)
		r.stopped = r.stepName() + " ended the script"
		return nil
	}}
}

// Fail ends the scenario as a failure with reason.
func Fail(reason string) Step {
	return Step{name: "Fail(" + quote(reason) + ")", run: func(ctx context.Context, r *runner) error {
		return fmt.Errorf("%w: %s", ErrFailed, reason)
	}}
}

// Check runs fn on the conversation so far; an error fails the scenario
// with it (wrapped in a *StepError naming the step). fn gets a copy of the
// conversation and runs within Timeouts.Engine: one that does not return
// by then fails the scenario with a *TimeoutError (PhaseCheck). A panic in
// fn fails the scenario with the panic and its stack; t.FailNow (or
// runtime.Goexit) in fn ends the test's goroutine as it would had fn run
// on it.
func Check(fn func(*State) error) Step {
	s := Step{name: "Check()"}
	if fn == nil {
		s.err = errors.New("Check needs a function")
	}
	s.run = func(ctx context.Context, r *runner) error {
		st := r.snapshot()
		return r.call(ctx, r.engine("Check", PhaseCheck), func(context.Context) error { return fn(st) })
	}
	return s
}
