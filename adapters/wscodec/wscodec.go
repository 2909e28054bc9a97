package wscodec

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// Frame is one WebSocket message: binary, or UTF-8 text.
type Frame struct {
	// Binary marks a binary frame; otherwise the frame is text.
	Binary bool
	// Data is the frame's payload.
	Data []byte
}

// Codec converts between voicetest and one WebSocket protocol. A Codec is
// a factory: Agent calls Open once per conversation and uses the
// returned CodecSession for that conversation only, so one Codec value can
// serve parallel scenarios. RawPCM and JSONBase64 are the built-in codecs.
type Codec interface {
	// Open starts a conversation at the session's rate and returns its
	// CodecSession and the frames to send as soon as the socket is open
	// (a greeting or configuration message; nil for none).
	Open(s voicetest.Session) (CodecSession, []Frame, error)
}

// CodecSession encodes one conversation's user side into frames and
// decodes the agent's frames into events.
//
// The WebSocket adapter calls the Encode methods from one goroutine at a
// time and Decode from its reader goroutine, concurrently with them: the
// two sides must not share unsynchronised state. The adapter only calls an
// Encode method whose capability Capabilities declares; it answers the
// others with an *voicetest.UnsupportedError itself.
type CodecSession interface {
	// Capabilities declares what the protocol supports. Adapter may be
	// left empty; the adapter then names itself "websocket".
	Capabilities() voicetest.Capabilities
	// EncodeAudio appends the frames carrying c (at the session rate) to
	// dst.
	EncodeAudio(dst []Frame, c pcm.Chunk) ([]Frame, error)
	// EncodeEndUtterance appends the frames that tell the agent the user
	// stopped speaking (none when the agent detects it itself).
	EncodeEndUtterance(dst []Frame) ([]Frame, error)
	// EncodeText appends the frames carrying a user text message.
	EncodeText(dst []Frame, text string) ([]Frame, error)
	// EncodeDTMF appends the frames carrying key presses; digits are
	// already validated ("0"–"9", "*", "#", "A"–"D").
	EncodeDTMF(dst []Frame, digits string) ([]Frame, error)
	// EncodeInterrupt appends the frames that cancel the agent's response.
	EncodeInterrupt(dst []Frame) ([]Frame, error)
	// Decode appends the events one agent frame carries to dst. A frame it
	// cannot understand is an error saying what is wrong with it; the
	// adapter reports it as a *FrameError and keeps reading. f.Data is only
	// valid during the call (the adapter reuses its buffer): events must
	// not refer to it.
	Decode(dst []voicetest.AgentEvent, f Frame) ([]voicetest.AgentEvent, error)
}

// Agent reaches an agent that exchanges audio (and possibly text
// and control messages) over a plain WebSocket, in a format its Codec
// describes: RawPCM for bare PCM16 binary frames, JSONBase64 for JSON
// messages with base64 audio, or a Codec of your own.
//
// An agent that closes the socket with status 1000 or 1001 has hung up
// (AgentHangUp, then ErrTransportClosed); any other end of the connection is
// a *voicetest.TransportClosedError that says why. There is no reconnect.
//
// Set the fields before the first Connect; an Agent may then serve
// parallel scenarios.
type Agent struct {
	// URL is the agent's WebSocket, e.g. "ws://127.0.0.1:8080/ws".
	URL string
	// Codec converts frames; required.
	Codec Codec
	// Subprotocols are offered in the handshake (Sec-WebSocket-Protocol).
	Subprotocols []string
	// WSOptions are the transport settings (headers, keepalive, limits).
	wire.WSOptions
}

// New returns an agent reached at url whose frames codec converts.
func New(url string, codec Codec) *Agent {
	return &Agent{URL: url, Codec: codec}
}

// Connect opens the WebSocket and sends the codec's opening frames.
func (a *Agent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	if a.Codec == nil {
		return nil, errors.New("adapters: websocket: no Codec; use wscodec.RawPCM(rate), wscodec.JSONBase64(opts) or your own")
	}
	if s.Rate <= 0 {
		return nil, fmt.Errorf("adapters: websocket: session rate %d: %w", s.Rate, pcm.ErrBadRate)
	}
	cs, hello, err := a.Codec.Open(s)
	if err != nil {
		return nil, fmt.Errorf("adapters: websocket: opening codec: %w", err)
	}
	caps := cs.Capabilities()
	if caps.Adapter == "" {
		caps.Adapter = "websocket"
	}
	ws, err := wire.Dial(ctx, caps.Adapter, a.URL, a.WSOptions, s, a.Subprotocols)
	if err != nil {
		return nil, err
	}
	c := &wsAgentConn{ws: ws, cs: cs, caps: caps, rate: s.Rate}
	if err := c.writeFrames(ctx, hello); err != nil {
		ws.Close(nil)
		return nil, fmt.Errorf("adapters: %s: sending the codec's opening frames: %w", caps.Adapter, err)
	}
	ws.Start(func(typ websocket.MessageType, data []byte) ([]voicetest.AgentEvent, error) {
		evs, err := cs.Decode(nil, Frame{Binary: typ == websocket.MessageBinary, Data: data})
		for _, ev := range evs {
			if ev.Kind == voicetest.AgentInterrupted {
				ws.Stats().Clear()
			}
		}
		return evs, err
	})
	return c, nil
}

// wsAgentConn is one conversation of an Agent.
type wsAgentConn struct {
	ws   *wire.Conn
	cs   CodecSession
	caps voicetest.Capabilities
	rate int

	mu     sync.Mutex // serialises the Encode methods and their writes
	frames []Frame
}

// Capabilities reports what the codec's protocol supports.
func (c *wsAgentConn) Capabilities() voicetest.Capabilities { return c.caps }

func (c *wsAgentConn) unsupported(capability, alternative string) error {
	return &voicetest.UnsupportedError{Adapter: c.caps.Adapter, Capability: capability, Alternative: alternative}
}

// send encodes with enc and writes the frames, in order.
func (c *wsAgentConn) send(ctx context.Context, enc func([]Frame) ([]Frame, error)) error {
	if err := c.ws.Sendable(ctx); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	frames, err := safeEncode(enc, c.frames[:0])
	c.frames = frames[:0]
	if err != nil {
		return fmt.Errorf("adapters: %s: encoding: %w", c.caps.Adapter, err)
	}
	return c.writeFrames(ctx, frames)
}

// safeEncode runs a codec's encoder, turning a panic (in a user's Codec)
// into an error.
func safeEncode(enc func([]Frame) ([]Frame, error), dst []Frame) (frames []Frame, err error) {
	defer func() {
		if p := recover(); p != nil {
			frames, err = dst, fmt.Errorf("encoder panicked: %v", p)
		}
	}()
	return enc(dst)
}

func (c *wsAgentConn) writeFrames(ctx context.Context, frames []Frame) error {
	for _, f := range frames {
		typ := websocket.MessageText
		if f.Binary {
			typ = websocket.MessageBinary
		}
		if err := c.ws.Write(ctx, typ, f.Data); err != nil {
			return err
		}
	}
	return nil
}

// SendAudio sends user speech through the codec.
func (c *wsAgentConn) SendAudio(ctx context.Context, ch pcm.Chunk) error {
	if !c.caps.Audio {
		return c.unsupported("audio input", "send the user's words as text (SendText)")
	}
	if err := wire.CheckSendRate(c.caps.Adapter, ch.Rate, c.rate); err != nil {
		return err
	}
	if len(ch.Samples) == 0 {
		return nil
	}
	return c.send(ctx, func(dst []Frame) ([]Frame, error) { return c.cs.EncodeAudio(dst, ch) })
}

// EndUtterance tells the agent the user stopped speaking, if the protocol
// can.
func (c *wsAgentConn) EndUtterance(ctx context.Context) error {
	return c.send(ctx, c.cs.EncodeEndUtterance)
}

// SendText sends a user text message.
func (c *wsAgentConn) SendText(ctx context.Context, text string) error {
	if !c.caps.Text {
		return c.unsupported("text input", "speak the message instead (voicetest.UserSays synthesises it)")
	}
	return c.send(ctx, func(dst []Frame) ([]Frame, error) { return c.cs.EncodeText(dst, text) })
}

// SendDTMF sends key presses.
func (c *wsAgentConn) SendDTMF(ctx context.Context, digits string) error {
	if !c.caps.DTMF {
		return c.unsupported("DTMF", "this protocol carries no key presses; send the tones as audio (pcm DTMF generation) if the agent detects them")
	}
	if err := wire.CheckDTMF(digits); err != nil {
		return fmt.Errorf("adapters: %s: %w", c.caps.Adapter, err)
	}
	return c.send(ctx, func(dst []Frame) ([]Frame, error) { return c.cs.EncodeDTMF(dst, digits) })
}

// Interrupt cancels the agent's response through the protocol.
func (c *wsAgentConn) Interrupt(ctx context.Context) error {
	if !c.caps.NativeInterrupt {
		return c.unsupported("native interrupt", "barge in by sending user audio while the agent speaks")
	}
	if err := c.send(ctx, c.cs.EncodeInterrupt); err != nil {
		return err
	}
	c.ws.Stats().Cancel()
	return nil
}

// WireStats reports what crossed the WebSocket: frames each way, the
// caller's interrupts (cancels) and the agent's reports that it stopped
// (clears: the codec's AgentInterrupted events).
func (c *wsAgentConn) WireStats() voicetest.WireStats { return c.ws.Stats().Snapshot(c.caps.Adapter) }

// Recv returns the agent's next event.
func (c *wsAgentConn) Recv(ctx context.Context) (voicetest.AgentEvent, error) {
	return c.ws.Recv(ctx)
}

// Close closes the WebSocket.
func (c *wsAgentConn) Close() error { return c.ws.Close(nil) }
