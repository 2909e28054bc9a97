package wire_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/voicetest"
)

// TestGoFromDecodeStartsAfterTheFrameIsQueued: work a decode function
// starts with Conn.Go (an adapter answering the tool call it is decoding)
// runs only once the frame's own events are queued, so that a tool's
// AgentToolResult can never come before its AgentToolCall. The decode
// function waits for the work to run before it returns: with Go starting
// the goroutine at once, the result is queued first.
func TestGoFromDecodeStartsAfterTheFrameIsQueued(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ws.Write(r.Context(), websocket.MessageText, []byte("call"))
		ws.Read(r.Context()) // until the client closes
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, err := wire.Dial(ctx, "test", "ws"+strings.TrimPrefix(srv.URL, "http"), wire.WSOptions{}, voicetest.Session{Name: t.Name(), Rate: 16000, Logf: t.Logf}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(nil)
	call := &voicetest.ToolCall{ID: "c1", Name: "lookup"}
	c.Start(func(typ websocket.MessageType, data []byte) ([]voicetest.AgentEvent, error) {
		ran := make(chan struct{})
		c.Go(func() {
			defer close(ran)
			c.PushEvent(voicetest.AgentEvent{Kind: voicetest.AgentToolResult, Tool: call})
		})
		select {
		case <-ran:
		case <-time.After(200 * time.Millisecond):
		}
		return []voicetest.AgentEvent{{Kind: voicetest.AgentToolCall, Tool: call}}, nil
	})
	var kinds []voicetest.EventKind
	for range 2 {
		ev, err := c.Recv(ctx)
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, ev.Kind)
	}
	if kinds[0] != voicetest.AgentToolCall || kinds[1] != voicetest.AgentToolResult {
		t.Errorf("events %v, want the tool call before its result", kinds)
	}
}
