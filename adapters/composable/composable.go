package composable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// Defaults of Agent.
const (
	// DefaultEndOfSpeech is how much silence after speech the
	// composable agent's energy VAD takes as the end of an utterance,
	// when nothing calls EndUtterance.
	DefaultEndOfSpeech = 800 * time.Millisecond
	// DefaultToolRounds bounds the LLM calls of one turn.
	DefaultToolRounds = 4
	// EndCallTool is the name of the tool Agent.EndCall offers.
	EndCallTool = "end_call"
)

// compVoicedRMS is the RMS level (int16 units, about -44 dBFS) above which
// a short utterance the VAD did not call speech still counts as speech at
// EndUtterance.
const compVoicedRMS = 200

// ToolHandler runs a tool the model called and returns its result
// as JSON. An error is sent to the model as the result (with IsError set),
// not treated as a failure of the agent.
type ToolHandler func(ctx context.Context, call voicetest.ToolCall) (json.RawMessage, error)

// Agent is a voice agent built in process from three engines:
// speech to text, a chat model and text to speech. It is a reference agent
// for examples and for testing voicetest itself, and a quick way to try a
// prompt as a voice agent before building the real one.
//
// Each turn: the user's speech is buffered until EndUtterance (or until its
// energy VAD hears EndOfSpeech of silence after speech, for callers that
// never call EndUtterance), transcribed with the STT (returned as a final
// UserTranscript), appended to the chat history after SystemPrompt, and
// sent to the LLM with Tools; tool calls are run by ToolHandler and
// reported as AgentToolCall and AgentToolResult events, and the model is
// asked again (at most MaxToolRounds calls a turn). The answer is
// synthesised with the TTS at Session.Rate, the parts of the response time
// are reported (AgentTimings: the STT's, the LLM calls', the tools' and
// the TTS's time, for voicetest.Metrics), and the answer is
// streamed as 20 ms AgentAudio
// frames at the pace they play, each word's AgentTranscript delta when its
// audio has played (time taken as proportional to characters), then
// AgentTurnEnd. SendText and SendDTMF skip the STT (DTMF reaches the model
// as "[The caller pressed the keys …]"); SendText, like speech, interrupts
// a response in progress. Events are handed over as Recv takes them, so the
// agent's pacing assumes a reader that keeps up, as the runner does.
//
// Barge-in: voiced user audio (the VAD's start of speech) while the agent
// thinks or speaks, or Interrupt, cancels the response: the engines' calls
// are cancelled, no more audio is sent, AgentInterrupted is returned, and
// the history keeps only the words already spoken. With EndCall, the model
// may call the end_call tool; the agent then says its answer and hangs up
// (AgentHangUp, which ends that turn in place of AgentTurnEnd).
//
// An engine error ends the conversation: Recv returns a
// *voicetest.TransportClosedError that names the engine and wraps the
// error.
//
// # Virtual time
//
// The agent runs in process and, apart from the engines, blocks only on
// channels and timers. Whether it can run on virtual time
// (testing/synctest; see voicetest.Scenario) depends on the engines, so it
// is off unless VirtualClock is set. Set it only when no engine call does
// network or process I/O: fixtures.FakeTTS and FakeSTT, or cached engines
// replaying a committed cache (the CI default: a hit only reads files,
// which completes; a miss fails at once). Engines that run a process
// (flite, pocketsphinx) or call a server (an LLM, OpenAI speech) in record
// mode must run on the real clock: a bubble does not advance its clock
// while a goroutine waits on I/O, and an HTTP client's idle connections
// would outlive the bubble.
//
// Set the fields before the first Connect; an Agent may then
// serve parallel scenarios.
type Agent struct {
	// STT, LLM and TTS are the engines. STT may be nil for an agent that
	// only takes text.
	STT voicetest.STT
	LLM voicetest.LLM
	TTS voicetest.TTS
	// SystemPrompt starts the chat history.
	SystemPrompt string
	// Greeting, when set, is said first, before the user speaks.
	Greeting string
	// Model overrides the LLM client's model when set.
	Model string
	// Temperature and Seed are passed to the LLM (nil: its defaults).
	Temperature *float64
	Seed        *int64
	// Voice and Speed are passed to the TTS.
	Voice string
	Speed float64
	// Language is passed to the STT.
	Language string
	// Tools are offered to the model; ToolHandler runs them. A tool call
	// with no handler gets an error result.
	Tools       []voicetest.ToolSpec
	ToolHandler ToolHandler
	// EndCall offers the model the end_call tool, with which it hangs up
	// after its answer.
	EndCall bool
	// MaxToolRounds bounds the LLM calls of one turn (default 4).
	MaxToolRounds int
	// EndOfSpeech is the silence that ends an utterance for the energy VAD
	// (default 800 ms). The runner calls EndUtterance anyway.
	EndOfSpeech time.Duration
	// VirtualClock declares that the agent may run on virtual time; see
	// the type's documentation for when that is honest.
	VirtualClock bool
}

// New returns an STT → LLM → TTS agent. See Agent for the
// fields that tune it.
func New(stt voicetest.STT, llm voicetest.LLM, tts voicetest.TTS) *Agent {
	return &Agent{STT: stt, LLM: llm, TTS: tts}
}

// VirtualTime reports VirtualClock, for voicetest.Scenario.
func (a *Agent) VirtualTime() bool { return a.VirtualClock }

// Connect starts a conversation; the agent says its Greeting first, if any.
func (a *Agent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	switch {
	case s.Rate < pcm.MinVADRate:
		return nil, fmt.Errorf("adapters: composable: session rate %d Hz; the agent needs at least %d Hz", s.Rate, pcm.MinVADRate)
	case a.LLM == nil:
		return nil, errors.New("adapters: composable: no LLM; pass one to composable.New")
	case a.TTS == nil:
		return nil, errors.New("adapters: composable: no TTS; pass one to composable.New")
	case a.MaxToolRounds < 0:
		return nil, fmt.Errorf("adapters: composable: MaxToolRounds %d is negative", a.MaxToolRounds)
	case a.EndOfSpeech < 0:
		return nil, fmt.Errorf("adapters: composable: EndOfSpeech %v is negative", a.EndOfSpeech)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	vcfg := pcm.DefaultVADConfig()
	vcfg.Hangover = a.EndOfSpeech
	if vcfg.Hangover == 0 {
		vcfg.Hangover = DefaultEndOfSpeech
	}
	vad, err := pcm.NewVAD(s.Rate, vcfg)
	if err != nil {
		return nil, fmt.Errorf("adapters: composable: EndOfSpeech %v: %w", a.EndOfSpeech, err)
	}
	logf := s.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	c := &compConn{
		a:      *a,
		rate:   s.Rate,
		logf:   logf,
		vad:    vad,
		inputs: make(chan compInput, 16),
		out:    make(chan voicetest.AgentEvent),
		ended:  make(chan struct{}),
	}
	if c.a.MaxToolRounds == 0 {
		c.a.MaxToolRounds = DefaultToolRounds
	}
	c.a.Tools = append([]voicetest.ToolSpec(nil), a.Tools...)
	if a.EndCall {
		c.a.Tools = append(c.a.Tools, voicetest.ToolSpec{Name: EndCallTool,
			Description: "End the call. Call it when the conversation is over; your answer is said before hanging up.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"reason":{"type":"string"}}}`)})
	}
	if a.SystemPrompt != "" {
		c.history = append(c.history, voicetest.ChatMessage{Role: voicetest.ChatSystem, Content: a.SystemPrompt})
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.wg.Add(1)
	go c.run()
	return c, nil
}

// compInput is one user input for the agent loop.
type compInput struct {
	audio pcm.Chunk // speech to transcribe, or
	text  string    // text (SendText, SendDTMF)
}

// compConn is one conversation with an Agent.
type compConn struct {
	a    Agent
	rate int
	logf func(string, ...any)

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	inputs chan compInput
	out    chan voicetest.AgentEvent
	ended  chan struct{} // closed when no more events will come
	term   error         // what Recv returns after ended

	// Owned by the runner's sending goroutine.
	vad      *pcm.VAD
	vadEvs   []pcm.VADEvent
	buf      []int16 // user audio since the last utterance ended
	bufStart int64   // stream offset of buf[0]
	voiced   bool    // the VAD heard speech in buf

	// Shared between the sending goroutine and the agent loop.
	mu         sync.Mutex
	respCancel context.CancelFunc // cancels the response in progress
	closeOnce  sync.Once

	// Owned by the agent loop.
	history []voicetest.ChatMessage
	parts   voicetest.Timings // the response in progress's (AgentTimings)
}

// Capabilities reports what the composable agent supports.
func (c *compConn) Capabilities() voicetest.Capabilities {
	f := voicetest.AudioFormat{Encoding: "pcm16", Rate: c.rate}
	return voicetest.Capabilities{
		Adapter:              "composable",
		Audio:                c.a.STT != nil,
		Text:                 true,
		InputFormat:          f,
		OutputFormat:         f,
		StreamingTranscripts: true,
		NativeVAD:            true,
		DTMF:                 true,
		NativeInterrupt:      true,
		TurnEnd:              true,
		ToolEvents:           true,
		VirtualTime:          c.a.VirtualClock,
	}
}

// closedErr returns the terminal error once the conversation is over.
func (c *compConn) closedErr() error {
	select {
	case <-c.ended:
		return c.term
	default:
		return nil
	}
}

// SendAudio buffers user speech. The energy VAD's start of speech while the
// agent responds is a barge-in; its end of speech ends the utterance.
func (c *compConn) SendAudio(ctx context.Context, ch pcm.Chunk) error {
	if c.a.STT == nil {
		return &voicetest.UnsupportedError{Adapter: "composable", Capability: "audio input",
			Alternative: "the agent has no STT: send text, or pass an STT to composable.New"}
	}
	if ch.Rate != c.rate {
		return fmt.Errorf("adapters: composable: SendAudio got %d Hz audio, the session rate is %d Hz; resample it first (pcm.Resample)", ch.Rate, c.rate)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.closedErr(); err != nil {
		return err
	}
	c.buf = append(c.buf, ch.Samples...)
	c.vadEvs = c.vad.Process(c.vadEvs[:0], ch.Samples)
	for _, ev := range c.vadEvs {
		switch ev.Type {
		case pcm.SpeechStart:
			c.voiced = true
			c.interruptResponse()
		case pcm.SpeechEnd:
			// The utterance ends where the speech did; the rest stays
			// buffered for the next one.
			cut := int(max(ev.Sample-c.bufStart, 0))
			cut = min(cut, len(c.buf))
			if err := c.endUtterance(ctx, cut); err != nil {
				return err
			}
		}
	}
	return nil
}

// EndUtterance hands the buffered speech to the agent.
func (c *compConn) EndUtterance(ctx context.Context) error {
	if c.a.STT == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.closedErr(); err != nil {
		return err
	}
	// Speech shorter than the VAD's MinSpeech is still speech when the
	// caller says the utterance is over.
	if !c.voiced && (c.vad.Speaking() || pcm.RMS(pcm.Chunk{Rate: c.rate, Samples: c.buf}) > compVoicedRMS) {
		c.voiced = true
	}
	err := c.endUtterance(ctx, len(c.buf))
	c.vad.Reset()
	c.bufStart = 0
	c.buf = c.buf[:0]
	return err
}

// endUtterance sends buf[:cut] to the agent if it held speech.
func (c *compConn) endUtterance(ctx context.Context, cut int) error {
	audio := append([]int16(nil), c.buf[:cut]...)
	voiced := c.voiced
	c.buf = c.buf[:copy(c.buf, c.buf[cut:])]
	c.bufStart += int64(cut)
	c.voiced = false
	if !voiced || len(audio) == 0 {
		return nil
	}
	return c.input(ctx, compInput{audio: pcm.Chunk{Rate: c.rate, Samples: audio}})
}

// input queues an input for the agent loop.
func (c *compConn) input(ctx context.Context, in compInput) error {
	select {
	case c.inputs <- in:
		return nil
	case <-c.ended:
		return c.term
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SendText gives the agent a user message as text.
func (c *compConn) SendText(ctx context.Context, text string) error {
	if strings.TrimSpace(text) == "" {
		return errors.New("adapters: composable: SendText with empty text")
	}
	if err := c.closedErr(); err != nil {
		return err
	}
	c.interruptResponse()
	return c.input(ctx, compInput{text: text})
}

// SendDTMF tells the model which keys the caller pressed.
func (c *compConn) SendDTMF(ctx context.Context, digits string) error {
	if err := checkDTMFDigits(digits); err != nil {
		return fmt.Errorf("adapters: composable: %w", err)
	}
	if err := c.closedErr(); err != nil {
		return err
	}
	return c.input(ctx, compInput{text: "[The caller pressed the keys " + digits + "]"})
}

// checkDTMFDigits reports whether digits are all DTMF keys.
func checkDTMFDigits(digits string) error {
	if digits == "" {
		return errors.New("SendDTMF with no digits")
	}
	for _, r := range digits {
		if !(r >= '0' && r <= '9' || r == '*' || r == '#' || r >= 'A' && r <= 'D') {
			return fmt.Errorf("SendDTMF(%q): %q is not a DTMF key (use 0-9, *, #, A-D)", digits, r)
		}
	}
	return nil
}

// Interrupt cancels the agent's response in progress, if any.
func (c *compConn) Interrupt(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.closedErr(); err != nil {
		return err
	}
	c.interruptResponse()
	return nil
}

// interruptResponse cancels the response in progress.
func (c *compConn) interruptResponse() {
	c.mu.Lock()
	if c.respCancel != nil {
		c.respCancel()
	}
	c.mu.Unlock()
}

// Recv returns the agent's next event.
func (c *compConn) Recv(ctx context.Context) (voicetest.AgentEvent, error) {
	select {
	case ev := <-c.out:
		return ev, nil
	case <-c.ended:
		select {
		case ev := <-c.out: // the loop may still be handing one over
			return ev, nil
		default:
		}
		return voicetest.AgentEvent{}, c.term
	case <-ctx.Done():
		return voicetest.AgentEvent{}, ctx.Err()
	}
}

// Close ends the conversation, cancelling any engine call in progress,
// and waits for the agent loop to stop.
func (c *compConn) Close() error {
	c.closeOnce.Do(func() {
		c.cancel()
		c.wg.Wait()
	})
	return nil
}

// errHungUp ends the loop after the agent hung up.
var errHungUp = errors.New("the agent hung up")

// run is the agent loop: it answers inputs one at a time.
func (c *compConn) run() {
	defer c.wg.Done()
	err := c.loop()
	switch {
	case err == nil || errors.Is(err, errHungUp) || c.ctx.Err() != nil:
		c.term = &voicetest.TransportClosedError{Adapter: "composable"}
	default:
		c.term = &voicetest.TransportClosedError{Adapter: "composable", Err: err}
		c.logf("composable: %v", err)
	}
	close(c.ended)
}

func (c *compConn) loop() error {
	if c.a.Greeting != "" {
		if err := c.respond(compInput{}, c.a.Greeting); err != nil {
			return err
		}
	}
	for {
		select {
		case <-c.ctx.Done():
			return nil
		case in := <-c.inputs:
			if err := c.respond(in, ""); err != nil {
				return err
			}
		}
	}
}

// emit hands an event to Recv.
func (c *compConn) emit(ev voicetest.AgentEvent) error {
	select {
	case c.out <- ev:
		return nil
	case <-c.ctx.Done():
		return c.ctx.Err()
	}
}

// respond answers one input; say, when set, is said without asking the LLM
// (the greeting). It returns an error only when the conversation must end.
func (c *compConn) respond(in compInput, say string) error {
	rctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	c.respCancel = cancel
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.respCancel = nil
		c.mu.Unlock()
		cancel()
	}()
	interrupted := func() error {
		if c.ctx.Err() != nil {
			return c.ctx.Err()
		}
		return c.emit(voicetest.AgentEvent{Kind: voicetest.AgentInterrupted, Text: "barge-in"})
	}

	hangUp := false
	c.parts = voicetest.Timings{}
	if say == "" {
		text := in.text
		if !in.audio.IsEmpty() {
			began := time.Now()
			tr, err := c.a.STT.Transcribe(rctx, voicetest.TranscriptionRequest{Audio: in.audio, Language: c.a.Language})
			c.parts.STT = time.Since(began)
			if rctx.Err() != nil {
				return interrupted()
			}
			if err != nil {
				return fmt.Errorf("the STT failed on %v of user speech: %w", in.audio.Duration(), err)
			}
			text = strings.TrimSpace(tr.Text)
			if text == "" {
				c.logf("composable: the STT heard nothing in %v of user audio", in.audio.Duration())
				return c.emit(voicetest.AgentEvent{Kind: voicetest.AgentTurnEnd})
			}
			if err := c.emit(voicetest.AgentEvent{Kind: voicetest.UserTranscript, Text: text, Final: true}); err != nil {
				return err
			}
		}
		c.history = append(c.history, voicetest.ChatMessage{Role: voicetest.ChatUser, Content: text})
		var err error
		say, hangUp, err = c.think(rctx)
		if rctx.Err() != nil {
			return interrupted()
		}
		if err != nil {
			return err
		}
	}
	spoken, err := c.speak(rctx, say)
	if spoken != "" {
		c.history = append(c.history, voicetest.ChatMessage{Role: voicetest.ChatAssistant, Content: spoken})
	}
	if rctx.Err() != nil {
		return interrupted()
	}
	if err != nil {
		return err
	}
	if hangUp {
		// The hang-up ends the turn: a turn end before it would let the
		// caller start speaking to an agent that is hanging up.
		if err := c.emit(voicetest.AgentEvent{Kind: voicetest.AgentHangUp, Text: "the agent called " + EndCallTool}); err != nil {
			return err
		}
		return errHungUp
	}
	return c.emit(voicetest.AgentEvent{Kind: voicetest.AgentTurnEnd})
}

// think asks the LLM for the answer, running the tools it calls.
func (c *compConn) think(ctx context.Context) (answer string, hangUp bool, err error) {
	for round := 1; round <= c.a.MaxToolRounds; round++ {
		req := voicetest.ChatRequest{Model: c.a.Model, Messages: c.history, Tools: c.a.Tools,
			Temperature: c.a.Temperature, Seed: c.a.Seed}
		began := time.Now()
		resp, err := c.a.LLM.Complete(ctx, req)
		c.parts.LLM += time.Since(began)
		if err != nil {
			return "", false, fmt.Errorf("the LLM failed (call %d of the turn): %w", round, err)
		}
		msg := resp.Message
		msg.Role = voicetest.ChatAssistant
		if len(msg.ToolCalls) == 0 {
			// The answer joins the history as it is spoken (respond).
			return strings.TrimSpace(msg.Content), hangUp, nil
		}
		c.history = append(c.history, msg)
		for _, call := range msg.ToolCalls {
			tc := call
			if err := c.emit(voicetest.AgentEvent{Kind: voicetest.AgentToolCall, Tool: &tc}); err != nil {
				return "", false, err
			}
			began := time.Now()
			res := c.runTool(ctx, call)
			c.parts.Tools += time.Since(began)
			if call.Name == EndCallTool && c.a.EndCall {
				hangUp = true
			}
			if ctx.Err() != nil {
				return "", false, ctx.Err()
			}
			if err := c.emit(voicetest.AgentEvent{Kind: voicetest.AgentToolResult, Tool: &res}); err != nil {
				return "", false, err
			}
			c.history = append(c.history, voicetest.ChatMessage{Role: voicetest.ChatTool, ToolCallID: call.ID, Content: string(res.Result)})
		}
	}
	return "", false, fmt.Errorf("the LLM was still calling tools after %d calls in one turn; raise composable.Agent.MaxToolRounds or check the tools' results", c.a.MaxToolRounds)
}

// runTool runs one tool call and returns its result.
func (c *compConn) runTool(ctx context.Context, call voicetest.ToolCall) voicetest.ToolCall {
	res := voicetest.ToolCall{ID: call.ID, Name: call.Name, Arguments: call.Arguments}
	var out json.RawMessage
	var err error
	switch {
	case call.Name == EndCallTool && c.a.EndCall:
		out = json.RawMessage(`{"ok":true}`)
	case c.a.ToolHandler == nil:
		err = fmt.Errorf("no handler for tool %q", call.Name)
	default:
		out, err = c.callTool(ctx, call)
		if err == nil && len(out) > 0 && !json.Valid(out) {
			err = fmt.Errorf("tool %q returned invalid JSON %q", call.Name, out)
		}
	}
	if err != nil {
		b, _ := json.Marshal(map[string]string{"error": err.Error()})
		res.Result, res.IsError = b, true
		return res
	}
	if len(out) == 0 {
		out = json.RawMessage(`null`)
	}
	res.Result = out
	return res
}

// callTool runs the tool handler, turning a panic into an error result
// rather than a crash of the test binary.
func (c *compConn) callTool(ctx context.Context, call voicetest.ToolCall) (out json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("tool %q handler panicked: %v", call.Name, p)
		}
	}()
	return c.a.ToolHandler(ctx, call)
}

// speak synthesises text and streams it as 20 ms frames at the pace they
// play, with each word's transcript delta when its audio has played. It
// returns the text actually spoken (all of it unless interrupted).
func (c *compConn) speak(ctx context.Context, text string) (string, error) {
	if strings.TrimSpace(text) == "" {
		return "", nil
	}
	began := time.Now()
	audio, err := c.a.TTS.Synthesize(ctx, voicetest.SpeechRequest{Text: text, Voice: c.a.Voice, Speed: c.a.Speed, Rate: c.rate})
	c.parts.TTS = time.Since(began)
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if err != nil {
		return "", fmt.Errorf("the TTS failed on %q: %w", text, err)
	}
	if err := audio.Validate(); err != nil {
		return "", fmt.Errorf("the TTS returned bad audio for %q: %w", text, err)
	}
	if audio.Rate != c.rate {
		if audio, err = pcm.Resample(audio, c.rate); err != nil {
			return "", fmt.Errorf("resampling the TTS audio: %w", err)
		}
	}
	// The parts of this response's time, before its first audio.
	parts := c.parts
	if err := c.emit(voicetest.AgentEvent{Kind: voicetest.AgentTimings, Timings: &parts}); err != nil {
		return "", err
	}
	words := speechWords(text, audio.Duration())
	said, spoken := 0, 0
	start := time.Now()
	t := time.NewTimer(0)
	defer t.Stop()
	<-t.C
	var at time.Duration
	for _, f := range audio.Frames(voicetest.FrameDuration) {
		if wait := time.Until(start.Add(at)); wait > 0 {
			t.Reset(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				return text[:spoken], ctx.Err()
			}
		} else if ctx.Err() != nil {
			return text[:spoken], ctx.Err()
		}
		// The words whose audio has played.
		for said < len(words) && words[said].at <= at {
			if err := c.emit(voicetest.AgentEvent{Kind: voicetest.AgentTranscript, Text: words[said].text}); err != nil {
				return text[:spoken], err
			}
			spoken += len(words[said].text)
			said++
		}
		if err := c.emit(voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: f}); err != nil {
			return text[:spoken], err
		}
		at += f.Duration()
	}
	for ; said < len(words); said++ {
		if err := c.emit(voicetest.AgentEvent{Kind: voicetest.AgentTranscript, Text: words[said].text}); err != nil {
			return text[:spoken], err
		}
		spoken += len(words[said].text)
	}
	// Let the last frame play before the turn ends.
	if wait := time.Until(start.Add(at)); wait > 0 {
		t.Reset(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			return text[:spoken], ctx.Err()
		}
	}
	return text, nil
}

// spokenWord is a transcript delta and when its audio has played, from the
// start of the speech.
type spokenWord struct {
	at   time.Duration
	text string
}

// speechWords splits text into deltas (each word with the space before
// it), each due when the audio has played as far into dur as the word's
// end is into the text.
func speechWords(text string, dur time.Duration) []spokenWord {
	var out []spokenWord
	from := 0
	for i := 0; i < len(text); {
		for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n') {
			i++
		}
		j := i
		for j < len(text) && text[j] != ' ' && text[j] != '\t' && text[j] != '\n' {
			j++
		}
		if j == i {
			break
		}
		out = append(out, spokenWord{at: time.Duration(float64(dur) * float64(j) / float64(len(text))), text: text[from:j]})
		from, i = j, j
	}
	return out
}
