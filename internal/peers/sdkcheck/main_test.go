package sdkcheck_test

import (
	"testing"

	"github.com/voicetest-go/voicetest/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.Main(m) }
