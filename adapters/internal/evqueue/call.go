package evqueue

import (
	"context"
	"errors"
	"sync"

	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/scrub"
)

// Call is the receiving end of a call that an adapter reads without
// wire.Conn (a WebRTC peer connection, a Media Stream the adapter
// serves): the queue Recv reads, whether the call has ended or Close has
// begun, and the bound the agent went past, under one lock. It ends the
// call once, whoever finds the end first: the agent, the adapter or
// Close.
type Call struct {
	q       *Queue
	adapter string
	sc      *scrub.Scrubber
	logf    func(string, ...any)
	capture *wire.CaptureWriter
	max     int64
	setting string
	onEnd   func(closing bool)

	mu      sync.Mutex
	ended   bool
	closing bool
	limit   error
}

// NewCall returns the end of a call of adapter whose queue holds at most
// max bytes (setting names the field that sets it, e.g.
// "Agent.MaxQueueBytes"). Events and errors are scrubbed with sc; logf
// and capture record the end. onEnd, when not nil, runs once when the
// call ends, on the goroutine that ended it, to release the transport;
// closing reports that Close ended it.
func NewCall(adapter string, max int64, setting string, sc *scrub.Scrubber, logf func(string, ...any), capture *wire.CaptureWriter, onEnd func(closing bool)) *Call {
	return &Call{q: New(max), adapter: adapter, sc: sc, logf: logf, capture: capture, max: max, setting: setting, onEnd: onEnd}
}

// Recv returns the agent's next event, or the error that ended the call
// once the events before it are taken.
func (c *Call) Recv(ctx context.Context) (voicetest.AgentEvent, error) { return c.q.Recv(ctx) }

// Deliver queues events (scrubbed) and an error about frame: a
// *wire.FrameError, or the agent's own error for a wire.AgentError.
// Nothing is queued once the call has ended; past the queue's bound the
// call ends with a *voicetest.LimitError, which Limit reports from then
// on.
func (c *Call) Deliver(evs []voicetest.AgentEvent, err error, frame []byte) {
	if len(evs) == 0 && err == nil {
		return
	}
	c.mu.Lock()
	ended := c.ended
	c.mu.Unlock()
	if ended {
		return
	}
	items := make([]Item, 0, len(evs)+1)
	for i := range evs {
		wire.ScrubEvent(c.sc, &evs[i])
		items = append(items, Item{Ev: evs[i]})
	}
	if err != nil {
		var ae wire.AgentError
		if errors.As(err, &ae) {
			err = wire.ScrubError(c.sc, ae.Err)
		} else {
			err = &wire.FrameError{Adapter: c.adapter, Frame: wire.Excerpt(c.sc.Bytes(frame)), Err: wire.ScrubError(c.sc, err)}
		}
		items = append(items, Item{Err: err})
	}
	if c.q.Push(items...) {
		return
	}
	le := &voicetest.LimitError{What: "the agent's events queued by the " + c.adapter + " adapter while the runner was not reading",
		Limit: c.max, Unit: "bytes", Name: c.setting, Setting: c.setting}
	c.mu.Lock()
	if c.limit == nil {
		c.limit = le
	}
	c.mu.Unlock()
	c.Fail(le)
}

// Fail ends the call for cause, which the adapter found.
func (c *Call) Fail(cause error) {
	c.Finish(&voicetest.TransportClosedError{Adapter: c.adapter, Err: cause}, "")
}

// Finish ends the call once: hangUp, when not empty, is queued as
// AgentHangUp first; terminal is what Recv returns after the queue
// drains. After Close began, Recv returns that the Conn was closed.
func (c *Call) Finish(terminal error, hangUp string) {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	c.ended = true
	closing := c.closing
	c.mu.Unlock()
	if closing {
		terminal, hangUp = &voicetest.TransportClosedError{Adapter: c.adapter, Err: errors.New("the Conn was closed")}, ""
	}
	terminal = wire.ScrubError(c.sc, terminal)
	if hangUp != "" {
		c.q.Push(Item{Ev: voicetest.AgentEvent{Kind: voicetest.AgentHangUp, Text: c.sc.String(hangUp)}})
		c.logf("%s: the agent hung up: %s", c.adapter, hangUp)
	} else if !closing {
		c.logf("%s: %v", c.adapter, terminal)
	}
	c.q.Close(terminal)
	c.capture.Note("close", terminal.Error())
	if c.onEnd != nil {
		c.onEnd(closing)
	}
}

// BeginClose marks that Close has begun; it reports false when it had
// already.
func (c *Call) BeginClose() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return false
	}
	c.closing = true
	return true
}

// Closing reports whether Close has begun.
func (c *Call) Closing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closing
}

// Ended reports whether the call has ended.
func (c *Call) Ended() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ended
}

// ClosedErr returns why nothing can be sent: Close began, or the call
// ended (the error Recv ends with); nil while the call goes on.
func (c *Call) ClosedErr() error {
	if c.Closing() {
		return &voicetest.TransportClosedError{Adapter: c.adapter, Err: errors.New("the Conn was closed")}
	}
	return c.q.Ended()
}

// Go runs f on a goroutine that wg counts, unless Close has begun; it
// reports whether it did. (Close waits for wg once it has begun, so no
// goroutine is added after.)
func (c *Call) Go(wg *sync.WaitGroup, f func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return false
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		f()
	}()
	return true
}

// Limit returns the bound the agent went past (a *voicetest.LimitError),
// or nil: Close returns it, so that a limit is never silent.
func (c *Call) Limit() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.limit
}
