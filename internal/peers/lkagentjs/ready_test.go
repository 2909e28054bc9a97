package lkagentjs

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/internal/peers/lkserver"
)

// fakeWorker returns a Worker whose log the test writes, with no process.
func fakeWorker() *Worker {
	return &Worker{cmd: &exec.Cmd{}, log: &lkserver.Tail{}, done: make(chan struct{})}
}

// Ready returns once the worker is registered and a job process is
// prewarmed, in either order, even when the first line has since left the
// log's tail; not before both.
func TestReadyWaitsForRegistrationAndPrewarm(t *testing.T) {
	w := fakeWorker()
	ready := make(chan error, 1)
	go func() { ready <- w.Ready(30 * time.Second) }()
	w.log.Write([]byte(`{"msg":"` + logRegistered + `"}` + "\n"))
	select {
	case err := <-ready:
		t.Fatalf("Ready returned before a job process was prewarmed: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	// The registration scrolls out of the 64 KiB tail before the prewarm.
	w.log.Write([]byte(strings.Repeat("x", 70<<10) + "\n"))
	w.log.Write([]byte(`{"msg":"` + logPrewarmed + `"}` + "\n"))
	select {
	case err := <-ready:
		if err != nil {
			t.Fatalf("Ready: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Ready did not return once both lines were logged")
	}
}

// Ready fails, naming what is missing, when its time runs out or the
// worker exits first.
func TestReadyFails(t *testing.T) {
	w := fakeWorker()
	w.log.Write([]byte(logRegistered + "\n"))
	if err := w.Ready(200 * time.Millisecond); err == nil || !strings.Contains(err.Error(), "did not prewarm a job process") {
		t.Errorf("Ready with no prewarmed process: %v, want it to say so", err)
	}
	w = fakeWorker()
	if err := w.Ready(200 * time.Millisecond); err == nil || !strings.Contains(err.Error(), "did not register") {
		t.Errorf("Ready with nothing logged: %v, want it to say the worker did not register", err)
	}
	w = fakeWorker()
	close(w.done)
	if err := w.Ready(30 * time.Second); err == nil || !strings.Contains(err.Error(), "exited before it was ready") {
		t.Errorf("Ready after the worker exited: %v", err)
	}
}
