// Package wsbot is a test double of a voice agent served over a plain
// WebSocket, in the two formats of the built-in codecs of adapters/wscodec:
// raw PCM16 binary frames, and JSON messages with base64 audio (the shape
// documented on wscodec.JSONBase64). It runs on loopback so the generic
// WebSocket adapter can be tested against a peer that behaves as a real
// agent does.
//
// JSON mode: the bot collects user audio until "audio_end", then answers
// with (optionally) a tool call, its result and a data message, the reply
// audio, a final transcript and "turn_end". It answers "text" and "dtmf"
// messages the same way, stops its reply and sends "interrupted" on
// "interrupt", and can hang up with a "hangup" message after a number of
// replies.
//
// Raw mode: the bot says {"status":"ready"} as a text frame, detects the end
// of each utterance by energy (200 ms of silence after speech), answers with
// tone audio in binary frames, stops answering when the user speaks over it
// (barge-in by overlapping audio), and can hang up by closing the socket.
//
// Both modes can reply in real time (Paced) so a barge-in can land
// mid-reply, and can misbehave in the ways listed under Fault.
package wsbot

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/internal/peers/peerkit"
	"github.com/voicetest-go/voicetest/pcm"
)

// Mode is the bot's wire format.
type Mode int

// The modes.
const (
	// JSON messages with base64 audio.
	JSON Mode = iota
	// Raw PCM16 binary frames.
	Raw
)

// Fault is a way the bot misbehaves, right after the connection opens.
type Fault int

// The faults.
const (
	// NoFault: the bot behaves.
	NoFault Fault = iota
	// MalformedJSON sends a text frame that is not JSON.
	MalformedJSON
	// UnknownType sends {"type":"dance"}.
	UnknownType
	// BadBase64 sends audio that is not base64.
	BadBase64
	// OddPCM sends 3 bytes of PCM16 (as a binary frame in Raw mode, as
	// base64 in JSON mode).
	OddPCM
	// WrongFrameType sends a binary frame in JSON mode.
	WrongFrameType
	// HugeFrame sends a 200 KB frame.
	HugeFrame
	// Stall stops reading and writing until the server closes.
	Stall
)

// Config sets the bot's behaviour.
type Config struct {
	Mode Mode
	// Rate is the sample rate of audio on the wire (default 24000).
	Rate int
	// ReplyDuration is the length of each reply's audio (default 300 ms).
	ReplyDuration time.Duration
	// Paced sends reply audio in 20 ms frames in real time instead of all
	// at once.
	Paced bool
	// Tools makes each JSON reply start with a tool call, its result and a
	// data message.
	Tools bool
	// HangUpAfter, when positive, hangs up after that many replies.
	HangUpAfter int
	// Fault is a misbehaviour to show first.
	Fault Fault
	// Send holds text frames sent verbatim right after the connection
	// opens (after the Fault, and after {"status":"ready"} in Raw mode),
	// before the bot reads anything: a way to script any message.
	Send []string
	// Listener, when set, is where the double serves instead of a port
	// of 127.0.0.1 (an in-memory listener, adaptertest.MemNet, to run a
	// test on virtual time); the double closes it.
	Listener net.Listener
}

// Call is what the bot saw of one connection.
type Call struct {
	// Utterances holds the samples of user audio per utterance (JSON: up
	// to each audio_end; Raw: per detected utterance).
	Utterances []int
	// Texts holds the text messages received.
	Texts []string
	// DTMF holds the digits received, in order.
	DTMF string
	// Interrupts counts interrupt messages (JSON) or barge-ins (Raw).
	Interrupts int
	// Replies counts replies started.
	Replies int
	// Errors are protocol violations the bot saw.
	Errors []string
	// Ended reports that the connection is over.
	Ended bool
}

// Server is a running bot.
type Server struct {
	// URL is the bot's ws:// address.
	URL string

	cfg   Config
	srv   *peerkit.Server
	calls *peerkit.Log[Call]
}

// New starts a bot on loopback and closes it when the test ends.
func New(tb testing.TB, cfg Config) *Server {
	tb.Helper()
	s := Start(cfg)
	tb.Cleanup(s.Close)
	return s
}

// Start starts a bot on loopback; Close stops it.
func Start(cfg Config) *Server {
	if cfg.Rate <= 0 {
		cfg.Rate = pcm.Rate24k
	}
	if cfg.ReplyDuration <= 0 {
		cfg.ReplyDuration = 300 * time.Millisecond
	}
	s := &Server{cfg: cfg, calls: peerkit.NewLog(cloneCall)}
	s.srv = peerkit.Listen(cfg.Listener)
	s.URL = s.srv.WSURL("")
	s.srv.Serve(http.HandlerFunc(s.serve))
	return s
}

// Close stops the bot and ends its connections.
func (s *Server) Close() {
	s.srv.Close()
}

// Calls returns a copy of what the bot saw of each connection so far.
func (s *Server) Calls() []Call { return s.calls.Snapshot() }

// cloneCall copies a call, sharing no slices with it.
func cloneCall(c *Call) Call {
	out := *c
	out.Utterances = append([]int(nil), c.Utterances...)
	out.Texts = append([]string(nil), c.Texts...)
	out.Errors = append([]string(nil), c.Errors...)
	return out
}

// WaitCall waits until call i satisfies cond, or ctx ends, and returns it.
func (s *Server) WaitCall(ctx context.Context, i int, cond func(Call) bool) (Call, error) {
	c, err := s.calls.Wait(ctx, i, cond)
	if err != nil {
		return c, fmt.Errorf("wsbot: call %d never reached the expected state (last: %+v): %w", i, c, err)
	}
	return c, nil
}

func (s *Server) update(c *Call, f func(*Call)) { s.calls.Update(c, f) }

// conn is one connection in progress. Only its main goroutine writes,
// except a paced reply, which the main goroutine cancels and waits for
// before writing again.
type conn struct {
	s    *Server
	ws   *websocket.Conn
	call *Call
	ctx  context.Context

	samples       int // user audio samples in the current utterance
	replies       int
	replyCancel   context.CancelFunc
	replyDone     chan struct{}
	voiced        int
	silentSamples int
	inSpeech      bool
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	ws, err := peerkit.Accept(w, r, 1<<20)
	if err != nil {
		return
	}
	call := s.calls.Add(func(int) *Call { return &Call{} })
	ctx, cancel := s.srv.CallContext()
	defer cancel()
	c := &conn{s: s, ws: ws, call: call, ctx: ctx}
	err = c.run()
	c.stopReply()
	s.update(call, func(cl *Call) {
		if err != nil && websocket.CloseStatus(err) != websocket.StatusNormalClosure {
			cl.Errors = append(cl.Errors, err.Error())
		}
		cl.Ended = true
	})
	ws.CloseNow()
}

func (c *conn) errorf(format string, args ...any) {
	c.s.update(c.call, func(cl *Call) { cl.Errors = append(cl.Errors, fmt.Sprintf(format, args...)) })
}

func (c *conn) text(v any) error { return peerkit.WriteJSON(c.ctx, c.ws, v) }

func (c *conn) run() error {
	if done, err := c.fault(); done || err != nil {
		return err
	}
	if c.s.cfg.Mode == Raw {
		if err := c.text(map[string]string{"status": "ready"}); err != nil {
			return err
		}
	}
	for _, m := range c.s.cfg.Send {
		if err := c.ws.Write(c.ctx, websocket.MessageText, []byte(m)); err != nil {
			return err
		}
	}
	// Read on a goroutine with a deep buffer so that the bot keeps reading
	// (and answering pings) while it replies.
	type frame struct {
		typ  websocket.MessageType
		data []byte
		err  error
	}
	frames := make(chan frame, 4096)
	go func() {
		for {
			typ, data, err := c.ws.Read(c.ctx)
			select {
			case frames <- frame{typ, data, err}:
			case <-c.ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		var f frame
		select {
		case f = <-frames:
		case <-c.ctx.Done():
			return nil
		}
		if f.err != nil {
			return f.err
		}
		var done bool
		var err error
		if c.s.cfg.Mode == Raw {
			done, err = c.raw(f.typ, f.data)
		} else {
			done, err = c.json(f.typ, f.data)
		}
		if done || err != nil {
			return err
		}
	}
}

func (c *conn) fault() (done bool, err error) {
	text := func(s string) error { return c.ws.Write(c.ctx, websocket.MessageText, []byte(s)) }
	switch c.s.cfg.Fault {
	case MalformedJSON:
		err = text(`{"type":`)
	case UnknownType:
		err = text(`{"type":"dance"}`)
	case BadBase64:
		err = text(`{"type":"audio","audio":"%%%"}`)
	case OddPCM:
		if c.s.cfg.Mode == Raw {
			err = c.ws.Write(c.ctx, websocket.MessageBinary, []byte{1, 2, 3})
		} else {
			err = text(`{"type":"audio","audio":"` + base64.StdEncoding.EncodeToString([]byte{1, 2, 3}) + `"}`)
		}
	case WrongFrameType:
		err = c.ws.Write(c.ctx, websocket.MessageBinary, []byte{0, 0})
	case HugeFrame:
		err = c.ws.Write(c.ctx, websocket.MessageBinary, make([]byte, 200<<10))
	case Stall:
		<-c.ctx.Done()
		return true, nil
	}
	return false, err
}

// inMsg is a JSON message from voicetest.
type inMsg struct {
	Type       string `json:"type"`
	Audio      string `json:"audio"`
	SampleRate int    `json:"sample_rate"`
	Text       string `json:"text"`
	Digits     string `json:"digits"`
}

func (c *conn) json(typ websocket.MessageType, data []byte) (bool, error) {
	if typ != websocket.MessageText {
		c.errorf("binary frame in JSON mode")
		return false, nil
	}
	var m inMsg
	if err := json.Unmarshal(data, &m); err != nil {
		c.errorf("not JSON: %v", err)
		return false, nil
	}
	switch m.Type {
	case "audio":
		raw, err := base64.StdEncoding.DecodeString(m.Audio)
		if err != nil || len(raw)%2 != 0 || m.SampleRate != c.s.cfg.Rate {
			c.errorf("bad audio message: %d bytes, rate %d, err %v", len(raw), m.SampleRate, err)
			return false, nil
		}
		c.samples += len(raw) / 2
	case "audio_end":
		n := c.samples
		c.samples = 0
		c.s.update(c.call, func(cl *Call) { cl.Utterances = append(cl.Utterances, n) })
		return c.reply("I heard you")
	case "text":
		c.s.update(c.call, func(cl *Call) { cl.Texts = append(cl.Texts, m.Text) })
		return c.reply("you said " + m.Text)
	case "dtmf":
		c.s.update(c.call, func(cl *Call) { cl.DTMF += m.Digits })
		return c.reply("you pressed " + m.Digits)
	case "interrupt":
		c.s.update(c.call, func(cl *Call) { cl.Interrupts++ })
		if c.stopReply() {
			return false, c.text(map[string]string{"type": "interrupted"})
		}
	default:
		c.errorf("unknown type %q", m.Type)
	}
	return false, nil
}

// tone returns the reply audio for reply n, as PCM16 bytes.
func (c *conn) tone(n int) []byte {
	k := pcm.SamplesFor(c.s.cfg.Rate, c.s.cfg.ReplyDuration)
	s := make([]int16, k)
	for i := range s {
		s[i] = int16(8000 * math.Sin(2*math.Pi*float64(300+100*n)*float64(i)/float64(c.s.cfg.Rate)))
	}
	return pcm.EncodePCM16(nil, s)
}

// reply answers: in JSON mode with tool events, audio, transcript and
// turn_end; in Raw mode with audio only. It reports done when the bot hung
// up.
func (c *conn) reply(words string) (bool, error) {
	c.stopReply()
	c.replies++
	n := c.replies
	c.s.update(c.call, func(cl *Call) { cl.Replies++ })
	cfg := c.s.cfg
	hangUp := cfg.HangUpAfter > 0 && n >= cfg.HangUpAfter
	if cfg.Mode == JSON && cfg.Tools {
		for _, m := range []any{
			map[string]any{"type": "tool_call", "id": "call-" + strconv.Itoa(n), "name": "lookup", "arguments": map[string]int{"turn": n}},
			map[string]any{"type": "tool_result", "id": "call-" + strconv.Itoa(n), "name": "lookup", "result": map[string]string{"status": "ok"}},
			map[string]any{"type": "data", "name": "ui", "data": map[string]int{"turn": n}},
		} {
			if err := c.text(m); err != nil {
				return false, err
			}
		}
	}
	audio := c.tone(n)
	frame := pcm.SamplesFor(cfg.Rate, 20*time.Millisecond) * 2
	send := func(ctx context.Context) error {
		for len(audio) > 0 {
			k := min(frame, len(audio))
			var err error
			if cfg.Mode == Raw {
				err = c.ws.Write(ctx, websocket.MessageBinary, audio[:k])
			} else {
				err = c.text(map[string]any{"type": "audio", "audio": base64.StdEncoding.EncodeToString(audio[:k]), "sample_rate": cfg.Rate})
			}
			if err != nil {
				return err
			}
			audio = audio[k:]
			if cfg.Paced {
				select {
				case <-time.After(20 * time.Millisecond):
				case <-ctx.Done():
					return nil
				}
			}
		}
		if cfg.Mode == Raw {
			return nil
		}
		for _, m := range []any{
			map[string]any{"type": "transcript", "text": words, "final": true},
			map[string]any{"type": "turn_end"},
		} {
			if err := c.text(m); err != nil {
				return err
			}
		}
		return nil
	}
	bye := func() (bool, error) {
		if cfg.Mode == JSON {
			if err := c.text(map[string]string{"type": "hangup", "reason": "done"}); err != nil {
				return true, err
			}
		}
		return true, c.ws.Close(websocket.StatusNormalClosure, "bye")
	}
	if !cfg.Paced {
		if err := send(c.ctx); err != nil {
			return false, err
		}
		if hangUp {
			return bye()
		}
		return false, nil
	}
	ctx, cancel := context.WithCancel(c.ctx)
	done := make(chan struct{})
	c.replyCancel, c.replyDone = cancel, done
	go func() {
		defer close(done)
		if err := send(ctx); err != nil && ctx.Err() == nil {
			c.errorf("reply: %v", err)
		}
		if hangUp && ctx.Err() == nil {
			bye()
		}
	}()
	return false, nil
}

// stopReply stops a paced reply in progress; it reports whether one was.
func (c *conn) stopReply() bool {
	if c.replyCancel == nil {
		return false
	}
	select {
	case <-c.replyDone:
		c.replyCancel, c.replyDone = nil, nil
		return false
	default:
	}
	c.replyCancel()
	<-c.replyDone
	c.replyCancel, c.replyDone = nil, nil
	return true
}

// replying reports whether a paced reply is in progress.
func (c *conn) replying() bool {
	if c.replyDone == nil {
		return false
	}
	select {
	case <-c.replyDone:
		return false
	default:
		return true
	}
}

// raw handles a frame in Raw mode: energy VAD over the user's audio.
func (c *conn) raw(typ websocket.MessageType, data []byte) (bool, error) {
	if typ != websocket.MessageBinary {
		c.errorf("text frame in raw mode: %q", data)
		return false, nil
	}
	s, err := pcm.DecodePCM16(nil, data)
	if err != nil {
		c.errorf("%v", err)
		return false, nil
	}
	win := pcm.SamplesFor(c.s.cfg.Rate, 10*time.Millisecond)
	for len(s) > 0 {
		w := s[:min(win, len(s))]
		s = s[len(w):]
		var sum float64
		for _, v := range w {
			sum += float64(v) * float64(v)
		}
		if math.Sqrt(sum/float64(len(w))) > 500 {
			c.samples += len(w)
			c.silentSamples = 0
			c.inSpeech = true
			c.voiced++
			if c.replying() && c.voiced >= 3 {
				c.stopReply()
				c.s.update(c.call, func(cl *Call) { cl.Interrupts++ })
			}
			continue
		}
		if !c.inSpeech {
			continue
		}
		c.samples += len(w)
		c.silentSamples += len(w)
		if c.silentSamples >= pcm.SamplesFor(c.s.cfg.Rate, 200*time.Millisecond) {
			n := c.samples - c.silentSamples
			c.samples, c.silentSamples, c.voiced, c.inSpeech = 0, 0, 0, false
			c.s.update(c.call, func(cl *Call) { cl.Utterances = append(cl.Utterances, n) })
			if done, err := c.reply(""); done || err != nil {
				return done, err
			}
		}
	}
	return false, nil
}
