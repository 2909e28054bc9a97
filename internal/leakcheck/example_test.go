package leakcheck_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/internal/leakcheck"
)

// recordingTB stands in for the *testing.T a real test passes to Check.
type recordingTB struct {
	testing.TB
	cleanups []func()
	failures []string
}

func (r *recordingTB) Helper()          {}
func (r *recordingTB) Name() string     { return "TestWorker" }
func (r *recordingTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recordingTB) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

// A test calls Check first; when it ends, goroutines it started and did not
// stop fail it, with their stacks. In a real test, pass t.
func ExampleCheck() {
	t := &recordingTB{}
	leakcheck.Check(t, leakcheck.WaitFor(10*time.Millisecond))

	stop := make(chan struct{})
	go func() { <-stop }() // a worker the test forgets to stop

	for _, f := range t.cleanups { // what the testing package does at the end
		f()
	}
	close(stop)
	fmt.Println(strings.SplitN(t.failures[0], "\n", 2)[0])
	// Output:
	// leakcheck: 1 goroutine(s) started by TestWorker are still running after it ended (waited 10ms):
}

// TestMain of a package whose tests must leave no goroutine or socket
// behind.
func ExampleMain() {
	var m *testing.M // the argument of TestMain
	_ = func() { leakcheck.Main(m) }
}
