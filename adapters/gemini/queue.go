package gemini

import (
	"context"
	"sync"

	"github.com/voicetest-go/voicetest/voicetest"
)

// queue holds what the reader goroutine received until Recv takes it,
// bounded by the bytes its events hold (AgentEvent.Size).
type queue struct {
	max    int64
	mu     sync.Mutex
	items  []item
	head   int
	bytes  int64
	notify chan struct{} // capacity 1
	end    error         // returned once the items are taken
}

// item is an event or an error for Recv.
type item struct {
	ev  voicetest.AgentEvent
	err error
}

func newQueue(max int64) *queue { return &queue{max: max, notify: make(chan struct{}, 1)} }

// size is what an item holds in memory.
func (it item) size() int64 {
	n := it.ev.Size()
	if it.err != nil {
		n += int64(len(it.err.Error()))
	}
	return n
}

// push queues its; it reports false once the queue holds more than its
// bound.
func (q *queue) push(its ...item) bool {
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

// close sets the error Recv returns once the queue is empty; the first
// call wins.
func (q *queue) close(err error) {
	q.mu.Lock()
	if q.end == nil {
		q.end = err
	}
	q.mu.Unlock()
	q.wake()
}

// ended returns the error the queue was closed with, or nil.
func (q *queue) ended() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.end
}

func (q *queue) wake() {
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

// recv returns the next item, waiting until one is queued, the queue is
// closed or ctx is done.
func (q *queue) recv(ctx context.Context) (voicetest.AgentEvent, error) {
	for {
		q.mu.Lock()
		if q.head < len(q.items) {
			it := q.items[q.head]
			q.items[q.head] = item{}
			q.head++
			q.bytes -= it.size()
			if q.head == len(q.items) {
				q.items, q.head = q.items[:0], 0
			}
			q.mu.Unlock()
			return it.ev, it.err
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
