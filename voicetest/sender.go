package voicetest

import (
	"context"
	"errors"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
)

// audioSender calls the adapter's SendAudio on a goroutine of its own, as
// call does for the other calls into code voicetest does not control (see
// callee.go), but without a goroutine, a context and a timer per 20 ms
// frame: one goroutine serves the run's frames, one context bounds an
// utterance. A SendAudio that does not return by the utterance's bound is
// left running; the next utterance gets a new sender.
type audioSender struct {
	req  chan audioFrame
	done chan callOutcome
}

// audioFrame is one SendAudio call.
type audioFrame struct {
	ctx context.Context
	c   pcm.Chunk
}

// newAudioSender starts the goroutine that calls conn.SendAudio for each
// frame sent on req, until req is closed.
func newAudioSender(conn Conn, name string) *audioSender {
	s := &audioSender{req: make(chan audioFrame), done: make(chan callOutcome, 1)}
	go func() {
		for f := range s.req {
			s.done <- sendOne(conn, name, f)
		}
	}()
	return s
}

// sendOne calls SendAudio, turning a panic into an error and reporting a
// runtime.Goexit (which ends the sender's goroutine).
func sendOne(conn Conn, name string, f audioFrame) (o callOutcome) {
	returned := false
	defer func() {
		if returned {
			return
		}
		if p := recover(); p != nil {
			o = callOutcome{err: &panicError{callee: name, value: p, stack: debug.Stack()}}
			return
		}
		o = callOutcome{goexit: true}
	}()
	err := conn.SendAudio(f.ctx, f.c)
	returned = true
	return callOutcome{err: err}
}

// close ends the sender's goroutine once it has sent what it was given.
func (s *audioSender) close() { close(s.req) }

// utterance bounds the sending of one utterance of length d: within d
// plus Timeouts.FirstChunk. It returns the context of its frames.
func (r *runner) utterance(ctx context.Context, d time.Duration) (context.Context, callee, context.CancelFunc) {
	c := r.line("SendAudio")
	c.limit = d + r.cfg.Timeouts.FirstChunk
	sctx, cancel := context.WithTimeout(ctx, c.limit)
	return sctx, c, cancel
}

// sendFrame sends one frame of the utterance that sctx bounds (c
// describes it) on the run's sender. It returns SendAudio's error, or
// call's errors when the bound passes or ctx ends first.
func (r *runner) sendFrame(ctx, sctx context.Context, c callee, f pcm.Chunk) error {
	if r.prompt {
		err := callPrompt(sctx, c, func(ctx context.Context) error { return r.conn.SendAudio(ctx, f) })
		if err != nil && ctx.Err() == nil && errors.Is(sctx.Err(), context.DeadlineExceeded) {
			return c.timeoutError()
		}
		return err
	}
	if r.sender == nil {
		r.sender = newAudioSender(r.conn, c.who())
	}
	s := r.sender
	s.req <- audioFrame{ctx: sctx, c: f} // it waits for frames when not sending one
	var o callOutcome
	select {
	case o = <-s.done:
	case <-sctx.Done():
		select {
		case o = <-s.done: // it returned at the same instant
		default:
			// Leave it stuck in SendAudio; it ends once that returns.
			r.sender = nil
			s.close()
			return c.abandon(ctx, r.stray, s.done)
		}
	}
	if o.goexit {
		r.sender = nil // its goroutine has ended
		runtime.Goexit()
	}
	if o.err != nil && ctx.Err() == nil && errors.Is(sctx.Err(), context.DeadlineExceeded) {
		return c.timeoutError()
	}
	return o.err
}

// closeSender ends the sender's goroutine, if any.
func (r *runner) closeSender() {
	if r.sender != nil {
		r.sender.close()
		r.sender = nil
	}
}
