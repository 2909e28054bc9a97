package voicetest

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
)

// Config describes one scenario: who talks to whom, what to do, and how
// long to wait. The zero values of the optional fields are sensible
// defaults, listed on each field.
type Config struct {
	// Name names the scenario in reports and artifacts. Scenario defaults
	// it to the test's name; Run to "scenario".
	Name string
	// Description says what the scenario is about. It is shown to the User
	// and judges through State.Description.
	Description string

	// Agent is the agent under test. Required.
	Agent Agent
	// User is the simulated caller, asked by UserTurn and Proceed steps.
	// Required only by those steps.
	User User
	// Judge gives verdicts at Checkpoint, Verdict and Proceed steps.
	// Required only by those steps.
	Judge Judge

	// Script is the steps to run, in order. A nil Script means
	// Proceed(0) followed by Verdict() when a Judge is set.
	Script []Step
	// MaxTurns bounds the number of user turns Proceed takes in total
	// (default 10). On the last allowed turn the judge must decide.
	MaxTurns int

	// DataView turns what the agent shows rather than says (data
	// payloads, tool calls and results) into the text the simulated
	// caller sees of it: State.Shown, and what an LLM persona is shown.
	// Nil means DefaultDataView (data payloads as XML under <data>).
	DataView DataView
	// TurnTaking is when the simulated caller takes its turn after the
	// agent has spoken; the zero value speaks at the agent's turn end.
	// See TurnTaking.
	TurnTaking TurnTaking

	// UserVoice speaks the user's text when the agent takes audio. It is
	// required for text utterances sent to an audio agent.
	UserVoice TTS
	// Voice is the default voice passed to UserVoice (an utterance's own
	// Voice overrides it); "" means the engine's default.
	Voice string
	// AgentSTT transcribes the agent's audio when the adapter does not
	// stream transcripts. Without it such turns are recorded as audio only.
	// It is given what the agent sent for the utterance, made canonical:
	// the agent's own frames concatenated in the order they came (no gap
	// for a late frame or a pause in the stream), with the silence at both
	// edges trimmed (samples of magnitude 64 or less, about -54 dBFS; an
	// utterance that is all silence is kept whole). So its cache key
	// depends on the agent's audio only, never on when it arrived, and a
	// deterministic remote agent replays from the cache on every run. An
	// interrupted utterance is transcribed whole, as the agent sent it.
	// Each turn is transcribed in the background, one turn at a time, as
	// soon as the turn is over: the user's next fixed line (UserSays,
	// Interrupt, Silence, DTMF, ...) does not wait for the engine, while
	// whatever reads the conversation (Config.User, Config.Judge, Check,
	// Checkpoint, Verdict, the Result) waits for the text. A failed
	// transcription fails the scenario at the first such reader.
	AgentSTT STT
	// UserSTT transcribes recorded user speech that comes without its
	// text (UserAudio of a file, a personas.Files caller without
	// transcripts), for the transcript, the judge, a persona and a
	// text-only agent. Nil uses AgentSTT; with neither the message reads
	// "(audio only)". It hears the recording itself, before effects.
	UserSTT STT
	// Language is passed to AgentSTT and UserSTT ("" for the engine's
	// default).
	Language string
	// MeasureAgentWER also transcribes, with AgentSTT, the audio of the
	// agent's messages whose words its adapter streamed as text, and
	// compares the two: Message.Heard and Metrics.Speech.WER, the word
	// error rate of the agent's speech against the text it claims to
	// have said, which catches a TTS that mangles numbers or names. The
	// transcriptions run beside the conversation like AgentSTT's others.
	// It needs AgentSTT.
	MeasureAgentWER bool
	// Effects apply to every piece of user audio, after TTS and after the
	// utterance's own effects: noise, telephone band, packet loss.
	Effects pcm.Effect
	// Background is where the caller is: a scene heard for the whole
	// call (under speech, through Silence and between turns) and the
	// channel that carries it; see Background. The zero value is a quiet
	// room on a clean line.
	Background Background

	// Rate is the sample rate of the audio exchanged with the agent
	// (default pcm.DefaultRate, 24 kHz).
	Rate int
	// Timeouts bound the waits; zero fields take their defaults.
	Timeouts Timeouts
	// Pacing says how user audio is sent (default PaceRealTime).
	Pacing Pacing
	// WordsPerMinute is the user's speaking rate for text-only agents,
	// which gives the user's speaking time in the timeline, and the
	// agent's assumed rate when AfterWords must estimate words from the
	// speech time of an agent that streams no transcript (default 150).
	// For an adapter whose transcript runs ahead of its audio
	// (Capabilities.TranscriptAhead) it is also the fastest rate at which
	// the agent's words are taken to be said while its audio still
	// arrives.
	WordsPerMinute int

	// Repeat runs the scenario several times and requires a pass rate,
	// for agents whose answers vary. The zero value runs it once.
	Repeat Repeat

	// Golden configures the comparison of the transcript and timeline
	// with golden files, which Scenario does by default (Run does not;
	// see Result.CompareGolden). Under Repeat the first run is compared
	// and written: Repeat exists for agents whose answers vary, and the
	// first run is the one -update records.
	Golden GoldenOptions

	// Capture, when set, is passed to the adapter in Session.Capture to
	// receive the raw wire exchange.
	Capture io.Writer
	// Logf receives the scenario's log lines under Run (Scenario logs to
	// the test). Nil discards them. In a test, set it with TestLogf(t)
	// rather than t.Logf, which would attribute each line to voicetest's
	// or the adapter's code rather than to the test.
	Logf func(format string, args ...any)
}

// Timeouts bound the runner's waits. Zero fields take the defaults named
// on each field. The defaults are what a caller on a phone would put up
// with, so that a broken agent fails its test in seconds, not minutes,
// while a slow but working one (a model that calls a tool, a TTS that
// starts late) passes; each says why below.
type Timeouts struct {
	// Connect bounds Agent.Connect (default 30 s: a WebSocket handshake
	// takes milliseconds, but a remote agent may start cold).
	Connect time.Duration
	// FirstChunk bounds the wait for the agent's first audio (or speech,
	// or turn end) of a turn; the longest gap between its acts on a turn
	// (speech, a tool call, its turn end; not log lines or data) when the
	// adapter marks turn ends; ExpectHangUp's wait after the agent's last
	// act; and each send to the adapter (default 15 s: voice agents start
	// replying within one to three seconds, a reply that waits on a tool
	// call or a slow model within ten; a caller who hears fifteen seconds
	// of dead air hangs up. It was 60 s, which made a mute agent cost a
	// minute per turn).
	FirstChunk time.Duration
	// TailSilence is how long the agent must stay quiet after its speech
	// has played for its turn to count as over, when the adapter does not
	// mark turn ends (default 600 ms: agents pause less than that between
	// the sentences of one reply, and voice pipelines end a speaker's turn
	// after 500 to 800 ms of silence). Only the agent's acts on its turn
	// break the quiet: log lines and data do not.
	TailSilence time.Duration
	// MaxTurnAudio stops draining an agent turn once this much agent
	// speech has arrived: audio, or the speech time of a text-only agent
	// (AgentEvent.Speech) (default 30 s: a spoken reply longer than that
	// is a monologue, and the bound keeps a turn's audio to 1.4 MB at
	// 24 kHz). The turn is recorded with a max_turn_audio event; the
	// scenario fails only if FailOnMaxTurnAudio is set.
	MaxTurnAudio time.Duration
	// FailOnMaxTurnAudio makes reaching MaxTurnAudio a failure.
	FailOnMaxTurnAudio bool
	// WaitForSpeech bounds the wait for the agent to start speaking before
	// an Interrupt (default 8 s: the agent is expected to be replying
	// already).
	WaitForSpeech time.Duration
	// Engine bounds each call into user code (default 2 min: an LLM
	// judge of a long transcript, with retries, takes tens of seconds):
	// Config.User (and an Interrupter's InterruptDecision), Config.Judge,
	// Config.UserVoice, Config.AgentSTT, a Check's function, and audio
	// effects. A callee that has not returned by then fails the scenario
	// with a *TimeoutError naming it and the phase, even if it ignores its
	// context: it is left running, with a copy of the conversation. The
	// agent's own calls have their bounds too: Connect, each send (the
	// utterance's length plus FirstChunk for SendAudio, FirstChunk for the
	// others) and Close (5 s).
	Engine time.Duration
	// Greeting is how long Proceed waits, before the first user turn, for
	// an agent that speaks first (default 3 s). No greeting within it is
	// not an error.
	Greeting time.Duration
	// MaxDuration bounds the whole conversation, in its own time (virtual
	// under synctest): past it the scenario fails with a *TimeoutError in
	// PhaseScenario (default 10 min: ten turns of 30 s replies fit in it
	// with room to spare, and past it a conversation has run away, with
	// an agent that never stops talking, never ends its turn or never
	// hangs up; the bound also keeps the recording small enough to save).
	MaxDuration time.Duration
}

// The default timeouts, explained on the Timeouts fields.
const (
	DefaultConnectTimeout    = 30 * time.Second
	DefaultFirstChunkTimeout = 15 * time.Second
	DefaultTailSilence       = 600 * time.Millisecond
	DefaultMaxTurnAudio      = 30 * time.Second
	DefaultWaitForSpeech     = 8 * time.Second
	DefaultGreetingWait      = 3 * time.Second
	DefaultEngineTimeout     = 2 * time.Minute
	DefaultMaxDuration       = 10 * time.Minute
	DefaultMaxTurns          = 10
	DefaultWordsPerMinute    = 150
)

// FrameDuration is the length of the audio frames the runner sends.
const FrameDuration = 20 * time.Millisecond

// Pacing says how the runner sends user audio and waits for agent audio.
type Pacing int

const (
	// PaceRealTime sends user audio in 20 ms frames at the rate it plays
	// and lets the agent's audio play out before the user speaks again,
	// as a caller on a phone would. On virtual time this costs no wall
	// time.
	PaceRealTime Pacing = iota
	// PaceFast sends user audio as fast as the agent accepts it and does
	// not wait for the agent's audio to play out: turns end at the
	// protocol's turn end or after the tail silence that follows the last
	// agent event. User times are then transfer times, while agent speech
	// keeps its playback times, so in the timeline and the mixed recording
	// the next user turn may overlap the end of the agent's audio. Agent
	// Start and End times are deliberately not clamped to the clock: they
	// keep each reply's audio whole and its duration true in the segments
	// and the mix. The transcript is still in conversational order (see
	// State.Transcript). Use it for speed (benchmarks, smoke tests), not
	// for timing assertions.
	PaceFast
)

// String names the pacing.
func (p Pacing) String() string {
	switch p {
	case PaceRealTime:
		return "real time"
	case PaceFast:
		return "fast"
	}
	return fmt.Sprintf("Pacing(%d)", int(p))
}

// Repeat runs a scenario several times, each on its own connection, and
// passes when enough runs pass.
type Repeat struct {
	// Runs is the number of runs; 0 or 1 runs once.
	Runs int
	// MinPassRate is the fraction of runs that must pass, in [0, 1]; 0
	// means all of them (1).
	MinPassRate float64
}

// withDefaults returns cfg with every default filled in, or an error
// naming the first invalid field.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Agent == nil {
		return cfg, errors.New("voicetest: Config.Agent is nil; set it to the agent under test (an adapter or a fixtures fake)")
	}
	if cfg.Name == "" {
		cfg.Name = "scenario"
	}
	if cfg.MaxTurns < 0 {
		return cfg, fmt.Errorf("voicetest: Config.MaxTurns is %d; use a positive number or 0 for the default %d", cfg.MaxTurns, DefaultMaxTurns)
	}
	if cfg.MaxTurns == 0 {
		cfg.MaxTurns = DefaultMaxTurns
	}
	if cfg.Rate < 0 {
		return cfg, fmt.Errorf("voicetest: Config.Rate is %d; use a positive sample rate or 0 for %d", cfg.Rate, pcm.DefaultRate)
	}
	if cfg.Rate == 0 {
		cfg.Rate = pcm.DefaultRate
	}
	if cfg.WordsPerMinute < 0 {
		return cfg, fmt.Errorf("voicetest: Config.WordsPerMinute is %d; use a positive rate or 0 for %d", cfg.WordsPerMinute, DefaultWordsPerMinute)
	}
	if cfg.WordsPerMinute == 0 {
		cfg.WordsPerMinute = DefaultWordsPerMinute
	}
	if cfg.MeasureAgentWER && cfg.AgentSTT == nil {
		return cfg, errors.New("voicetest: Config.MeasureAgentWER needs Config.AgentSTT, the engine that hears the agent's audio; set it (e.g. speech.Pocketsphinx() or an OpenAI STT)")
	}
	if cfg.Pacing != PaceRealTime && cfg.Pacing != PaceFast {
		return cfg, fmt.Errorf("voicetest: Config.Pacing is %v; use PaceRealTime or PaceFast", cfg.Pacing)
	}
	if cfg.Repeat.Runs < 0 {
		return cfg, fmt.Errorf("voicetest: Config.Repeat.Runs is %d; use a positive number", cfg.Repeat.Runs)
	}
	if cfg.Repeat.MinPassRate < 0 || cfg.Repeat.MinPassRate > 1 {
		return cfg, fmt.Errorf("voicetest: Config.Repeat.MinPassRate is %v; use a fraction in [0, 1]", cfg.Repeat.MinPassRate)
	}
	if err := cfg.Golden.validate(); err != nil {
		return cfg, err
	}
	if err := cfg.Background.validate(); err != nil {
		return cfg, err
	}
	if err := cfg.TurnTaking.validate(); err != nil {
		return cfg, err
	}
	if cfg.Repeat.MinPassRate == 0 {
		cfg.Repeat.MinPassRate = 1
	}
	t := &cfg.Timeouts
	for _, f := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"Connect", &t.Connect, DefaultConnectTimeout},
		{"FirstChunk", &t.FirstChunk, DefaultFirstChunkTimeout},
		{"TailSilence", &t.TailSilence, DefaultTailSilence},
		{"MaxTurnAudio", &t.MaxTurnAudio, DefaultMaxTurnAudio},
		{"WaitForSpeech", &t.WaitForSpeech, DefaultWaitForSpeech},
		{"Greeting", &t.Greeting, DefaultGreetingWait},
		{"Engine", &t.Engine, DefaultEngineTimeout},
		{"MaxDuration", &t.MaxDuration, DefaultMaxDuration},
	} {
		if *f.v < 0 {
			return cfg, fmt.Errorf("voicetest: Config.Timeouts.%s is %v; use a positive duration or 0 for the default %v", f.name, *f.v, f.def)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if cfg.Script == nil {
		cfg.Script = []Step{Proceed(0)}
		if cfg.Judge != nil {
			cfg.Script = append(cfg.Script, Verdict())
		}
	}
	hangUp := -1
	for i, s := range cfg.Script {
		if s.run == nil {
			return cfg, fmt.Errorf("voicetest: Config.Script[%d] is a zero Step; build steps with the step functions (UserSays, AgentTurn, ...)", i)
		}
		if s.err != nil {
			return cfg, fmt.Errorf("voicetest: Config.Script[%d] (%s): %w", i, s, s.err)
		}
		if s.line && hangUp >= 0 {
			return cfg, fmt.Errorf("voicetest: Config.Script[%d] (%s) comes after ExpectHangUp() at Config.Script[%d]: it needs the line, which the agent has hung up by then; remove it, or move ExpectHangUp after it", i, s, hangUp)
		}
		if s.hangUp && hangUp < 0 {
			hangUp = i
		}
	}
	return cfg, nil
}
