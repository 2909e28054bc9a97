// Package pipecatpeer is a test double of a Pipecat bot served over
// Pipecat's WebSocket transport (FastAPIWebsocketTransport or
// WebsocketServerTransport), with either of the serializers a bot picks:
//
//   - ProtobufFrameSerializer (pipecat src/pipecat/serializers/protobuf.py,
//     frames in src/pipecat/frames/frames.proto): binary frames holding a
//     pipecat.Frame. The bot takes AudioRawFrame (PCM16, its sample_rate),
//     MessageFrame (a JSON transport message: RTVI client messages) and
//     InterruptionFrame; it sends AudioRawFrame for its speech (an
//     OutputAudioRawFrame), MessageFrame for transport messages (RTVI) and
//     InterruptionFrame when it is interrupted.
//   - TwilioFrameSerializer (pipecat src/pipecat/serializers/twilio.py):
//     Twilio Media Streams JSON text frames. The caller must open with
//     "connected" then "start" carrying start.streamSid and start.callSid,
//     as pipecat/runner/utils.py parse_telephony_websocket reads them; the
//     bot then takes "media" (µ-law 8 kHz) and "dtmf" and ignores every
//     other event (a caller's "mark" included); it sends "media" with
//     {"event","streamSid","media":{"payload"}}, "clear" when interrupted,
//     and transport messages as bare JSON text (RTVI ones only when the
//     serializer's ignore_rtvi_messages is off, which Config.RTVI models).
//
// With Config.RTVI the bot runs Pipecat's RTVI processor and observer
// (src/pipecat/processors/frameworks/rtvi/models.py, protocol 2.1.0):
// messages {"label":"rtvi-ai","type","id","data"}. It answers client-ready
// with bot-ready; reports user-started/stopped-speaking, user-transcription
// {text,user_id,timestamp,final}, bot-started/stopped-speaking,
// bot-tts-text {text} per word, bot-interrupted, and function calls
// (llm-function-call-started, llm-function-call-in-progress
// {tool_call_id,function_name,arguments} and llm-function-call-stopped
// {tool_call_id,cancelled,function_name,result} for the bot's own
// functions; the deprecated llm-function-call {function_name,tool_call_id,
// args} for functions the client runs, answered by the client's
// llm-function-call-result); it takes send-text {content,options} and
// dtmf {buttons}.
//
// THIS IS NOT PIPECAT. Behaviour: the bot detects user speech by energy;
// an utterance ends after EndSilence of silent audio (Pipecat's VAD stop);
// the user's speech is transcribed with voicetest/fixtures' fake STT. Each
// reply is fixtures.FakeTTS speech at the bot's output rate, sent in 20 ms
// chunks; voiced user audio (or an InterruptionFrame) while it speaks cuts
// the reply (InterruptionFrame or clear, and bot-interrupted). After
// HangUpAfter replies the bot ends the pipeline and closes the WebSocket
// normally. Every protocol violation is recorded in Call.Errors.
package pipecatpeer

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/pipecat/pipecatpb"
	"github.com/voicetest-go/voicetest/internal/peers/peerkit"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
	"google.golang.org/protobuf/proto"
)

// Serializer is the bot's frame serializer.
type Serializer int

// The serializers.
const (
	// Protobuf is Pipecat's ProtobufFrameSerializer.
	Protobuf Serializer = iota
	// Twilio is Pipecat's TwilioFrameSerializer.
	Twilio
)

// Fault is a way the bot misbehaves.
type Fault int

// The faults.
const (
	// NoFault: the bot behaves.
	NoFault Fault = iota
	// Mute: takes everything, answers nothing.
	Mute
)

// ToolCall is a function the bot's LLM calls in a turn.
type ToolCall struct {
	// Name is the function, Args its arguments.
	Name string
	Args map[string]any
	// Client makes it a client-run function (RTVI llm-function-call,
	// answered by llm-function-call-result); otherwise the bot runs it and
	// Result is its result.
	Client bool
	Result any
}

// Turn is the bot's answer to one user turn.
type Turn struct {
	// ToolCall is made first, when set; "{result}" in Reply is replaced by
	// its result as JSON.
	ToolCall *ToolCall
	// Reply is what the bot says; "{heard}" is replaced by what it heard.
	// Empty means "Reply n.".
	Reply string
}

// Frame is a frame sent verbatim.
type Frame struct {
	Data   []byte
	Binary bool
}

// Config sets the bot's behaviour.
type Config struct {
	// Serializer is the bot's serializer.
	Serializer Serializer
	// RTVI makes the bot speak RTVI (in Twilio mode, as bare JSON text).
	RTVI bool
	// OutputRate is the rate of the bot's audio frames (Protobuf; default
	// 24000). The Twilio serializer always sends 8 kHz µ-law.
	OutputRate int
	// Turns are the answers to the user turns; turns past them are
	// answered "Reply n.".
	Turns []Turn
	// ChunkDelay is the pause between 20 ms reply chunks (0: as fast as
	// the socket takes them).
	ChunkDelay time.Duration
	// EndSilence is the silence that ends an utterance (default 200 ms).
	EndSilence time.Duration
	// Threshold is the RMS above which audio is speech (default 300).
	Threshold float64
	// HangUpAfter, when positive, ends the call after that many replies.
	HangUpAfter int
	// Fault is a misbehaviour.
	Fault Fault
	// Send holds frames sent verbatim once the call is open (Twilio:
	// after start, with "{sid}" replaced by the stream SID).
	Send []Frame
	// Listener, when set, is where the double serves instead of a port
	// of 127.0.0.1 (an in-memory listener, adaptertest.MemNet, to run a
	// test on virtual time); the double closes it.
	Listener net.Listener
}

// Call is what the bot saw of one connection.
type Call struct {
	// StreamSid and CallSid are those of the Twilio start message.
	StreamSid, CallSid string
	// Heard holds what each user turn said.
	Heard []string
	// InputRates holds the sample rates of the audio received (once each).
	InputRates []int
	// Marks holds the names of the caller's marks (Twilio; the serializer
	// ignores them).
	Marks []string
	// DTMF holds the keys pressed.
	DTMF string
	// ClientReady reports an RTVI client-ready.
	ClientReady bool
	// Texts holds the RTVI send-text contents.
	Texts []string
	// ToolResults holds the llm-function-call-result messages' data.
	ToolResults []string
	// Interruptions counts replies cut short.
	Interruptions int
	// Replies counts replies completed.
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
	if cfg.OutputRate == 0 {
		cfg.OutputRate = pcm.Rate24k
	}
	if cfg.EndSilence == 0 {
		cfg.EndSilence = 200 * time.Millisecond
	}
	if cfg.Threshold == 0 {
		cfg.Threshold = 300
	}
	s := &Server{cfg: cfg, calls: peerkit.NewLog(cloneCall)}
	s.srv = peerkit.Listen(cfg.Listener)
	s.URL = s.srv.WSURL("/ws")
	s.srv.Serve(http.HandlerFunc(s.serve))
	return s
}

// Close stops the bot.
func (s *Server) Close() { s.srv.Close() }

// Calls returns a copy of what the bot saw of each connection.
func (s *Server) Calls() []Call { return s.calls.Snapshot() }

func cloneCall(c *Call) Call {
	out := *c
	out.Heard = append([]string(nil), c.Heard...)
	out.InputRates = append([]int(nil), c.InputRates...)
	out.Marks = append([]string(nil), c.Marks...)
	out.Texts = append([]string(nil), c.Texts...)
	out.ToolResults = append([]string(nil), c.ToolResults...)
	out.Errors = append([]string(nil), c.Errors...)
	return out
}

// conn is one call in progress.
type conn struct {
	s   *Server
	cfg Config
	ws  *websocket.Conn
	rec *Call
	ctx context.Context
	wmu sync.Mutex
	sid string

	// Reader goroutine only.
	utter    []int16
	inRate   int
	userOn   bool
	silent   int
	turn     int
	started  bool // Twilio: start received
	gotFirst bool // Twilio: the first message was read

	mu      sync.Mutex
	reply   *reply
	pending map[string]chan any // client tool call id → its result
}

// reply is one reply's goroutine.
type reply struct {
	cancel    context.CancelFunc
	done      chan struct{}
	completed bool
}

var errEnd = errors.New("end")

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	ws, err := peerkit.Accept(w, r, 1<<20)
	if err != nil {
		return
	}
	defer ws.CloseNow()
	rec := s.calls.Add(func(int) *Call { return &Call{} })
	ctx, cancel := s.srv.CallContext()
	defer cancel()
	c := &conn{s: s, cfg: s.cfg, ws: ws, rec: rec, ctx: ctx, pending: map[string]chan any{}}
	err = c.run()
	c.stopReply()
	s.calls.Update(rec, func(cl *Call) {
		if err != nil && !errors.Is(err, errEnd) && websocket.CloseStatus(err) < 0 && ctx.Err() == nil {
			cl.Errors = append(cl.Errors, err.Error())
		}
		cl.Ended = true
	})
}

func (c *conn) errorf(format string, args ...any) {
	c.s.calls.Update(c.rec, func(cl *Call) { cl.Errors = append(cl.Errors, fmt.Sprintf(format, args...)) })
}

func (c *conn) write(typ websocket.MessageType, b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.ws.Write(c.ctx, typ, b)
}

// sendFrame sends a protobuf Frame.
func (c *conn) sendFrame(f *pipecatpb.Frame) error {
	b, err := proto.Marshal(f)
	if err != nil {
		return err
	}
	return c.write(websocket.MessageBinary, b)
}

// message sends a transport message: a MessageFrame (Protobuf) or bare
// JSON text (Twilio).
func (c *conn) message(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if c.cfg.Serializer == Twilio {
		return c.write(websocket.MessageText, b)
	}
	return c.sendFrame(&pipecatpb.Frame{Frame: &pipecatpb.Frame_Message{Message: &pipecatpb.MessageFrame{Data: string(b)}}})
}

// rtvi sends an RTVI server message, when the bot speaks RTVI.
func (c *conn) rtvi(typ string, data any) error {
	if !c.cfg.RTVI {
		return nil
	}
	m := map[string]any{"label": "rtvi-ai", "type": typ}
	if data != nil {
		m["data"] = data
	}
	return c.message(m)
}

func (c *conn) run() error {
	if c.cfg.Serializer == Protobuf {
		if err := c.sendVerbatim(); err != nil {
			return err
		}
	}
	for {
		typ, data, err := c.ws.Read(c.ctx)
		if err != nil {
			return err
		}
		if c.cfg.Fault == Mute {
			continue
		}
		if c.cfg.Serializer == Twilio {
			err = c.twilio(typ, data)
		} else {
			err = c.protobuf(typ, data)
		}
		if err != nil {
			return err
		}
	}
}

// sendVerbatim sends Config.Send.
func (c *conn) sendVerbatim() error {
	if c.cfg.Fault == Mute {
		return nil
	}
	for _, f := range c.cfg.Send {
		typ := websocket.MessageText
		if f.Binary {
			typ = websocket.MessageBinary
		}
		if err := c.write(typ, []byte(strings.ReplaceAll(string(f.Data), "{sid}", c.sid))); err != nil {
			return err
		}
	}
	return nil
}

func (c *conn) protobuf(typ websocket.MessageType, data []byte) error {
	if typ != websocket.MessageBinary {
		c.errorf("text frame to the protobuf serializer: %.100s", data)
		return nil
	}
	var f pipecatpb.Frame
	if err := proto.Unmarshal(data, &f); err != nil {
		c.errorf("not a pipecat.Frame: %v", err)
		return nil
	}
	switch v := f.Frame.(type) {
	case *pipecatpb.Frame_Audio:
		a := v.Audio
		if a.NumChannels != 1 || len(a.Audio)%2 != 0 || a.SampleRate < 8000 {
			c.errorf("bad audio frame: %d channels, %d bytes at %d Hz", a.NumChannels, len(a.Audio), a.SampleRate)
			return nil
		}
		samples, _ := pcm.DecodePCM16(nil, a.Audio)
		return c.audio(int(a.SampleRate), samples)
	case *pipecatpb.Frame_Message:
		return c.clientMessage(v.Message.Data)
	case *pipecatpb.Frame_Interruption:
		return c.bargeIn()
	case *pipecatpb.Frame_Text, *pipecatpb.Frame_Transcription:
		// Deserialized and pushed into the pipeline; this bot ignores them.
	default:
		c.errorf("a Frame with no frame set")
	}
	return nil
}

// twilioIn is a Media Streams message from the caller.
type twilioIn struct {
	Event     string `json:"event"`
	StreamSid string `json:"streamSid"`
	Start     *struct {
		StreamSid   string `json:"streamSid"`
		CallSid     string `json:"callSid"`
		MediaFormat struct {
			Encoding   string `json:"encoding"`
			SampleRate int    `json:"sampleRate"`
		} `json:"mediaFormat"`
	} `json:"start"`
	Media *struct {
		Payload string `json:"payload"`
	} `json:"media"`
	DTMF *struct {
		Digit string `json:"digit"`
	} `json:"dtmf"`
	Mark *struct {
		Name string `json:"name"`
	} `json:"mark"`
}

func (c *conn) twilio(typ websocket.MessageType, data []byte) error {
	if typ != websocket.MessageText {
		c.errorf("binary frame to the Twilio serializer")
		return nil
	}
	var m twilioIn
	if err := json.Unmarshal(data, &m); err != nil {
		c.errorf("not JSON: %v", err)
		return nil
	}
	first := !c.gotFirst
	c.gotFirst = true
	switch {
	case first && m.Event != "connected":
		c.errorf("first message %q; parse_telephony_websocket reads connected, then start", m.Event)
	case !first && !c.started && m.Event != "start":
		c.errorf("%q before start", m.Event)
	}
	switch m.Event {
	case "connected":
	case "start":
		if m.Start == nil || m.Start.StreamSid == "" || m.Start.CallSid == "" {
			c.errorf("start without start.streamSid and start.callSid")
			return nil
		}
		c.started, c.sid = true, m.Start.StreamSid
		c.s.calls.Update(c.rec, func(cl *Call) { cl.StreamSid, cl.CallSid = m.Start.StreamSid, m.Start.CallSid })
		return c.sendVerbatim()
	case "media":
		if m.Media == nil {
			c.errorf("media without media")
			return nil
		}
		raw, err := base64.StdEncoding.DecodeString(m.Media.Payload)
		if err != nil {
			c.errorf("media payload: %v", err)
			return nil
		}
		return c.audio(pcm.Rate8k, pcm.DecodeMulaw(nil, raw))
	case "dtmf":
		if m.DTMF == nil || m.DTMF.Digit == "" {
			c.errorf("dtmf without digit")
			return nil
		}
		return c.dtmf(m.DTMF.Digit)
	case "mark":
		if m.Mark != nil {
			c.s.calls.Update(c.rec, func(cl *Call) { cl.Marks = append(cl.Marks, m.Mark.Name) })
		}
	case "stop":
		return errEnd
	default:
		c.errorf("unknown event %q", m.Event)
	}
	return nil
}

// rtviIn is an RTVI client message.
type rtviIn struct {
	Label string          `json:"label"`
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Data  json.RawMessage `json:"data"`
}

func (c *conn) clientMessage(data string) error {
	var m rtviIn
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		c.errorf("MessageFrame data is not JSON: %v", err)
		return nil
	}
	if m.Label != "rtvi-ai" {
		return nil // a transport message for the pipeline
	}
	switch m.Type {
	case "client-ready":
		var d struct {
			Version string `json:"version"`
			About   *struct {
				Library string `json:"library"`
			} `json:"about"`
		}
		if json.Unmarshal(m.Data, &d) != nil || d.Version == "" || d.About == nil || d.About.Library == "" {
			c.errorf("client-ready without version and about.library: %s", m.Data)
		}
		c.s.calls.Update(c.rec, func(cl *Call) { cl.ClientReady = true })
		return c.rtvi("bot-ready", map[string]any{"version": "2.1.0"})
	case "send-text":
		var d struct {
			Content string `json:"content"`
		}
		if json.Unmarshal(m.Data, &d) != nil || d.Content == "" {
			c.errorf("send-text without content")
			return nil
		}
		c.s.calls.Update(c.rec, func(cl *Call) { cl.Texts = append(cl.Texts, d.Content) })
		return c.userTurn(d.Content)
	case "dtmf":
		var d struct {
			Buttons []string `json:"buttons"`
		}
		if json.Unmarshal(m.Data, &d) != nil || len(d.Buttons) == 0 {
			c.errorf("dtmf without buttons")
			return nil
		}
		return c.dtmf(strings.Join(d.Buttons, ""))
	case "llm-function-call-result":
		var d struct {
			ToolCallID string `json:"tool_call_id"`
			Result     any    `json:"result"`
		}
		if json.Unmarshal(m.Data, &d) != nil || d.ToolCallID == "" {
			c.errorf("llm-function-call-result without tool_call_id")
			return nil
		}
		c.s.calls.Update(c.rec, func(cl *Call) { cl.ToolResults = append(cl.ToolResults, string(m.Data)) })
		c.mu.Lock()
		ch := c.pending[d.ToolCallID]
		delete(c.pending, d.ToolCallID)
		c.mu.Unlock()
		if ch == nil {
			c.errorf("llm-function-call-result for unknown call %q", d.ToolCallID)
			return nil
		}
		ch <- d.Result
	default:
		c.errorf("RTVI client message %q this bot does not handle", m.Type)
	}
	return nil
}

func (c *conn) dtmf(keys string) error {
	c.s.calls.Update(c.rec, func(cl *Call) { cl.DTMF += keys })
	return c.startReply(Turn{Reply: "You pressed " + keys + "."}, "")
}

// audio takes user audio at rate.
func (c *conn) audio(rate int, samples []int16) error {
	c.s.calls.Update(c.rec, func(cl *Call) {
		for _, r := range cl.InputRates {
			if r == rate {
				return
			}
		}
		cl.InputRates = append(cl.InputRates, rate)
	})
	if c.inRate != 0 && c.inRate != rate {
		c.errorf("audio at %d Hz after audio at %d Hz", rate, c.inRate)
	}
	c.inRate = rate
	var sum float64
	for _, v := range samples {
		sum += float64(v) * float64(v)
	}
	voiced := len(samples) > 0 && math.Sqrt(sum/float64(len(samples))) > c.cfg.Threshold
	switch {
	case voiced && !c.userOn:
		c.userOn, c.silent = true, 0
		c.rtvi("user-started-speaking", nil)
		c.mu.Lock()
		r := c.reply
		c.mu.Unlock()
		if r != nil && !r.isDone() {
			if err := c.bargeIn(); err != nil {
				return err
			}
		}
	case voiced:
		c.silent = 0
	case c.userOn:
		c.silent += len(samples)
	}
	if c.userOn {
		c.utter = append(c.utter, samples...)
	}
	if c.userOn && pcm.DurationOf(c.silent, rate) >= c.cfg.EndSilence {
		c.userOn = false
		audio := pcm.Chunk{Rate: rate, Samples: c.utter}
		c.utter = nil
		c.rtvi("user-stopped-speaking", nil)
		heard := ""
		if tr, err := fixtures.FakeSTT().Transcribe(c.ctx, voicetest.TranscriptionRequest{Audio: audio}); err == nil {
			heard = tr.Text
		} else {
			heard = fmt.Sprintf("(%v of audio)", audio.Duration())
		}
		if err := c.rtvi("user-transcription", map[string]any{"text": heard, "user_id": "", "timestamp": time.Now().UTC().Format(time.RFC3339), "final": true}); err != nil {
			return err
		}
		return c.userTurn(heard)
	}
	return nil
}

func (r *reply) isDone() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// userTurn answers what the user said.
func (c *conn) userTurn(heard string) error {
	c.s.calls.Update(c.rec, func(cl *Call) { cl.Heard = append(cl.Heard, heard) })
	c.turn++
	var t Turn
	if c.turn <= len(c.cfg.Turns) {
		t = c.cfg.Turns[c.turn-1]
	}
	if t.Reply == "" {
		t.Reply = fmt.Sprintf("Reply %d.", c.turn)
	}
	return c.startReply(t, heard)
}

// bargeIn cuts the reply in progress.
func (c *conn) bargeIn() error {
	c.mu.Lock()
	r := c.reply
	c.reply = nil
	c.mu.Unlock()
	if r == nil {
		return nil
	}
	r.cancel()
	<-r.done
	if r.completed {
		return nil
	}
	c.s.calls.Update(c.rec, func(cl *Call) { cl.Interruptions++ })
	var err error
	if c.cfg.Serializer == Twilio {
		err = c.write(websocket.MessageText, []byte(`{"event":"clear","streamSid":"`+c.sid+`"}`))
	} else {
		err = c.sendFrame(&pipecatpb.Frame{Frame: &pipecatpb.Frame_Interruption{Interruption: &pipecatpb.InterruptionFrame{}}})
	}
	if err != nil {
		return err
	}
	c.rtvi("bot-interrupted", nil)
	return c.rtvi("bot-stopped-speaking", nil)
}

// startReply starts a reply on its own goroutine, after the one before.
func (c *conn) startReply(t Turn, heard string) error {
	if err := c.bargeIn(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(c.ctx)
	r := &reply{cancel: cancel, done: make(chan struct{})}
	c.mu.Lock()
	c.reply = r
	c.mu.Unlock()
	n := c.turn
	go func() {
		defer close(r.done)
		r.completed = c.speak(ctx, n, t, heard)
		cancel()
		if r.completed {
			c.afterReply()
		}
	}()
	return nil
}

// speak runs one reply; it reports whether it ran to its end.
func (c *conn) speak(ctx context.Context, n int, t Turn, heard string) bool {
	text := strings.ReplaceAll(t.Reply, "{heard}", heard)
	if tc := t.ToolCall; tc != nil {
		id := "call_" + strconv.Itoa(n)
		args := tc.Args
		if args == nil {
			args = map[string]any{}
		}
		var result any
		if tc.Client {
			ch := make(chan any, 1)
			c.mu.Lock()
			c.pending[id] = ch
			c.mu.Unlock()
			if c.rtvi("llm-function-call", map[string]any{"function_name": tc.Name, "tool_call_id": id, "args": args}) != nil {
				return false
			}
			select {
			case result = <-ch:
			case <-ctx.Done():
				return false
			}
		} else {
			c.rtvi("llm-function-call-started", map[string]any{"function_name": tc.Name})
			c.rtvi("llm-function-call-in-progress", map[string]any{"tool_call_id": id, "function_name": tc.Name, "arguments": args})
			result = tc.Result
			if c.rtvi("llm-function-call-stopped", map[string]any{"tool_call_id": id, "cancelled": false, "function_name": tc.Name, "result": result}) != nil {
				return false
			}
		}
		b, _ := json.Marshal(result)
		text = strings.ReplaceAll(text, "{result}", string(b))
	}
	rate := c.cfg.OutputRate
	if c.cfg.Serializer == Twilio {
		rate = pcm.Rate8k
	}
	speech, err := fixtures.FakeTTS().Synthesize(ctx, voicetest.SpeechRequest{Text: text, Rate: rate})
	if err != nil {
		speech = pcm.Silence(rate, 500*time.Millisecond)
	}
	if c.rtvi("bot-started-speaking", nil) != nil {
		return false
	}
	words := strings.Fields(text)
	chunks := speech.Frames(20 * time.Millisecond)
	for i, ch := range chunks {
		if w := len(words) * (i + 1) / len(chunks); w > 0 {
			for _, word := range words[:w] {
				if c.rtvi("bot-tts-text", map[string]any{"text": word}) != nil {
					return false
				}
			}
			words = words[w:]
		}
		if ctx.Err() != nil || c.sendAudio(ch) != nil {
			return false
		}
		if d := c.cfg.ChunkDelay; d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return false
			}
		}
	}
	if ctx.Err() != nil {
		return false
	}
	return c.rtvi("bot-stopped-speaking", nil) == nil
}

// sendAudio sends one chunk of the bot's speech.
func (c *conn) sendAudio(ch pcm.Chunk) error {
	if c.cfg.Serializer == Twilio {
		payload := base64.StdEncoding.EncodeToString(pcm.EncodeMulaw(nil, ch.Samples))
		return c.write(websocket.MessageText, []byte(`{"event":"media","streamSid":"`+c.sid+`","media":{"payload":"`+payload+`"}}`))
	}
	return c.sendFrame(&pipecatpb.Frame{Frame: &pipecatpb.Frame_Audio{Audio: &pipecatpb.AudioRawFrame{
		Audio: pcm.EncodePCM16(nil, ch.Samples), SampleRate: uint32(ch.Rate), NumChannels: 1,
	}}})
}

// afterReply counts a completed reply and hangs up when told.
func (c *conn) afterReply() {
	var n int
	c.s.calls.Update(c.rec, func(cl *Call) { cl.Replies++; n = cl.Replies })
	if h := c.cfg.HangUpAfter; h > 0 && n == h {
		c.wmu.Lock()
		c.ws.Close(websocket.StatusNormalClosure, "pipeline ended")
		c.wmu.Unlock()
	}
}

// stopReply cancels the reply in progress and waits for it.
func (c *conn) stopReply() {
	c.mu.Lock()
	r := c.reply
	c.mu.Unlock()
	if r != nil {
		r.cancel()
		<-r.done
	}
}
