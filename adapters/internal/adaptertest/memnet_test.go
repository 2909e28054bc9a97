package adaptertest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// TestMemNetConn: a MemNet connection carries bytes both ways, buffers
// what the reader has not read yet (a write does not wait for it), gives
// the other end the rest and then io.EOF after a Close, fails writes to
// a closed end, honours deadlines on virtual time, and refuses a dial of
// an address where nothing listens.
func TestMemNetConn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := NewMemNet(t)
		l := n.Listen()
		accepted := make(chan error, 1)
		var server io.ReadWriteCloser
		go func() {
			c, err := l.Accept()
			server = c
			accepted <- err
		}()
		client, err := n.Dial(t.Context(), "tcp", l.Addr().String())
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		if err := <-accepted; err != nil {
			t.Fatalf("Accept: %v", err)
		}
		// Written with nobody reading: the buffer takes it.
		msg := make([]byte, 100<<10)
		for i := range msg {
			msg[i] = byte(i)
		}
		if n, err := client.Write(msg); n != len(msg) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
		client.Close()
		got, err := io.ReadAll(server)
		if err != nil || len(got) != len(msg) || got[12345] != msg[12345] {
			t.Fatalf("ReadAll after the client closed: %d bytes, %v; want the %d written", len(got), err, len(msg))
		}
		if _, err := server.Write([]byte("x")); !errors.Is(err, syscall.EPIPE) {
			t.Errorf("Write to a closed peer: %v, want EPIPE", err)
		}
		server.Close()

		// A read deadline ends a read on virtual time.
		go func() {
			c, err := l.Accept()
			if err == nil {
				defer c.Close()
				_, _ = io.Copy(io.Discard, c)
			}
		}()
		c, err := n.Dial(t.Context(), "tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		start := time.Now()
		c.SetReadDeadline(time.Now().Add(time.Second))
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("Read past its deadline: %v", err)
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("the deadline ended the read after %v of virtual time, want 1s", d)
		}
		// A full buffer blocks the writer until its deadline.
		held := make(chan io.Closer, 1)
		go func() {
			if c, err := l.Accept(); err == nil {
				held <- c // never read
			}
		}()
		w, err := n.Dial(t.Context(), "tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		defer func() { (<-held).Close() }()
		w.SetWriteDeadline(time.Now().Add(time.Second))
		if n, err := w.Write(make([]byte, memBufferBytes+1000)); n != memBufferBytes || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("Write past a full buffer = %d, %v; want %d and the deadline", n, err, memBufferBytes)
		}
		c2, err := n.Dial(t.Context(), "tcp", "127.42.0.200:9")
		if err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("Dial of an address with no listener: %v, %v; want ECONNREFUSED", c2, err)
		}
	})
}

// TestMemNetHTTPAndBlackHole: an HTTP server on a MemNet answers its
// client, and a BlackHole makes a request wait until its context ends.
func TestMemNetHTTPAndBlackHole(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := NewMemNet(t)
		srv := n.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "pong") }))
		defer srv.Close()
		resp, err := n.HTTPClient().Get(srv.URL + "/ping")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "pong" {
			t.Errorf("body %q, want pong", b)
		}
		hole := n.BlackHole(t)
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http"+hole[len("ws"):], nil)
		start := time.Now()
		if _, err := n.HTTPClient().Do(req); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("request to a black hole: %v, want its context's deadline", err)
		}
		if d := time.Since(start); d != 300*time.Millisecond {
			t.Errorf("the black hole answered after %v, want the 300ms deadline", d)
		}
	})
}
