package peerkit

import (
	"context"
	"sync"
	"testing"
	"time"
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

// TestEar: an utterance starts with the first voiced packet and ends
// after EndSilence of quiet audio, holding everything in between.
func TestEar(t *testing.T) {
	e := Ear{Rate: 1000, Threshold: 100, EndSilence: 30 * time.Millisecond}
	loud, quiet := []int16{500, -500, 500, -500, 500, -500, 500, -500, 500, -500}, make([]int16, 10)
	if started, u := e.Hear(quiet); started || u != nil {
		t.Fatal("silence started an utterance")
	}
	if started, _ := e.Hear(loud); !started {
		t.Fatal("speech did not start an utterance")
	}
	for i := range 2 {
		if _, u := e.Hear(quiet); u != nil {
			t.Fatalf("the utterance ended after %d ms of silence", 10*(i+1))
		}
	}
	if _, u := e.Hear(quiet); len(u) != 40 {
		t.Fatalf("the utterance after 30 ms of silence holds %d samples, want 40", len(u))
	}
}
