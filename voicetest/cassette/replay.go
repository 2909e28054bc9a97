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

// minDelay is the least time a replayed event comes after the caller's
// call it follows: never at the very instant of the call, so that on
// virtual time the runner has done with the call before the event arrives,
// on every run.
const minDelay = time.Microsecond

// replayEvent is a recorded result of Recv, ready to serve.
type replayEvent struct {
	unit  int           // the caller's call (or frame) it follows
	after time.Duration // how long after it
	ev    voicetest.AgentEvent
	err   error
}

// replayedError is an error the adapter returned while recording.
type replayedError struct {
	msg    string
	closed bool
}

func (e *replayedError) Error() string { return e.msg }

// Is reports whether a recorded closed transport is target.
func (e *replayedError) Is(target error) bool {
	return e.closed && target == voicetest.ErrTransportClosed
}

// replayConn serves one recorded conversation. It matches each call of
// the caller with the next one recorded and serves the agent's events at
// their recorded times after the calls they followed. It blocks only on
// channels and timers, so it runs on virtual time.
type replayConn struct {
	a     *Agent
	logf  func(format string, args ...any)
	n     int // conversation, 0-based
	rate  int
	caps  voicetest.Capabilities
	turns []turn
	base  []int // the first unit of each turn
	evs   []replayEvent

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change
	closed  bool
	diverge error
	dead    error // the line is closed: what the caller's calls now get
	k, f    int   // the next call expected: turn k, frame f
	got     int   // samples of turn k's audio so far
	sum     hash.Hash
	buf     []byte      // a frame's bytes, for sum
	unitAt  []time.Time // when each unit was matched
	next    int
}

func newReplayConn(a *Agent, n int, c *conversation, logf func(string, ...any)) *replayConn {
	r := &replayConn{a: a, n: n, logf: logf, rate: c.Rate, caps: c.Capabilities, turns: c.Turns,
		changed: make(chan struct{}), k: 1, unitAt: []time.Time{time.Now()}}
	r.caps.VirtualTime = true
	unit := 0
	for _, t := range c.Turns {
		r.base = append(r.base, unit)
		off := 0
		for _, e := range t.Events {
			re := replayEvent{unit: unit + e.Frame, after: max(time.Duration(e.After), minDelay)}
			if e.Kind == kindError {
				re.err = &replayedError{msg: e.Error, closed: e.Closed}
			} else {
				re.ev = voicetest.AgentEvent{Kind: eventKinds[e.Kind], Text: e.Text, Final: e.Final, BeforeSpeech: e.BeforeSpeech,
					Speech: time.Duration(e.Speech), Tool: e.Tool, Data: e.Data}
				if re.ev.Kind == voicetest.AgentAudio {
					rate := c.Rate
					if e.Rate != 0 {
						rate = e.Rate
					}
					re.ev.Audio = pcm.Chunk{Rate: rate, Samples: t.agent[off : off+e.Samples : off+e.Samples]}
					off += e.Samples
				}
			}
			r.evs = append(r.evs, re)
		}
		unit += t.units()
	}
	return r
}

// broadcast wakes Recv. Call with mu held.
func (r *replayConn) broadcast() {
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *replayConn) Capabilities() voicetest.Capabilities { return r.caps }

func (r *replayConn) SendAudio(ctx context.Context, c pcm.Chunk) error {
	return r.call(callAudio, "", c)
}

func (r *replayConn) EndUtterance(ctx context.Context) error { return r.call(callEnd, "", pcm.Chunk{}) }

func (r *replayConn) SendText(ctx context.Context, text string) error {
	return r.call(callText, r.a.scrub.text(text), pcm.Chunk{})
}

func (r *replayConn) SendDTMF(ctx context.Context, digits string) error {
	return r.call(callDTMF, digits, pcm.Chunk{})
}

func (r *replayConn) Interrupt(ctx context.Context) error {
	return r.call(callInterrupt, "", pcm.Chunk{})
}

// call matches a call of the caller with the cassette, and returns what
// the recorded call returned.
func (r *replayConn) call(kind, text string, c pcm.Chunk) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.closed:
		return &voicetest.TransportClosedError{Adapter: r.caps.Adapter, Err: errors.New("the conversation was closed")}
	case r.diverge != nil:
		return r.diverge
	}
	var t *turn
	if r.k < len(r.turns) {
		t = &r.turns[r.k]
	}
	if kind == callAudio {
		if t == nil || t.Caller != callAudio {
			return r.mismatch(t, fmt.Sprintf("audio (a frame of %v)", c.Duration()))
		}
		if r.got+c.Len() > t.Audio.Samples {
			return r.mismatch(t, fmt.Sprintf("more audio: %v after %d frames", pcm.DurationOf(r.got+c.Len(), r.rate), r.f+1))
		}
		if r.f == 0 {
			r.sum = sha256.New()
		}
		r.buf = c.AppendBytes(r.buf[:0])
		r.sum.Write(r.buf)
		r.got += c.Len()
		frame := r.f
		r.f++
		r.matched()
		if r.f == t.Audio.Frames {
			if sum := hex.EncodeToString(r.sum.Sum(nil)); r.got != t.Audio.Samples || sum != t.Audio.SHA256 {
				return r.mismatch(t, fmt.Sprintf("audio of %v (%d frames, %d samples, sha256 %.12s…)", pcm.DurationOf(r.got, r.rate), r.f, r.got, sum))
			}
			r.k, r.f, r.got = r.k+1, 0, 0
		}
		if t.Error != nil && t.Error.Frame == frame {
			return r.callErr(t)
		}
		return nil
	}
	if r.f > 0 {
		return r.mismatch(t, fmt.Sprintf("audio of %v that stopped after %d of %d frames, then %s", pcm.DurationOf(r.got, r.rate), r.f, t.Audio.Frames,
			(&turn{Caller: kind, Text: text}).describe()))
	}
	if t == nil || t.Caller != kind || t.Text != text {
		return r.mismatch(t, (&turn{Caller: kind, Text: text}).describe())
	}
	r.k++
	r.matched()
	if t.Error != nil {
		return r.callErr(t)
	}
	return nil
}

// matched notes that the next unit was matched now. Call with mu held.
func (r *replayConn) matched() {
	r.unitAt = append(r.unitAt, time.Now())
	r.broadcast()
}

// callErr returns the error a recorded call returned.
func (r *replayConn) callErr(t *turn) error {
	return &replayedError{msg: t.Error.Message, closed: t.Error.Closed}
}

// mismatch reports a call that is not the one recorded (sent describes
// it) at turn t (nil past the end). Once the agent has hung up or the line
// has closed, a call the recording does not hold fails as on a closed
// line, as the live one would have. Call with mu held.
func (r *replayConn) mismatch(t *turn, sent string) error {
	if r.dead != nil {
		return r.dead
	}
	recorded := "nothing more: the caller's turns end here"
	if t != nil {
		recorded = t.describe()
	}
	r.diverge = &DivergenceError{Path: r.a.path, Conversation: r.n + 1, Turn: r.k, Turns: len(r.turns) - 1,
		Recorded: recorded, Sent: sent, Command: r.a.command()}
	r.broadcast()
	return r.diverge
}

// Recv serves the next recorded event once the caller's call it followed
// has been made and its recorded delay has passed.
func (r *replayConn) Recv(ctx context.Context) (voicetest.AgentEvent, error) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		r.mu.Lock()
		switch {
		case r.closed:
			r.mu.Unlock()
			return voicetest.AgentEvent{}, &voicetest.TransportClosedError{Adapter: r.caps.Adapter}
		case r.diverge != nil:
			r.mu.Unlock()
			return voicetest.AgentEvent{}, r.diverge
		}
		var wake <-chan time.Time
		if r.next < len(r.evs) {
			e := r.evs[r.next]
			if e.unit < len(r.unitAt) {
				d := time.Until(r.unitAt[e.unit].Add(e.after))
				if d <= 0 {
					r.next++
					r.deliver(e)
					r.mu.Unlock()
					ev := e.ev
					if ev.Kind == voicetest.AgentAudio {
						// The runner owns what Recv returns; the cassette
						// serves the same samples to the next Connect.
						ev.Audio = ev.Audio.Clone()
					}
					return ev, e.err
				}
				if timer == nil {
					timer = time.NewTimer(d)
				} else {
					timer.Reset(d)
				}
				wake = timer.C
			}
		} else if r.dead != nil {
			err := r.dead
			r.mu.Unlock()
			return voicetest.AgentEvent{}, err
		}
		changed := r.changed
		r.mu.Unlock()
		select {
		case <-changed:
		case <-wake:
		case <-ctx.Done():
			return voicetest.AgentEvent{}, ctx.Err()
		}
	}
}

// deliver notes what serving e means for the line. Call with mu held.
func (r *replayConn) deliver(e replayEvent) {
	switch {
	case e.err != nil && errors.Is(e.err, voicetest.ErrTransportClosed):
		r.dead = e.err
	case e.err == nil && e.ev.Kind == voicetest.AgentHangUp:
		r.dead = &voicetest.TransportClosedError{Adapter: r.caps.Adapter, Err: errors.New("the agent hung up")}
	}
}

// Close ends the replay. It is safe to call more than once.
func (r *replayConn) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	r.broadcast()
	if r.diverge == nil && r.dead == nil && r.k < len(r.turns) && r.logf != nil {
		r.logf("voicetest/cassette: the conversation ended after %d of the %d caller turns %s recorded: the script is shorter than the recording; record it again if that is meant: %s",
			r.k-1, len(r.turns)-1, r.a.path, r.a.command())
	}
	return nil
}
