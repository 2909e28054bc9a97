// Package geminipeer is a test double of the Gemini Live API
// (BidiGenerateContent over WebSocket) as a client of the Gemini Developer
// API sees it, so that the Gemini adapter (which speaks the protocol
// itself, as the official Go SDK google.golang.org/genai does) can be
// tested on loopback.
//
// THIS IS NOT GEMINI. It follows the messages of the Live API reference
// (https://ai.google.dev/api/live, "Live API - WebSockets API reference")
// as the Go SDK sends and reads them (google.golang.org/genai v1.77.0:
// live.go, live_converters.go, types.go):
//
//   - The endpoint is
//     /ws/google.ai.generativelanguage.<version>.GenerativeService.BidiGenerateContent,
//     with the API key in the x-goog-api-key header (live.go, Connect). A
//     wrong key is accepted at the HTTP level and refused after the setup
//     message with close status 1007 "API key not valid. Please pass a
//     valid API key.", as the service does.
//   - The client's first message is {"setup":{…}} (BidiGenerateContentSetup:
//     model "models/…", generationConfig.responseModalities and
//     speechConfig, systemInstruction, tools, inputAudioTranscription,
//     outputAudioTranscription, realtimeInputConfig); the server answers
//     {"setupComplete":{}}. Every server message is JSON in a binary frame,
//     as the service sends them (a client that reads only text frames
//     misses setupComplete: ai-shifu/ai-shifu#2760).
//   - With realtimeInputConfig.automaticActivityDetection.disabled the
//     client marks each user turn: {"realtimeInput":{"activityStart":{}}},
//     {"realtimeInput":{"audio":{"mimeType":"audio/pcm;rate=16000","data":…}}}
//     (base64 PCM16 LE, 16 kHz, the API's native input rate),
//     {"realtimeInput":{"activityEnd":{}}}; {"realtimeInput":{"text":…}}
//     is text input. Audio outside an activity is a protocol error here.
//   - The server answers a turn with BidiGenerateContentServerContent
//     messages: {"serverContent":{"inputTranscription":{"text":…}}},
//     {"serverContent":{"outputTranscription":{"text":…}}},
//     {"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":…}}]}}}
//     (PCM16 LE, 24 kHz), then {"serverContent":{"generationComplete":true}}
//     and {"serverContent":{"turnComplete":true}}.
//   - With activityHandling START_OF_ACTIVITY_INTERRUPTS (the default), an
//     activityStart while the model speaks cuts the response: the server
//     sends {"serverContent":{"interrupted":true}} and then turnComplete.
//     With Config.SpuriousPair it also sends the empty
//     interrupted→turnComplete pair at the start of an activity when
//     nothing was playing, as the service has been seen to do (the seed's
//     Gemini adapter skips it).
//   - Function calling: {"toolCall":{"functionCalls":[{"id","name","args"}]}};
//     the client answers {"toolResponse":{"functionResponses":[{"id","name","response"}]}}.
//   - {"goAway":{"timeLeft":"5s"}} warns of the end of the session.
//
// Behaviour: user audio is decoded with voicetest/fixtures' fake STT (the
// suite's users speak fixtures.FakeTTS) for the input transcription; each
// reply is spoken with fixtures.FakeTTS at 24 kHz in 100 ms chunks, its
// text sent as output transcription word by word. Every protocol violation
// is recorded in Session.Errors.
package geminipeer

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/internal/peers/peerkit"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// Rates of the Live API's audio.
const (
	InputRate  = 16000
	OutputRate = 24000
)

// Fault is a way the server misbehaves.
type Fault int

// The faults.
const (
	// NoFault: the server behaves.
	NoFault Fault = iota
	// StallSetup: takes the setup message and never answers it.
	StallSetup
	// Mute: completes the setup, then reads everything and answers nothing.
	Mute
)

// ToolCall is a function call the model makes in a turn.
type ToolCall struct {
	// Name is the function's name, Args its arguments.
	Name string
	Args map[string]any
}

// Turn is the model's answer to one user turn.
type Turn struct {
	// ToolCall, when set, is called first; the reply then follows the
	// client's toolResponse, with "{result}" in Reply replaced by the
	// response as JSON.
	ToolCall *ToolCall
	// Reply is what the model says; "{heard}" is replaced by what it heard.
	// Empty means "Reply n.".
	Reply string
}

// Frame is a message sent verbatim.
type Frame struct {
	Data []byte
	// Text sends it as a text frame; the service uses binary frames.
	Text bool
}

// Config sets the server's behaviour.
type Config struct {
	// APIKey is the key x-goog-api-key must carry (default "test-key").
	APIKey string
	// Turns are the answers to the user turns, in order; turns past them
	// are answered "Reply n.".
	Turns []Turn
	// ChunkDelay is the pause between 100 ms audio chunks (0: as fast as
	// the socket takes them, as the service streams).
	ChunkDelay time.Duration
	// SpuriousPair sends the empty interrupted→turnComplete pair at every
	// activityStart that interrupts nothing.
	SpuriousPair bool
	// HangUpAfter, when positive, closes the WebSocket normally after the
	// HangUpAfter-th complete reply.
	HangUpAfter int
	// GoAwayAfter, when positive, sends goAway (timeLeft 5 s) after the
	// GoAwayAfter-th complete reply.
	GoAwayAfter int
	// Fault is a misbehaviour.
	Fault Fault
	// Send holds messages sent verbatim right after setupComplete.
	Send []Frame
	// Listener, when set, is where the double serves instead of a port
	// of 127.0.0.1 (an in-memory listener, adaptertest.MemNet, to run a
	// test on virtual time); the double closes it.
	Listener net.Listener
}

// Session is what the server saw of one connection.
type Session struct {
	// Path is the request path; Version the API version in it.
	Path, Version string
	// Setup is the setup message's "setup" object as received.
	Setup map[string]any
	// Activities counts activityStart messages; Heard holds what each
	// user turn said (fake STT of its audio, or its text).
	Activities int
	Heard      []string
	// InputRates holds the rate of every audio mimeType seen (once each).
	InputRates []int
	// Interruptions counts responses cut by an activityStart.
	Interruptions int
	// ToolResponses holds the functionResponses received, as JSON.
	ToolResponses []string
	// Replies counts replies completed.
	Replies int
	// Errors are protocol violations the server saw.
	Errors []string
	// Ended reports that the connection is over.
	Ended bool
}

// Server is a running double.
type Server struct {
	// URL is the base URL to give the SDK (HTTPOptions.BaseURL):
	// ws://127.0.0.1:port.
	URL string

	cfg      Config
	srv      *peerkit.Server
	sessions *peerkit.Log[Session]
}

// New starts a server on loopback and closes it when the test ends.
func New(tb testing.TB, cfg Config) *Server {
	tb.Helper()
	s := Start(cfg)
	tb.Cleanup(s.Close)
	return s
}

// Start starts a server on loopback; Close stops it.
func Start(cfg Config) *Server {
	if cfg.APIKey == "" {
		cfg.APIKey = "test-key"
	}
	s := &Server{cfg: cfg, sessions: peerkit.NewLog(cloneSession)}
	s.srv = peerkit.Listen(cfg.Listener)
	s.URL = s.srv.WSURL("")
	s.srv.Serve(http.HandlerFunc(s.serve))
	return s
}

// Close stops the server and ends its sessions.
func (s *Server) Close() { s.srv.Close() }

// Sessions returns a copy of what the server saw of each connection.
func (s *Server) Sessions() []Session { return s.sessions.Snapshot() }

// WaitSession waits until session i satisfies cond or ctx ends.
func (s *Server) WaitSession(ctx context.Context, i int, cond func(Session) bool) (Session, error) {
	ss, err := s.sessions.Wait(ctx, i, cond)
	if err != nil {
		return ss, fmt.Errorf("geminipeer: session %d never reached the expected state (last: %+v): %w", i, ss, err)
	}
	return ss, nil
}

func cloneSession(c *Session) Session {
	out := *c
	b, _ := json.Marshal(c.Setup)
	out.Setup = nil
	json.Unmarshal(b, &out.Setup)
	out.Heard = append([]string(nil), c.Heard...)
	out.InputRates = append([]int(nil), c.InputRates...)
	out.ToolResponses = append([]string(nil), c.ToolResponses...)
	out.Errors = append([]string(nil), c.Errors...)
	return out
}

const pathPrefix = "/ws/google.ai.generativelanguage."

// conn is one session in progress.
type conn struct {
	s    *Server
	ws   *websocket.Conn
	rec  *Session
	ctx  context.Context
	wmu  sync.Mutex // one write at a time (the reply goroutine writes too)
	turn int        // user turns ended

	mu      sync.Mutex
	inAct   bool
	audio   []int16
	text    string
	reply   *reply                         // the last reply started
	pending map[string]chan map[string]any // tool call id → its response
}

// reply is one reply's goroutine.
type reply struct {
	cancel    context.CancelFunc
	done      chan struct{}
	completed bool // set before done is closed: it ran to its end
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	version, ok := strings.CutPrefix(r.URL.Path, pathPrefix)
	version, ok2 := strings.CutSuffix(version, ".GenerativeService.BidiGenerateContent")
	if !ok || !ok2 || version == "" {
		http.Error(w, "not found: "+r.URL.Path, http.StatusNotFound)
		return
	}
	ws, err := peerkit.Accept(w, r, 16<<20)
	if err != nil {
		return
	}
	defer ws.CloseNow()
	rec := s.sessions.Add(func(int) *Session { return &Session{Path: r.URL.Path, Version: version} })
	ctx, cancel := s.srv.CallContext()
	defer cancel()
	c := &conn{s: s, ws: ws, rec: rec, ctx: ctx, pending: map[string]chan map[string]any{}}
	err = c.run(r.Header.Get("x-goog-api-key"))
	c.stopReply()
	s.sessions.Update(rec, func(ss *Session) {
		if err != nil && !errors.Is(err, errEnd) && websocket.CloseStatus(err) < 0 && ctx.Err() == nil {
			ss.Errors = append(ss.Errors, err.Error())
		}
		ss.Ended = true
	})
}

var errEnd = errors.New("end")

func (c *conn) errorf(format string, args ...any) {
	c.s.sessions.Update(c.rec, func(ss *Session) { ss.Errors = append(ss.Errors, fmt.Sprintf(format, args...)) })
}

// send writes one server message as JSON in a binary frame.
func (c *conn) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.ws.Write(c.ctx, websocket.MessageBinary, b)
}

type obj = map[string]any

func (c *conn) run(key string) error {
	typ, data, err := c.ws.Read(c.ctx)
	if err != nil {
		return err
	}
	var first struct {
		Setup map[string]any `json:"setup"`
	}
	if typ != websocket.MessageText || json.Unmarshal(data, &first) != nil || first.Setup == nil {
		c.errorf("first message is not a setup message: %.200s", data)
		c.ws.Close(websocket.StatusPolicyViolation, "the first message must be setup")
		return errEnd
	}
	c.s.sessions.Update(c.rec, func(ss *Session) { ss.Setup = first.Setup })
	if key != c.s.cfg.APIKey {
		c.ws.Close(websocket.StatusInvalidFramePayloadData, "API key not valid. Please pass a valid API key.")
		return errEnd
	}
	if m, _ := first.Setup["model"].(string); !strings.HasPrefix(m, "models/") {
		c.errorf("setup.model %q does not start with models/", m)
	}
	if c.s.cfg.Fault == StallSetup {
		return c.drain()
	}
	if err := c.send(obj{"setupComplete": obj{}}); err != nil {
		return err
	}
	for _, f := range c.s.cfg.Send {
		typ := websocket.MessageBinary
		if f.Text {
			typ = websocket.MessageText
		}
		c.wmu.Lock()
		err := c.ws.Write(c.ctx, typ, f.Data)
		c.wmu.Unlock()
		if err != nil {
			return err
		}
	}
	if c.s.cfg.Fault == Mute {
		return c.drain()
	}
	for {
		typ, data, err := c.ws.Read(c.ctx)
		if err != nil {
			return err
		}
		if typ != websocket.MessageText {
			c.errorf("binary frame from the client; the SDK sends JSON text")
			continue
		}
		if err := c.handle(data); err != nil {
			return err
		}
	}
}

// drain reads until the connection ends, answering nothing.
func (c *conn) drain() error {
	for {
		if _, _, err := c.ws.Read(c.ctx); err != nil {
			return err
		}
	}
}

type clientMsg struct {
	RealtimeInput *struct {
		ActivityStart *struct{} `json:"activityStart"`
		ActivityEnd   *struct{} `json:"activityEnd"`
		Audio         *struct {
			MIMEType string `json:"mimeType"`
			Data     string `json:"data"`
		} `json:"audio"`
		Text *string `json:"text"`
	} `json:"realtimeInput"`
	ToolResponse *struct {
		FunctionResponses []map[string]any `json:"functionResponses"`
	} `json:"toolResponse"`
	ClientContent json.RawMessage `json:"clientContent"`
	Setup         json.RawMessage `json:"setup"`
}

func (c *conn) handle(data []byte) error {
	var m clientMsg
	if err := json.Unmarshal(data, &m); err != nil {
		c.errorf("not JSON: %v", err)
		return nil
	}
	switch {
	case m.Setup != nil:
		c.errorf("a second setup message")
	case m.ToolResponse != nil:
		for _, r := range m.ToolResponse.FunctionResponses {
			b, _ := json.Marshal(r)
			c.s.sessions.Update(c.rec, func(ss *Session) { ss.ToolResponses = append(ss.ToolResponses, string(b)) })
			id, _ := r["id"].(string)
			c.mu.Lock()
			ch := c.pending[id]
			delete(c.pending, id)
			c.mu.Unlock()
			if ch == nil {
				c.errorf("toolResponse for unknown call id %q", id)
				continue
			}
			resp, _ := r["response"].(map[string]any)
			ch <- resp
		}
	case m.RealtimeInput != nil:
		in := m.RealtimeInput
		n := 0
		for _, set := range []bool{in.ActivityStart != nil, in.ActivityEnd != nil, in.Audio != nil, in.Text != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			c.errorf("realtimeInput with %d fields; the SDK sends one per message", n)
		}
		switch {
		case in.ActivityStart != nil:
			return c.activityStart()
		case in.Audio != nil:
			c.audioIn(in.Audio.MIMEType, in.Audio.Data)
		case in.Text != nil:
			c.mu.Lock()
			if !c.inAct {
				c.mu.Unlock()
				c.errorf("realtimeInput.text outside an activity (automatic activity detection is off)")
				return nil
			}
			c.text += *in.Text
			c.mu.Unlock()
		case in.ActivityEnd != nil:
			return c.activityEnd()
		}
	case m.ClientContent != nil:
		c.errorf("clientContent: this double takes realtime input only")
	default:
		c.errorf("unknown client message: %.200s", data)
	}
	return nil
}

func (c *conn) audioIn(mime, data string) {
	rate := 0
	if r, ok := strings.CutPrefix(mime, "audio/pcm;rate="); ok {
		rate, _ = strconv.Atoi(r)
	}
	if rate == 0 {
		c.errorf("audio mimeType %q; want audio/pcm;rate=N", mime)
		return
	}
	c.s.sessions.Update(c.rec, func(ss *Session) {
		for _, r := range ss.InputRates {
			if r == rate {
				return
			}
		}
		ss.InputRates = append(ss.InputRates, rate)
	})
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil || len(raw)%2 != 0 {
		c.errorf("bad audio data: %d bytes, %v", len(raw), err)
		return
	}
	samples, _ := pcm.DecodePCM16(nil, raw)
	if rate != InputRate {
		ch, err := pcm.Resample(pcm.Chunk{Rate: rate, Samples: samples}, InputRate)
		if err != nil {
			c.errorf("audio at %d Hz: %v", rate, err)
			return
		}
		samples = ch.Samples
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.inAct {
		c.errorf("audio outside an activity (automatic activity detection is off)")
		return
	}
	c.audio = append(c.audio, samples...)
}

func (c *conn) activityStart() error {
	c.s.sessions.Update(c.rec, func(ss *Session) { ss.Activities++ })
	c.mu.Lock()
	if c.inAct {
		c.mu.Unlock()
		c.errorf("activityStart inside an activity")
		return nil
	}
	c.inAct, c.audio, c.text = true, c.audio[:0], ""
	r := c.reply
	c.reply = nil
	c.mu.Unlock()
	interrupted := false
	if r != nil {
		r.cancel()
		<-r.done
		interrupted = !r.completed
	}
	switch {
	case interrupted:
		c.s.sessions.Update(c.rec, func(ss *Session) { ss.Interruptions++ })
		if err := c.send(obj{"serverContent": obj{"interrupted": true}}); err != nil {
			return err
		}
		return c.send(obj{"serverContent": obj{"turnComplete": true}})
	case c.s.cfg.SpuriousPair:
		if err := c.send(obj{"serverContent": obj{"interrupted": true}}); err != nil {
			return err
		}
		return c.send(obj{"serverContent": obj{"turnComplete": true}})
	}
	return nil
}

func (c *conn) activityEnd() error {
	c.mu.Lock()
	if !c.inAct {
		c.mu.Unlock()
		c.errorf("activityEnd outside an activity")
		return nil
	}
	c.inAct = false
	audio, text := append([]int16(nil), c.audio...), c.text
	c.mu.Unlock()
	heard := text
	if heard == "" && len(audio) > 0 {
		tr, err := fixtures.FakeSTT().Transcribe(c.ctx, voicetest.TranscriptionRequest{Audio: pcm.Chunk{Rate: InputRate, Samples: audio}})
		if err != nil {
			heard = fmt.Sprintf("(%v of audio)", pcm.DurationOf(len(audio), InputRate))
		} else {
			heard = tr.Text
		}
	}
	c.s.sessions.Update(c.rec, func(ss *Session) { ss.Heard = append(ss.Heard, heard) })
	c.turn++
	if heard != "" && text == "" {
		if err := c.send(obj{"serverContent": obj{"inputTranscription": obj{"text": heard, "finished": true}}}); err != nil {
			return err
		}
	}
	var turn Turn
	if c.turn <= len(c.s.cfg.Turns) {
		turn = c.s.cfg.Turns[c.turn-1]
	}
	ctx, cancel := context.WithCancel(c.ctx)
	r := &reply{cancel: cancel, done: make(chan struct{})}
	c.mu.Lock()
	c.reply = r
	c.mu.Unlock()
	n := c.turn
	go func() {
		defer close(r.done)
		r.completed = c.speak(ctx, n, turn, heard)
		cancel()
		if r.completed {
			c.afterReply()
		}
	}()
	return nil
}

// speak runs one reply; it reports whether the reply ran to its end.
func (c *conn) speak(ctx context.Context, n int, turn Turn, heard string) bool {
	text := turn.Reply
	if text == "" {
		text = fmt.Sprintf("Reply %d.", n)
	}
	text = strings.ReplaceAll(text, "{heard}", heard)
	if tc := turn.ToolCall; tc != nil {
		id := fmt.Sprintf("call_%d", n)
		ch := make(chan map[string]any, 1)
		c.mu.Lock()
		c.pending[id] = ch
		c.mu.Unlock()
		args := tc.Args
		if args == nil {
			args = obj{}
		}
		if c.send(obj{"toolCall": obj{"functionCalls": []obj{{"id": id, "name": tc.Name, "args": args}}}}) != nil {
			return false
		}
		select {
		case resp := <-ch:
			b, _ := json.Marshal(resp)
			text = strings.ReplaceAll(text, "{result}", string(b))
		case <-ctx.Done():
			c.mu.Lock()
			delete(c.pending, id)
			c.mu.Unlock()
			c.send(obj{"toolCallCancellation": obj{"ids": []string{id}}})
			return false
		}
	}
	speech, err := fixtures.FakeTTS().Synthesize(ctx, voicetest.SpeechRequest{Text: text, Rate: OutputRate})
	if err != nil {
		speech = pcm.Silence(OutputRate, 500*time.Millisecond)
	}
	words := strings.Fields(text)
	chunks := speech.Frames(100 * time.Millisecond)
	for i, ch := range chunks {
		// The transcription runs a little ahead of the audio, word by word.
		if w := len(words) * (i + 1) / len(chunks); w > 0 {
			for _, word := range words[:w] {
				if c.send(obj{"serverContent": obj{"outputTranscription": obj{"text": word + " "}}}) != nil {
					return false
				}
			}
			words = words[w:]
		}
		data := base64.StdEncoding.EncodeToString(pcm.EncodePCM16(nil, ch.Samples))
		msg := obj{"serverContent": obj{"modelTurn": obj{"parts": []obj{{"inlineData": obj{"mimeType": "audio/pcm;rate=24000", "data": data}}}}}}
		if ctx.Err() != nil || c.send(msg) != nil {
			return false
		}
		if d := c.s.cfg.ChunkDelay; d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return false
			}
		}
	}
	for _, word := range words {
		if c.send(obj{"serverContent": obj{"outputTranscription": obj{"text": word + " "}}}) != nil {
			return false
		}
	}
	if ctx.Err() != nil || c.send(obj{"serverContent": obj{"generationComplete": true}}) != nil {
		return false
	}
	return c.send(obj{"serverContent": obj{"turnComplete": true}}) == nil
}

// afterReply counts a completed reply, and hangs up or warns when told.
func (c *conn) afterReply() {
	var n int
	c.s.sessions.Update(c.rec, func(ss *Session) { ss.Replies++; n = ss.Replies })
	if g := c.s.cfg.GoAwayAfter; g > 0 && n == g {
		c.send(obj{"goAway": obj{"timeLeft": "5s"}})
	}
	if h := c.s.cfg.HangUpAfter; h > 0 && n == h {
		c.wmu.Lock()
		c.ws.Close(websocket.StatusNormalClosure, "session ended")
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
