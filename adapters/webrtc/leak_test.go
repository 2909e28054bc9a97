package webrtc_test

import (
	"bytes"
	"context"
	"regexp"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
)

// leakLabel is the profiler label that marks the goroutines a test
// started (see scope).
const leakLabel = "voicetest-webrtc-test"

// adapterFrame matches a stack frame in an adapter package's code (as
// adaptertest.Goroutines does).
var adapterFrame = regexp.MustCompile(`voicetest/adapters/[a-z0-9]+\.`)

// scope labels the test's goroutine with its name: every goroutine it
// starts from now on, and every goroutine those start (the adapter's,
// pion's), carries the label. Call it first thing in the test.
func scope(t *testing.T) {
	t.Helper()
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels(leakLabel, t.Name())))
}

// ownGoroutines returns the stacks of the running goroutines labelled
// with name (see scope) that are in an adapter's code, or "".
func ownGoroutines(name string) string {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		return "reading the goroutine profile: " + err.Error()
	}
	mark := strconv.Quote(leakLabel) + ":" + strconv.Quote(name)
	var out []string
	for g := range strings.SplitSeq(buf.String(), "\n\n") {
		if strings.Contains(g, "# labels: ") && strings.Contains(g, mark) && adapterFrame.MatchString(g) {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}

// closeConn is adaptertest.CloseConn scoped to the test, for tests that
// run in parallel: when the test ends it closes conn twice (both must
// succeed) and fails if a goroutine the test started (see scope) is
// still in the adapter's code 2 s later. adaptertest.CloseConn looks at
// every adapter goroutine of the process, which in a parallel test
// would include the other tests' conversations.
func closeConn(t *testing.T, conn voicetest.Conn) {
	t.Helper()
	t.Cleanup(func() {
		if err := conn.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := conn.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		var stacks string
		for range 200 {
			if stacks = ownGoroutines(t.Name()); stacks == "" {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("adapter goroutines this test started still running after Close:\n%s", stacks)
	})
}
