package adaptertest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
)

// peerReadBuffer is the read buffer of a minimal peer's WebSocket
// (BigReads): 64 KiB, a turn of audio in a few system calls.
const peerReadBuffer = 64 << 10

// BigReads wraps a minimal peer's ResponseWriter so that the WebSocket
// websocket.Accept makes of it reads through a 64 KiB buffer instead of
// net/http's 4 KiB one: a turn's 50 KB of PCM16 then costs the peer a few
// read system calls rather than one per 4 KiB, and a benchmark's figure is
// more the harness's. What the peer reads is unchanged: the bytes net/http
// had buffered come first.
func BigReads(w http.ResponseWriter) http.ResponseWriter { return bigReads{w} }

type bigReads struct{ http.ResponseWriter }

// Hijack hijacks the connection and returns a reader with a large buffer
// that holds what net/http's had buffered.
func (b bigReads) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := b.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, fmt.Errorf("adaptertest: %T is not an http.Hijacker", b.ResponseWriter)
	}
	nc, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	n := brw.Reader.Buffered()
	held, _ := brw.Reader.Peek(n)
	r := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(bytes.Clone(held)), nc), peerReadBuffer)
	if n > 0 {
		// Buffer them now: websocket.Accept keeps what the reader has
		// buffered and reads the rest from nc.
		if _, err := r.Peek(n); err != nil {
			return nil, nil, err
		}
	}
	return nc, bufio.NewReadWriter(r, brw.Writer), nil
}
