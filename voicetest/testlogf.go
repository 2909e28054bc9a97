package voicetest

import (
	"testing"

	"github.com/voicetest-go/voicetest/internal/testlog"
)

// TestLogf returns a log function for Config.Logf (under Run) or
// Session.Logf (an adapter connected by hand) that writes each line to
// t's output attributed to the test's own line that called TestLogf, as
// Scenario does with the lines of the runner and the adapter, whichever
// goroutine logs them. t.Logf itself attributes each line to the library
// function that calls it (an adapter's scrubbing wrapper, the runner),
// and cannot be called once the test has ended.
func TestLogf(t testing.TB) func(format string, args ...any) {
	t.Helper()
	return testlog.Logf(t, testlog.Caller(0, modulePath))
}
