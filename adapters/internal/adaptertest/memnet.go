package adaptertest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// MemNet is an in-memory network for one test: a loopback peer serves on
// one of its listeners (Listen), and the agent reaches it through Dial
// (wire.WSOptions.NetDial) or HTTPClient. Its connections are in-memory
// pipes that buffer 256 KiB each way as a loopback socket does; blocking
// on them is blocking on channels, so that a peer,
// the adapter and the runner, all in one testing/synctest bubble, run on
// the bubble's virtual time. The HTTP and WebSocket handling and every
// message of the protocol are those of a loopback TCP connection; only
// the socket differs.
//
// Make it inside the bubble (its channels belong to the bubble); it
// closes its listeners when the test ends, after which Dial fails.
type MemNet struct {
	mu        sync.Mutex
	listeners map[string]*memListener
	closed    bool
}

// NewMemNet returns an empty in-memory network, closed when t ends.
func NewMemNet(t testing.TB) *MemNet {
	n := &MemNet{listeners: map[string]*memListener{}}
	t.Cleanup(n.Close)
	return n
}

// Listen returns a new listener of the network, at an address of its own
// (127.42.x.y:9: a dial of it that misses NetDial, on TCP, is refused
// rather than reaching another server).
func (n *MemNet) Listen() net.Listener {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := len(n.listeners) + 1
	l := &memListener{
		net:   n,
		addr:  memAddr(fmt.Sprintf("127.42.%d.%d:9", k/250, 1+k%250)),
		conns: make(chan net.Conn),
		done:  make(chan struct{}),
	}
	if n.closed {
		close(l.done)
	}
	n.listeners[string(l.addr)] = l
	return l
}

// Dial connects to the listener at addr (host:port), as
// wire.WSOptions.NetDial; network is ignored. It fails as a refused TCP
// dial would when no listener is there, and after the network closed.
func (n *MemNet) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	n.mu.Lock()
	l, ok := n.listeners[addr]
	closed := n.closed
	n.mu.Unlock()
	if !ok || closed {
		return nil, &net.OpError{Op: "dial", Net: "memnet", Addr: memAddr(addr), Err: syscall.ECONNREFUSED}
	}
	client, server := memPipe(memAddr("127.42.255.254:40000"), l.addr)
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, &net.OpError{Op: "dial", Net: "memnet", Addr: memAddr(addr), Err: syscall.ECONNREFUSED}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// HTTPClient returns an HTTP client whose connections are the network's
// (for an adapter's HTTPClient: an authorize or create-call request). It
// keeps no idle connection, which would outlive the test's bubble.
func (n *MemNet) HTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: n.Dial, DisableKeepAlives: true}}
}

// Close closes every listener; later dials fail. It is safe to call more
// than once.
func (n *MemNet) Close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	n.closed = true
	for _, l := range n.listeners {
		l.close()
	}
}

// BlackHole is the in-memory BlackHole: a listener that accepts
// connections and never reads or answers them, so that a WebSocket
// handshake against it times out. It returns its ws:// URL.
func (n *MemNet) BlackHole(t testing.TB) string {
	t.Helper()
	l := n.Listen()
	holdConns(t, l)
	return "ws://" + l.Addr().String() + "/media"
}

// SilentServer is the in-memory SilentServer: a WebSocket server that
// accepts the connection and reads, but never answers. It returns its
// ws:// URL.
func (n *MemNet) SilentServer(t testing.TB) string {
	t.Helper()
	srv := n.Serve(http.HandlerFunc(silentHandler))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// Serve starts an HTTP server of h on a new listener of the network; the
// caller closes it.
func (n *MemNet) Serve(h http.Handler) *httptest.Server {
	srv := &httptest.Server{Listener: n.Listen(), Config: &http.Server{Handler: h}}
	srv.Start()
	return srv
}

// memListener is one listener of a MemNet.
type memListener struct {
	net       *MemNet
	addr      memAddr
	conns     chan net.Conn
	done      chan struct{}
	closeOnce sync.Once
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.close()
	return nil
}

func (l *memListener) close() { l.closeOnce.Do(func() { close(l.done) }) }

func (l *memListener) Addr() net.Addr { return l.addr }

// memAddr is the address of a listener of a MemNet.
type memAddr string

func (memAddr) Network() string  { return "tcp" }
func (a memAddr) String() string { return string(a) }

// memBufferBytes is how much one direction of a MemNet connection holds
// before a write waits for the reader, as a loopback TCP socket's buffers
// do (net.Pipe holds nothing: a peer that stops reading would stall the
// writer at once, where TCP takes it in).
const memBufferBytes = 256 << 10

// memPipe returns the two ends of an in-memory connection that buffers
// memBufferBytes each way. Blocking on it is blocking on channels
// (durable in a testing/synctest bubble), its deadlines are timers.
func memPipe(client, server net.Addr) (net.Conn, net.Conn) {
	ab, ba := newMemBuf(), newMemBuf()
	a := &memConn{rd: ba, wr: ab, local: client, remote: server, closed: make(chan struct{}),
		readDL: newMemDeadline(), writeDL: newMemDeadline()}
	b := &memConn{rd: ab, wr: ba, local: server, remote: client, closed: make(chan struct{}),
		readDL: newMemDeadline(), writeDL: newMemDeadline()}
	return a, b
}

// memBuf is one direction of a memPipe.
type memBuf struct {
	mu     sync.Mutex
	buf    []byte
	r      int           // buf[r:] is unread
	eof    bool          // the writer closed
	broken bool          // the reader closed
	wake   chan struct{} // closed (and replaced) on every change
}

func newMemBuf() *memBuf { return &memBuf{wake: make(chan struct{})} }

// changed wakes the waiters. Call with mu held.
func (b *memBuf) changed() {
	close(b.wake)
	b.wake = make(chan struct{})
}

// memConn is one end of a memPipe.
type memConn struct {
	rd, wr          *memBuf
	local, remote   net.Addr
	readDL, writeDL *memDeadline
	closed          chan struct{}
	closeOnce       sync.Once
}

func (c *memConn) Read(p []byte) (int, error) {
	for {
		select {
		case <-c.closed:
			return 0, io.ErrClosedPipe
		case <-c.readDL.wait():
			return 0, os.ErrDeadlineExceeded
		default:
		}
		b := c.rd
		b.mu.Lock()
		if b.r < len(b.buf) {
			n := copy(p, b.buf[b.r:])
			b.r += n
			if b.r == len(b.buf) {
				b.buf, b.r = b.buf[:0], 0
			}
			b.changed()
			b.mu.Unlock()
			return n, nil
		}
		if b.eof {
			b.mu.Unlock()
			return 0, io.EOF
		}
		wake := b.wake
		b.mu.Unlock()
		select {
		case <-wake:
		case <-c.closed:
		case <-c.readDL.wait():
		}
	}
}

func (c *memConn) Write(p []byte) (int, error) {
	n := 0
	for {
		select {
		case <-c.closed:
			return n, io.ErrClosedPipe
		case <-c.writeDL.wait():
			return n, os.ErrDeadlineExceeded
		default:
		}
		if len(p) == 0 {
			return n, nil
		}
		b := c.wr
		b.mu.Lock()
		if b.broken {
			b.mu.Unlock()
			return n, syscall.EPIPE
		}
		if free := memBufferBytes - (len(b.buf) - b.r); free > 0 {
			k := min(free, len(p))
			if b.r > 0 {
				b.buf, b.r = append(b.buf[:0], b.buf[b.r:]...), 0
			}
			b.buf = append(b.buf, p[:k]...)
			p, n = p[k:], n+k
			b.changed()
			b.mu.Unlock()
			continue
		}
		wake := b.wake
		b.mu.Unlock()
		select {
		case <-wake:
		case <-c.closed:
		case <-c.writeDL.wait():
		}
	}
}

// Close ends both directions: the other end reads what was written, then
// io.EOF, and its writes fail as on a socket whose reader closed.
func (c *memConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.wr.mu.Lock()
		c.wr.eof = true
		c.wr.changed()
		c.wr.mu.Unlock()
		c.rd.mu.Lock()
		c.rd.broken = true
		c.rd.buf, c.rd.r = nil, 0
		c.rd.changed()
		c.rd.mu.Unlock()
	})
	return nil
}

func (c *memConn) LocalAddr() net.Addr  { return c.local }
func (c *memConn) RemoteAddr() net.Addr { return c.remote }

func (c *memConn) SetDeadline(t time.Time) error {
	c.readDL.set(t)
	c.writeDL.set(t)
	return nil
}

func (c *memConn) SetReadDeadline(t time.Time) error {
	c.readDL.set(t)
	return nil
}

func (c *memConn) SetWriteDeadline(t time.Time) error {
	c.writeDL.set(t)
	return nil
}

// memDeadline is a read or write deadline of a memConn (net.Pipe's, on a
// timer of the bubble's clock): wait's channel is closed once it passed.
type memDeadline struct {
	mu     sync.Mutex
	timer  *time.Timer
	cancel chan struct{}
}

func newMemDeadline() *memDeadline { return &memDeadline{cancel: make(chan struct{})} }

func (d *memDeadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil && !d.timer.Stop() {
		<-d.cancel // the timer fired: wait for it to close cancel
	}
	d.timer = nil
	closed := false
	select {
	case <-d.cancel:
		closed = true
	default:
	}
	if t.IsZero() {
		if closed {
			d.cancel = make(chan struct{})
		}
		return
	}
	if dur := time.Until(t); dur > 0 {
		if closed {
			d.cancel = make(chan struct{})
		}
		cancel := d.cancel
		d.timer = time.AfterFunc(dur, func() { close(cancel) })
		return
	}
	if !closed {
		close(d.cancel)
	}
}

func (d *memDeadline) wait() chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cancel
}
