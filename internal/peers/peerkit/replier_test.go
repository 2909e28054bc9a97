package peerkit

import (
	"context"
	"sync"
	"testing"
)

// TestReplier: Cut cancels a reply in progress and reports it cut; a
// reply that ran to its end is not cut, and its done ran.
func TestReplier(t *testing.T) {
	var wg sync.WaitGroup
	r := NewReplier(&wg)
	if r.Cut() {
		t.Error("Cut with no reply reported a cut")
	}
	started := make(chan struct{})
	r.Start(context.Background(), func(ctx context.Context) bool {
		close(started)
		<-ctx.Done()
		return false
	}, func() { t.Error("done ran for a reply that was cut") })
	<-started
	if !r.Cut() {
		t.Error("Cut of a reply in progress did not report a cut")
	}
	finished := make(chan struct{})
	r.Start(context.Background(), func(context.Context) bool { return true }, func() { close(finished) })
	<-finished
	if r.Cut() {
		t.Error("Cut of a finished reply reported a cut")
	}
	wg.Wait()
}
