package wire

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/scrub"
)

// gatedConn is a net.Conn whose writes record what they were given and,
// while the gate is shut, wait for it to open: a kernel that does not take
// the bytes (an agent that stopped reading).
type gatedConn struct {
	net.Conn // nil: only Write and Close are used
	gate     chan struct{}
	entered  chan struct{} // a write started (capacity 1)
	mu       sync.Mutex
	writes   [][]byte
	closed   bool
}

func newGatedConn(open bool) *gatedConn {
	g := &gatedConn{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	if open {
		close(g.gate)
	}
	return g
}

func (g *gatedConn) Write(p []byte) (int, error) {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	<-g.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return 0, net.ErrClosed
	}
	g.writes = append(g.writes, bytes.Clone(p))
	return len(p), nil
}

func (g *gatedConn) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	return nil
}

func (g *gatedConn) got() (n int, all []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.writes), bytes.Join(g.writes, nil)
}

// startBatch starts b's flusher (timeout one second) and returns a count of
// the timeouts it reported and a wait for the flusher's end.
func startBatch(b *batchConn) (timeouts *atomic.Int32, wait func()) {
	timeouts = new(atomic.Int32)
	flusher := b.start(time.Second, func() { timeouts.Add(1); b.abort() })
	done := make(chan struct{})
	go func() { defer close(done); flusher() }()
	return timeouts, func() { <-done }
}

func TestBatchConnPassesThroughUntilStart(t *testing.T) {
	g := newGatedConn(true)
	b := newBatchConn(g)
	if _, err := b.Write([]byte("GET / HTTP/1.1\r\n")); err != nil {
		t.Fatal(err)
	}
	if n, all := g.got(); n != 1 || string(all) != "GET / HTTP/1.1\r\n" {
		t.Fatalf("before start: %d writes %q, want the handshake written at once", n, all)
	}
	b.Close()
}

// writeFirst writes p from a goroutine of its own (a lone write, which
// its caller writes to the kernel itself) and waits until the kernel
// write has begun.
func writeFirst(t *testing.T, b *batchConn, g *gatedConn, p []byte) {
	t.Helper()
	go b.Write(p)
	<-g.entered
}

// A lone write goes to the kernel before Write returns, on the caller's
// goroutine; so does one that comes burstGap after the previous one.
func TestBatchConnWritesALoneFrameAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGatedConn(true)
		b := newBatchConn(g)
		_, wait := startBatch(b)
		for i, frame := range []string{"first", "after a pause"} {
			if _, err := b.Write([]byte(frame)); err != nil {
				t.Fatal(err)
			}
			if n, _ := g.got(); n != i+1 {
				t.Fatalf("after lone write %d returned, %d kernel writes, want %d", i+1, n, i+1)
			}
			time.Sleep(burstGap)
		}
		b.Close()
		wait()
	})
}

// A burst of frames written while the kernel is busy with the first goes
// out in one more write, with every byte in order.
func TestBatchConnBatchesABurstInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGatedConn(false)
		b := newBatchConn(g)
		_, wait := startBatch(b)
		want := []byte("first frame;")
		writeFirst(t, b, g, want)
		for i := range 30 {
			frame := bytes.Repeat([]byte{byte('a' + i%26)}, 100+i)
			want = append(want, frame...)
			if n, err := b.Write(frame); err != nil || n != len(frame) {
				t.Fatalf("write %d: %d, %v", i, n, err)
			}
		}
		close(g.gate)
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		wait()
		n, all := g.got()
		if !bytes.Equal(all, want) {
			t.Fatalf("the kernel got %d bytes, want the %d written, in order", len(all), len(want))
		}
		if n != 2 {
			t.Errorf("%d kernel writes for a burst of 31 frames behind a busy first one, want 2", n)
		}
	})
}

// While the kernel takes nothing, the buffer holds at most maxBatchBytes
// (plus one frame): the next write waits, and the timeout kills the
// connection, which fails the waiting write.
func TestBatchConnBoundAndWriteTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGatedConn(false)
		b := newBatchConn(g)
		timeouts, wait := startBatch(b)
		frame := make([]byte, maxBatchBytes/2)
		writeFirst(t, b, g, frame)
		for range 2 { // fills the buffer
			if _, err := b.Write(frame); err != nil {
				t.Fatal(err)
			}
		}
		var werr atomic.Value
		returned := make(chan struct{})
		go func() {
			_, err := b.Write(frame)
			werr.Store(err)
			close(returned)
		}()
		synctest.Wait()
		select {
		case <-returned:
			t.Fatal("a write past the bound returned while the kernel took nothing")
		default:
		}
		time.Sleep(time.Second + time.Millisecond)
		synctest.Wait()
		if timeouts.Load() != 1 {
			t.Fatalf("%d timeouts after the write timeout, want 1", timeouts.Load())
		}
		<-returned
		if err, _ := werr.Load().(error); !errors.Is(err, net.ErrClosed) {
			t.Errorf("waiting write: %v, want net.ErrClosed", err)
		}
		if _, err := b.Write(frame); !errors.Is(err, net.ErrClosed) {
			t.Errorf("write after the timeout: %v, want net.ErrClosed", err)
		}
		close(g.gate)
		wait()
	})
}

// Close writes what is buffered before it closes the connection (a
// closing handshake's frame written just before); abort drops it.
func TestBatchConnCloseFlushesAbortDrops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGatedConn(false)
		b := newBatchConn(g)
		_, wait := startBatch(b)
		writeFirst(t, b, g, []byte("one,"))
		b.Write([]byte("close"))
		closed := make(chan error)
		go func() { closed <- b.Close() }()
		synctest.Wait()
		close(g.gate)
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		wait()
		if _, all := g.got(); string(all) != "one,close" {
			t.Errorf("written before Close: %q, want %q", all, "one,close")
		}
		if _, err := b.Write([]byte("late")); !errors.Is(err, net.ErrClosed) {
			t.Errorf("write after Close: %v, want net.ErrClosed", err)
		}

		g = newGatedConn(false)
		b = newBatchConn(g)
		_, wait = startBatch(b)
		writeFirst(t, b, g, []byte("one,"))
		b.Write([]byte("dropped"))
		b.abort()
		close(g.gate)
		wait()
		if _, all := g.got(); strings.Contains(string(all), "dropped") {
			t.Errorf("written after abort: %q", all)
		}
	})
}

// WriteAudio scans the member names of the first audio frame for
// credentials, and of the later ones only if the first named one: a
// credential in every audio frame is still learned, and frames without
// one teach nothing, as with Write.
func TestWriteAudioLearnsCredentials(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		for {
			if _, _, err := ws.Read(context.Background()); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name   string
		frames []string
		learn  []string // values the scrubber must blank afterwards
		none   bool     // nothing learned at all
	}{
		{"no credential", []string{`{"event":"media","media":{"payload":"AAAA"}}`, `{"event":"media","media":{"payload":"BBBB"}}`}, nil, true},
		{"credential in every frame", []string{`{"audio":"AAAA","auth":{"token":"tok-first-1234"}}`, `{"audio":"BBBB","auth":{"token":"tok-second-5678"}}`}, []string{"tok-first-1234", "tok-second-5678"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := scrub.New()
			c, err := Dial(t.Context(), "test", "ws"+strings.TrimPrefix(srv.URL, "http"), WSOptions{Scrub: sc, PingInterval: -1}, voicetest.Session{Logf: t.Logf}, nil)
			if err != nil {
				t.Fatal(err)
			}
			c.Start(func(websocket.MessageType, []byte) ([]voicetest.AgentEvent, error) { return nil, nil })
			defer c.Close(nil)
			n0 := sc.Len()
			for _, f := range tc.frames {
				if err := c.WriteAudio(t.Context(), websocket.MessageText, []byte(f)); err != nil {
					t.Fatal(err)
				}
			}
			for _, v := range tc.learn {
				if got := sc.String("said " + v); strings.Contains(got, v) {
					t.Errorf("credential %q sent in an audio frame was not learned: %q", v, got)
				}
			}
			if tc.none && sc.Len() != n0 {
				t.Errorf("the scrubber learned %d secrets from audio frames without credentials", sc.Len()-n0)
			}
		})
	}
}
