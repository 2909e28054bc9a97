package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/scrub"
)

// Defaults of WSOptions.
const (
	DefaultDialTimeout   = 10 * time.Second
	DefaultPingInterval  = 10 * time.Second
	DefaultPongTimeout   = 30 * time.Second
	DefaultWriteTimeout  = 10 * time.Second
	DefaultCloseTimeout  = 2 * time.Second
	DefaultMaxFrameBytes = 1 << 20
	DefaultMaxQueueBytes = 32 << 20
)

// WSOptions are the transport settings shared by the WebSocket adapters
// (Twilio, WebSocket). The zero value gives the defaults.
//
// Keepalive: every PingInterval the adapter sends a WebSocket ping and waits
// up to PongTimeout for the pong. Ping and pong are answered by the agent's
// WebSocket library, not by its application code, so an agent that is slow
// to answer (a long LLM call) is never killed; only one whose connection has
// stopped answering pings altogether is. Such a dead connection, like any
// dropped connection, is reported by Recv as a *voicetest.TransportClosedError
// that says why. The adapters never reconnect: a voice conversation cannot
// resume on a new socket, so a silent reconnect would hide a real failure.
type WSOptions struct {
	// Header holds extra HTTP headers for the WebSocket handshake, e.g.
	// Authorization.
	Header http.Header
	// DialTimeout bounds the WebSocket handshake when Connect's ctx has no
	// earlier deadline. Zero means DefaultDialTimeout.
	DialTimeout time.Duration
	// NetDial, when set, opens the connection the WebSocket runs over
	// instead of a TCP dial of the URL's host: for an agent served in the
	// test's own process over an in-memory connection (one end of a
	// net.Pipe), which lets a whole call, agent included, run on a
	// testing/synctest bubble's virtual time. The URL still gives the
	// handshake's path and Host. Nil dials TCP.
	NetDial func(ctx context.Context, network, addr string) (net.Conn, error)
	// PingInterval is the time between keepalive pings. Zero means
	// DefaultPingInterval; a negative value disables keepalive.
	PingInterval time.Duration
	// PongTimeout is how long a ping may wait for its pong before the
	// connection is declared dead. Zero means DefaultPongTimeout.
	PongTimeout time.Duration
	// WriteTimeout bounds one frame write; a write that cannot finish in
	// time (the agent stopped reading) closes the connection. Zero means
	// DefaultWriteTimeout.
	WriteTimeout time.Duration
	// CloseTimeout bounds the closing handshake in Close. Zero means
	// DefaultCloseTimeout.
	CloseTimeout time.Duration
	// MaxFrameBytes is the largest frame the agent may send; a larger one
	// closes the connection with an error naming this field. Zero means
	// DefaultMaxFrameBytes (1 MiB).
	MaxFrameBytes int64
	// MaxQueueBytes bounds what the connection holds of the agent's
	// events while the runner is busy elsewhere (a judge, a TTS call, a
	// Check): their audio, text and data, as AgentEvent.Size counts them.
	// The connection reads the socket at all times (so that pings are
	// answered); an agent that sends more than this before the runner
	// reads again ends the connection with a *voicetest.LimitError naming
	// this field, after the events queued before it. Zero means
	// DefaultMaxQueueBytes (32 MiB: over eleven minutes of 24 kHz audio).
	MaxQueueBytes int64
	// RequireTLS refuses plain-text URLs (ws://, http://) to any host but
	// loopback, so that an API key is never sent unencrypted to a remote
	// agent. It is off by default: agents under test often run on a LAN or
	// in a container without TLS, and a plain-text URL is the user's
	// choice. Loopback (127.0.0.0/8, ::1, localhost) is always allowed.
	RequireTLS bool
	// Scrub, when set, is the scrubber the connection learns its secrets
	// into and blanks them with, in the capture, the log, errors and the
	// events it returns. The connection always learns the credentials of
	// the environment (scrub.Scrubber.AddEnv: an agent running beside the
	// tests shares them, and may quote its own key), the credential
	// headers of Header, the userinfo password and credential query
	// parameters of its URL, and the credential members of the JSON frames
	// it sends (an auth message's token); share a scrubber made with
	// scrub.New(secrets...) to blank secrets it cannot know as well (a key
	// the agent was configured with). Nil makes a new one per connection.
	Scrub *scrub.Scrubber
}

// Resolved returns o with every zero field set to its default.
func (o WSOptions) Resolved() WSOptions {
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.PingInterval == 0 {
		o.PingInterval = DefaultPingInterval
	}
	if o.PongTimeout <= 0 {
		o.PongTimeout = DefaultPongTimeout
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.CloseTimeout <= 0 {
		o.CloseTimeout = DefaultCloseTimeout
	}
	if o.MaxFrameBytes <= 0 {
		o.MaxFrameBytes = DefaultMaxFrameBytes
	}
	if o.MaxQueueBytes <= 0 {
		o.MaxQueueBytes = DefaultMaxQueueBytes
	}
	return o
}

// FrameError reports a frame from the agent that the adapter could not
// understand (malformed JSON, an unknown event, bad base64, an odd number of
// PCM16 bytes). Recv returns it in place of the event the frame should have
// carried; the Conn stays usable and later frames are still delivered.
type FrameError struct {
	// Adapter names the adapter.
	Adapter string
	// Frame is the start of the offending frame (at most 200 bytes), for
	// the report.
	Frame string
	// Err says what was wrong.
	Err error
}

// Error says what was wrong with which frame.
func (e *FrameError) Error() string {
	return fmt.Sprintf("adapters: %s: bad frame from agent: %v (frame starts %q)", e.Adapter, e.Err, e.Frame)
}

// Unwrap returns what was wrong.
func (e *FrameError) Unwrap() error { return e.Err }

// Excerpt returns at most 200 bytes of data for a FrameError, or, for
// binary data (audio), its size and first bytes in hex: a report never
// dumps binary.
func Excerpt(data []byte) string {
	const max = 200
	if !utf8.Valid(data) || bytes.ContainsFunc(data, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t' }) {
		const show = 16
		hex := fmt.Sprintf("% x", data[:min(len(data), show)])
		if len(data) > show {
			hex += " …"
		}
		return fmt.Sprintf("<%d bytes of binary: %s>", len(data), hex)
	}
	if len(data) > max {
		return string(data[:max]) + "…"
	}
	return string(data)
}

// AgentError is returned by a DecodeFunc for an error the agent reported
// in a well-formed frame (an "error" event): Recv returns err as it is,
// not wrapped in a FrameError.
type AgentError struct{ Err error }

// Error returns the agent's error message.
func (e AgentError) Error() string { return e.Err.Error() }

// DecodeFunc turns one received frame into events, or says why it cannot.
// It runs on the Conn's reader goroutine.
type DecodeFunc func(typ websocket.MessageType, data []byte) ([]voicetest.AgentEvent, error)

// wsItem is one entry of the receive queue: an event or a frame error.
type wsItem struct {
	ev  voicetest.AgentEvent
	err error
}

// Conn is the WebSocket plumbing shared by the adapters: one reader
// goroutine that decodes frames into a queue bounded by
// WSOptions.MaxQueueBytes (so that a runner that is slow to call Recv
// never stalls the socket and its pongs, and an agent that floods it
// cannot exhaust memory), a
// keepalive goroutine, writes with their own timeout, capture of every frame,
// and a Close that releases all of it.
type Conn struct {
	adapter string
	opts    WSOptions
	scrub   *scrub.Scrubber
	ws      *websocket.Conn
	raw     *batchConn // the connection under ws, which batches its writes
	capture *CaptureWriter
	logf    func(string, ...any)
	decode  DecodeFunc
	// onEnd, when set before Start, runs on the reader goroutine when the
	// connection ends, before the hang-up or closing error is queued: the
	// place to release audio an adapter holds back.
	onEnd func()

	ctx    context.Context // lives until Close; cancelling it ends the goroutines
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	queue    []wsItem
	head     int
	queued   int64         // bytes held by queue[head:] (itemSize)
	notify   chan struct{} // capacity 1: something was queued or the reader ended
	terminal error         // set when the reader ends; returned after the queue drains
	hungUp   bool          // an AgentHangUp was queued; later events are dropped
	dropped  int           // events dropped after the hang-up (only the first is logged)
	cause    error         // why the adapter itself killed the connection
	limit    error         // the first bound the agent went past (errors.Is voicetest.ErrLimit), for Close
	closing  bool          // Close was called
	after    []func()      // work Go was given while a frame was being decoded

	// decoding is set while the reader decodes a frame, until the frame's
	// events are queued: Go defers what it is given meanwhile (after).
	decoding atomic.Bool

	writeMu    sync.Mutex // one write at a time, so one timer bounds them
	writeTimer *time.Timer
	writing    atomic.Bool
	// Under writeMu: WriteAudio has looked at its first frame's member
	// names (audioChecked), and they named a credential (audioScan), so
	// that every audio frame is scanned as Write scans a frame.
	audioChecked, audioScan bool

	closeOnce sync.Once

	stats Stats // what crossed the wire (stats.go)
}

// Stats returns the Conn's wire statistics: it counts every frame in and
// out, and the adapter adds what only it can tell.
func (c *Conn) Stats() *Stats { return &c.stats }

// Dial opens the WebSocket at url. The Conn does not read until Start is
// called, so that the caller can finish its opening handshake first.
func Dial(ctx context.Context, adapter, url string, opts WSOptions, s voicetest.Session, subprotocols []string) (*Conn, error) {
	opts = opts.Resolved()
	sc := opts.Scrub
	if sc == nil {
		sc = scrub.New()
	}
	sc.AddEnv(os.Environ())
	sc.AddHeader(opts.Header)
	sc.AddURL(url)
	if err := CheckPlaintext(adapter, url, opts); err != nil {
		return nil, ScrubError(sc, err)
	}
	logf := ScrubLogf(sc, s.Logf)
	capture := NewCaptureWriter(s.Capture, logf)
	capture.SetScrubber(sc)
	dctx, cancel := context.WithTimeout(ctx, opts.DialTimeout)
	defer cancel()
	// Keep the raw connection, so that Close can always end it: after a
	// closing handshake has begun, coder/websocket offers no other way to
	// stop waiting for a peer that never answers it. It batches the
	// frames written in a burst into few system calls (batchConn).
	var raw atomic.Pointer[batchConn]
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// An upgrade answer has no body to compress: do not let net/http add
	// "Accept-Encoding: gzip" to the handshake, which no vendor's SDK
	// sends (adapters/gemini's equivalence tests compare the headers).
	tr.DisableCompression = true
	dial := (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext
	if opts.NetDial != nil {
		dial = opts.NetDial
	}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		bc := newBatchConn(conn)
		raw.Store(bc)
		return bc, nil
	}
	ws, resp, err := websocket.Dial(dctx, url, &websocket.DialOptions{
		HTTPClient:   &http.Client{Transport: tr},
		HTTPHeader:   opts.Header,
		Subprotocols: subprotocols,
	})
	tr.CloseIdleConnections()
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		err = ScrubError(sc, err) // net/http quotes the URL
		url := sc.URL(url)
		capture.Note("error", fmt.Sprintf("dial %s: %v", url, err))
		if ctx.Err() == nil && dctx.Err() != nil {
			return nil, &voicetest.TimeoutError{
				Phase:   voicetest.PhaseConnect,
				Timeout: opts.DialTimeout,
				Hint:    fmt.Sprintf("the %s agent at %s did not complete the WebSocket handshake; check that it is running, or raise WSOptions.DialTimeout", adapter, url),
			}
		}
		if resp != nil {
			return nil, fmt.Errorf("adapters: %s: dial %s: HTTP %s: %w", adapter, url, sc.String(resp.Status), err)
		}
		return nil, fmt.Errorf("adapters: %s: dial %s: %w", adapter, url, err)
	}
	capture.Note("open", sc.URL(url))
	ws.SetReadLimit(opts.MaxFrameBytes)
	c := &Conn{
		raw:     raw.Load(),
		adapter: adapter,
		opts:    opts,
		scrub:   sc,
		ws:      ws,
		capture: capture,
		logf:    logf,
		notify:  make(chan struct{}, 1),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.writeTimer = time.AfterFunc(time.Hour, c.writeTimedOut)
	c.writeTimer.Stop()
	if c.raw != nil {
		c.Go(c.raw.start(opts.WriteTimeout, c.writeDead))
	}
	return c, nil
}

// Start launches the reader and keepalive goroutines. decode runs on the
// reader goroutine for every frame.
func (c *Conn) Start(decode DecodeFunc) {
	c.decode = decode
	c.wg.Add(1)
	go c.readLoop()
	if c.opts.PingInterval > 0 {
		c.wg.Add(1)
		go c.pingLoop()
	}
}

// Go runs f on a goroutine that Close waits for. f must return once
// Context is done. Called while a frame is being decoded (from the decode
// function, typically to answer a tool call), f starts only once that
// frame's events are queued, so that what f queues (a tool's result) comes
// after them.
func (c *Conn) Go(f func()) {
	if c.decoding.Load() {
		c.mu.Lock()
		if c.decoding.Load() {
			c.after = append(c.after, f)
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
	c.start(f)
}

// start runs f on a goroutine that Close waits for.
func (c *Conn) start(f func()) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
}

// Context returns a context that lives until Close, or until the
// connection ends: the context of the Conn's own goroutines and of writes
// made outside a caller's call (answers to pings, tool results).
func (c *Conn) Context() context.Context { return c.ctx }

// Logf logs through the Session's Logf (or what SetLogf set), with the
// Conn's secrets blanked.
func (c *Conn) Logf(format string, args ...any) { c.logf(format, args...) }

// SetLogf replaces the Conn's log function; what it logs is scrubbed. Call
// it before Start.
func (c *Conn) SetLogf(logf func(string, ...any)) { c.logf = ScrubLogf(c.scrub, logf) }

// SetCapture replaces the Conn's capture writer (one an adapter made
// before dialling, to record what came before the socket). It scrubs with
// the Conn's scrubber. Call it before Start.
func (c *Conn) SetCapture(w *CaptureWriter) {
	w.SetScrubber(c.scrub)
	c.capture = w
}

// Scrubber returns the scrubber of the Conn's secrets (WSOptions.Scrub, or
// its own): an adapter adds the secrets it learns after dialling (a
// session key) and scrubs its own errors with it.
func (c *Conn) Scrubber() *scrub.Scrubber { return c.scrub }

// OnEnd sets f to run on the reader goroutine when the connection ends,
// before the hang-up or closing error is queued: the place to release
// audio an adapter holds back. Call it before Start.
func (c *Conn) OnEnd(f func()) { c.onEnd = f }

// Notify returns a channel that receives a value when an event or error
// was queued or the reader ended. Recv takes from it too: a caller that
// waits on it must look at the queue again (Failure) after each wake-up
// and use a bounded wait.
func (c *Conn) Notify() <-chan struct{} { return c.notify }

// Failure returns, without taking anything from the queue, the first
// error waiting in it (a frame the adapter could not read, or an error
// the agent reported) and the error that ended the connection, if any.
// An adapter that waits for the agent's half of an opening handshake uses
// it to fail Connect early.
func (c *Conn) Failure() (queued, terminal error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, it := range c.queue[c.head:] {
		if it.err != nil {
			queued = it.err
			break
		}
	}
	return queued, c.terminal
}

// readLoop reads frames until the connection ends. It reuses one buffer
// for every frame: decode functions must not keep the frame's bytes.
func (c *Conn) readLoop() {
	defer c.wg.Done()
	var buf bytes.Buffer
	for {
		// No ctx: a cancellable one costs an allocation per frame in
		// coder/websocket, and Close ends a pending read by closing the
		// socket anyway.
		typ, r, err := c.ws.Reader(context.Background())
		if err == nil {
			buf.Reset()
			_, err = buf.ReadFrom(r)
		}
		if err != nil {
			c.finish(err)
			return
		}
		data := buf.Bytes()
		c.stats.FrameIn(len(data))
		c.capture.Frame("recv", typ, data)
		c.decoding.Store(true)
		evs, derr := c.safeDecode(typ, data)
		c.push(evs, derr, data, true)
		if buf.Cap() > 64<<10 && len(data) < 16<<10 {
			buf = bytes.Buffer{} // do not hold on to one huge frame's memory
		}
	}
}

// safeDecode runs the decode function, turning a panic (in a user's Codec)
// into a frame error rather than a crash of the test binary.
func (c *Conn) safeDecode(typ websocket.MessageType, data []byte) (evs []voicetest.AgentEvent, err error) {
	defer func() {
		if p := recover(); p != nil {
			evs, err = nil, fmt.Errorf("decoder panicked: %v", p)
		}
	}()
	return c.decode(typ, data)
}

// push queues the events decoded from one frame, then its error if any,
// with the Conn's secrets blanked from their text. decoded is set by the
// reader for the frame it decoded: the work Go deferred meanwhile starts.
func (c *Conn) push(evs []voicetest.AgentEvent, err error, frame []byte, decoded bool) {
	for i := range evs {
		c.scrubEvent(&evs[i])
	}
	var qerr error
	if err != nil {
		var ae AgentError
		if errors.As(err, &ae) {
			qerr = ScrubError(c.scrub, ae.Err)
		} else {
			qerr = &FrameError{Adapter: c.adapter, Frame: Excerpt(c.scrub.Bytes(frame)), Err: ScrubError(c.scrub, err)}
		}
	}
	c.mu.Lock()
	dropped := false
	for _, ev := range evs {
		if c.hungUp {
			if c.dropped++; c.dropped == 1 {
				c.logf("%s: agent sent %s after hanging up; ignored (and what it sends after it, counted at Close)", c.adapter, ev.Kind)
			}
			dropped = true
			continue
		}
		c.queue = append(c.queue, wsItem{ev: ev})
		c.queued += ev.Size()
		if ev.Kind == voicetest.AgentHangUp {
			c.hungUp = true
		}
	}
	if qerr != nil && !c.hungUp {
		c.queue = append(c.queue, wsItem{err: qerr})
		c.queued += itemSize(c.queue[len(c.queue)-1])
		if c.limit == nil && errors.Is(qerr, voicetest.ErrLimit) {
			c.limit = qerr
		}
	}
	if dropped && frame != nil {
		c.stats.Dropped(1)
	}
	over := c.queued > c.opts.MaxQueueBytes && c.cause == nil
	var after []func()
	if decoded {
		c.decoding.Store(false)
		after, c.after = c.after, nil
	}
	if over {
		c.cause = &voicetest.LimitError{What: "the agent's events queued by the " + c.adapter + " adapter while the runner was not reading",
			Limit: c.opts.MaxQueueBytes, Unit: "bytes", Name: "WSOptions.MaxQueueBytes", Setting: "WSOptions.MaxQueueBytes"}
		if c.limit == nil {
			c.limit = c.cause
		}
	}
	c.mu.Unlock()
	if over {
		c.kill() // the reader stops at once; Recv returns what is queued, then the LimitError
	}
	c.wake()
	for _, f := range after {
		c.start(f)
	}
}

// itemSize is what a queue entry holds in memory.
func itemSize(it wsItem) int64 {
	n := it.ev.Size()
	if it.err != nil {
		n += int64(len(it.err.Error()))
	}
	return n
}

// scrubEvent blanks the Conn's secrets in the text an event carries: its
// Text, Data, and a tool call's arguments and result. Audio is left alone.
func (c *Conn) scrubEvent(ev *voicetest.AgentEvent) { ScrubEvent(c.scrub, ev) }

// PushEvent queues one event from outside the reader goroutine.
func (c *Conn) PushEvent(ev voicetest.AgentEvent) {
	c.push([]voicetest.AgentEvent{ev}, nil, nil, false)
}

func (c *Conn) wake() {
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// finish records why the reader ended: a hang-up, a dropped connection, or
// our own Close.
func (c *Conn) finish(err error) {
	if c.onEnd != nil {
		c.onEnd() // may still queue events
	}
	status := websocket.CloseStatus(err)
	c.mu.Lock()
	closing, cause, hungUp := c.closing, c.cause, c.hungUp
	var hangup *voicetest.AgentEvent
	var terminal *voicetest.TransportClosedError
	switch {
	case cause != nil:
		terminal = &voicetest.TransportClosedError{Adapter: c.adapter, Err: cause}
	case status == websocket.StatusNormalClosure || status == websocket.StatusGoingAway:
		terminal = &voicetest.TransportClosedError{Adapter: c.adapter}
		if !hungUp && !closing {
			var ce websocket.CloseError
			errors.As(err, &ce)
			reason := fmt.Sprintf("agent closed the WebSocket (status %d %s)", int(status), status)
			if ce.Reason != "" {
				reason += ": " + c.scrub.String(ce.Reason)
			}
			hangup = &voicetest.AgentEvent{Kind: voicetest.AgentHangUp, Text: reason}
		}
	case closing:
		terminal = &voicetest.TransportClosedError{Adapter: c.adapter}
	case errors.Is(err, websocket.ErrMessageTooBig):
		terminal = &voicetest.TransportClosedError{Adapter: c.adapter, Err: fmt.Errorf("agent sent a frame larger than %d bytes; raise WSOptions.MaxFrameBytes if that is expected: %w", c.opts.MaxFrameBytes, err)}
	case status >= 0:
		terminal = &voicetest.TransportClosedError{Adapter: c.adapter, Err: ScrubError(c.scrub, fmt.Errorf("agent closed the WebSocket with status %d %s: %w", int(status), status, err))}
	default:
		terminal = &voicetest.TransportClosedError{Adapter: c.adapter, Err: fmt.Errorf("connection lost: %w", err)}
	}
	if hangup != nil {
		c.queue = append(c.queue, wsItem{ev: *hangup})
		c.hungUp = true
	}
	c.terminal = terminal
	c.mu.Unlock()
	c.capture.Note("close", terminal.Error())
	switch {
	case hangup != nil:
		c.logf("%s: the agent hung up: %s", c.adapter, hangup.Text)
	case !closing && !hungUp:
		c.logf("%s: %v", c.adapter, terminal)
	}
	c.cancel() // stop the keepalive
	c.wake()
}

// pingLoop sends keepalive pings until the connection ends.
func (c *Conn) pingLoop() {
	defer c.wg.Done()
	t := time.NewTicker(c.opts.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(c.ctx, c.opts.PongTimeout)
		err := c.ws.Ping(pctx)
		timedOut := pctx.Err() != nil && c.ctx.Err() == nil
		cancel()
		if err == nil {
			continue
		}
		if timedOut {
			c.mu.Lock()
			if c.cause == nil {
				c.cause = fmt.Errorf("keepalive: no pong within %v of a ping; the agent's connection is dead (raise WSOptions.PongTimeout if its network is merely slow)", c.opts.PongTimeout)
			}
			c.mu.Unlock()
			c.kill()
		}
		return
	}
}

// Recv returns the next queued event, waiting for one until ctx is done.
func (c *Conn) Recv(ctx context.Context) (voicetest.AgentEvent, error) {
	for {
		c.mu.Lock()
		if c.head < len(c.queue) {
			it := c.queue[c.head]
			c.queue[c.head] = wsItem{}
			c.queued -= itemSize(it)
			c.head++
			if c.head == len(c.queue) {
				c.queue, c.head = c.queue[:0], 0
			}
			c.mu.Unlock()
			return it.ev, it.err
		}
		if c.terminal != nil {
			err := c.terminal
			c.mu.Unlock()
			return voicetest.AgentEvent{}, err
		}
		c.mu.Unlock()
		select {
		case <-c.notify:
		case <-ctx.Done():
			return voicetest.AgentEvent{}, ctx.Err()
		}
	}
}

// Write sends one frame. A ctx that is already done sends nothing; once
// started, the write is bounded by WriteTimeout rather than ctx, because
// coder/websocket closes the connection when a write's ctx ends mid-frame.
// Under the WebSocket, a batchConn takes the frame (waiting while its
// bounded buffer is full) and writes it to the kernel with the frames
// written just before and after it; each of its kernel writes is bounded
// by WriteTimeout, and so is a wait for room in its buffer, which lasts at
// most one such write. (Without a batchConn, the bound is one reusable
// timer rather than a context per write, which would cost several
// allocations per 20 ms frame.)
//
// The member names of a text frame are scanned for credentials to learn
// (WSOptions.Scrub): an auth message's token, which the agent may echo.
func (c *Conn) Write(ctx context.Context, typ websocket.MessageType, data []byte) error {
	return c.write(ctx, typ, data, false)
}

// WriteAudio is Write for the frames of the user's audio that an adapter
// builds itself, every time with the same member names (the event's name,
// counters, the audio in base64): it scans the member names of the first
// of them for credentials, and those of the later ones only if the first
// named one. Scanning costs about a microsecond per frame, as much as
// building it.
func (c *Conn) WriteAudio(ctx context.Context, typ websocket.MessageType, data []byte) error {
	return c.write(ctx, typ, data, true)
}

// namesCredential reports whether a member of the JSON text b, at any
// depth, has a name scrub.Name matches, or b is not JSON.
func namesCredential(b []byte) bool {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return true
	}
	var walk func(v any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			for k, m := range v {
				if scrub.Name(k) || walk(m) {
					return true
				}
			}
		case []any:
			for _, m := range v {
				if walk(m) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

// write is Write, and with audio WriteAudio.
func (c *Conn) write(ctx context.Context, typ websocket.MessageType, data []byte, audio bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.ClosedErr(); err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if typ == websocket.MessageText {
		if !audio || !c.audioChecked || c.audioScan {
			c.scrub.AddJSON(data) // an auth message's token, echoed later
		}
		if audio && !c.audioChecked {
			c.audioChecked, c.audioScan = true, namesCredential(data)
		}
	}
	c.capture.Frame("send", typ, data)
	var err error
	if c.raw != nil {
		err = c.ws.Write(context.Background(), typ, data) // bounded by the batchConn
	} else {
		c.writing.Store(true)
		c.writeTimer.Reset(c.opts.WriteTimeout)
		err = c.ws.Write(context.Background(), typ, data)
		c.writing.Store(false)
		c.writeTimer.Stop()
	}
	if err == nil {
		c.stats.FrameOut(len(data))
		return nil
	}
	c.mu.Lock()
	cause := c.cause
	c.mu.Unlock()
	if cause != nil {
		return &voicetest.TransportClosedError{Adapter: c.adapter, Err: cause}
	}
	if terr := c.ClosedErr(); terr != nil {
		return terr
	}
	return &voicetest.TransportClosedError{Adapter: c.adapter, Err: err}
}

// writeTimedOut runs when a write has not finished within WriteTimeout: it
// declares the connection dead and closes it, which ends the write.
func (c *Conn) writeTimedOut() {
	if !c.writing.Load() {
		return // the write finished just as the timer fired
	}
	c.writeDead()
}

// writeDead declares the connection dead because a write (the Conn's, or
// its batchConn's write to the kernel) did not finish within WriteTimeout,
// and closes it.
func (c *Conn) writeDead() {
	c.mu.Lock()
	if c.cause == nil {
		c.cause = fmt.Errorf("a write did not finish within %v: the agent stopped reading (raise WSOptions.WriteTimeout if it is merely slow)", c.opts.WriteTimeout)
	}
	c.mu.Unlock()
	c.kill()
}

// kill drops the connection without a closing handshake. It closes the TCP
// connection itself, which works even while a handshake is under way.
func (c *Conn) kill() {
	if c.raw != nil {
		c.raw.abort()
		return
	}
	c.ws.CloseNow()
}

// ClosedErr returns the terminal error once the connection has ended, or
// an error saying Close was called.
func (c *Conn) ClosedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return &voicetest.TransportClosedError{Adapter: c.adapter, Err: errors.New("the Conn was closed")}
	}
	if c.terminal != nil {
		return c.terminal
	}
	return nil
}

// Close runs the closing handshake (bounded by CloseTimeout) and waits for
// the goroutines to end. before, if not nil, runs first (e.g. to send a
// protocol's stop message). Safe to call more than once.
//
// Once Close is called the conversation is over whatever the peer does: a
// peer that drops the connection instead of answering the closing
// handshake (or never answers it) has not made the test fail, and is only
// logged and noted in the capture. Close returns an error only when the
// agent went past one of the adapter's bounds (a *voicetest.LimitError,
// such as WSOptions.MaxQueueBytes, which also ended the connection): a
// limit hit is never silent, even when nothing read it from Recv.
func (c *Conn) Close(before func()) error {
	c.closeOnce.Do(func() {
		if before != nil {
			before()
		}
		c.mu.Lock()
		c.closing = true
		over := c.terminal != nil
		c.mu.Unlock()
		done := make(chan error, 1)
		go func() { done <- c.ws.Close(websocket.StatusNormalClosure, "") }()
		t := time.NewTimer(c.opts.CloseTimeout)
		var err error
		select {
		case err = <-done:
		case <-t.C:
			c.cancel()
			c.kill() // ends the pending read and the handshake
			<-done
			err = fmt.Errorf("the agent did not finish the closing handshake within %v (WSOptions.CloseTimeout); socket closed", c.opts.CloseTimeout)
		}
		t.Stop()
		c.cancel()
		c.wg.Wait()
		c.writeTimer.Stop()
		// A connection that had already ended, or a handshake the peer had
		// already started, is a normal end.
		if err != nil && !over && websocket.CloseStatus(err) < 0 && !errors.Is(err, net.ErrClosed) {
			c.logf("%s: closing: %v", c.adapter, err)
			c.capture.Note("error", "closing: "+err.Error())
		}
		c.mu.Lock()
		dropped := c.dropped
		c.mu.Unlock()
		if dropped > 1 {
			c.logf("%s: the agent sent %d events after hanging up; all ignored", c.adapter, dropped)
		}
		c.capture.Note("closed", "closed by voicetest")
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.limit
}
