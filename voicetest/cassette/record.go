package cassette

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"sync"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// recording is one conversation being recorded: the caller's calls as
// turns, and every result of Recv in the turn that was the caller's latest
// when it came, timed from the start of that call (or frame).
type recording struct {
	scrub *scrubber

	mu       sync.Mutex
	conv     conversation
	last     time.Time // when the caller's latest call (or frame) began
	frame    int       // the latest frame of an audio turn
	inAudio  bool      // the latest turn is audio still taking frames
	sum      hash.Hash // of the audio turn's samples
	buf      []byte    // a frame's bytes, for sum
	events   int
	audio    int // samples of agent audio
	maxAudio int
	failed   error
}

func newRecording(s voicetest.Session, caps voicetest.Capabilities, scrub *scrubber) *recording {
	return &recording{
		scrub:    scrub,
		conv:     conversation{Scenario: scrub.text(s.Name), Rate: s.Rate, Capabilities: caps, Turns: []turn{{Turn: 0, Caller: callConnect}}},
		last:     time.Now(),
		maxAudio: pcm.SamplesFor(s.Rate, maxAgentAudio),
	}
}

// cur returns the latest turn. Call with mu held.
func (r *recording) cur() *turn { return &r.conv.Turns[len(r.conv.Turns)-1] }

// call starts a turn for a call of the caller other than SendAudio and
// returns it. Call with mu held.
func (r *recording) call(kind, text string) {
	r.closeAudio()
	r.conv.Turns = append(r.conv.Turns, turn{Turn: len(r.conv.Turns), Caller: kind, Text: text})
	r.last, r.frame = time.Now(), 0
}

// closeAudio completes the audio turn that is taking frames, if any. Call
// with mu held.
func (r *recording) closeAudio() {
	if !r.inAudio {
		return
	}
	t := r.cur()
	t.Audio.SHA256 = hex.EncodeToString(r.sum.Sum(nil))
	t.Audio.Duration = pcm.DurationOf(t.Audio.Samples, r.conv.Rate).String()
	r.inAudio = false
}

// addFrame records a frame of the caller's audio, starting an audio turn
// if the latest turn is not one. Call with mu held.
func (r *recording) addFrame(c pcm.Chunk) {
	if !r.inAudio {
		r.conv.Turns = append(r.conv.Turns, turn{Turn: len(r.conv.Turns), Caller: callAudio, Audio: &callerAudio{}})
		r.inAudio = true
		r.sum = sha256.New()
	}
	t := r.cur()
	r.frame = t.Audio.Frames
	t.Audio.Frames++
	t.Audio.Samples += c.Len()
	r.buf = c.AppendBytes(r.buf[:0])
	r.sum.Write(r.buf)
	r.last = time.Now()
}

// callErr records what the caller's latest call returned. Call with mu
// held.
func (r *recording) callErr(err error) {
	if err == nil {
		return
	}
	t := r.cur()
	t.Error = &callError{Frame: r.frame, Message: r.scrub.text(err.Error()), Closed: errors.Is(err, voicetest.ErrTransportClosed)}
	if t.Caller != callAudio {
		t.Error.Frame = 0
	}
	// A failed frame ends its turn: the runner sends no more of it.
	r.closeAudio()
}

// event records a result of Recv.
func (r *recording) event(ev voicetest.AgentEvent, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failed != nil {
		return
	}
	r.events++
	if r.events > maxEvents {
		r.failed = fmt.Errorf("the agent sent more than %d events", maxEvents)
		return
	}
	t := r.cur()
	e := event{After: millis(time.Since(r.last))}
	if t.Caller == callAudio {
		e.Frame = r.frame
	}
	if err != nil {
		e.Kind, e.Error, e.Closed = kindError, r.scrub.text(err.Error()), errors.Is(err, voicetest.ErrTransportClosed)
		t.Events = append(t.Events, e)
		return
	}
	e.Kind = ev.Kind.String()
	switch ev.Kind {
	case voicetest.AgentAudio:
		e.Samples = ev.Audio.Len()
		e.Empty = e.Samples == 0
		if ev.Audio.Rate != r.conv.Rate {
			e.Rate = max(ev.Audio.Rate, 0)
		}
		r.audio += e.Samples
		if r.audio > r.maxAudio {
			r.failed = fmt.Errorf("the agent sent more than %v of audio", maxAgentAudio)
			return
		}
		t.agent = append(t.agent, ev.Audio.Samples...)
	case voicetest.AgentToolCall, voicetest.AgentToolResult:
		if ev.Tool != nil {
			tc := *ev.Tool
			r.scrub.tool(&tc)
			e.Tool = &tc
		}
	}
	e.Text = r.scrub.text(ev.Text)
	e.Final = ev.Final
	e.BeforeSpeech = ev.BeforeSpeech
	e.Speech = millis(max(ev.Speech, 0))
	e.Data = r.scrub.json(ev.Data)
	if (ev.Kind == voicetest.AgentToolCall || ev.Kind == voicetest.AgentToolResult) && e.Tool == nil {
		// The runner rejects it; keep the kind's shape valid.
		e.Kind, e.Error = kindError, fmt.Sprintf("the adapter sent a %s event with no Tool", ev.Kind)
	}
	t.Events = append(t.Events, e)
}

// finish returns the recorded conversation.
func (r *recording) finish() (conversation, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closeAudio()
	if r.failed != nil {
		return conversation{}, r.failed
	}
	return r.conv, nil
}

// recordConn is a live Conn whose conversation a recording keeps.
type recordConn struct {
	inner voicetest.Conn
	rec   *recording
}

func (c *recordConn) Capabilities() voicetest.Capabilities { return c.inner.Capabilities() }

func (c *recordConn) SendAudio(ctx context.Context, ch pcm.Chunk) error {
	c.rec.mu.Lock()
	c.rec.addFrame(ch)
	c.rec.mu.Unlock()
	err := c.inner.SendAudio(ctx, ch)
	c.done(err)
	return err
}

func (c *recordConn) EndUtterance(ctx context.Context) error {
	return c.do(callEnd, "", func() error { return c.inner.EndUtterance(ctx) })
}

func (c *recordConn) SendText(ctx context.Context, text string) error {
	return c.do(callText, c.rec.scrub.text(text), func() error { return c.inner.SendText(ctx, text) })
}

func (c *recordConn) SendDTMF(ctx context.Context, digits string) error {
	return c.do(callDTMF, digits, func() error { return c.inner.SendDTMF(ctx, digits) })
}

func (c *recordConn) Interrupt(ctx context.Context) error {
	return c.do(callInterrupt, "", func() error { return c.inner.Interrupt(ctx) })
}

// do records a call of the caller, makes it, and records its error.
func (c *recordConn) do(kind, text string, call func() error) error {
	c.rec.mu.Lock()
	c.rec.call(kind, text)
	c.rec.mu.Unlock()
	err := call()
	c.done(err)
	return err
}

func (c *recordConn) done(err error) {
	if err == nil {
		return
	}
	c.rec.mu.Lock()
	c.rec.callErr(err)
	c.rec.mu.Unlock()
}

func (c *recordConn) Recv(ctx context.Context) (voicetest.AgentEvent, error) {
	ev, err := c.inner.Recv(ctx)
	if err != nil && ctx.Err() != nil {
		// The runner is done listening: not part of the conversation.
		return ev, err
	}
	c.rec.event(ev, err)
	return ev, err
}

func (c *recordConn) Close() error {
	err := c.inner.Close()
	c.rec.mu.Lock()
	c.rec.closeAudio()
	c.rec.mu.Unlock()
	return err
}
