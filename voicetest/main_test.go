package voicetest_test

import (
	"os"
	"testing"

	"github.com/voicetest-go/voicetest/internal/leakcheck"
	"github.com/voicetest-go/voicetest/voicetest"
)

// TestMain fails the package's tests if they leave a goroutine running or a
// socket open. Re-executed by TestSuiteSummary (VOICETEST_SUMMARY_CHILD=1),
// the binary is instead a suite whose TestMain calls voicetest.Main, as a
// user's does, and runs the TestSummaryChild tests.
func TestMain(m *testing.M) {
	if os.Getenv(summaryChildEnv) == "1" {
		voicetest.Main(m)
		return
	}
	leakcheck.Main(m)
}
