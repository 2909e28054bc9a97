package adaptertest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/internal/peers/peerkit"
)

// TestBigReadsEchoesInBursts runs a peer accepted through BigReads that
// answers each message with two echoes written as one Burst: the client
// must get every message, large (past the 64 KiB buffer) and small, back
// twice and in order.
func TestBigReadsEchoesInBursts(t *testing.T) {
	srv := peerkit.Start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w, burst := BigReads(w)
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ws.SetReadLimit(1 << 20)
		ReadLoop(ws, func(data []byte) {
			burst.Begin()
			for range 2 {
				ws.Write(context.Background(), websocket.MessageBinary, data)
			}
			if err := burst.End(); err != nil {
				t.Error(err)
			}
		})
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, srv.WSURL(""), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 20)
	for i, n := range []int{1, 640, 5000, 70000, 3} {
		msg := bytes.Repeat([]byte{byte(i + 1)}, n)
		if err := ws.Write(ctx, websocket.MessageBinary, msg); err != nil {
			t.Fatal(err)
		}
		for echo := range 2 {
			_, got, err := ws.Read(ctx)
			if err != nil {
				t.Fatalf("message %d (%d bytes), echo %d: %v", i, n, echo, err)
			}
			if !bytes.Equal(got, msg) {
				t.Fatalf("message %d (%d bytes), echo %d: got %s", i, n, echo, fmt.Sprintf("%d bytes of %x…", len(got), got[:min(len(got), 4)]))
			}
		}
	}
}
