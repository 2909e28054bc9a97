// Package floodpeer is a hostile agent for voicetest's own tests and
// benchmarks: a loopback WebSocket server that, once a client connects,
// sends a greeting and then floods it with one frame repeated until a
// given number of bytes has gone out, as fast as the socket takes them.
//
// It speaks the generic WebSocket protocols of adapters/wscodec (RawPCM's
// bare PCM16 binary frames, or JSONBase64's JSON messages as that
// package's documentation lists them), which are voicetest's own, so it
// doubles no vendor. It exists to prove that what voicetest holds of an
// agent's output stays bounded whatever the agent sends (issue #15).
package floodpeer

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/internal/peers/peerkit"
)

// Config says what the peer sends.
type Config struct {
	// Greeting are text frames sent as soon as the client connects.
	Greeting []string
	// AfterFrames holds the flood back until the client has sent that many
	// frames (0: flood right after the greeting).
	AfterFrames int
	// Frame is the frame repeated in the flood; Binary sends it as a
	// binary frame, else as a text frame.
	Frame  []byte
	Binary bool
	// Bytes is how much of Frame to send in all; the flood stops early if
	// the client drops the connection.
	Bytes int64
}

// Peer is a running flood server.
type Peer struct {
	// URL is the ws:// address to connect to.
	URL string

	srv  *peerkit.Server
	sent atomic.Int64
	done chan struct{}
	once sync.Once
}

// New starts a peer and stops it when tb's test ends.
func New(tb testing.TB, cfg Config) *Peer {
	tb.Helper()
	p := &Peer{done: make(chan struct{})}
	p.srv = peerkit.Listen(nil)
	p.URL = p.srv.WSURL("/ws")
	p.srv.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p.serve(w, r, cfg) }))
	tb.Cleanup(p.srv.Close)
	return p
}

// Sent returns how many bytes of flood frames have been written so far.
func (p *Peer) Sent() int64 { return p.sent.Load() }

// Done is closed when the first connection's flood has ended: all of
// Bytes sent, or the connection gone.
func (p *Peer) Done() <-chan struct{} { return p.done }

func (p *Peer) serve(w http.ResponseWriter, r *http.Request, cfg Config) {
	ws, err := peerkit.Accept(w, r, 1<<20)
	if err != nil {
		return
	}
	defer ws.CloseNow()
	ctx, cancel := p.srv.CallContext()
	defer cancel()
	// Read what the client sends, so that its writes never block, and
	// count its frames for AfterFrames.
	frames := make(chan struct{}, 1<<16)
	go func() {
		defer cancel()
		for {
			if _, _, err := ws.Read(ctx); err != nil {
				return
			}
			select {
			case frames <- struct{}{}:
			default:
			}
		}
	}()
	defer p.finish()
	for _, g := range cfg.Greeting {
		if ws.Write(ctx, websocket.MessageText, []byte(g)) != nil {
			return
		}
	}
	for range cfg.AfterFrames {
		select {
		case <-frames:
		case <-ctx.Done():
			return
		}
	}
	typ := websocket.MessageText
	if cfg.Binary {
		typ = websocket.MessageBinary
	}
	for p.sent.Load() < cfg.Bytes && len(cfg.Frame) > 0 {
		if err := ws.Write(ctx, typ, cfg.Frame); err != nil {
			return
		}
		p.sent.Add(int64(len(cfg.Frame)))
	}
	// The flood is over; the peer stays connected, silent, until the
	// client closes or the server stops.
	p.finish()
	<-ctx.Done()
}

// finish marks the flood over (once).
func (p *Peer) finish() {
	p.once.Do(func() { close(p.done) })
}
