package evqueue

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/scrub"
)

func newCall(t *testing.T, max int64, onEnd func(bool)) *Call {
	return NewCall("test", max, "Agent.MaxQueueBytes", scrub.New("sk-secret-123456"), t.Logf, wire.NewCaptureWriter(nil, t.Logf), onEnd)
}

// TestCallDeliver: events and frame errors come out in order, scrubbed;
// the agent's hang-up comes before the end; the end comes once.
func TestCallDeliver(t *testing.T) {
	ends := 0
	c := newCall(t, 1<<20, func(closing bool) {
		ends++
		if closing {
			t.Error("onEnd reports Close for the agent's hang-up")
		}
	})
	ctx := context.Background()
	c.Deliver([]voicetest.AgentEvent{{Kind: voicetest.AgentTranscript, Text: "key sk-secret-123456", Final: true}}, errors.New("bad"), []byte("frame sk-secret-123456"))
	c.Finish(&voicetest.TransportClosedError{Adapter: "test"}, "bye")
	c.Finish(errors.New("second"), "again")
	c.Deliver([]voicetest.AgentEvent{{Kind: voicetest.AgentTranscript, Text: "late"}}, nil, nil)
	ev, err := c.Recv(ctx)
	if err != nil || ev.Text != "key REDACTED" {
		t.Fatalf("first: %+v, %v", ev, err)
	}
	_, err = c.Recv(ctx)
	var fe *wire.FrameError
	if !errors.As(err, &fe) || strings.Contains(err.Error(), "sk-secret") {
		t.Fatalf("second: %v, want a scrubbed *wire.FrameError", err)
	}
	if ev, err := c.Recv(ctx); err != nil || ev.Kind != voicetest.AgentHangUp || ev.Text != "bye" {
		t.Fatalf("third: %+v, %v, want the hang-up", ev, err)
	}
	if _, err := c.Recv(ctx); !errors.Is(err, voicetest.ErrTransportClosed) {
		t.Fatalf("after the hang-up: %v", err)
	}
	if ends != 1 || !c.Ended() || c.ClosedErr() == nil {
		t.Errorf("onEnd ran %d times, Ended %v, ClosedErr %v", ends, c.Ended(), c.ClosedErr())
	}
}

// TestCallLimit: past the bound the call ends with a *LimitError, after
// the events queued before it, and Limit keeps reporting it.
func TestCallLimit(t *testing.T) {
	c := newCall(t, 1000, nil)
	audio := voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: pcm.Chunk{Rate: 8000, Samples: make([]int16, 400)}}
	for range 3 {
		c.Deliver([]voicetest.AgentEvent{audio}, nil, nil)
	}
	var err error
	for err == nil {
		_, err = c.Recv(context.Background())
	}
	var le *voicetest.LimitError
	if !errors.As(err, &le) || le.Limit != 1000 || le.Setting != "Agent.MaxQueueBytes" || !errors.Is(c.Limit(), voicetest.ErrLimit) {
		t.Errorf("Recv: %v, Limit: %v, want the LimitError of 1000 bytes", err, c.Limit())
	}
}

// TestCallClose: after BeginClose the call reports the Conn closed, runs
// no more goroutines, and onEnd learns that Close ended it.
func TestCallClose(t *testing.T) {
	var closing bool
	c := newCall(t, 1<<20, func(cl bool) { closing = cl })
	var wg sync.WaitGroup
	if !c.Go(&wg, func() {}) {
		t.Error("Go before Close ran nothing")
	}
	if !c.BeginClose() || c.BeginClose() {
		t.Error("BeginClose does not report the first call alone")
	}
	if c.Go(&wg, func() { t.Error("ran after Close began") }) {
		t.Error("Go after Close reported it ran")
	}
	wg.Wait()
	c.Finish(nil, "ignored")
	if !closing || !strings.Contains(c.ClosedErr().Error(), "closed") {
		t.Errorf("onEnd closing %v, ClosedErr %v", closing, c.ClosedErr())
	}
	if _, err := c.Recv(context.Background()); !errors.Is(err, voicetest.ErrTransportClosed) {
		t.Errorf("Recv after Close: %v", err)
	}
}
