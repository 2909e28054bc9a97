package voicetest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

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

// A promptEnder's EndUtterance runs on the runner's goroutine (issue 21):
// a panic in it is still the scenario's error, with its stack. A
// promptConn that is not a promptEnder (the handler's: its EndUtterance
// calls the STT) has its EndUtterance called through call.
type panickyEndConn struct {
	panickyPromptConn
	hung chan struct{} // EndUtterance waits on it, when set
}

func (c *panickyEndConn) Capabilities() Capabilities {
	return Capabilities{Adapter: "prompt-end-test", Audio: true}
}

func (c *panickyEndConn) EndUtterance(ctx context.Context) error {
	if c.hung != nil {
		<-c.hung
		return nil
	}
	panic("end boom")
}

type promptEndConn struct{ *panickyEndConn }

func (promptEndConn) PromptEndUtterance(inproc.Token) {}

type panickyEndAgent struct {
	prompt bool
	hung   chan struct{}
}

func (a panickyEndAgent) Connect(context.Context, Session) (Conn, error) {
	c := &panickyEndConn{panickyPromptConn: panickyPromptConn{done: make(chan struct{})}, hung: a.hung}
	if a.prompt {
		return promptEndConn{c}, nil
	}
	return c, nil
}

func TestPromptEndUtterance(t *testing.T) {
	t.Parallel()
	tts := silentTTS{}
	for _, prompt := range []bool{true, false} {
		res, err := Run(context.Background(), Config{Agent: panickyEndAgent{prompt: prompt}, UserVoice: tts, Pacing: PaceFast, Script: []Step{UserSays("hello")}})
		if res == nil {
			t.Fatalf("no result: %v", err)
		}
		var pe *panicError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "the prompt-end-test adapter's EndUtterance panicked: end boom") {
			t.Fatalf("prompt %v: err %v, want the EndUtterance panic as the scenario's error", prompt, err)
		}
		inline := strings.Contains(string(pe.PanicStack()), "voicetest.callPrompt") && !strings.Contains(string(pe.PanicStack()), "voicetest.callLeaving")
		if inline != prompt {
			t.Errorf("prompt %v: EndUtterance ran inline: %v; its stack:\n%s", prompt, inline, pe.PanicStack())
		}
	}
	// Not a promptEnder: a hung EndUtterance is a TimeoutError naming it.
	hung := make(chan struct{})
	defer close(hung)
	_, err := Run(context.Background(), Config{Agent: panickyEndAgent{hung: hung}, UserVoice: tts, Pacing: PaceFast,
		Timeouts: Timeouts{FirstChunk: 50 * time.Millisecond}, Script: []Step{UserSays("hello")}})
	var te *TimeoutError
	if !errors.As(err, &te) || te.Phase != PhaseSend || !strings.Contains(te.Callee, "EndUtterance") {
		t.Errorf("err %v, want a TimeoutError of phase %q naming EndUtterance", err, PhaseSend)
	}
}

// silentTTS says everything as 100 ms of silence.
type silentTTS struct{}

func (silentTTS) Synthesize(ctx context.Context, req SpeechRequest) (pcm.Chunk, error) {
	return pcm.Silence(req.Rate, 100*time.Millisecond), nil
}
