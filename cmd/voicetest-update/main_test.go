package main

import (
	"os"
	"testing"
)

// envRunMain makes the test binary run voicetest-update (main) instead of
// its tests. The end-to-end tests run voicetest-update on sample modules
// this way, as a process of its own with its own working directory and
// environment, so that they can run in parallel.
const envRunMain = "VOICETEST_UPDATE_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(envRunMain) == "1" {
		os.Unsetenv(envRunMain)
		main()
	}
	os.Exit(m.Run())
}
