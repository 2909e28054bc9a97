package adaptertest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
)

// peerReadBuffer is the read buffer of a minimal peer's WebSocket
// (BigReads): 64 KiB, a turn of audio in a few system calls.
const peerReadBuffer = 64 << 10

// BigReads wraps a minimal peer's ResponseWriter so that the WebSocket
// websocket.Accept makes of it reads through a 64 KiB buffer instead of
// net/http's 4 KiB one: a turn's 50 KB of PCM16 then costs the peer a few
// read system calls rather than one per 4 KiB, and a benchmark's figure is
// more the harness's. What the peer reads is unchanged: the bytes net/http
// had buffered come first. The Burst lets the peer write a reply of
// several messages in one system call (see Burst).
func BigReads(w http.ResponseWriter) (http.ResponseWriter, *Burst) {
	b := &Burst{}
	return bigReads{w, b}, b
}

type bigReads struct {
	http.ResponseWriter
	burst *Burst
}

// Hijack hijacks the connection and returns a reader with a large buffer
// that holds what net/http's had buffered, and a writer that goes through
// the Burst.
func (b bigReads) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := b.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, fmt.Errorf("adaptertest: %T is not an http.Hijacker", b.ResponseWriter)
	}
	nc, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	if err := brw.Writer.Flush(); err != nil {
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
	b.burst.w = nc
	return nc, bufio.NewReadWriter(r, bufio.NewWriterSize(b.burst, brw.Writer.Size())), nil
}

// Burst is what a minimal peer's WebSocket writes to (see BigReads).
// Between Begin and End, what it writes (each message is flushed to it
// whole) is held and then written in one system call, as a server's
// transport writes a reply of several messages produced at once; outside
// them writes go straight to the connection.
type Burst struct {
	mu   sync.Mutex
	w    io.Writer
	hold bool
	buf  []byte
}

// Begin holds the writes from now on.
func (b *Burst) Begin() {
	b.mu.Lock()
	b.hold = true
	b.mu.Unlock()
}

// End writes what was held, in one write, and stops holding.
func (b *Burst) End() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.hold = false
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.w.Write(b.buf)
	b.buf = b.buf[:0]
	return err
}

// Write holds p or writes it through.
func (b *Burst) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.hold {
		b.buf = append(b.buf, p...)
		return len(p), nil
	}
	return b.w.Write(p)
}
