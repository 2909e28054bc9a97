// Package peerkit is the scaffolding the loopback test doubles of voice
// agent services (twiliobot, wsbot, realtimepeer, elevenpeer,
// layercodepeer) share: an HTTP server on 127.0.0.1 whose calls end when
// it closes, the WebSocket accept, a log of what each call saw that tests
// can wait on, and the JSON write helper.
package peerkit

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/coder/websocket"
)

// Server is an HTTP server on loopback (httptest binds 127.0.0.1).
type Server struct {
	// URL is the server's base address, http://127.0.0.1:port.
	URL string

	srv       *httptest.Server
	ctx       context.Context // ends when Close begins
	cancel    context.CancelFunc
	closeOnce sync.Once
}

// Start starts a server that serves h on loopback; Close stops it.
func Start(h http.Handler) *Server { return StartOn(h, nil) }

// StartOn starts a server that serves h on ln, or on loopback when ln is
// nil; Close stops it (and closes ln). A test passes an in-memory
// listener (adaptertest.MemNet) to run the double and its client in a
// testing/synctest bubble, on virtual time. A double whose handler reads
// what it sets from the Server (its *Server, addresses made from URL)
// uses Listen and Serve instead, setting them between the two.
func StartOn(h http.Handler, ln net.Listener) *Server {
	s := Listen(ln)
	s.Serve(h)
	return s
}

// Listen makes a server on ln, or on loopback when ln is nil, that does
// not serve yet: its URL is known, and a double sets what its handler
// reads (the *Server itself, its addresses) before Serve starts serving.
// Set after serving began, they would race with the first request's
// handler as far as the race detector can tell: the request comes from
// another process, which orders nothing it can see. Close stops it (and
// closes ln), whether or not it served.
func Listen(ln net.Listener) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	var srv *httptest.Server
	if ln == nil {
		srv = httptest.NewUnstartedServer(nil)
	} else {
		srv = &httptest.Server{Listener: ln, Config: &http.Server{}}
	}
	// As httptest.Server.Start sets it.
	return &Server{URL: "http://" + srv.Listener.Addr().String(), srv: srv, ctx: ctx, cancel: cancel}
}

// Serve starts serving h; call it once, after Listen.
func (s *Server) Serve(h http.Handler) {
	s.srv.Config.Handler = h
	s.srv.Start()
}

// WSURL returns the ws:// address of path on the server.
func (s *Server) WSURL(path string) string {
	return "ws" + strings.TrimPrefix(s.URL, "http") + path
}

// Done is closed when Close begins: handlers that wait (stalls) select on
// it so that Close does not wait for them forever.
func (s *Server) Done() <-chan struct{} { return s.ctx.Done() }

// CallContext returns the context of one call: it ends when the server
// closes or when cancel is called. Call cancel when the call ends.
func (s *Server) CallContext() (context.Context, context.CancelFunc) {
	return context.WithCancel(s.ctx)
}

// Close ends the calls in progress (their contexts first, so that stalled
// handlers return) and stops the server. It is safe to call more than
// once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.cancel()
		s.srv.Close()
	})
}

// Accept upgrades the request to a WebSocket whose messages may be up to
// readLimit bytes, choosing the first of subprotocols the client offers
// (none when it offers none of them). Any Origin is accepted, as the
// cloud services the doubles stand for accept browsers on any site. On
// error the handshake has already answered w, and the handler should
// return.
func Accept(w http.ResponseWriter, r *http.Request, readLimit int64, subprotocols ...string) (*websocket.Conn, error) {
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: subprotocols, OriginPatterns: []string{"*"}})
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(readLimit)
	return ws, nil
}

// WriteJSON marshals v and sends it as one text message.
func WriteJSON(ctx context.Context, ws *websocket.Conn, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return ws.Write(ctx, websocket.MessageText, b)
}

// Log records what a peer saw of each call (a record of type C per call)
// and lets tests wait until a record reaches a state. Records are changed
// only through Update, under the log's lock; readers get deep copies made
// by the clone function.
type Log[C any] struct {
	clone func(*C) C

	mu      sync.Mutex
	records []*C
	change  chan struct{} // closed and replaced on every change
}

// NewLog returns an empty log. clone copies a record deeply enough that
// the copy shares no mutable memory (slices, maps) with the original.
func NewLog[C any](clone func(*C) C) *Log[C] {
	return &Log[C]{clone: clone, change: make(chan struct{})}
}

// Add appends the record that newRecord makes (given its index) and wakes
// waiters. newRecord runs under the log's lock, so the index is the
// record's for good.
func (l *Log[C]) Add(newRecord func(i int) *C) *C {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := newRecord(len(l.records))
	l.records = append(l.records, c)
	l.changed()
	return c
}

// Update changes record c under the lock and wakes waiters.
func (l *Log[C]) Update(c *C, f func(*C)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f(c)
	l.changed()
}

// changed wakes the waiters. Call with mu held.
func (l *Log[C]) changed() {
	close(l.change)
	l.change = make(chan struct{})
}

// Snapshot returns a copy of every record so far.
func (l *Log[C]) Snapshot() []C {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]C, len(l.records))
	for i, c := range l.records {
		out[i] = l.clone(c)
	}
	return out
}

// Wait waits until record i exists and satisfies cond, and returns a copy
// of it. If ctx ends first it returns the last copy it saw (the zero value
// if record i never existed) and ctx's error, for the caller to word.
func (l *Log[C]) Wait(ctx context.Context, i int, cond func(C) bool) (C, error) {
	for {
		l.mu.Lock()
		ch, ok := l.change, i < len(l.records)
		var c C
		if ok {
			c = l.clone(l.records[i])
		}
		l.mu.Unlock()
		if ok && cond(c) {
			return c, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return c, ctx.Err()
		}
	}
}
