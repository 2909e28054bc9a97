package voicetest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/voicetest-go/voicetest/internal/inproc"
	"github.com/voicetest-go/voicetest/pcm"
)

// promptConn's sends run on the runner's goroutine (issue 21): a panic in
// one is still the scenario's error, with its stack, as through call.

type panickyPromptConn struct {
	once sync.Once
	done chan struct{}
}

func (c *panickyPromptConn) Capabilities() Capabilities {
	return Capabilities{Adapter: "prompt-test", Text: true}
}
func (c *panickyPromptConn) PromptSends(inproc.Token)                   {}
func (c *panickyPromptConn) SendAudio(context.Context, pcm.Chunk) error { return nil }
func (c *panickyPromptConn) EndUtterance(context.Context) error         { return nil }
func (c *panickyPromptConn) SendText(context.Context, string) error     { panic("boom") }
func (c *panickyPromptConn) SendDTMF(context.Context, string) error     { return nil }
func (c *panickyPromptConn) Interrupt(context.Context) error            { return nil }
func (c *panickyPromptConn) Recv(ctx context.Context) (AgentEvent, error) {
	select {
	case <-c.done:
		return AgentEvent{}, &TransportClosedError{Adapter: "prompt-test"}
	case <-ctx.Done():
		return AgentEvent{}, ctx.Err()
	}
}
func (c *panickyPromptConn) Close() error { c.once.Do(func() { close(c.done) }); return nil }

type panickyPromptAgent struct{}

func (panickyPromptAgent) Connect(context.Context, Session) (Conn, error) {
	return &panickyPromptConn{done: make(chan struct{})}, nil
}

func TestPromptSendPanicIsAnError(t *testing.T) {
	t.Parallel()
	res, err := Run(context.Background(), Config{Agent: panickyPromptAgent{}, Script: []Step{UserSays("hello")}})
	if res == nil {
		t.Fatalf("no result: %v", err)
	}
	var pe *panicError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "the prompt-test adapter's SendText panicked: boom") {
		t.Fatalf("err %v, want the SendText panic as the scenario's error", err)
	}
	// It ran on the runner's goroutine, through callPrompt, not call.
	if st := string(pe.PanicStack()); !strings.Contains(st, "voicetest.callPrompt") || strings.Contains(st, "voicetest.callLeaving") {
		t.Errorf("the panic's stack does not show the inline call:\n%s", st)
	}
}

// A promptConnector's Connect runs on the runner's goroutine (issue 21):
// a panic in it is still the scenario's error, with its stack.
type panickyConnectAgent struct{}

func (panickyConnectAgent) PromptConnect(inproc.Token) {}
func (panickyConnectAgent) Connect(context.Context, Session) (Conn, error) {
	panic("connect boom")
}

func TestPromptConnectPanicIsAnError(t *testing.T) {
	res, err := Run(context.Background(), Config{Agent: panickyConnectAgent{}, Script: []Step{UserSays("hello")}})
	if res == nil {
		t.Fatalf("no result: %v", err)
	}
	var pe *panicError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "Agent.Connect panicked: connect boom") {
		t.Fatalf("err %v, want the Connect panic as the scenario's error", err)
	}
	// It ran on the runner's goroutine, through callPrompt, not call.
	if st := string(pe.PanicStack()); !strings.Contains(st, "voicetest.callPrompt") || strings.Contains(st, "voicetest.callLeaving") {
		t.Errorf("the panic's stack does not show the inline call:\n%s", st)
	}
}
