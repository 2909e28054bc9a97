// Package gemini reaches a Gemini Live model (the Live API's
// BidiGenerateContent WebSocket) as the agent under test, through Google's
// official Go SDK, google.golang.org/genai.
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
// together, which spares the SDK's per-message conversions. A failed send
// is reported by the next SendAudio or EndUtterance; activityEnd (and
// text) go after all the audio queued before them.
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
//   - a message the SDK reports as an error from the server: Recv returns
//     an *Error; one it cannot parse: a *wire.FrameError. The Conn stays
//     usable.
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
// What the SDK decides: it owns the WebSocket (gorilla/websocket) and
// shows the adapter neither the socket nor the bytes on it. So:
//
//   - the wire capture records the messages as the adapter gave them to
//     the SDK and got them back (the SDK's types as JSON: camelCase, audio
//     in base64), not the bytes on the wire;
//   - the SDK's Connect takes no context: when Connect gives up
//     (WSOptions.DialTimeout, or ctx), a goroutine waits for the SDK's
//     dial (bounded by its 45 s handshake timeout) or for the setup
//     answer (until the server answers or closes) and closes whatever it
//     gets;
//   - WSOptions.MaxFrameBytes is checked after the SDK has read a message
//     (it reads each whole), on the size of its payload as sent (audio in
//     base64): a larger message ends the connection with an error naming
//     the setting, but the SDK has held it;
//   - there is no keepalive ping (WSOptions.PingInterval and PongTimeout
//     are refused): a server that stops answering is caught by the
//     runner's timeouts (Timeouts.FirstChunk), as for any silent agent;
//   - Close closes the socket without a closing handshake
//     (WSOptions.CloseTimeout is not used);
//   - the SDK converts every message three times (genai v1.77.0, live.go:
//     a message sent is marshalled, unmarshalled into a map, converted
//     and marshalled again; one received is unmarshalled into a map,
//     encoded and unmarshalled into its types), so most of the harness's
//     cost per turn is the SDK's, and grows with the audio sent
//     (BENCHMARKS.md, "Issue 21: Gemini Live per-turn overhead").
//
// WSOptions.Header, DialTimeout, WriteTimeout, MaxQueueBytes, RequireTLS
// and Scrub apply as for the other wire adapters. The API key is sent
// only in the x-goog-api-key header; it is blanked, also where the model
// echoes it, from the capture, the log, errors and events.
package gemini

import (
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
	gorilla "github.com/gorilla/websocket"
	"github.com/voicetest-go/voicetest/adapters/internal/evqueue"
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

// Agent is a Gemini Live model reached through the genai SDK. Set the
// fields before the first Connect; an Agent may then serve parallel
// scenarios.
type Agent struct {
	// Model is the Live model (default DefaultModel).
	Model string
	// APIKey is the Gemini API key. Empty means the GEMINI_API_KEY
	// environment variable, then GOOGLE_API_KEY; one is required (a
	// server that checks none takes any).
	APIKey string
	// BaseURL is the API's base URL (default DefaultBaseURL). The SDK
	// dials wss:// on it unless it is a ws:// or wss:// URL: a loopback
	// test server is ws://127.0.0.1:port.
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
	// Message is what the SDK reported, with the server's message.
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
		return nil, fmt.Errorf("adapters: %s: WSOptions.PingInterval and PongTimeout cannot apply: the genai SDK keeps its WebSocket to itself and sends no ping; leave them zero (a silent server is caught by voicetest.Timeouts.FirstChunk)", adapterName)
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
	base := a.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	version := a.APIVersion
	if version == "" {
		version = DefaultAPIVersion
	}
	model := a.Model
	if model == "" {
		model = DefaultModel
	}
	sc := opts.Scrub
	if sc == nil {
		sc = scrub.New()
	}
	sc.Add(key)
	sc.AddHeader(opts.Header)
	sc.AddURL(base)
	if err := wire.CheckPlaintext(adapterName, base, opts); err != nil {
		return nil, wire.ScrubError(sc, err)
	}
	config, err := a.liveConfig()
	if err != nil {
		return nil, err
	}
	logf := wire.ScrubLogf(sc, s.Logf)
	c := &conn{
		rate:    s.Rate,
		opts:    opts,
		scrub:   sc,
		logf:    logf,
		capture: wire.NewCaptureWriter(s.Capture, logf),
		capt:    s.Capture != nil,
		onTool:  a.OnToolCall,
		down:    wire.Downstream{Rate: s.Rate},
		q:       evqueue.New(opts.MaxQueueBytes),
		unknown: map[string]bool{},
		moved:   make(chan struct{}),
		kick:    make(chan struct{}, 1),
	}
	c.capture.SetScrubber(sc)
	if s.Rate != inputRate {
		if c.up.Resampler, err = pcm.NewResampler(s.Rate, inputRate); err != nil {
			return nil, fmt.Errorf("adapters: %s: %w", adapterName, err)
		}
	}
	client, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:      key,
		Backend:     genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: base, APIVersion: version, Headers: opts.Header.Clone()},
	})
	if err != nil {
		return nil, fmt.Errorf("adapters: %s: %w", adapterName, wire.ScrubError(sc, err))
	}
	endpoint := sc.URL(liveURL(base, version))
	type result struct {
		sess *genai.Session
		err  error
	}
	done := make(chan result, 1)
	go func() {
		// The SDK's Connect takes no context (see the package comment).
		sess, err := client.Live.Connect(context.Background(), model, config)
		done <- result{sess, err}
	}()
	abandon := func() {
		go func() {
			if r := <-done; r.sess != nil {
				r.sess.Close()
			}
		}()
	}
	timer := time.NewTimer(opts.DialTimeout)
	defer timer.Stop()
	var sess *genai.Session
	select {
	case r := <-done:
		if r.err != nil {
			err := wire.ScrubError(sc, r.err)
			c.capture.Note("error", fmt.Sprintf("connect %s: %v", endpoint, err))
			return nil, fmt.Errorf("adapters: %s: connecting to %s: %w", adapterName, endpoint, err)
		}
		sess = r.sess
	case <-timer.C:
		abandon()
		c.capture.Note("error", "connect "+endpoint+": timed out")
		return nil, &voicetest.TimeoutError{Phase: voicetest.PhaseConnect, Timeout: opts.DialTimeout,
			Hint: fmt.Sprintf("the Gemini Live server at %s did not complete the WebSocket handshake and answer setup with setupComplete; check the BaseURL and that the server is up, or raise WSOptions.DialTimeout", endpoint)}
	case <-ctx.Done():
		abandon()
		return nil, ctx.Err()
	}
	c.sess = sess
	c.capture.Note("open", endpoint)
	if setup, err := json.Marshal(map[string]any{"setup": map[string]any{"model": model, "config": config}}); err == nil {
		c.capture.Frame("send", websocket.MessageText, setup)
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.writeTimer = time.AfterFunc(time.Hour, c.writeTimedOut)
	c.writeTimer.Stop()
	c.wg.Add(2)
	go c.readLoop()
	go c.audioLoop()
	logf("%s: session with %s open at %s (explicit activities, %d tools)", adapterName, model, endpoint, len(a.Tools))
	return c, nil
}

// liveURL returns the Live endpoint the SDK dials for base and version
// (live.go), for captures and errors.
func liveURL(base, version string) string {
	u := strings.TrimRight(base, "/")
	switch {
	case strings.HasPrefix(u, "https://"):
		u = "wss://" + strings.TrimPrefix(u, "https://")
	case strings.HasPrefix(u, "http://"):
		u = "wss://" + strings.TrimPrefix(u, "http://")
	}
	return u + "/ws/google.ai.generativelanguage." + version + ".GenerativeService.BidiGenerateContent"
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
	sess    *genai.Session
	rate    int
	opts    wire.WSOptions
	scrub   *scrub.Scrubber
	logf    func(string, ...any)
	capture *wire.CaptureWriter
	capt    bool // Session.Capture is set: marshal messages for it
	stats   wire.Stats
	onTool  wire.ToolHandler
	q       *evqueue.Queue

	ctx    context.Context // lives until Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// Send side. sendMu orders the callers' sends (an activity, its
	// audio, its end); wmu serializes the SDK's writes, since it allows
	// one writer at a time (the audio sender's and the callers').
	sendMu     sync.Mutex
	active     bool // an activity is open
	up         wire.Upstream
	wmu        sync.Mutex
	writeTimer *time.Timer
	writing    bool // a write is under way (under mu)

	// The audio sender (audioLoop), under amu: SendAudio queues PCM16 at
	// 16 kHz, and the sender sends what is queued when it takes it as one
	// realtimeInput message, so that a lone frame goes at once and frames
	// queued while a message is being written go together.
	amu     sync.Mutex
	queued  []byte        // audio waiting for the sender, at most maxAudioBatch bytes
	spare   []byte        // the buffer of the batch last sent, reused
	busy    bool          // the sender is writing a batch
	sendErr error         // why a batch could not be sent; later sends report it
	moved   chan struct{} // closed and replaced when the sender takes or finishes a batch
	kick    chan struct{} // holds a token when audio was queued since the sender last looked

	mu      sync.Mutex
	cause   error // why the adapter itself ended the connection
	limit   error // the queue bound the model went past, which Close reports
	closing bool

	// Reader goroutine only.
	down        wire.Downstream
	content     bool // audio or text since the last turn boundary
	interrupted bool // interrupted was seen; its turnComplete is pending
	agentText   strings.Builder
	userText    strings.Builder
	unknown     map[string]bool
	// audioType is the last inline audio MIME type accepted and
	// audioRate its rate, so that each audio message of a stream is not
	// parsed again (mime.ParseMediaType allocates a map).
	audioType string
	audioRate int
	// answer holds the tool calls of the message being decoded, answered
	// (OnToolCall) once its events are queued, so that a call's
	// AgentToolResult never comes before its AgentToolCall. Reader
	// goroutine only.
	answer []voicetest.ToolCall

	closeOnce sync.Once
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

// closedErr returns why nothing more can be sent, or nil.
func (c *conn) closedErr() error {
	c.mu.Lock()
	closing := c.closing
	c.mu.Unlock()
	if closing {
		return &voicetest.TransportClosedError{Adapter: adapterName, Err: errors.New("the Conn was closed")}
	}
	return c.q.Ended()
}

// write sends one client message through the SDK: capture is its JSON for
// the capture, send the SDK call. A write that has not finished within
// WriteTimeout closes the session.
func (c *conn) write(ctx context.Context, capture func() ([]byte, error), send func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.closedErr(); err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.capt {
		if b, err := capture(); err == nil {
			c.scrub.AddJSON(b)
			c.capture.Frame("send", websocket.MessageText, b)
		}
	}
	c.mu.Lock()
	c.writing = true
	c.mu.Unlock()
	c.writeTimer.Reset(c.opts.WriteTimeout)
	err := send()
	c.writeTimer.Stop()
	if err == nil {
		c.stats.FrameOut(0)
	}
	c.mu.Lock()
	c.writing = false
	cause := c.cause
	c.mu.Unlock()
	if err == nil {
		return nil
	}
	if cause != nil {
		return &voicetest.TransportClosedError{Adapter: adapterName, Err: cause}
	}
	if cerr := c.closedErr(); cerr != nil {
		return cerr
	}
	return &voicetest.TransportClosedError{Adapter: adapterName, Err: wire.ScrubError(c.scrub, err)}
}

// writeTimedOut ends a session whose write did not finish in time.
func (c *conn) writeTimedOut() {
	c.mu.Lock()
	stuck := c.writing && c.cause == nil
	if stuck {
		c.cause = fmt.Errorf("a write did not finish within %v: the server stopped reading (raise WSOptions.WriteTimeout if it is merely slow)", c.opts.WriteTimeout)
	}
	c.mu.Unlock()
	if stuck {
		c.sess.Close()
	}
}

// realtime sends one realtimeInput message.
func (c *conn) realtime(ctx context.Context, in genai.LiveRealtimeInput) error {
	return c.write(ctx, func() ([]byte, error) {
		return json.Marshal(map[string]any{"realtimeInput": in})
	}, func() error { return c.sess.SendRealtimeInput(in) })
}

// control sends a realtimeInput message that is not audio, after the
// audio queued before it.
func (c *conn) control(ctx context.Context, in genai.LiveRealtimeInput) error {
	if err := c.drainAudio(ctx); err != nil {
		return err
	}
	return c.realtime(ctx, in)
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

// drainAudio waits until the audio sender has sent everything queued, and
// reports why it could not, if it could not.
func (c *conn) drainAudio(ctx context.Context) error {
	for {
		c.amu.Lock()
		err, done, moved := c.sendErr, len(c.queued) == 0 && !c.busy, c.moved
		c.amu.Unlock()
		if err != nil || done {
			return err
		}
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
	case <-c.ctx.Done():
		if err := c.closedErr(); err != nil {
			return err
		}
		return &voicetest.TransportClosedError{Adapter: adapterName, Err: errors.New("the session ended")}
	}
}

// movedLocked wakes those waiting for the audio sender. Call with amu
// held.
func (c *conn) movedLocked() {
	close(c.moved)
	c.moved = make(chan struct{})
}

// audioLoop is the audio sender: each time audio is queued it takes all
// of it and sends it as one realtimeInput message. In real-time pacing it
// finds one frame each time, which goes at once; frames queued faster
// than it can write (Fast pacing, or a backlog) go together, at most
// maxAudioBatch bytes in a message. It runs until the Conn ends.
func (c *conn) audioLoop() {
	defer c.wg.Done()
	for {
		select {
		case <-c.kick:
		case <-c.ctx.Done():
			return
		}
		c.amu.Lock()
		if len(c.queued) == 0 {
			c.amu.Unlock()
			continue
		}
		batch := c.queued
		c.queued, c.busy = c.spare[:0], true
		c.movedLocked()
		c.amu.Unlock()
		err := c.realtime(c.ctx, genai.LiveRealtimeInput{Audio: &genai.Blob{MIMEType: inputMIME, Data: batch}})
		c.amu.Lock()
		c.spare, c.busy = batch, false
		if err != nil && c.sendErr == nil {
			c.sendErr = err
		}
		c.movedLocked()
		c.amu.Unlock()
	}
}

// startLocked opens the user's activity if none is open. Call with sendMu
// held.
func (c *conn) startLocked(ctx context.Context) error {
	if c.active {
		return nil
	}
	if err := c.control(ctx, genai.LiveRealtimeInput{ActivityStart: &genai.ActivityStart{}}); err != nil {
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
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.closedErr(); err != nil {
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
	if err := c.closedErr(); err != nil {
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
	if err := c.control(ctx, genai.LiveRealtimeInput{ActivityEnd: &genai.ActivityEnd{}}); err != nil {
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
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if err := c.startLocked(ctx); err != nil {
		return err
	}
	if err := c.control(ctx, genai.LiveRealtimeInput{Text: text}); err != nil {
		return err
	}
	if err := c.realtime(ctx, genai.LiveRealtimeInput{ActivityEnd: &genai.ActivityEnd{}}); err != nil {
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
func (c *conn) Recv(ctx context.Context) (voicetest.AgentEvent, error) { return c.q.Recv(ctx) }

// WireStats reports the messages exchanged through the SDK
// (voicetest.WireStatsReporter) and the server's interruptions as clears.
// Bytes are not counted: the SDK reads and writes the WebSocket itself, so
// the adapter sees messages, not frames' sizes.
func (c *conn) WireStats() voicetest.WireStats { return c.stats.Snapshot(adapterName) }

// Close ends the session and waits for the adapter's goroutines. It
// returns an error only when the model's events went past
// WSOptions.MaxQueueBytes while nothing read them (a *voicetest.LimitError).
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closing = true
		c.mu.Unlock()
		c.cancel()
		c.sess.Close()
		c.wg.Wait()
		c.writeTimer.Stop()
		c.capture.Note("closed", "closed by voicetest")
	})
	// A queue overflow is never silent, even when nothing read it from
	// Recv. (An oversized message is an event Recv reports, as wire.Conn
	// does: Close does not repeat it.)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.limit
}

// push queues events (scrubbed) and an error; past MaxQueueBytes it ends
// the session.
func (c *conn) push(evs []voicetest.AgentEvent, err error) {
	items := make([]evqueue.Item, 0, len(evs)+1)
	for i := range evs {
		wire.ScrubEvent(c.scrub, &evs[i])
		items = append(items, evqueue.Item{Ev: evs[i]})
	}
	if err != nil {
		items = append(items, evqueue.Item{Err: err})
	}
	if len(items) == 0 || c.q.Push(items...) {
		return
	}
	le := &voicetest.LimitError{What: "the model's events queued by the " + adapterName + " adapter while the runner was not reading",
		Limit: c.opts.MaxQueueBytes, Unit: "bytes", Name: "WSOptions.MaxQueueBytes", Setting: "WSOptions.MaxQueueBytes"}
	c.mu.Lock()
	if c.limit == nil {
		c.limit = le
	}
	c.mu.Unlock()
	c.kill(le)
}

// kill ends the session for cause.
func (c *conn) kill(cause error) {
	c.mu.Lock()
	if c.cause == nil {
		c.cause = cause
	}
	c.mu.Unlock()
	c.sess.Close()
}

// readLoop receives the server's messages until the session ends.
func (c *conn) readLoop() {
	defer c.wg.Done()
	for {
		msg, err := c.sess.Receive()
		if err != nil {
			if ferr := c.messageError(err); ferr != nil {
				c.push(nil, ferr)
				continue
			}
			c.finish(err)
			return
		}
		c.stats.FrameIn(0)
		if c.capt {
			if b, err := json.Marshal(msg); err == nil {
				c.capture.Frame("recv", websocket.MessageText, b)
			}
		}
		evs, err := c.decode(msg)
		var le *voicetest.LimitError
		var ga *GoAwayError
		switch {
		case errors.As(err, &le):
			c.push(evs, nil)
			c.kill(le)
			c.finish(le) // reports the cause; what the SDK has buffered is dropped
			return
		case err != nil && !errors.As(err, &ga):
			b, _ := json.Marshal(msg)
			err = &wire.FrameError{Adapter: adapterName, Frame: wire.Excerpt(c.scrub.Bytes(b)), Err: wire.ScrubError(c.scrub, err)}
		}
		c.push(evs, err)
		c.answerQueued()
	}
}

// messageError returns the error Recv reports for an error of the SDK's
// Receive that concerns one message (the connection goes on), or nil for
// one that ends the connection.
func (c *conn) messageError(err error) error {
	msg := err.Error()
	if strings.HasPrefix(msg, "received error in response: ") {
		return &Error{Message: excerpt(c.scrub.String(strings.TrimPrefix(msg, "received error in response: ")))}
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) || strings.HasPrefix(msg, "mapToStruct") || strings.HasPrefix(msg, "invalid message format") {
		// The SDK's message holds the whole frame: keep its start.
		return &wire.FrameError{Adapter: adapterName, Frame: excerpt(c.scrub.String(msg)), Err: errors.New("the SDK could not parse a server message")}
	}
	return nil
}

// excerpt returns at most 300 bytes of s.
func excerpt(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// finish records why the session ended.
func (c *conn) finish(err error) {
	c.mu.Lock()
	closing, cause := c.closing, c.cause
	c.mu.Unlock()
	var ce *gorilla.CloseError
	var terminal *voicetest.TransportClosedError
	switch {
	case cause != nil:
		terminal = &voicetest.TransportClosedError{Adapter: adapterName, Err: cause}
	case closing:
		terminal = &voicetest.TransportClosedError{Adapter: adapterName}
	case errors.As(err, &ce) && (ce.Code == gorilla.CloseNormalClosure || ce.Code == gorilla.CloseGoingAway):
		reason := fmt.Sprintf("the server closed the session (status %d)", ce.Code)
		if ce.Text != "" {
			reason += ": " + c.scrub.String(ce.Text)
		}
		c.q.Push(evqueue.Item{Ev: voicetest.AgentEvent{Kind: voicetest.AgentHangUp, Text: reason}})
		c.logf("%s: the agent hung up: %s", adapterName, reason)
		terminal = &voicetest.TransportClosedError{Adapter: adapterName}
	case errors.As(err, &ce):
		terminal = &voicetest.TransportClosedError{Adapter: adapterName, Err: fmt.Errorf("the server closed the session with status %d: %s", ce.Code, c.scrub.String(ce.Text))}
	default:
		terminal = &voicetest.TransportClosedError{Adapter: adapterName, Err: fmt.Errorf("connection lost: %w", wire.ScrubError(c.scrub, err))}
	}
	if !closing && terminal.Err != nil {
		c.logf("%s: %v", adapterName, terminal)
	}
	c.capture.Note("close", terminal.Error())
	c.q.Close(terminal)
	c.cancel()
}

// payloadSize is the size of a message's payload as it was sent: its
// audio in base64 and its text.
func payloadSize(m *genai.LiveServerMessage) int64 {
	var n int64
	if sc := m.ServerContent; sc != nil {
		if mt := sc.ModelTurn; mt != nil {
			for _, p := range mt.Parts {
				if p == nil {
					continue
				}
				if p.InlineData != nil {
					n += int64(len(p.InlineData.Data)+2) / 3 * 4
				}
				n += int64(len(p.Text))
			}
		}
		for _, t := range []*genai.Transcription{sc.InputTranscription, sc.OutputTranscription} {
			if t != nil {
				n += int64(len(t.Text))
			}
		}
	}
	if tc := m.ToolCall; tc != nil {
		for _, f := range tc.FunctionCalls {
			if f != nil {
				b, _ := json.Marshal(f.Args)
				n += int64(len(b) + len(f.Name) + len(f.ID))
			}
		}
	}
	return n
}

// decode turns one server message into events. It runs on the reader
// goroutine.
func (c *conn) decode(m *genai.LiveServerMessage) ([]voicetest.AgentEvent, error) {
	if n := payloadSize(m); n > c.opts.MaxFrameBytes {
		return nil, &voicetest.LimitError{What: fmt.Sprintf("a message from the Gemini Live server (%d bytes of payload)", n),
			Limit: c.opts.MaxFrameBytes, Unit: "bytes", Name: "WSOptions.MaxFrameBytes", Setting: "WSOptions.MaxFrameBytes"}
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
	}
	if tcc := m.ToolCallCancellation; tcc != nil {
		known = true
		evs = append(evs, voicetest.AgentEvent{Kind: voicetest.AgentLog, Text: "the model cancelled its tool calls " + strings.Join(tcc.IDs, ", ")})
	}
	if ga := m.GoAway; ga != nil {
		c.logf("%s: goAway: the server ends the session in %v", adapterName, ga.TimeLeft)
		return evs, &GoAwayError{TimeLeft: ga.TimeLeft}
	}
	if !known && wire.LogOnce(c.unknown, "message") {
		b, _ := json.Marshal(m)
		c.logf("%s: ignoring a server message with nothing this adapter knows: %s (logged once)", adapterName, excerpt(c.scrub.String(string(b))))
	}
	return evs, nil
}

// serverContent decodes one serverContent.
func (c *conn) serverContent(sc *genai.LiveServerContent) ([]voicetest.AgentEvent, error) {
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
			c.stats.Clear()
			evs = append(c.down.Flush(evs), voicetest.AgentEvent{Kind: voicetest.AgentInterrupted, Text: "interrupted by the user's activity"})
			evs = c.agentFinal(evs)
		} else {
			c.logf("%s: an interrupted with nothing said since the last turn (the service's empty interrupted/turnComplete pair); ignored", adapterName)
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
func (c *conn) audio(evs []voicetest.AgentEvent, b *genai.Blob) ([]voicetest.AgentEvent, error) {
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

// toolCalls reports the model's function calls and, with OnToolCall set,
// answers them on a goroutine that Close waits for.
func (c *conn) toolCalls(tc *genai.LiveServerToolCall) []voicetest.AgentEvent {
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
		c.answer = append(c.answer, calls...)
	}
	return evs
}

// answerQueued answers, on a goroutine that Close waits for, the tool
// calls of the message whose events were just queued. It runs on the
// reader goroutine.
func (c *conn) answerQueued() {
	if len(c.answer) == 0 {
		return
	}
	calls := c.answer
	c.answer = nil
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.answerTools(calls)
	}()
}

// answerTools runs OnToolCall for each call and sends the responses.
func (c *conn) answerTools(calls []voicetest.ToolCall) {
	var resps []*genai.FunctionResponse
	for _, call := range calls {
		res, _ := wire.RunTool(c.ctx, c.onTool, call)
		c.push([]voicetest.AgentEvent{{Kind: voicetest.AgentToolResult, Tool: &res}}, nil)
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
		resps = append(resps, &genai.FunctionResponse{ID: call.ID, Name: call.Name, Response: response})
	}
	in := genai.LiveToolResponseInput{FunctionResponses: resps}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	err := c.write(c.ctx, func() ([]byte, error) {
		return json.Marshal(map[string]any{"toolResponse": in})
	}, func() error { return c.sess.SendToolResponse(in) })
	if err != nil && c.ctx.Err() == nil {
		c.logf("%s: sending the tool responses: %v", adapterName, err)
	}
}
