package inproc

import "testing"

func TestPassSignal(t *testing.T) {
	from, to := make(chan struct{}, 1), make(chan struct{}, 1)
	PassSignal(from, to)
	if len(to) != 0 {
		t.Fatal("a signal was passed on though none was pending")
	}
	from <- struct{}{}
	PassSignal(from, to)
	if len(from) != 0 || len(to) != 1 {
		t.Fatalf("pending signal not moved: from %d, to %d, want 0, 1", len(from), len(to))
	}
	from <- struct{}{}
	PassSignal(from, to) // to is full: must not block, and the signal is taken
	if len(from) != 0 || len(to) != 1 {
		t.Fatalf("with to full: from %d, to %d, want 0, 1", len(from), len(to))
	}
}
