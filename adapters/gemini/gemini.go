// Package gemini reaches a Gemini Live model (the Live API's
// BidiGenerateContent WebSocket, as the Gemini Developer API serves it) as
// the agent under test.
//
// It speaks the Live protocol itself, over coder/websocket like the other
// wire adapters (adapters/wire), not through Google's Go SDK
// (google.golang.org/genai): the SDK converts every message three times
// and keeps its socket to itself, which cost more than the whole per-turn
// budget of a test harness (BENCHMARKS.md, "Issue 21"). genai remains a
// dependency for its public types: Agent.Configure edits a
// genai.LiveConnectConfig, which this package maps to the setup message
// itself, and refuses at Connect, with an error naming it, any member it
// does not send (HTTPOptions, ExplicitVADSignal, a kind of tool or part it
// does not know), rather than drop it.
//
// Fidelity to the SDK is a test, not a hope: TestEquivalentSetup and
// TestEquivalentMessages (equiv_test.go) run the SDK's own Live client
// (genai v1.77.0, Live.Connect and Session's Send methods) and this
// adapter against the same recording loopback server and require the same
// URL, the same handshake headers (the credential included) and the same
// JSON messages, compared parsed: the setup message of the adapter's own
// configuration, of each member of LiveConnectConfig set in turn (by
// reflection over the struct, so that a member added to genai is tested
// too) and of each member's members, the user's audio, activityStart,
// activityEnd, text and tool responses. TestEquivalentDecoding gives the
// same server messages to the SDK's Receive and to this package's decoder
// and compares what each read, field by field.
//
// voicetest plays the user: it configures the session (system
// instruction, voice, tools, input and output transcription, audio
// responses) with automatic activity detection off, so that each user
// turn is one explicit activity: the first SendAudio of an utterance
// sends activityStart, the audio follows as PCM16 at the Live API's
// native 16 kHz (resampled from Session.Rate), and EndUtterance sends
// activityEnd. The model answers in PCM16 at 24 kHz, resampled to
// Session.Rate.
//
// The user's audio goes through a sender goroutine: SendAudio queues it
// and returns, and the sender sends everything queued when it takes it as
// one realtimeInput audio message (at most 1 s of audio). In real-time
// pacing each frame finds the sender idle and goes at once, alone; frames
// queued while a message is being written (Fast pacing, or a backlog) go
// together. A failed send is reported by the next SendAudio or
// EndUtterance; activityEnd (and text) go after all the audio queued
// before them: what the sender has not taken by then goes first, as one
// message sent by that call (so a Fast-paced utterance costs no hand-off
// to the sender and back).
//
// What the adapter does with the server's messages:
//
//   - serverContent.modelTurn audio parts (inlineData audio/pcm): AgentAudio.
//     Text parts that are not thoughts: AgentTranscript deltas; thoughts
//     are dropped.
//   - serverContent.outputTranscription: AgentTranscript deltas, and the
//     whole text with Final set when the turn completes.
//   - serverContent.inputTranscription: UserTranscript deltas, and the
//     whole text with Final set when the server marks it finished or the
//     turn completes.
//   - serverContent.interrupted (the user's new activity cut the model
//     off): AgentInterrupted, when the model had said something since its
//     last turn ended; the turnComplete that closes the interrupted turn
//     is then dropped, so that it cannot end the next turn early. The
//     service also sends an empty interrupted→turnComplete pair at the
//     start of an activity that interrupts nothing; the adapter drops both
//     (and logs it), as voicetest's Python ancestor did.
//   - serverContent.turnComplete: AgentTurnEnd (Capabilities.TurnEnd).
//   - toolCall: one AgentToolCall per function call. With OnToolCall set
//     the adapter answers each (toolResponse) and reports the answer as
//     AgentToolResult; without it the calls go unanswered, and the model
//     waits.
//   - toolCallCancellation: AgentLog.
//   - goAway: Recv returns a *GoAwayError: the server will end the session
//     within its TimeLeft, and a Live session cannot be continued on a
//     new connection without session resumption, which this adapter does
//     not use. The Conn stays usable until the server closes it.
//   - an error report ({"error":…}): Recv returns an *Error; a message
//     that is not JSON or whose members have the wrong types: a
//     *wire.FrameError. The Conn stays usable.
//   - the server closing the WebSocket with status 1000 or 1001:
//     AgentHangUp; with another status (1007 for a bad API key, 1011 for
//     an internal error): a *voicetest.TransportClosedError that says so.
//
// Barge-in: the Live API has no client message that cancels a response.
// The user's next activity interrupts it (activityHandling
// START_OF_ACTIVITY_INTERRUPTS, the default), so Interrupt is unsupported
// and voicetest.Interrupt barges in by sending the user's speech, whose
// activityStart cuts the model off; the server's interrupted becomes
// AgentInterrupted.
//
// WSOptions apply as for the other wire adapters (the wire capture holds
// the bytes on the wire), except keepalive: like the SDK, the adapter
// sends no ping (WSOptions.PingInterval and PongTimeout are refused); a
// server that stops answering is caught by the runner's timeouts
// (Timeouts.FirstChunk). DialTimeout bounds the WebSocket handshake and
// then the wait for setupComplete. The API key is sent only in the
// x-goog-api-key header (an ephemeral token "auth_tokens/…", v1alpha
// only, as "Authorization: Token …"), as the SDK sends it; it is blanked,
// also where the model echoes it, from the capture, the log, errors and
// events.
package gemini

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/scrub"
	"google.golang.org/genai"
)

// Defaults of Agent.
const (
	// DefaultModel is the Live model asked for when Agent.Model is empty.
	DefaultModel = "gemini-2.5-flash-native-audio-latest"
	// DefaultBaseURL is the Gemini Developer API.
	DefaultBaseURL = "https://generativelanguage.googleapis.com/"
	// DefaultAPIVersion is the API version of the Live endpoint.
	DefaultAPIVersion = "v1beta"
)

// The Live API's audio: PCM16 LE mono, 16 kHz in (its native input rate)
// and 24 kHz out.
const (
	inputRate  = pcm.Rate16k
	outputRate = pcm.Rate24k
	inputMIME  = "audio/pcm;rate=16000"
)

// adapterName names the adapter in errors and capabilities.
const adapterName = "gemini-live"

// maxAudioBatch bounds the audio of one realtimeInput message: 1 s of
// PCM16 at the Live API's 16 kHz.
const maxAudioBatch = 2 * inputRate

// Agent is a Gemini Live model on the Gemini Developer API. Set the
// fields before the first Connect; an Agent may then serve parallel
// scenarios.
type Agent struct {
	// Model is the Live model (default DefaultModel).
	Model string
	// APIKey is the Gemini API key. Empty means the GEMINI_API_KEY
	// environment variable, then GOOGLE_API_KEY; one is required (a
	// server that checks none takes any).
	APIKey string
	// BaseURL is the API's base URL (default DefaultBaseURL). The
	// adapter dials wss:// on its host and path, as the genai SDK does,
	// unless it is a ws:// or wss:// URL: a loopback test server is
	// ws://127.0.0.1:port.
	BaseURL string
	// APIVersion is the Live endpoint's version (default
	// DefaultAPIVersion).
	APIVersion string
	// SystemInstruction is the model's system instruction.
	SystemInstruction string
	// Voice is a prebuilt voice ("Puck", "Kore", "Algieba", …); empty
	// leaves the server's default.
	Voice string
	// Tools are the functions the model may call.
	Tools []Tool
	// OnToolCall, when set, answers the model's function calls (see
	// wire.ToolHandler).
	OnToolCall wire.ToolHandler
	// Configure, when set, is called with the session configuration the
	// adapter built, before it connects, to set what Agent has no field
	// for (temperature, language, context window compression, …). It must
	// leave the response modalities, the realtime input configuration and
	// the transcription settings alone: the adapter relies on them.
	Configure func(*genai.LiveConnectConfig)
	// WSOptions are the transport settings (see the package comment for
	// those that apply).
	wire.WSOptions
}

// Tool is a function the model may call.
type Tool struct {
	// Name is the function's name.
	Name string
	// Description tells the model when to call it.
	Description string
	// Parameters is the JSON Schema of its arguments; nil means none.
	Parameters json.RawMessage
}

// New returns an agent that reaches the Live model (DefaultModel when
// empty) on Google's Gemini API.
func New(model string) *Agent { return &Agent{Model: model} }

// Error is an error message the Live server sent. Recv returns it; the
// conversation can go on until the server closes the connection.
type Error struct {
	// Message is the server's message (its start, with secrets
	// blanked).
	Message string
}

// Error returns the server's message.
func (e *Error) Error() string { return "adapters: " + adapterName + ": server error: " + e.Message }

// GoAwayError reports the server's goAway: it will end the session
// within TimeLeft.
type GoAwayError struct {
	// TimeLeft is how long the session has left, as the server said.
	TimeLeft time.Duration
}

// Error says that the session is ending and what to do.
func (e *GoAwayError) Error() string {
	return fmt.Sprintf("adapters: %s: the server will end the session in %v (goAway); Live sessions have a time limit: shorten the scenario, or split it", adapterName, e.TimeLeft)
}

// Connect opens a Live session and waits for the server's setupComplete.
func (a *Agent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	if s.Rate <= 0 {
		return nil, fmt.Errorf("adapters: %s: session rate %d: %w", adapterName, s.Rate, pcm.ErrBadRate)
	}
	if a.PingInterval > 0 || a.PongTimeout > 0 {
		return nil, fmt.Errorf("adapters: %s: WSOptions.PingInterval and PongTimeout cannot apply: the adapter sends no ping, as the genai SDK sends none; leave them zero (a silent server is caught by voicetest.Timeouts.FirstChunk)", adapterName)
	}
	opts := a.WSOptions.Resolved()
	key := a.APIKey
	for _, env := range []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"} {
		if key == "" {
			key = os.Getenv(env)
		}
	}
	if key == "" {
		return nil, fmt.Errorf("adapters: %s: no API key; set gemini.Agent.APIKey or the GEMINI_API_KEY environment variable", adapterName)
	}
	base := cmp.Or(a.BaseURL, DefaultBaseURL)
	version := cmp.Or(a.APIVersion, DefaultAPIVersion)
	model := cmp.Or(a.Model, DefaultModel)
	sc := opts.Scrub
	if sc == nil {
		sc = scrub.New()
	}
	sc.Add(key)
	sc.AddHeader(opts.Header)
	sc.AddURL(base)
	config, err := a.liveConfig()
	if err != nil {
		return nil, err
	}
	setup, err := setupMessage(model, config)
	if err != nil {
		return nil, fmt.Errorf("adapters: %s: the setup message: %w", adapterName, err)
	}
	endpoint, header, err := liveEndpoint(base, version, key, opts.Header)
	if err != nil {
		return nil, fmt.Errorf("adapters: %s: %w", adapterName, wire.ScrubError(sc, err))
	}
	c := &conn{
		rate:   s.Rate,
		onTool: a.OnToolCall,
		down:   wire.Downstream{Rate: s.Rate},
		ready:  make(chan struct{}),
		moved:  make(chan struct{}),
		kick:   make(chan struct{}, 1),
	}
	if s.Rate != inputRate {
		if c.up.Resampler, err = pcm.NewResampler(s.Rate, inputRate); err != nil {
			return nil, fmt.Errorf("adapters: %s: %w", adapterName, err)
		}
	}
	dial := opts
	dial.Header, dial.Scrub, dial.PingInterval = header, sc, -1
	ws, err := wire.Dial(ctx, adapterName, endpoint, dial, s, nil)
	if err != nil {
		return nil, err
	}
	c.ws = ws
	ws.Start(c.decode)
	fail := func(err error) (voicetest.Conn, error) {
		ws.Close(nil)
		return nil, err
	}
	if err := ws.Write(ctx, websocket.MessageText, setup); err != nil {
		return fail(fmt.Errorf("adapters: %s: sending setup: %w", adapterName, err))
	}
	if err := c.awaitSetup(ctx, opts.DialTimeout, sc.URL(endpoint)); err != nil {
		return fail(err)
	}
	ws.Go(c.audioLoop)
	ws.Logf("%s: session with %s open at %s (explicit activities, %d tools)", adapterName, model, sc.URL(endpoint), len(a.Tools))
	return c, nil
}

// awaitSetup waits for setupComplete, an error instead of it, or the
// connection's end.
func (c *conn) awaitSetup(ctx context.Context, limit time.Duration, endpoint string) error {
	t := time.NewTimer(limit)
	defer t.Stop()
	for {
		select {
		case <-c.ready:
			return nil
		default:
		}
		qerr, term := c.ws.Failure()
		if qerr != nil || term != nil {
			select {
			case <-c.ready:
				return nil // what followed setupComplete belongs to the conversation
			default:
			}
		}
		switch {
		case qerr != nil:
			return fmt.Errorf("adapters: %s: setting up the session at %s: %w", adapterName, endpoint, qerr)
		case term != nil:
			return fmt.Errorf("adapters: %s: setting up the session at %s: %w", adapterName, endpoint, term)
		}
		select {
		case <-c.ready:
			return nil
		case <-c.ws.Notify():
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return &voicetest.TimeoutError{Phase: voicetest.PhaseConnect, Timeout: limit,
				Hint: fmt.Sprintf("the Gemini Live server at %s accepted the WebSocket but did not answer setup with setupComplete; check the BaseURL and that the server is up, or raise WSOptions.DialTimeout", endpoint)}
		}
	}
}

// liveConfig builds the session configuration, checking the options.
func (a *Agent) liveConfig() (*genai.LiveConnectConfig, error) {
	cfg := &genai.LiveConnectConfig{
		ResponseModalities:       []genai.Modality{genai.ModalityAudio},
		InputAudioTranscription:  &genai.AudioTranscriptionConfig{},
		OutputAudioTranscription: &genai.AudioTranscriptionConfig{},
		RealtimeInputConfig: &genai.RealtimeInputConfig{
			AutomaticActivityDetection: &genai.AutomaticActivityDetection{Disabled: true},
			ActivityHandling:           genai.ActivityHandlingStartOfActivityInterrupts,
		},
	}
	if a.SystemInstruction != "" {
		cfg.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: a.SystemInstruction}}}
	}
	if a.Voice != "" {
		cfg.SpeechConfig = &genai.SpeechConfig{VoiceConfig: &genai.VoiceConfig{PrebuiltVoiceConfig: &genai.PrebuiltVoiceConfig{VoiceName: a.Voice}}}
	}
	if len(a.Tools) > 0 {
		tool := &genai.Tool{}
		for i, t := range a.Tools {
			if t.Name == "" {
				return nil, fmt.Errorf("adapters: %s: Tools[%d] has no Name", adapterName, i)
			}
			fd := &genai.FunctionDeclaration{Name: t.Name, Description: t.Description}
			if len(t.Parameters) > 0 {
				var schema any
				if err := json.Unmarshal(t.Parameters, &schema); err != nil {
					return nil, fmt.Errorf("adapters: %s: Tools[%d] (%s): Parameters is not valid JSON: %w", adapterName, i, t.Name, err)
				}
				fd.ParametersJsonSchema = schema
			}
			tool.FunctionDeclarations = append(tool.FunctionDeclarations, fd)
		}
		cfg.Tools = []*genai.Tool{tool}
	}
	if a.Configure != nil {
		a.Configure(cfg)
	}
	return cfg, nil
}

// conn is one Live session.
type conn struct {
	ws     *wire.Conn
	rate   int
	onTool wire.ToolHandler

	// ready is closed when setupComplete arrives.
	ready chan struct{}

	// Send side. sendMu orders the callers' sends (an activity, its
	// audio, its end); the wire.Conn serializes the writes themselves.
	sendMu sync.Mutex
	active bool // an activity is open
	up     wire.Upstream

	// The audio sender (audioLoop), under amu: SendAudio queues PCM16 at
	// 16 kHz, and the sender sends what is queued when it takes it as one
	// realtimeInput message, so that a lone frame goes at once and frames
	// queued while a message is being written go together.
	amu     sync.Mutex
	queued  []byte        // audio waiting for the sender, at most maxAudioBatch bytes
	spare   []byte        // the buffer of the batch last sent, reused
	busy    bool          // the sender is writing a batch
	sendErr error         // why a batch could not be sent; later sends report it
	moved   chan struct{} // closed and replaced when the sender takes or finishes a batch, if waited for
	waiting bool          // someone waits on moved
	kick    chan struct{} // holds a token when audio was queued since the sender last looked
	msg     []byte        // the audio sender's message buffer, reused

	// Reader goroutine only.
	dec         decoder
	setupDone   bool
	down        wire.Downstream
	content     bool // audio or text since the last turn boundary
	interrupted bool // interrupted was seen; its turnComplete is pending
	agentText   strings.Builder
	userText    strings.Builder
	unknownSeen bool
	// audioType is the last inline audio MIME type accepted and
	// audioRate its rate, so that each audio message of a stream is not
	// parsed again (mime.ParseMediaType allocates a map).
	audioType string
	audioRate int
	// answer holds the tool calls of the message being decoded, to be
	// answered (OnToolCall) once their events are queued.
	answer []voicetest.ToolCall
}

// Capabilities reports what the Gemini Live adapter supports.
func (c *conn) Capabilities() voicetest.Capabilities {
	return voicetest.Capabilities{
		Adapter: adapterName, Audio: true, Text: true,
		InputFormat:          voicetest.AudioFormat{Encoding: "pcm16", Rate: inputRate},
		OutputFormat:         voicetest.AudioFormat{Encoding: "pcm16", Rate: outputRate},
		StreamingTranscripts: true, TranscriptAhead: true, TurnEnd: true, ToolEvents: true,
	}
}

// control sends a message that is not audio, after the audio queued
// before it.
func (c *conn) control(ctx context.Context, msg []byte) error {
	if err := c.drainAudio(ctx); err != nil {
		return err
	}
	return c.ws.Write(ctx, websocket.MessageText, msg)
}

// queueAudio queues samples at 16 kHz for the audio sender, waiting for
// room past maxAudioBatch. It reports why an earlier batch could not be
// sent, if one could not.
func (c *conn) queueAudio(ctx context.Context, samples []int16) error {
	for len(samples) > 0 {
		c.amu.Lock()
		if err := c.sendErr; err != nil {
			c.amu.Unlock()
			return err
		}
		room := (maxAudioBatch - len(c.queued)) / 2
		if room == 0 {
			moved := c.moved
			c.waiting = true
			c.amu.Unlock()
			if err := c.waitMoved(ctx, moved); err != nil {
				return err
			}
			continue
		}
		n := min(room, len(samples))
		c.queued = wire.AppendPCM16(c.queued, samples[:n])
		c.amu.Unlock()
		samples = samples[n:]
		select {
		case c.kick <- struct{}{}:
		default: // the sender has a token already: it will look
		}
	}
	return nil
}

// drainAudio returns once everything queued has been sent, and reports
// why it could not be, if it could not. Audio the sender has not taken
// yet (it has not run since it was queued: Fast pacing) is sent here, on
// the caller's goroutine, as the sender would have sent it; a batch the
// sender is writing is waited for.
func (c *conn) drainAudio(ctx context.Context) error {
	for {
		c.amu.Lock()
		err, done, moved := c.sendErr, len(c.queued) == 0 && !c.busy, c.moved
		if err != nil || done {
			c.amu.Unlock()
			return err
		}
		if !c.busy {
			if err := ctx.Err(); err != nil {
				c.amu.Unlock()
				return err
			}
			c.sendBatchLocked()
			c.amu.Unlock()
			continue
		}
		c.waiting = true
		c.amu.Unlock()
		if err := c.waitMoved(ctx, moved); err != nil {
			return err
		}
	}
}

// waitMoved waits until the audio sender takes or finishes a batch
// (moved is closed), ctx ends or the Conn ends.
func (c *conn) waitMoved(ctx context.Context, moved chan struct{}) error {
	select {
	case <-moved:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ws.Context().Done():
		if err := c.ws.ClosedErr(); err != nil {
			return err
		}
		return &voicetest.TransportClosedError{Adapter: adapterName, Err: errors.New("the session ended")}
	}
}

// movedLocked wakes those waiting for the audio sender, if any. Call with
// amu held.
func (c *conn) movedLocked() {
	if c.waiting {
		close(c.moved)
		c.moved, c.waiting = make(chan struct{}), false
	}
}

// audioLoop is the audio sender: each time audio is queued it takes all
// of it and sends it as one realtimeInput message. In real-time pacing it
// finds one frame each time, which goes at once; frames queued faster
// than it can write (Fast pacing, or a backlog) go together, at most
// maxAudioBatch bytes in a message. It runs until the Conn ends.
func (c *conn) audioLoop() {
	ctx := c.ws.Context()
	for {
		select {
		case <-c.kick:
		case <-ctx.Done():
			return
		}
		c.amu.Lock()
		if len(c.queued) == 0 || c.busy {
			c.amu.Unlock()
			continue
		}
		c.sendBatchLocked()
		c.amu.Unlock()
	}
}

// sendBatchLocked takes everything queued (there is some, and no batch is
// being written) and sends it as one realtimeInput audio message. It is
// called with amu held, releases it while it writes, and returns with it
// held again. A failed write is kept in sendErr for the next SendAudio or
// EndUtterance to report.
func (c *conn) sendBatchLocked() {
	batch := c.queued
	c.queued, c.busy = c.spare[:0], true
	c.movedLocked()
	c.amu.Unlock()
	c.msg = appendAudioMessage(c.msg[:0], batch)
	err := c.ws.WriteAudio(c.ws.Context(), websocket.MessageText, c.msg)
	if cap(c.msg) > 4*maxAudioBatch {
		c.msg = nil // do not hold on to a huge message's memory
	}
	c.amu.Lock()
	c.spare, c.busy = batch, false
	if err != nil && c.sendErr == nil {
		c.sendErr = err
	}
	c.movedLocked()
}

// startLocked opens the user's activity if none is open. Call with sendMu
// held.
func (c *conn) startLocked(ctx context.Context) error {
	if c.active {
		return nil
	}
	if err := c.control(ctx, msgActivityStart); err != nil {
		return err
	}
	c.active = true
	return nil
}

// SendAudio sends user speech, opening the user's activity with its
// first chunk (which interrupts the model if it is speaking). The audio
// goes through the audio sender (see audioLoop): SendAudio returns once it
// is queued, and reports a failure to send earlier audio.
func (c *conn) SendAudio(ctx context.Context, ch pcm.Chunk) error {
	if err := wire.CheckSendRate(adapterName, ch.Rate, c.rate); err != nil {
		return err
	}
	if err := c.ws.Sendable(ctx); err != nil {
		return err
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if err := c.startLocked(ctx); err != nil {
		return err
	}
	return c.queueAudio(ctx, c.up.Process(ch.Samples))
}

// EndUtterance ends the user's activity (activityEnd), which asks the
// model to answer. Without an open activity it sends nothing.
func (c *conn) EndUtterance(ctx context.Context) error {
	if err := c.ws.ClosedErr(); err != nil {
		return err
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if !c.active {
		return nil
	}
	if err := c.queueAudio(ctx, c.up.Flush()); err != nil {
		return err
	}
	if err := c.control(ctx, msgActivityEnd); err != nil {
		return err
	}
	c.active = false
	return nil
}

// SendText sends a user turn as text: one activity holding the text.
func (c *conn) SendText(ctx context.Context, text string) error {
	if strings.TrimSpace(text) == "" {
		return fmt.Errorf("adapters: %s: SendText with empty text", adapterName)
	}
	msg, err := textMessage(text)
	if err != nil {
		return fmt.Errorf("adapters: %s: %w", adapterName, err)
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if err := c.startLocked(ctx); err != nil {
		return err
	}
	if err := c.control(ctx, msg); err != nil {
		return err
	}
	if err := c.control(ctx, msgActivityEnd); err != nil {
		return err
	}
	c.active = false
	return nil
}

// SendDTMF is unsupported: the Live API has no key presses.
func (c *conn) SendDTMF(context.Context, string) error {
	return &voicetest.UnsupportedError{Adapter: adapterName, Capability: "DTMF events",
		Alternative: "the Live API has no message for key presses; voicetest.DTMF sends them as in-band tones in the user's audio"}
}

// Interrupt is unsupported: the Live API has no cancel message.
func (c *conn) Interrupt(context.Context) error {
	return &voicetest.UnsupportedError{Adapter: adapterName, Capability: "native interrupt",
		Alternative: "the Live API has no message that cancels a response: the user's next activity interrupts it, so barge in by sending the user's speech (voicetest.Interrupt does)"}
}

// Recv returns the model's next event.
func (c *conn) Recv(ctx context.Context) (voicetest.AgentEvent, error) { return c.ws.Recv(ctx) }

// WireStats reports what crossed the WebSocket (voicetest.WireStatsReporter),
// and the server's interruptions as clears.
func (c *conn) WireStats() voicetest.WireStats { return c.ws.Stats().Snapshot(adapterName) }

// Close ends the session (a closing handshake bounded by
// WSOptions.CloseTimeout) and waits for the adapter's goroutines. It
// returns an error only when the model went past one of the adapter's
// bounds (a *voicetest.LimitError).
func (c *conn) Close() error { return c.ws.Close(nil) }

// decode turns one server message into events. It runs on the reader
// goroutine.
func (c *conn) decode(_ websocket.MessageType, data []byte) ([]voicetest.AgentEvent, error) {
	m, err := c.dec.parse(data)
	if err != nil {
		var se *Error
		if errors.As(err, &se) {
			se.Message = excerpt(c.ws.Scrubber().String(se.Message))
			return nil, wire.AgentError{Err: se}
		}
		return nil, err
	}
	if !c.setupDone {
		// The SDK's Connect takes the first message as the answer to
		// setup, and fails unless it is setupComplete.
		if m.SetupComplete == nil {
			return nil, errors.New("the server's first message is not setupComplete")
		}
		c.setupDone = true
		close(c.ready)
		return nil, nil
	}
	var evs []voicetest.AgentEvent
	known := m.SetupComplete != nil || m.UsageMetadata != nil || m.SessionResumptionUpdate != nil ||
		m.VoiceActivity != nil || m.VoiceActivityDetectionSignal != nil
	if sc := m.ServerContent; sc != nil {
		known = true
		var err error
		if evs, err = c.serverContent(sc); err != nil {
			return evs, err
		}
	}
	if tc := m.ToolCall; tc != nil {
		known = true
		evs = append(evs, c.toolCalls(tc)...)
		if calls := c.answer; len(calls) > 0 {
			// Queue the calls' events before their answers can be:
			// an AgentToolResult never comes before its AgentToolCall.
			c.answer = nil
			for _, ev := range evs {
				c.ws.PushEvent(ev)
			}
			evs = nil
			c.ws.Go(func() { c.answerTools(calls) })
		}
	}
	if tcc := m.ToolCallCancellation; tcc != nil {
		known = true
		evs = append(evs, voicetest.AgentEvent{Kind: voicetest.AgentLog, Text: "the model cancelled its tool calls " + strings.Join(tcc.IDs, ", ")})
	}
	if ga := m.GoAway; ga != nil {
		left := time.Duration(ga.TimeLeft)
		c.ws.Logf("%s: goAway: the server ends the session in %v", adapterName, left)
		return evs, wire.AgentError{Err: &GoAwayError{TimeLeft: left}}
	}
	if !known && !c.unknownSeen {
		c.unknownSeen = true
		c.ws.Logf("%s: ignoring a server message with nothing this adapter knows: %s (logged once)", adapterName, wire.Excerpt(data))
	}
	return evs, nil
}

// excerpt returns at most 300 bytes of s.
func excerpt(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// serverContent decodes one serverContent.
func (c *conn) serverContent(sc *serverContent) ([]voicetest.AgentEvent, error) {
	var evs []voicetest.AgentEvent
	if t := sc.InputTranscription; t != nil {
		if t.Text != "" {
			c.userText.WriteString(t.Text)
			evs = append(evs, voicetest.AgentEvent{Kind: voicetest.UserTranscript, Text: t.Text})
		}
		if t.Finished {
			evs = c.userFinal(evs)
		}
	}
	if mt := sc.ModelTurn; mt != nil {
		for _, p := range mt.Parts {
			switch {
			case p == nil || p.Thought:
			case p.InlineData != nil:
				var err error
				if evs, err = c.audio(evs, p.InlineData); err != nil {
					return evs, err
				}
				c.content = true
			case p.Text != "":
				c.content = true
				c.agentText.WriteString(p.Text)
				evs = append(evs, voicetest.AgentEvent{Kind: voicetest.AgentTranscript, Text: p.Text})
			}
		}
	}
	if t := sc.OutputTranscription; t != nil && t.Text != "" {
		c.content = true
		c.agentText.WriteString(t.Text)
		evs = append(evs, voicetest.AgentEvent{Kind: voicetest.AgentTranscript, Text: t.Text})
	}
	if sc.Interrupted {
		if c.content {
			c.ws.Stats().Clear()
			evs = append(c.down.Flush(evs), voicetest.AgentEvent{Kind: voicetest.AgentInterrupted, Text: "interrupted by the user's activity"})
			evs = c.agentFinal(evs)
		} else {
			c.ws.Logf("%s: an interrupted with nothing said since the last turn (the service's empty interrupted/turnComplete pair); ignored", adapterName)
		}
		c.down.Reset()
		c.content, c.interrupted = false, true
	}
	if sc.TurnComplete {
		evs = c.userFinal(evs)
		if c.interrupted && !c.content {
			// The end of the interrupted turn (or of the empty pair): not
			// the end of the turn now under way.
			c.interrupted = false
			return evs, nil
		}
		evs = c.agentFinal(c.down.Flush(evs))
		evs = append(evs, voicetest.AgentEvent{Kind: voicetest.AgentTurnEnd})
		c.content, c.interrupted = false, false
	}
	return evs, nil
}

// userFinal appends the user's whole transcript, if any, with Final set.
func (c *conn) userFinal(evs []voicetest.AgentEvent) []voicetest.AgentEvent {
	if c.userText.Len() == 0 {
		return evs
	}
	text := strings.TrimSpace(c.userText.String())
	c.userText.Reset()
	return append(evs, voicetest.AgentEvent{Kind: voicetest.UserTranscript, Text: text, Final: true})
}

// agentFinal appends the model's whole transcript of the turn, if any,
// with Final set.
func (c *conn) agentFinal(evs []voicetest.AgentEvent) []voicetest.AgentEvent {
	if c.agentText.Len() == 0 {
		return evs
	}
	text := strings.TrimSpace(c.agentText.String())
	c.agentText.Reset()
	return append(evs, voicetest.AgentEvent{Kind: voicetest.AgentTranscript, Text: text, Final: true})
}

// audio appends the events of one inline audio part to evs.
func (c *conn) audio(evs []voicetest.AgentEvent, b *blob) ([]voicetest.AgentEvent, error) {
	rate, err := c.audioRateOf(b.MIMEType)
	if err != nil {
		return evs, err
	}
	samples, err := pcm.DecodePCM16(nil, b.Data)
	if err != nil {
		return evs, fmt.Errorf("%d bytes of inline audio: %w (PCM16 has 2 bytes a sample)", len(b.Data), err)
	}
	return c.down.Append(evs, rate, samples)
}

// audioRateOf returns the rate of inline audio of MIME type typ
// (audio/pcm, rate 24000 unless it says), or why it is not audio the
// adapter takes. The last type accepted is remembered.
func (c *conn) audioRateOf(typ string) (int, error) {
	if typ == c.audioType && typ != "" {
		return c.audioRate, nil
	}
	mt, params, err := mime.ParseMediaType(typ)
	if err != nil || mt != "audio/pcm" {
		return 0, fmt.Errorf("inline data of type %q; the Live API sends audio/pcm;rate=24000", typ)
	}
	rate := outputRate
	if r, ok := params["rate"]; ok {
		if rate, err = strconv.Atoi(r); err != nil {
			return 0, fmt.Errorf("inline data of type %q: bad rate", typ)
		}
	}
	if err := wire.CheckRate("", "the rate of inline audio", rate, wire.StandardRates(), ""); err != nil {
		return 0, err
	}
	c.audioType, c.audioRate = typ, rate
	return rate, nil
}

// toolCalls returns the events of the model's function calls and, with
// OnToolCall set, puts them in c.answer for decode to answer.
func (c *conn) toolCalls(tc *serverToolCall) []voicetest.AgentEvent {
	var evs []voicetest.AgentEvent
	var calls []voicetest.ToolCall
	for _, f := range tc.FunctionCalls {
		if f == nil {
			continue
		}
		args, err := json.Marshal(f.Args)
		if err != nil || f.Args == nil {
			args = json.RawMessage(`{}`)
		}
		call := voicetest.ToolCall{ID: f.ID, Name: f.Name, Arguments: args}
		calls = append(calls, call)
		evs = append(evs, voicetest.AgentEvent{Kind: voicetest.AgentToolCall, Tool: &call})
	}
	if c.onTool != nil {
		c.answer = calls
	}
	return evs
}

// answerTools runs OnToolCall for each call and sends the responses.
func (c *conn) answerTools(calls []voicetest.ToolCall) {
	ctx := c.ws.Context()
	var resps []*genai.FunctionResponse
	for _, call := range calls {
		res, _ := wire.RunTool(ctx, c.onTool, call)
		c.ws.PushEvent(voicetest.AgentEvent{Kind: voicetest.AgentToolResult, Tool: &res})
		resps = append(resps, &genai.FunctionResponse{ID: call.ID, Name: call.Name, Response: toolResponse(res)})
	}
	msg, err := toolResponseMessage(resps)
	if err == nil {
		c.sendMu.Lock()
		err = c.control(ctx, msg)
		c.sendMu.Unlock()
	}
	if err != nil && ctx.Err() == nil {
		c.ws.Logf("%s: sending the tool responses: %v", adapterName, err)
	}
}

// toolResponse is the response object of a tool's result: an object as
// it is, anything else in "output", an error in "error".
func toolResponse(res voicetest.ToolCall) map[string]any {
	var v any
	json.Unmarshal(res.Result, &v)
	response, ok := v.(map[string]any)
	switch {
	case res.IsError:
		response = map[string]any{"error": v}
		if m, ok := v.(map[string]any); ok {
			response = map[string]any{"error": m["error"]}
		}
	case !ok:
		response = map[string]any{"output": v}
	}
	return response
}
