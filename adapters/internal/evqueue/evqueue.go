// Package evqueue is the receive queue of the adapters that read their
// agent without wire.Conn, through a WebRTC peer connection
// (adapters/webrtc) or a Media Stream they serve (adapters/twiliophone):
// what their reader goroutines received, held until Recv takes it,
// bounded by the bytes its events hold (AgentEvent.Size); and, in Call,
// the end of such a call.
package evqueue

import (
	"context"
	"sync"

	"github.com/voicetest-go/voicetest/voicetest"
)

// Queue holds what the reader goroutine received until Recv takes it,
// bounded by the bytes its events hold (AgentEvent.Size). Its methods are
// safe for concurrent use.
type Queue struct {
	max    int64
	mu     sync.Mutex
	items  []Item
	head   int
	bytes  int64
	notify chan struct{} // capacity 1
	end    error         // returned once the items are taken
}

// Item is an event or an error for Recv.
type Item struct {
	Ev  voicetest.AgentEvent
	Err error
}

// New returns an empty queue bounded by max bytes.
func New(max int64) *Queue { return &Queue{max: max, notify: make(chan struct{}, 1)} }

// size is what an item holds in memory.
func (it Item) size() int64 {
	n := it.Ev.Size()
	if it.Err != nil {
		n += int64(len(it.Err.Error()))
	}
	return n
}

// Push queues its; it reports false once the queue holds more than its
// bound (the caller then ends the connection).
func (q *Queue) Push(its ...Item) bool {
	q.mu.Lock()
	for _, it := range its {
		q.items = append(q.items, it)
		q.bytes += it.size()
	}
	ok := q.bytes <= q.max
	q.mu.Unlock()
	q.wake()
	return ok
}

// Close sets the error Recv returns once the queue is empty; the first
// call wins.
func (q *Queue) Close(err error) {
	q.mu.Lock()
	if q.end == nil {
		q.end = err
	}
	q.mu.Unlock()
	q.wake()
}

// Ended returns the error the queue was closed with, or nil.
func (q *Queue) Ended() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.end
}

func (q *Queue) wake() {
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

// Recv returns the next item, waiting until one is queued, the queue is
// closed or ctx is done (then ctx's error).
func (q *Queue) Recv(ctx context.Context) (voicetest.AgentEvent, error) {
	for {
		q.mu.Lock()
		if q.head < len(q.items) {
			it := q.items[q.head]
			q.items[q.head] = Item{}
			q.head++
			q.bytes -= it.size()
			if q.head == len(q.items) {
				q.items, q.head = q.items[:0], 0
			}
			q.mu.Unlock()
			return it.Ev, it.Err
		}
		end := q.end
		q.mu.Unlock()
		if end != nil {
			return voicetest.AgentEvent{}, end
		}
		select {
		case <-q.notify:
		case <-ctx.Done():
			return voicetest.AgentEvent{}, ctx.Err()
		}
	}
}
