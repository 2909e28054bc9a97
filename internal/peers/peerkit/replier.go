package peerkit

import (
	"context"
	"sync"
)

// Replier runs a double's replies one at a time, each on a goroutine of
// its own, so that the user's speech can cut the reply in progress (a
// barge-in). The zero value is not ready: use NewReplier.
type Replier struct {
	wg *sync.WaitGroup

	mu  sync.Mutex
	cur *reply
}

// reply is one reply's goroutine.
type reply struct {
	cancel    context.CancelFunc
	done      chan struct{}
	completed bool
}

// NewReplier returns a Replier whose goroutines wg counts, so that the
// double's Close can wait for them.
func NewReplier(wg *sync.WaitGroup) *Replier { return &Replier{wg: wg} }

// Cut cancels the reply in progress, if any, and waits for its goroutine.
// It reports whether a reply was cut before its end.
func (r *Replier) Cut() bool {
	r.mu.Lock()
	cur := r.cur
	r.cur = nil
	r.mu.Unlock()
	if cur == nil {
		return false
	}
	cur.cancel()
	<-cur.done
	return !cur.completed
}

// Start runs speak on a goroutine of its own, with a context of parent
// that Cut cancels; speak reports whether it ran to its end, and then
// done, when not nil, runs on the same goroutine. Call Cut first: Start
// does not wait for a reply already in progress.
func (r *Replier) Start(parent context.Context, speak func(ctx context.Context) bool, done func()) {
	ctx, cancel := context.WithCancel(parent)
	cur := &reply{cancel: cancel, done: make(chan struct{})}
	r.mu.Lock()
	r.cur = cur
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(cur.done)
		cur.completed = speak(ctx)
		cancel()
		if cur.completed && done != nil {
			done()
		}
	}()
}
