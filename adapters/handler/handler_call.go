package handler

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"time"
	"unicode"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// Call is a handler's view of one conversation: the outputs it can make and
// the session data it shares with its background tasks.
//
// Each handler call gets its own Call, valid until the handler returns (use
// Go for work that outlives it); each background task gets one valid until
// the task returns. All views of a conversation share its session data.
//
// Speech methods (Say, SayWith, Play, Silence) block while the agent speaks
// — the agent has one voice, so they wait for earlier speech first — and
// return ErrInterrupted when the user barges in. The other outputs are
// queued and return at once; every output is emitted in the order the view
// made it.
type Call struct {
	c      *handlerConn
	ctx    context.Context
	callID int    // > 0 for a handler call's view
	task   string // task name for a task's view
	rank   int    // task number, 1-based, for a task's view
	stop   bool   // the view of the StopEvent call
}

// SayOptions tune one utterance.
type SayOptions struct {
	// Voice overrides the agent's TTS voice (audio mode).
	Voice string
	// Instructions steer the TTS delivery where the engine supports it.
	Instructions string
	// Uninterruptible makes the user unable to barge in on this utterance:
	// Conn.Interrupt and user speech leave it playing.
	Uninterruptible bool
}

// Task returns the name of the background task this view belongs to, or ""
// for a handler call.
func (c *Call) Task() string { return c.task }

// Say speaks text and returns when it has been said, or with ErrInterrupted
// when the user barged in. In text mode it emits an AgentTranscript whose
// Speech is the time the words take (see WithWordsPerMinute) and is busy for
// that long; in audio mode it synthesises text and emits the audio and the
// transcript as AudioMode describes.
func (c *Call) Say(text string) error { return c.SayWith(text, SayOptions{}) }

// SayWith is Say with options.
func (c *Call) SayWith(text string, o SayOptions) error {
	words := countFields(text)
	if words == 0 {
		return fmt.Errorf("adapters: Say(%q): nothing to say; pass the text the agent speaks", text)
	}
	r := c.newSpeech()
	r.kind, r.text, r.interruptible = outSay, text, !o.Uninterruptible
	if c.c.cfg.audio && !c.stop {
		voice := c.c.cfg.voice
		if o.Voice != "" {
			voice = o.Voice
		}
		audio, err := c.c.cfg.tts.Synthesize(c.ctx, voicetest.SpeechRequest{
			Text: text, Voice: voice, Instructions: o.Instructions, Rate: c.c.sess.Rate,
		})
		if err != nil {
			return fmt.Errorf("adapters: handler agent: synthesising %q: %w", text, err)
		}
		if audio.Rate != c.c.sess.Rate {
			if audio, err = pcm.Resample(audio, c.c.sess.Rate); err != nil {
				return fmt.Errorf("adapters: handler agent: converting the TTS audio for %q to the session rate: %w", text, err)
			}
		}
		r.audio = audio
		r.dur = audio.Duration()
	} else {
		r.dur = time.Duration(float64(words) * float64(time.Minute) / c.c.cfg.wpm)
	}
	return c.speak(r)
}

// countFields is len(strings.Fields(s)), without making the slice.
func countFields(s string) int {
	n, in := 0, false
	for _, r := range s {
		space := unicode.IsSpace(r)
		if !space && !in {
			n++
		}
		in = !space
	}
	return n
}

// Play plays recorded audio (converted to the session's sample rate) and
// returns when it has been played (or with ErrInterrupted). It plays a
// copy: the caller may reuse audio's samples once Play returns. In text mode no
// audio is sent: the agent is busy for the audio's duration and sends an
// AgentLog line saying what it played.
func (c *Call) Play(audio pcm.Chunk) error {
	if err := audio.Validate(); err != nil {
		return fmt.Errorf("adapters: Play: %w", err)
	}
	if c.c.cfg.audio && audio.Rate != c.c.sess.Rate {
		conv, err := pcm.Resample(audio, c.c.sess.Rate)
		if err != nil {
			return fmt.Errorf("adapters: Play: converting %d Hz audio to the session's %d Hz: %w", audio.Rate, c.c.sess.Rate, err)
		}
		audio = conv
	} else if c.c.cfg.audio {
		// The frames are views of what is played, and the recording
		// keeps them: a copy of the caller's samples, which it may reuse
		// once Play returns (TestHandlerPlayKeepsNoCallerBuffer).
		audio = audio.Clone()
	}
	if audio.IsEmpty() {
		return nil
	}
	return c.speak(&outReq{kind: outPlay, audio: audio, dur: audio.Duration(), interruptible: true})
}

// Silence keeps the agent silent, but busy, for d: it pauses between
// utterances (in audio mode it sends silent audio). The user can interrupt
// it like speech.
func (c *Call) Silence(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("adapters: Silence(%v): the duration must not be negative", d)
	}
	if d == 0 {
		return nil
	}
	r := &outReq{kind: outSilence, dur: d, interruptible: true}
	if c.c.cfg.audio {
		r.audio = pcm.Silence(c.c.sess.Rate, d)
	}
	return c.speak(r)
}

// ToolCall reports a tool call the agent makes (AgentToolCall) and returns
// its id, to pass to ToolResult. args is marshalled to JSON (nil for none).
func (c *Call) ToolCall(name string, args any) (string, error) {
	if name == "" {
		return "", fmt.Errorf("adapters: ToolCall: empty tool name")
	}
	raw, err := marshalPayload(args)
	if err != nil {
		return "", fmt.Errorf("adapters: ToolCall(%q): arguments: %w", name, err)
	}
	id := fmt.Sprintf("call_%d", c.c.toolSeq.Add(1))
	c.c.toolNames.Store(id, name)
	ev := voicetest.AgentEvent{Kind: voicetest.AgentToolCall, Tool: &voicetest.ToolCall{ID: id, Name: name, Arguments: raw}}
	return id, c.post(&outReq{kind: outEvent, ev: ev})
}

// ToolResult reports the result of the tool call id (AgentToolResult).
// result is marshalled to JSON; a non-nil toolErr marks the result as an
// error and, when result is nil, becomes {"error": toolErr.Error()}.
func (c *Call) ToolResult(id string, result any, toolErr error) error {
	name, ok := c.c.toolNames.Load(id)
	if !ok {
		return fmt.Errorf("adapters: ToolResult(%q): no such tool call; pass the id ToolCall returned", id)
	}
	if result == nil && toolErr != nil {
		result = map[string]string{"error": toolErr.Error()}
	}
	raw, err := marshalPayload(result)
	if err != nil {
		return fmt.Errorf("adapters: ToolResult(%q): result: %w", id, err)
	}
	ev := voicetest.AgentEvent{Kind: voicetest.AgentToolResult, Tool: &voicetest.ToolCall{
		ID: id, Name: name.(string), Result: raw, IsError: toolErr != nil,
	}}
	return c.post(&outReq{kind: outEvent, ev: ev})
}

// Tool reports a call of the tool name with args, runs fn, reports its
// result, and returns what fn returned. Output errors (a payload that does
// not marshal, a conversation that has ended) are returned in place of fn's
// error only when fn succeeded.
func (c *Call) Tool(name string, args any, fn func() (any, error)) (any, error) {
	id, err := c.ToolCall(name, args)
	if err != nil {
		return nil, err
	}
	res, ferr := fn()
	if err := c.ToolResult(id, res, ferr); err != nil && ferr == nil {
		return res, err
	}
	return res, ferr
}

// Data sends a structured payload (AgentData) named name; payload is
// marshalled to JSON.
func (c *Call) Data(name string, payload any) error {
	raw, err := marshalPayload(payload)
	if err != nil {
		return fmt.Errorf("adapters: Data(%q): %w", name, err)
	}
	return c.post(&outReq{kind: outEvent, ev: voicetest.AgentEvent{Kind: voicetest.AgentData, Text: name, Data: raw}})
}

// Log sends a log line (AgentLog) for the report.
func (c *Call) Log(msg string) error {
	return c.post(&outReq{kind: outEvent, ev: voicetest.AgentEvent{Kind: voicetest.AgentLog, Text: msg}})
}

// HangUp ends the call after the outputs already made: the Conn emits
// AgentHangUp with reason and then reports the transport closed. Later
// outputs return ErrCallEnded.
func (c *Call) HangUp(reason string) error {
	return c.post(&outReq{kind: outHangUp, text: reason})
}

// Emit delivers a CustomEvent to the handler, after the events already
// queued. Background tasks use it to tell the handler their work is done.
func (c *Call) Emit(name string, data any) error {
	return c.c.send(message{kind: msgInput, ev: CustomEvent{Name: name, Data: data}, from: c})
}

// Get returns the session value stored under key.
func (c *Call) Get(key string) (any, bool) {
	c.c.dataMu.Lock()
	defer c.c.dataMu.Unlock()
	v, ok := c.c.data[key]
	return v, ok
}

// Set stores a session value under key, visible to every view of the
// conversation.
func (c *Call) Set(key string, v any) {
	c.c.dataMu.Lock()
	defer c.c.dataMu.Unlock()
	if c.c.data == nil {
		c.c.data = map[string]any{}
	}
	c.c.data[key] = v
}

// Go starts a background task named name and returns at once. The task runs
// concurrently with the handler, with its own Call view; it should honour
// ctx, which is cancelled at Close. A task that returns an error (other than
// ErrInterrupted, ErrCallEnded or, after Close, the context's error) or
// panics ends the conversation with an *Error naming it.
//
// Ordering rule: the agent has one voice and one output stream. While a
// handler call is in progress, the outputs of background tasks are held; they
// are emitted, in the order each task made them, after that call's outputs
// and its AgentTurnEnd, before the next event is handled. Outputs a task
// makes while no handler call is running are emitted at once. Task speech
// forms its own agent turn: when it has been spoken and no other task output
// is waiting, an AgentTurnEnd follows (so a task that says two things in a
// row makes two turns). Between tasks, outputs are ordered by when they were
// made; outputs made at the same virtual instant by different goroutines are
// ordered by arrival, so give concurrent tasks distinct delays when a
// timeline must be exact.
func (c *Call) Go(name string, fn TaskFunc) error {
	if fn == nil {
		return fmt.Errorf("adapters: Go(%q): nil task function", name)
	}
	return c.c.send(message{kind: msgTaskStart, text: name, task: fn})
}

// newSpeech returns a zero output request for a speech: the one an
// earlier speech of the conversation was answered with, if it is spare.
func (c *Call) newSpeech() *outReq {
	if r := c.c.spareSpeech.Swap(nil); r != nil {
		return r
	}
	return new(outReq)
}

// speak posts a speech request and waits until it has been spoken. Once
// answered, the loop holds r no more (no queue, no speech points to it,
// and answer is the last it does with it): it is kept for the next
// speech (newSpeech).
func (c *Call) speak(r *outReq) error {
	err, answered := c.postAnswered(r)
	if answered {
		*r = outReq{}
		c.c.spareSpeech.Store(r)
	}
	return err
}

// post sends an output request to the agent loop and waits for its answer:
// at once for queued outputs, after the speech for speech.
func (c *Call) post(r *outReq) error {
	err, _ := c.postAnswered(r)
	return err
}

// postAnswered is post, which also reports whether the loop answered r
// (rather than ending first).
func (c *Call) postAnswered(r *outReq) (err error, answered bool) {
	r.from = c
	rc := c.c.spareReply.Swap(nil)
	if rc == nil {
		rc = &replyChan{ch: make(chan error, 1)}
	}
	r.reply = rc.ch
	if err := c.c.send(message{kind: msgOutput, out: r}); err != nil {
		return err, false // (the loop is over: it never answers)
	}
	if co := c.c.co.Load(); co != nil && c.callID > 0 && r.isSpeech() {
		co.park(rc) // (on the handler's coroutine: see handler_coro.go)
	}
	select {
	case err := <-rc.ch:
		// Answered: the request no longer refers to the channel (answer
		// clears it before it replies), which is empty again.
		c.c.spareReply.Store(rc)
		return err, true
	case <-c.c.loopDone:
		return ErrCallEnded, false
	}
}

// replyChan is the channel on which the loop answers one output request;
// the conversation keeps one spare (handlerConn.spareReply) for the next
// request.
type replyChan struct{ ch chan error }

// marshalPayload marshals v to JSON; nil stays empty.
func marshalPayload(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	if raw, ok := v.(json.RawMessage); ok {
		if !json.Valid(raw) {
			return nil, fmt.Errorf("invalid JSON %q", raw)
		}
		return raw, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// runProtected calls f, turning a panic into an error and a stack.
func runProtected(f func() error) (stack []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
			stack = debug.Stack()
		}
	}()
	return nil, f()
}
