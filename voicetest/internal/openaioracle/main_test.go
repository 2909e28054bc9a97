package openaioracle_test

import (
	"testing"

	"github.com/voicetest-go/voicetest/internal/leakcheck"
)

// TestMain fails the package's tests if they leave a goroutine running or a
// socket open.
func TestMain(m *testing.M) { leakcheck.Main(m) }
