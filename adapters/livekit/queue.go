package livekit

import (
	"context"
	"sync"

	"github.com/voicetest-go/voicetest/voicetest"
)

// entry is what Recv returns next: an event, or an error about one
// message (a *wire.FrameError) that leaves the Conn usable.
type entry struct {
	ev  voicetest.AgentEvent
	err error
}

// bytes is what an entry holds in memory, as the bound counts it.
func (e entry) bytes() int64 {
	n := e.ev.Size()
	if e.err != nil {
		n += int64(len(e.err.Error()))
	}
	return n
}

// inbox holds what the room's goroutines delivered until Recv takes it.
// Its bound is in bytes (AgentEvent.Size); past it, add reports false and
// the Conn ends the conversation. Waiters are woken by closing the
// current signal channel, so any number of them may wait.
type inbox struct {
	limit  int64
	mu     sync.Mutex
	list   []entry
	held   int64
	signal chan struct{}
	final  error // returned once list is empty; nil while the room is up
}

func newInbox(limit int64) *inbox {
	return &inbox{limit: limit, signal: make(chan struct{})}
}

// wakeLocked wakes every waiter. Call with mu held.
func (q *inbox) wakeLocked() {
	close(q.signal)
	q.signal = make(chan struct{})
}

// add appends es; it reports whether the inbox is still within its
// bound. Entries added after finish are dropped.
func (q *inbox) add(es ...entry) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.final != nil {
		return true
	}
	for _, e := range es {
		q.held += e.bytes()
	}
	q.list = append(q.list, es...)
	q.wakeLocked()
	return q.held <= q.limit
}

// finish sets the error Recv returns after the entries already added.
// The first call wins.
func (q *inbox) finish(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.final == nil {
		q.final = err
		q.wakeLocked()
	}
}

// finished returns the error finish set, or nil.
func (q *inbox) finished() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.final
}

// take returns the oldest entry, waiting for one until the inbox is
// finished or ctx is done.
func (q *inbox) take(ctx context.Context) (voicetest.AgentEvent, error) {
	for {
		q.mu.Lock()
		if len(q.list) > 0 {
			e := q.list[0]
			q.list[0] = entry{}
			q.list = q.list[1:]
			if len(q.list) == 0 {
				q.list = nil // let the backing array go
			}
			q.held -= e.bytes()
			q.mu.Unlock()
			return e.ev, e.err
		}
		final, signal := q.final, q.signal
		q.mu.Unlock()
		if final != nil {
			return voicetest.AgentEvent{}, final
		}
		select {
		case <-signal:
		case <-ctx.Done():
			return voicetest.AgentEvent{}, ctx.Err()
		}
	}
}
