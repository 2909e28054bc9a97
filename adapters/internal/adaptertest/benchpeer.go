package adaptertest

import (
	"bytes"
	"context"
	"net/http"
	"runtime/pprof"

	"github.com/coder/websocket"
)

// ReadLoop is a benchmark's minimal peer reading: it reads ws's messages
// into one reused buffer and calls f with each, until the connection
// fails. f must not keep data. It reads without a context, as wire.Conn
// does: a cancellable one costs coder/websocket a timer per message, and
// websocket.Conn.Read a new buffer grown from 512 bytes per message; a
// minimal peer is there to cost next to nothing, so that the figure is
// the harness's.
func ReadLoop(ws *websocket.Conn, f func(data []byte)) {
	var buf bytes.Buffer
	for {
		_, r, err := ws.Reader(context.Background())
		if err != nil {
			return
		}
		buf.Reset()
		if _, err := buf.ReadFrom(r); err != nil {
			return
		}
		f(buf.Bytes())
	}
}

// LabelPeer labels the calling goroutine (a minimal peer's handler, r its
// request) and the goroutines it starts from now on side=peer in CPU
// profiles, so that a benchmark's profile splits the process's CPU
// between the harness and its in-process peer:
//
//	go tool pprof -tagfocus side=peer x.test cpu.out
func LabelPeer(r *http.Request) {
	pprof.SetGoroutineLabels(pprof.WithLabels(r.Context(), pprof.Labels("side", "peer")))
}
