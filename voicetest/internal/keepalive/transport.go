package keepalive

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"syscall"
	"time"
)

// Limits of the keep-alive transport.
const (
	// MaxResponseBytes bounds what one response may send, header and body:
	// a chat completion is a few kilobytes, an audio one a few megabytes.
	MaxResponseBytes = 64 << 20
	// maxIdleConns bounds the idle connections a transport keeps, over all
	// hosts; one more idle connection is closed instead.
	maxIdleConns = 4
	// dialTimeout bounds connecting to the endpoint (and the TLS
	// handshake), as http.DefaultTransport does.
	dialTimeout = 30 * time.Second
)

// errResponseTooLarge is returned when a response exceeds MaxResponseBytes.
var errResponseTooLarge = errors.New("the response is larger than the transport accepts")

// errUnsolicited is what an idle connection's watcher reports when the
// server sent bytes while no request was out.
var errUnsolicited = errors.New("keepalive: the server sent data on an idle connection")

// aLongTimeAgo is a deadline in the past: setting it makes blocked reads
// and writes of a connection return at once.
var aLongTimeAgo = time.Unix(1, 0)

// Transport is an HTTP/1.1 http.RoundTripper that keeps
// connections alive between requests with no goroutine of its own while a
// request runs: the caller's goroutine writes the request and reads the
// response (its body too), so a request made inside a testing/synctest
// bubble leaves nothing there that is blocked on the network, and the
// bubble's virtual clock keeps running while a connection is idle.
//
// An idle connection is watched according to where it was left:
//
//   - outside a bubble, by a goroutine blocked reading it (as net/http
//     does), so a connection the server closes is closed at once;
//   - inside a bubble, by nothing: no goroutine may wait on the network
//     there. It stays idle at most as long as the context of the request
//     that left it (context.AfterFunc closes it when that context ends,
//     which voicetest.Scenario's does when the scenario ends), and a
//     request without a cancellable context does not leave its connection
//     idle at all.
//
// A TCP connection belongs to no bubble (its deadlines run on the real
// clock), so one left idle in a bubble may be used outside it or in another
// bubble, and the other way round; the pool holds no channel or timer of a
// bubble. A connection that fails on reuse before any byte of the
// response (the server closed it while idle) is replaced by a new one and
// the request sent once more, as net/http does.
//
// Requests through a proxy (HTTP_PROXY and the like), for a protocol
// upgrade, and https requests outside a bubble (where HTTP/2 serves them
// better) are handed to other, net/http's Transport (see
// bubbleAwareTransport).
type Transport struct {
	tlsConfig   *tls.Config // nil: the defaults
	proxy       func(*http.Request) (*url.URL, error)
	other       http.RoundTripper // for requests this transport does not make
	maxResponse int64             // bytes of one response, header and body (MaxResponseBytes)
	// Dial connects to a host:port (a net.Dialer's DialContext); a test
	// may replace it before the first request.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)

	mu   sync.Mutex
	idle []*persistConn // most recently used last
}

// persistConn is one connection of a Transport.
type persistConn struct {
	t   *Transport
	key string // scheme://host:port
	nc  net.Conn
	lim limitedConn // what the bufio.Reader reads through
	br  *bufio.Reader
	bw  *bufio.Writer

	reused bool // a request was answered on it before

	// While idle (guarded by t.mu, except as noted):
	watched  chan error  // outside a bubble: the watcher's result, when it stops
	stopIdle func() bool // inside a bubble: stops the context.AfterFunc
}

// limitedConn reads from a connection, at most n more bytes.
type limitedConn struct {
	nc   net.Conn
	n    int64 // bytes the current response may still read
	read int64 // bytes read for the current response
}

func (l *limitedConn) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errResponseTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.nc.Read(p)
	l.n -= int64(n)
	l.read += int64(n)
	return n, err
}

func newTransport(other http.RoundTripper) *Transport {
	t := &Transport{
		proxy:       http.ProxyFromEnvironment,
		maxResponse: MaxResponseBytes,
		other:       other,
	}
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	t.Dial = d.DialContext
	if ht, ok := other.(*bubbleAwareTransport); ok && ht.pooled.TLSClientConfig != nil {
		t.tlsConfig = ht.pooled.TLSClientConfig.Clone()
	}
	return t
}

// inBubble reports whether the calling goroutine runs in a testing/synctest
// bubble: there, time.Now has no monotonic clock reading (outside one it
// always has one, until the year 2157), which Round(0) strips.
func inBubble() bool {
	now := time.Now()
	return now == now.Round(0)
}

// handles reports whether t makes req itself.
func (t *Transport) handles(req *http.Request) bool {
	if req.URL == nil || req.URL.Host == "" || (req.URL.Scheme != "http" && req.URL.Scheme != "https") {
		return false
	}
	if req.Header.Get("Upgrade") != "" || req.Method == http.MethodConnect {
		return false
	}
	if req.URL.Scheme == "https" && !inBubble() {
		return false // net/http's Transport, which speaks HTTP/2, keeps it alive
	}
	if t.proxy != nil {
		if p, err := t.proxy(req); err != nil || p != nil {
			return false
		}
	}
	return true
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.handles(req) {
		if t.other == nil {
			return nil, fmt.Errorf("keepalive: %s %s: unsupported request", req.Method, req.URL)
		}
		return t.other.RoundTrip(req)
	}
	key := req.URL.Scheme + "://" + canonicalAddr(req.URL)
	ctx := req.Context()
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			closeBody(req)
			return nil, err
		}
		pc := t.getIdle(key)
		if pc == nil {
			var err error
			if pc, err = t.connect(ctx, key, req.URL); err != nil {
				closeBody(req)
				return nil, fmt.Errorf("connecting: %w", err)
			}
		}
		resp, retryable, err := pc.roundTrip(req)
		if err == nil {
			return resp, nil
		}
		if attempt == 0 && retryable && pc.reused && ctx.Err() == nil {
			if r, ok := rewind(req); ok {
				req = r
				continue
			}
		}
		closeBody(req)
		return nil, err
	}
}

// rewind returns req with its body ready to be sent again, if it can be.
func rewind(req *http.Request) (*http.Request, bool) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, true
	}
	if req.GetBody == nil {
		return nil, false
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, false
	}
	r := *req
	r.Body = body
	return &r, true
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// canonicalAddr returns u's host:port, with the scheme's default port.
func canonicalAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// connect opens a new connection for key.
func (t *Transport) connect(ctx context.Context, key string, u *url.URL) (*persistConn, error) {
	addr := canonicalAddr(u)
	nc, err := t.Dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if u.Scheme == "https" {
		cfg := t.tlsConfig.Clone()
		if cfg == nil {
			cfg = &tls.Config{}
		}
		if cfg.ServerName == "" {
			cfg.ServerName = u.Hostname()
		}
		cfg.NextProtos = []string{"http/1.1"}
		if cfg.Time == nil {
			// Certificates are valid in real time, not in a bubble's.
			cfg.Time = wallClock
		}
		tc := tls.Client(nc, cfg)
		hctx, cancel := context.WithTimeout(ctx, dialTimeout)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			_ = nc.Close()
			return nil, fmt.Errorf("TLS handshake: %w", err)
		}
		nc = tc
	}
	pc := &persistConn{t: t, key: key, nc: nc}
	pc.lim.nc = nc
	pc.br = bufio.NewReaderSize(&pc.lim, 4096)
	pc.bw = bufio.NewWriterSize(nc, 4096)
	return pc, nil
}

// getIdle takes an idle connection to key that is still open, or returns
// nil.
func (t *Transport) getIdle(key string) *persistConn {
	for {
		t.mu.Lock()
		var pc *persistConn
		for i := len(t.idle) - 1; i >= 0; i-- {
			if t.idle[i].key == key {
				pc = t.idle[i]
				t.idle = append(t.idle[:i], t.idle[i+1:]...)
				break
			}
		}
		var watched chan error
		var stopIdle func() bool
		if pc != nil {
			watched, stopIdle = pc.watched, pc.stopIdle
			pc.watched, pc.stopIdle = nil, nil
		}
		t.mu.Unlock()
		if pc == nil {
			return nil
		}
		if stopIdle != nil {
			// Whether or not the context has ended meanwhile, the
			// connection is ours now: its AfterFunc closes only an idle
			// one.
			stopIdle()
			return pc
		}
		if watched != nil {
			// Stop the watcher: its read returns at the deadline, or
			// has returned with what the server did.
			_ = pc.nc.SetReadDeadline(aLongTimeAgo)
			err := <-watched
			if isTimeout(err) && pc.nc.SetReadDeadline(time.Time{}) == nil {
				return pc
			}
			_ = pc.nc.Close()
			continue
		}
		return pc
	}
}

// putIdle leaves pc idle for the next request, watched as the caller's
// place says (see Transport), or closes it.
func (t *Transport) putIdle(pc *persistConn, ctx context.Context) {
	pc.reused = true
	bubbled := inBubble()
	if bubbled && ctx.Done() == nil {
		_ = pc.nc.Close() // nothing would ever close it
		return
	}
	t.mu.Lock()
	var evicted *persistConn
	var evictedWatch chan error
	var evictedStop func() bool
	if len(t.idle) >= maxIdleConns {
		evicted = t.idle[0]
		t.idle = append(t.idle[:0], t.idle[1:]...)
		evictedWatch, evictedStop = evicted.watched, evicted.stopIdle
		evicted.watched, evicted.stopIdle = nil, nil
	}
	t.idle = append(t.idle, pc)
	if bubbled {
		pc.stopIdle = context.AfterFunc(ctx, func() {
			if t.remove(pc) {
				_ = pc.nc.Close()
			}
		})
	} else {
		ch := make(chan error, 1)
		pc.watched = ch
		go pc.watch(ch)
	}
	t.mu.Unlock()
	if evicted != nil {
		closeIdle(evicted, evictedWatch, evictedStop)
	}
}

// closeIdle closes pc, taken out of the idle list with its watch.
func closeIdle(pc *persistConn, watched chan error, stopIdle func() bool) {
	if stopIdle != nil {
		stopIdle()
	}
	_ = pc.nc.Close()
	if watched != nil {
		<-watched
	}
}

// remove takes pc out of the idle list, reporting whether it was there.
func (t *Transport) remove(pc *persistConn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, p := range t.idle {
		if p == pc {
			t.idle = append(t.idle[:i], t.idle[i+1:]...)
			pc.watched, pc.stopIdle = nil, nil
			return true
		}
	}
	return false
}

// watch waits for the server to close idle pc (or to send something it
// should not), closes it then, and reports why it stopped on ch.
func (pc *persistConn) watch(ch chan<- error) {
	var b [1]byte
	n, err := pc.nc.Read(b[:])
	if n > 0 {
		err = errUnsolicited
	}
	if !isTimeout(err) {
		// The server closed it (or broke the protocol): close it now,
		// unless a request has just taken it and will see err.
		if pc.t.remove(pc) {
			_ = pc.nc.Close()
		}
	}
	ch <- err
}

func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// IdleConns returns how many connections are idle.
func (t *Transport) IdleConns() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.idle)
}

// CloseIdleConnections closes the idle connections.
func (t *Transport) CloseIdleConnections() {
	type entry struct {
		pc       *persistConn
		watched  chan error
		stopIdle func() bool
	}
	t.mu.Lock()
	idle := make([]entry, len(t.idle))
	for i, pc := range t.idle {
		idle[i] = entry{pc, pc.watched, pc.stopIdle}
		pc.watched, pc.stopIdle = nil, nil
	}
	t.idle = nil
	t.mu.Unlock()
	for _, e := range idle {
		closeIdle(e.pc, e.watched, e.stopIdle)
	}
	if ci, ok := t.other.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// roundTrip sends req on pc and reads the response's header. On error pc
// is closed, and retryable reports that the server answered nothing (no
// byte of a response was read), so that the request may be sent again on
// a new connection.
func (pc *persistConn) roundTrip(req *http.Request) (resp *http.Response, retryable bool, err error) {
	ctx := req.Context()
	stop := func() bool { return true }
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() { _ = pc.nc.SetDeadline(aLongTimeAgo) })
	}
	fail := func(phase string, err error) (*http.Response, bool, error) {
		stop()
		_ = pc.nc.Close()
		if cerr := ctx.Err(); cerr != nil {
			return nil, false, fmt.Errorf("%s: %w", phase, cerr)
		}
		return nil, pc.lim.read == 0, fmt.Errorf("%s: %w", phase, err)
	}
	pc.lim.n, pc.lim.read = pc.t.maxResponse, 0
	if err := req.Write(pc.bw); err != nil {
		return fail("writing the request", err)
	}
	if err := pc.bw.Flush(); err != nil {
		return fail("writing the request", err)
	}
	for {
		resp, err = http.ReadResponse(pc.br, req)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
				err = fmt.Errorf("the server closed the connection: %w", err)
			}
			return fail("reading the response header", err)
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
		_ = resp.Body.Close() // a 1xx response: the real one follows
	}
	b := &bodyReader{pc: pc, rc: resp.Body, ctx: ctx, stop: stop,
		keep: !resp.Close && !req.Close && resp.StatusCode != http.StatusSwitchingProtocols &&
			(resp.ContentLength >= 0 || len(resp.TransferEncoding) > 0 || resp.Body == http.NoBody)}
	if resp.Body == http.NoBody {
		b.finish(true)
		return resp, false, nil
	}
	resp.Body = b
	return resp, false, nil
}

// bodyReader is a response body read by the caller; at its end the
// connection is left idle for the next request (or closed).
type bodyReader struct {
	pc   *persistConn
	rc   io.ReadCloser
	ctx  context.Context
	stop func() bool // stops the cancellation watch
	keep bool        // the connection may serve another request
	done bool
	eof  bool       // the body was read to its end
	mu   sync.Mutex // Close may come from another goroutine than Read
}

// Read implements io.Reader.
func (b *bodyReader) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		if b.eof {
			return 0, io.EOF
		}
		return 0, errors.New("read on a closed response body")
	}
	n, err := b.rc.Read(p)
	switch {
	case err == io.EOF:
		b.eof = true
		b.finish(true)
	case err != nil:
		if cerr := b.ctx.Err(); cerr != nil {
			err = fmt.Errorf("reading the response body: %w", cerr)
		} else {
			err = fmt.Errorf("reading the response body: %w", err)
		}
		b.finish(false)
	}
	return n, err
}

// Close implements io.Closer: a body not read to its end closes the
// connection.
func (b *bodyReader) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.done {
		b.finish(false)
	}
	return nil
}

// finish ends the response: the connection goes idle if the body was read
// to its end and the connection may serve another request, else it is
// closed.
func (b *bodyReader) finish(complete bool) {
	b.done = true
	pc := b.pc
	// stop reports false when the context ended and may have set a past
	// deadline on the connection.
	if b.stop() && complete && b.keep && pc.br.Buffered() == 0 {
		pc.t.putIdle(pc, b.ctx)
		return
	}
	_ = pc.nc.Close()
}
