package adaptertest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/voicetest"
)

// inAdapter starts a goroutine that waits inside an adapter package's
// code (a tool handler run by wire.RunTool) until the returned stop is
// called.
func inAdapter() (stop func()) {
	entered, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		wire.RunTool(context.Background(), func(context.Context, voicetest.ToolCall) (json.RawMessage, error) {
			close(entered)
			<-release
			return nil, nil
		}, voicetest.ToolCall{})
	}()
	<-entered
	return func() {
		close(release)
		<-done
	}
}

// TestExempt: Goroutines finds a goroutine in an adapter's code, unless
// the test that started it called Exempt; beside an exempt one it finds
// the other.
func TestExempt(t *testing.T) {
	t.Run("not exempt", func(t *testing.T) {
		stop := inAdapter()
		defer stop()
		if g := Goroutines(); !strings.Contains(g, "adapters/wire.RunTool") {
			t.Errorf("Goroutines = %q, want the goroutine in wire.RunTool", g)
		}
	})
	t.Run("exempt", func(t *testing.T) {
		Exempt(t)
		stop := inAdapter()
		defer stop()
		if g := Goroutines(); g != "" {
			t.Errorf("Goroutines found an exempt test's goroutine:\n%s", g)
		}
	})
	t.Run("both", func(t *testing.T) {
		stop := inAdapter()
		defer stop()
		exempt := make(chan func(), 1)
		t.Run("exempt", func(t *testing.T) {
			Exempt(t)
			exempt <- inAdapter()
		})
		defer (<-exempt)()
		g := Goroutines()
		if !strings.Contains(g, "adapters/wire.RunTool") || strings.Contains(g, exemptLabel) {
			t.Errorf("Goroutines = %q, want the goroutine in wire.RunTool that is not exempt, and only it", g)
		}
	})
}
