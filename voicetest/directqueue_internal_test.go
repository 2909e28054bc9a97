package voicetest

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/voicetest-go/voicetest/internal/inproc"
)

// floodConn is a queuedConn with n log events ready at once.
type floodConn struct {
	n, sent int
	ready   chan struct{}
}

func (c *floodConn) TryRecv(inproc.Token) (AgentEvent, bool, error) {
	if c.sent == c.n {
		return AgentEvent{}, false, nil
	}
	c.sent++
	return AgentEvent{Kind: AgentLog, Text: fmt.Sprint(c.sent)}, true, nil
}

func (c *floodConn) Notify(_ inproc.Token, ch chan struct{}) { c.ready = ch }

// TestDirectQueueGrowsToItsBound: the queue of a queuedConn starts small
// and grows as fetch fills it, keeping the events in order, up to the
// bound the receive goroutine's queue has (maxQueuedEvents); past it the
// event fetch took waits (held) and the agent goes unheard (listen 0), as
// with receive.
func TestDirectQueueGrowsToItsBound(t *testing.T) {
	for _, n := range []int{3, directQueueStart, directQueueStart + 1, 100, maxQueuedEvents, maxQueuedEvents + 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			conn := &floodConn{n: n, ready: make(chan struct{}, 1)}
			events := make(chan *recvItem, directQueueStart)
			r := &runner{clock: newVClock(), listen: new(atomic.Int64), said: new(atomic.Int64), events: events}
			r.start = r.clock.Now()
			r.direct = &direct{conn: conn, ready: conn.ready, out: events, done: make(chan struct{}), gate: newRecvGate(), signalled: true}
			r.fetch()
			queued := min(n, maxQueuedEvents)
			if len(r.events) != queued {
				t.Fatalf("fetch queued %d events, want %d", len(r.events), queued)
			}
			if c := cap(r.events); c > maxQueuedEvents || c < queued {
				t.Errorf("the queue has room for %d events, want %d to %d", c, queued, maxQueuedEvents)
			}
			if held := r.direct.held != nil; held != (n > maxQueuedEvents) {
				t.Errorf("an event held: %v, want %v (the queue is full only past %d)", held, !held, maxQueuedEvents)
			}
			if listening := r.listen.Load() != 0; listening == (n > maxQueuedEvents) {
				t.Errorf("listening: %v, want %v", listening, !listening)
			}
			for i := 1; i <= queued; i++ {
				it := <-r.events
				if it.ev.Text != fmt.Sprint(i) {
					t.Fatalf("event %d is %q: the queue lost its order", i, it.ev.Text)
				}
			}
		})
	}
}
