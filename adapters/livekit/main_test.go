package livekit_test

import (
	"testing"

	protologger "github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"
	"github.com/voicetest-go/voicetest/internal/leakcheck"
)

// TestMain silences the SDK's package logger (pion's connection states at
// info level, on stderr) and fails the package's tests if they leave a
// goroutine running or a socket open.
func TestMain(m *testing.M) {
	lksdk.SetLogger(protologger.GetDiscardLogger())
	leakcheck.Main(m)
}
