package handler

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/voicetest-go/voicetest/internal/inproc"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// Func is an in-process voice agent written as an event handler, in
// the style of VoiceRun agent functions: it is called once per input event,
// one event at a time, and answers through the Call (Say, Play, ToolCall,
// HangUp …). The outputs of one call are emitted in the order it makes them.
//
// Turn ends: when a call returns and its speech has been spoken, the Conn
// emits AgentTurnEnd if the call spoke, or if it answered the user
// (TextEvent, DTMFEvent) and was not interrupted — an answer of silence is
// still an answer. A StartEvent call that says nothing (an agent that does
// not greet) ends no turn, nor does a call for an event of the agent's own
// (TimeoutEvent, CustomEvent, InterruptEvent) that says nothing,
// and speech cut short by the user ends with AgentInterrupted instead, so
// that the runner's next AgentTurn waits for the reply to the user's
// barge-in.
//
// ctx is cancelled when the conversation closes. A returned error ends the
// conversation: Recv reports it as an *Error. Returning an error that
// wraps ErrInterrupted or ErrCallEnded (what Say returns after a barge-in or a
// hang-up) is not a failure, so `return c.Say(...)` is always correct.
type Func func(ctx context.Context, ev Event, c *Call) error

// TaskFunc is a background task started with Call.Go. It gets its own view of
// the conversation, c, whose outputs follow the ordering rule documented on
// Call.Go. ctx is cancelled when the conversation closes.
type TaskFunc func(ctx context.Context, c *Call) error

// Event is an input event for a Func: one of StartEvent, TextEvent,
// TimeoutEvent, DTMFEvent, CustomEvent, InterruptEvent, HistoryEvent or
// StopEvent. Use a type switch.
type Event interface {
	handlerEvent()
}

// StartEvent is the first event of every conversation, delivered as soon as
// the runner connects. Greet the caller here.
type StartEvent struct{}

// TextSource says where the text of a TextEvent came from.
type TextSource string

// The sources of a TextEvent.
const (
	// SourceText is a message sent as text (Conn.SendText, text mode).
	SourceText TextSource = "text"
	// SourceSpeech is user speech transcribed by the configured STT
	// (audio mode, after Conn.EndUtterance).
	SourceSpeech TextSource = "speech"
)

// TextEvent is something the user said or typed.
type TextEvent struct {
	Text   string
	Source TextSource
}

// TimeoutEvent reports user inactivity (see WithInactivityTimeout): the agent
// has been idle and the user silent for the configured timeout.
type TimeoutEvent struct {
	// Count is the number of consecutive timeouts since the user's last
	// input: 1 for the first, 2 for the next, and so on.
	Count int
	// SinceInput is the time since the user's last input, or since the
	// start of the conversation when the user has said nothing yet.
	SinceInput time.Duration
}

// DTMFEvent carries key presses sent with Conn.SendDTMF.
type DTMFEvent struct {
	Digits string
}

// CustomEvent is an event the agent sent itself with Call.Emit, typically from
// a background task ("payment_processed").
type CustomEvent struct {
	Name string
	Data any
}

// InterruptEvent reports that the user barged in (Conn.Interrupt, or in
// audio mode user speech arriving while the agent speaks) and the agent's
// speech was cut short. It is delivered after the handler call that was
// speaking returns.
type InterruptEvent struct {
	// Text is the text whose speech was cut short; empty when the agent was
	// thinking rather than speaking, or playing audio.
	Text string
	// Played is how much of that speech had been played.
	Played time.Duration
	// Task names the background task that was speaking, if it was one.
	Task string
}

// HistoryEvent is a message the test put into the conversation's history
// as if it had been said (voicetest.Inject): add it to whatever context
// the agent keeps (an LLM's messages). It is not user input: a call that
// handles it and says nothing ends no turn.
type HistoryEvent struct {
	// Role is voicetest.RoleUser or voicetest.RoleAgent.
	Role voicetest.Role
	// Text is what was "said".
	Text string
}

// StopEvent is the last event of every conversation, delivered when the
// runner closes the Conn (after a hang-up too). Outputs made while handling
// it are not sent anywhere (the caller is gone); they are written to the
// session log. Use it to release resources or record outcomes.
type StopEvent struct{}

func (StartEvent) handlerEvent()     {}
func (TextEvent) handlerEvent()      {}
func (TimeoutEvent) handlerEvent()   {}
func (DTMFEvent) handlerEvent()      {}
func (CustomEvent) handlerEvent()    {}
func (InterruptEvent) handlerEvent() {}
func (HistoryEvent) handlerEvent()   {}
func (StopEvent) handlerEvent()      {}

// eventName names ev in errors.
func eventName(ev Event) string {
	switch ev.(type) {
	case StartEvent:
		return "StartEvent"
	case TextEvent:
		return "TextEvent"
	case TimeoutEvent:
		return "TimeoutEvent"
	case DTMFEvent:
		return "DTMFEvent"
	case CustomEvent:
		return "CustomEvent"
	case InterruptEvent:
		return "InterruptEvent"
	case HistoryEvent:
		return "HistoryEvent"
	case StopEvent:
		return "StopEvent"
	}
	return fmt.Sprintf("%T", ev)
}

// ErrInterrupted is returned by Call.Say, Play and Silence when the user
// barged in and the speech was cut short (or, later in the same handler
// call, skipped). A handler may return it: that is not a failure.
var ErrInterrupted = errors.New("adapters: agent speech interrupted by the user")

// ErrCallEnded is returned by Call methods once the conversation is over:
// the agent hung up, the handler failed, or the runner closed the Conn. A
// handler may return it: that is not a failure.
var ErrCallEnded = errors.New("adapters: conversation has ended")

// Error reports that a handler call or a background task failed
// (returned an error or panicked). Recv returns it, and the conversation is
// over.
type Error struct {
	// Agent is the agent's name (WithName), "" if unnamed.
	Agent string
	// Event names the event being handled ("TextEvent"); empty for a task.
	Event string
	// Task names the background task that failed; empty for the handler.
	Task string
	// Err is what the handler returned, or a description of the panic.
	Err error
	// Stack is the goroutine stack at the panic; nil if it did not panic.
	Stack []byte
}

// Error describes the failure: the agent, the event or task, and the cause.
func (e *Error) Error() string {
	who := "handler agent"
	if e.Agent != "" {
		who = fmt.Sprintf("handler agent %q", e.Agent)
	}
	verb := "failed"
	if e.Stack != nil {
		verb = "panicked"
	}
	if e.Task != "" {
		return fmt.Sprintf("adapters: %s: background task %q %s: %v", who, e.Task, verb, e.Err)
	}
	return fmt.Sprintf("adapters: %s: handler %s handling %s: %v", who, verb, e.Event, e.Err)
}

// Unwrap returns the handler's error.
func (e *Error) Unwrap() error { return e.Err }

// PanicStack returns Stack, so that a scenario's failure report prints
// where the handler panicked.
func (e *Error) PanicStack() []byte { return e.Stack }

// Option configures New.
type Option func(*handlerConfig)

type handlerConfig struct {
	name        string
	tts         voicetest.TTS
	stt         voicetest.STT
	audio       bool
	voice       string
	timeout     time.Duration
	wpm         float64
	think       time.Duration
	stopTimeout time.Duration
	data        map[string]any
	vad         *pcm.VADConfig
	ab          abConfig
	errs        []error
}

// DefaultWordsPerMinute is the speaking rate of text mode: a Say of n words
// lasts n × 60 s / 150 = n × 400 ms.
const DefaultWordsPerMinute = 150

// DefaultStopTimeout bounds how long Close waits for the handler and the
// background tasks to return.
const DefaultStopTimeout = 5 * time.Second

// TextMode makes the agent exchange text only (the default): user messages
// arrive with Conn.SendText, and Say sends AgentTranscript events whose
// Speech is the time the words take at the speaking rate
// (WithWordsPerMinute). No TTS or STT is involved.
func TextMode() Option {
	return func(c *handlerConfig) { c.audio, c.tts, c.stt = false, nil, nil }
}

// AudioMode makes the agent speak and listen: Say synthesises through tts and
// sends AgentAudio in 20 ms frames, paced in real time (free on virtual
// time), with the transcript it knows as AgentTranscript deltas, one per word
// when the word has played (timed in proportion to its characters), and a
// Final AgentTranscript of the whole text when the audio ends — or of the
// words played, when the user cuts it short. User audio sent with
// Conn.SendAudio is buffered and, at Conn.EndUtterance, transcribed through
// stt into a TextEvent with Source "speech". User speech arriving while the
// agent speaks is a barge-in.
func AudioMode(tts voicetest.TTS, stt voicetest.STT) Option {
	return func(c *handlerConfig) {
		if tts == nil || stt == nil {
			c.errs = append(c.errs, errors.New("AudioMode needs a TTS and an STT, got nil (use fixtures.FakeTTS() and fixtures.FakeSTT() in tests)"))
			return
		}
		c.audio, c.tts, c.stt = true, tts, stt
	}
}

// vadLeadIn is how much audio before the detected start of speech
// WithVAD's transcription keeps (the detector places the start where the
// speech rises out of the noise, after its quiet onset).
const vadLeadIn = 100 * time.Millisecond

// WithVAD makes an audio-mode agent find the user's speech with pcm's
// energy voice activity detector (pcm.NewVAD with cfg), which learns the
// line's noise floor, instead of the default level threshold (any 20 ms
// louder than −44 dBFS is speech). Use it when the caller has a
// background (voicetest.Config.Background): a cafe's babble, played
// between turns, then does not barge in on the agent, while the caller's
// speech over it still does. Speech is reported once the detector has
// confirmed it (cfg.MinSpeech after it began), so a barge-in comes that
// much later than with the level threshold; and EndUtterance transcribes
// the speech the detector found (from 100 ms before it to 100 ms after
// it), not the background around it. Start from pcm.DefaultVADConfig() (for
// babble, a cafe, raise ThresholdDB to 12 and MinLevelDBFS above the
// background's level); an invalid cfg is reported by Connect.
func WithVAD(cfg pcm.VADConfig) Option {
	return func(c *handlerConfig) {
		if err := cfg.Validate(); err != nil {
			c.errs = append(c.errs, fmt.Errorf("WithVAD: %w", err))
			return
		}
		c.vad = &cfg
	}
}

// WithName names the agent in errors and logs.
func WithName(name string) Option {
	return func(c *handlerConfig) { c.name = name }
}

// WithVoice sets the TTS voice of Say in audio mode; SayOptions.Voice
// overrides it for one utterance.
func WithVoice(voice string) Option {
	return func(c *handlerConfig) { c.voice = voice }
}

// WithInactivityTimeout makes the agent send itself a TimeoutEvent when it
// has been idle (not handling an event, not speaking) and the user silent
// for d. The clock restarts when the agent finishes its answer, so a handler
// that re-prompts gets Count 1, 2, 3 … while the user stays silent. Zero
// (the default) disables it.
//
// When user input arrives at the very instant the timeout expires, the input
// wins and no TimeoutEvent is sent; a TimeoutEvent that does fire is
// delivered 1 ns after the deadline (the agent waits for that instant to be
// settled on virtual time). TimeoutEvent.SinceInput is exact.
func WithInactivityTimeout(d time.Duration) Option {
	return func(c *handlerConfig) {
		if d < 0 {
			c.errs = append(c.errs, fmt.Errorf("WithInactivityTimeout(%v): the timeout must not be negative (0 disables it)", d))
			return
		}
		c.timeout = d
	}
}

// WithWordsPerMinute sets the text-mode speaking rate (default 150): a Say
// of n words lasts n × 60 s / wpm. Words are runs of non-space characters.
func WithWordsPerMinute(wpm float64) Option {
	return func(c *handlerConfig) {
		if !(wpm > 0) || wpm > 10000 {
			c.errs = append(c.errs, fmt.Errorf("WithWordsPerMinute(%v): want a rate in (0, 10000] words per minute", wpm))
			return
		}
		c.wpm = wpm
	}
}

// WithThinkTime delays every handler call by d after its event is taken from
// the queue, as a model's latency would; on virtual time it costs nothing.
// A handler can also sleep itself, per event.
func WithThinkTime(d time.Duration) Option {
	return func(c *handlerConfig) {
		if d < 0 {
			c.errs = append(c.errs, fmt.Errorf("WithThinkTime(%v): the think time must not be negative", d))
			return
		}
		c.think = d
	}
}

// WithStopTimeout bounds how long Close waits for the handler's StopEvent
// call and the background tasks to return (default DefaultStopTimeout).
func WithStopTimeout(d time.Duration) Option {
	return func(c *handlerConfig) {
		if d <= 0 {
			c.errs = append(c.errs, fmt.Errorf("WithStopTimeout(%v): the timeout must be positive", d))
			return
		}
		c.stopTimeout = d
	}
}

// WithSessionData sets the session data every conversation starts with (the
// parameters an outbound call would pass), readable with Call.Get. The map is
// copied at each Connect.
func WithSessionData(data map[string]any) Option {
	return func(c *handlerConfig) {
		c.data = make(map[string]any, len(data))
		for k, v := range data {
			c.data[k] = v
		}
	}
}

// New returns an in-process voice agent that runs fn, for
// voicetest.Scenario or direct use of its Conn.
//
// Each Connect starts a conversation: fn receives a StartEvent, then a
// TextEvent for each user message, DTMFEvent, TimeoutEvent, InterruptEvent
// and CustomEvent as they happen, and a StopEvent at Close. The agent waits
// on channels and timers only (its state is under a lock that nobody holds
// while waiting), so inside testing/synctest it runs on
// virtual time and its timeline is identical on every run. It takes its
// time from Session.Clock when the runner gives one (voicetest.Run outside
// a bubble, a scenario in a testing.B), with the same timeline; a handler
// or task that waits on something of its own (time.Sleep, its own
// channels) counts as working, so the time then runs as the real clock
// does. Close ends every goroutine it started.
//
// Bad options are reported by Connect.
func New(fn Func, opts ...Option) voicetest.Agent {
	cfg := handlerConfig{wpm: DefaultWordsPerMinute, stopTimeout: DefaultStopTimeout}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if fn == nil {
		cfg.errs = append(cfg.errs, errors.New("handler.New(nil): pass the handler.Func that implements the agent"))
	}
	return &handlerAgent{fn: fn, cfg: cfg}
}

// handlerAgent is the voicetest.Agent New returns.
type handlerAgent struct {
	fn  Func
	cfg handlerConfig
	// runs counts the conversations started, so that a seeded A/B
	// choice differs from run to run under voicetest's Repeat.
	runs atomic.Int64
}

// VirtualTime reports that the agent runs in process on channels and timers
// only, so the runner may run it on virtual time (testing/synctest).
func (a *handlerAgent) VirtualTime() bool { return true }

// Connect starts a conversation; see New.
// PromptConnect declares that Connect never blocks and runs no user code:
// it makes the conversation's state in process (the handler's functions
// run later, on goroutines of their own). The runner calls it on its own
// goroutine (see internal/inproc).
func (a *handlerAgent) PromptConnect(inproc.Token) {}

func (a *handlerAgent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	if err := errors.Join(a.cfg.errs...); err != nil {
		return nil, fmt.Errorf("adapters: Handler: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("adapters: handler agent connect: %w", err)
	}
	if a.cfg.audio && s.Rate <= 0 {
		return nil, fmt.Errorf("adapters: handler agent in audio mode needs Session.Rate > 0, got %d", s.Rate)
	}
	var vad *pcm.VAD
	if a.cfg.audio && a.cfg.vad != nil {
		var err error
		if vad, err = pcm.NewVAD(s.Rate, *a.cfg.vad); err != nil {
			return nil, fmt.Errorf("adapters: handler agent: WithVAD at the session rate: %w", err)
		}
	}
	if s.Logf == nil {
		s.Logf = func(string, ...any) {}
	}
	c := newHandlerConn(a, s)
	c.vad, c.speechFrom = vad, -1
	return c, nil
}
