// Package vapipeer is a test double of Vapi (api.vapi.ai) serving calls
// over its WebSocket transport: the REST endpoint that creates the call,
// and the call's WebSocket, on loopback.
//
// What it follows (Vapi's documentation, docs.vapi.ai/calls/websocket-transport,
// source fern/calls/websocket-transport.mdx in github.com/VapiAI/docs, and
// the Call and client message schemas of Vapi's OpenAPI document, as the
// generated clients carry them, e.g. the vapi-client crate's
// ClientMessageTranscript, ClientMessageSpeechUpdate,
// ClientMessageToolCalls, ClientMessageStatusUpdate):
//
//   - POST /call with "Authorization: Bearer <private key>" and a JSON body
//     {"assistantId" | "assistant", "assistantOverrides"?, "transport":
//     {"provider": "vapi.websocket", "audioFormat": {"format": "pcm_s16le",
//     "container": "raw", "sampleRate": N}}} answers 201 with the Call:
//     {"id", "assistantId", "type": "vapi.websocketCall", "status":
//     "queued", "transport": {"provider": "vapi.websocket",
//     "websocketCallUrl": "ws://…/<id>/transport"}}. A missing or wrong key
//     is 401 ({"message", "error": "Unauthorized", "statusCode": 401}); a
//     body Vapi would refuse is 400 with the message naming the field.
//   - The call's WebSocket carries binary frames of raw PCM16 (little
//     endian, mono, at the sample rate the call was created with) both
//     ways, and JSON text control messages: the client's
//     {"type": "hangup"} ends the call; the assistant's client messages
//     are "speech-update" {role, status: started|stopped, turn},
//     "transcript" {role, transcriptType: partial|final, transcript},
//     "user-interrupted", "tool-calls" {toolCallList: [{id, type:
//     "function", function: {name, arguments}}]}, "conversation-update"
//     {messages} and "status-update" {status: "ended", endedReason}, after
//     which Vapi closes the socket.
//
// THIS IS NOT VAPI. Behaviour: the assistant detects the user's speech by
// energy (an utterance ends after EndSilence of silent audio, counted in
// samples), transcribes it with voicetest/fixtures' fake STT, and answers
// with fixtures.FakeTTS speech in 20 ms frames in real time, with
// speech-update and transcript messages around it (the text as partials
// word by word, then final, as the audio plays). Voiced user audio during
// a reply stops it and sends user-interrupted. After HangUpAfter replies
// it sends status-update ended ("assistant-ended-call") and closes the
// socket normally. Every protocol violation is recorded in Call.Errors.
package vapipeer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
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

// Fault is a way the double misbehaves.
type Fault int

// The faults.
const (
	// NoFault: the double behaves.
	NoFault Fault = iota
	// StallCreate: POST /call never answers.
	StallCreate
	// Mute: the call opens, and the assistant answers nothing.
	Mute
)

// Turn is the assistant's answer to one user turn.
type Turn struct {
	// Reply is what the assistant says; "{heard}" is replaced by what it
	// heard. Empty means "Reply n.".
	Reply string
	// Tool, when set, is a function the assistant calls first
	// (a tool-calls message).
	Tool *Tool
}

// Tool is a function call of the assistant.
type Tool struct {
	Name string
	Args map[string]any
}

// Config sets the double's behaviour.
type Config struct {
	// Key is the private API key POST /call requires (default "vapi-test-key").
	Key string
	// Turns are the answers to the user turns.
	Turns []Turn
	// EndSilence is the silence that ends an utterance (default 300 ms).
	EndSilence time.Duration
	// Threshold is the RMS above which audio is speech (default 300).
	Threshold float64
	// HangUpAfter, when positive, ends the call after that many replies.
	HangUpAfter int
	// Fault is a misbehaviour.
	Fault Fault
	// Send holds WebSocket frames the double sends verbatim once the
	// socket opens, before anything else.
	Send []Frame
	// Listener, when set, is where the double serves instead of a port
	// of 127.0.0.1 (an in-memory listener, adaptertest.MemNet, to run a
	// test on virtual time); the double closes it.
	Listener net.Listener
}

// Frame is one WebSocket frame.
type Frame struct {
	Data   []byte
	Binary bool
}

// Call is what the double saw of one call.
type Call struct {
	// ID is the call's id.
	ID string
	// Body is the POST /call body.
	Body map[string]any
	// SampleRate is the call's audio rate.
	SampleRate int
	// Connected reports that the call's WebSocket opened.
	Connected bool
	// Heard holds what each user turn said.
	Heard []string
	// HangUp reports the client's {"type":"hangup"}.
	HangUp bool
	// Interruptions counts replies cut short; Replies those completed.
	Interruptions, Replies int
	// Errors are protocol violations the double saw.
	Errors []string
	// Ended reports that the call is over.
	Ended bool
}

func cloneCall(c *Call) Call {
	out := *c
	out.Heard = append([]string(nil), c.Heard...)
	out.Errors = append([]string(nil), c.Errors...)
	return out
}

// Server is a running double.
type Server struct {
	// URL is the API's base URL, http://127.0.0.1:port (Agent.BaseURL).
	URL string

	cfg   Config
	srv   *peerkit.Server
	calls *peerkit.Log[Call]
	wg    sync.WaitGroup

	mu      sync.Mutex
	pending map[string]*Call // created, WebSocket not yet opened
}

// New starts a double on loopback and closes it when the test ends.
func New(tb testing.TB, cfg Config) *Server {
	tb.Helper()
	s := Start(cfg)
	tb.Cleanup(s.Close)
	return s
}

// Start starts a double on loopback; Close stops it.
func Start(cfg Config) *Server {
	if cfg.Key == "" {
		cfg.Key = "vapi-test-key"
	}
	if cfg.EndSilence == 0 {
		cfg.EndSilence = 300 * time.Millisecond
	}
	if cfg.Threshold == 0 {
		cfg.Threshold = 300
	}
	s := &Server{cfg: cfg, calls: peerkit.NewLog(cloneCall), pending: map[string]*Call{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /call", s.create)
	mux.HandleFunc("GET /{id}/transport", s.transport)
	s.srv = peerkit.Listen(cfg.Listener)
	s.URL = s.srv.URL
	s.srv.Serve(mux)
	return s
}

// Close ends every call and stops the double.
func (s *Server) Close() {
	s.srv.Close()
	s.wg.Wait()
}

// Calls returns a copy of what the double saw of each call.
func (s *Server) Calls() []Call { return s.calls.Snapshot() }

// WaitCall waits until call i satisfies cond.
func (s *Server) WaitCall(ctx context.Context, i int, cond func(Call) bool) (Call, error) {
	return s.calls.Wait(ctx, i, cond)
}

// apiError writes Vapi's error body.
func apiError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"message": msg, "error": http.StatusText(status), "statusCode": status})
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Fault == StallCreate {
		select {
		case <-s.srv.Done():
		case <-r.Context().Done():
		}
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+s.cfg.Key {
		apiError(w, http.StatusUnauthorized, "Invalid Key. Hot tip, you may be using the private key instead of the public key, or vice versa.")
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		apiError(w, http.StatusBadRequest, "Content-Type must be application/json, not "+ct)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var in map[string]any
	if err == nil {
		err = json.Unmarshal(body, &in)
	}
	if err != nil {
		apiError(w, http.StatusBadRequest, "the body is not JSON: "+err.Error())
		return
	}
	rate, msg := checkCreate(in)
	if msg != "" {
		apiError(w, http.StatusBadRequest, msg)
		return
	}
	rec := s.calls.Add(func(i int) *Call {
		return &Call{ID: fmt.Sprintf("7420f27a-30fd-4f49-a995-%012d", i+1), Body: in, SampleRate: rate}
	})
	s.mu.Lock()
	s.pending[rec.ID] = rec
	s.mu.Unlock()
	assistantID, _ := in["assistantId"].(string)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	json.NewEncoder(w).Encode(map[string]any{
		"id": rec.ID, "assistantId": assistantID, "type": "vapi.websocketCall",
		"createdAt": time.Now().UTC().Format(time.RFC3339Nano), "orgId": "eb166faa-7145-46ef-8044-589b47ae3b56",
		"cost": 0, "status": "queued",
		"transport": map[string]any{"provider": "vapi.websocket", "websocketCallUrl": s.srv.WSURL("/" + rec.ID + "/transport")},
	})
}

// checkCreate returns the call's sample rate, or why Vapi would refuse
// the body.
func checkCreate(in map[string]any) (int, string) {
	_, hasID := in["assistantId"].(string)
	_, hasAssistant := in["assistant"].(map[string]any)
	if hasID == hasAssistant {
		return 0, "give exactly one of assistantId and assistant"
	}
	if _, ok := in["phoneNumberId"]; ok {
		return 0, "phoneNumberId is not permitted with the vapi.websocket transport"
	}
	tr, _ := in["transport"].(map[string]any)
	if tr == nil || tr["provider"] != "vapi.websocket" {
		return 0, `transport.provider must be "vapi.websocket"`
	}
	af, _ := tr["audioFormat"].(map[string]any)
	if af == nil {
		return 16000, ""
	}
	if af["format"] != "pcm_s16le" || af["container"] != "raw" {
		return 0, "transport.audioFormat: this double takes format pcm_s16le in a raw container"
	}
	rate, _ := af["sampleRate"].(float64)
	if rate < 8000 || rate > 48000 || rate != math.Trunc(rate) {
		return 0, fmt.Sprintf("transport.audioFormat.sampleRate %v is not a rate in 8000..48000", af["sampleRate"])
	}
	return int(rate), ""
}

// conn is one call's WebSocket.
type conn struct {
	s   *Server
	rec *Call
	ws  *websocket.Conn
	ctx context.Context

	replies *peerkit.Replier

	// The reader only.
	ear  peerkit.Ear
	turn int
}

func (s *Server) transport(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	rec := s.pending[id]
	delete(s.pending, id)
	s.mu.Unlock()
	if rec == nil {
		apiError(w, http.StatusNotFound, "no call "+id+" waiting for its transport")
		return
	}
	keyOnSocket := r.Header.Get("Authorization") != "" || strings.Contains(r.URL.RawQuery, s.cfg.Key)
	ws, err := peerkit.Accept(w, r, 1<<20)
	if err != nil {
		return
	}
	if keyOnSocket {
		s.calls.Update(rec, func(cl *Call) {
			cl.Errors = append(cl.Errors, "credentials on the call's WebSocket: the websocketCallUrl needs none")
		})
	}
	s.wg.Add(1)
	defer s.wg.Done()
	ctx, cancel := s.srv.CallContext()
	defer cancel()
	c := &conn{s: s, rec: rec, ws: ws, ctx: ctx, replies: peerkit.NewReplier(&s.wg),
		ear: peerkit.Ear{Rate: rec.SampleRate, Threshold: s.cfg.Threshold, EndSilence: s.cfg.EndSilence}}
	s.calls.Update(rec, func(cl *Call) { cl.Connected = true })
	defer func() {
		c.replies.Cut()
		ws.CloseNow()
		s.calls.Update(rec, func(cl *Call) { cl.Ended = true })
	}()
	for _, f := range s.cfg.Send {
		typ := websocket.MessageText
		if f.Binary {
			typ = websocket.MessageBinary
		}
		if ws.Write(ctx, typ, f.Data) != nil {
			return
		}
	}
	for {
		typ, data, err := ws.Read(ctx)
		if err != nil {
			return
		}
		if s.cfg.Fault == Mute {
			continue
		}
		if typ == websocket.MessageBinary {
			if len(data)%2 != 0 {
				c.errorf("a binary frame of %d bytes: PCM16 comes in whole samples", len(data))
				continue
			}
			samples, _ := pcm.DecodePCM16(nil, data)
			c.audio(samples)
			continue
		}
		var m struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(data, &m) != nil {
			c.errorf("a text frame that is not JSON: %.100q", data)
			continue
		}
		switch m.Type {
		case "hangup":
			s.calls.Update(rec, func(cl *Call) { cl.HangUp = true })
			c.replies.Cut()
			c.send(map[string]any{"type": "status-update", "status": "ended", "endedReason": "customer-ended-call"})
			ws.Close(websocket.StatusNormalClosure, "")
			return
		default:
			c.errorf("a control message %q the WebSocket transport does not take", m.Type)
		}
	}
}

func (c *conn) errorf(format string, args ...any) {
	c.s.calls.Update(c.rec, func(cl *Call) { cl.Errors = append(cl.Errors, fmt.Sprintf(format, args...)) })
}

// send writes one control message.
func (c *conn) send(v any) error { return peerkit.WriteJSON(c.ctx, c.ws, v) }

// audio takes the user's audio.
func (c *conn) audio(samples []int16) {
	started, utterance := c.ear.Hear(samples)
	if started {
		c.send(map[string]any{"type": "speech-update", "role": "user", "status": "started", "turn": c.turn})
		c.bargeIn()
	}
	if utterance == nil {
		return
	}
	c.send(map[string]any{"type": "speech-update", "role": "user", "status": "stopped", "turn": c.turn})
	heard := peerkit.Transcribe(c.ctx, c.rec.SampleRate, utterance)
	c.send(map[string]any{"type": "transcript", "role": "user", "transcriptType": "final", "transcript": heard})
	c.s.calls.Update(c.rec, func(cl *Call) { cl.Heard = append(cl.Heard, heard) })
	c.turn++
	var t Turn
	if c.turn <= len(c.s.cfg.Turns) {
		t = c.s.cfg.Turns[c.turn-1]
	}
	if t.Reply == "" {
		t.Reply = fmt.Sprintf("Reply %d.", c.turn)
	}
	c.startReply(t, heard)
}

// bargeIn cuts the reply in progress, as Vapi does when it hears the
// user over the assistant.
func (c *conn) bargeIn() {
	if !c.replies.Cut() {
		return
	}
	c.s.calls.Update(c.rec, func(cl *Call) { cl.Interruptions++ })
	c.send(map[string]any{"type": "user-interrupted"})
	c.send(map[string]any{"type": "speech-update", "role": "assistant", "status": "stopped", "turn": c.turn})
}

// startReply starts a reply on its own goroutine.
func (c *conn) startReply(t Turn, heard string) {
	c.bargeIn()
	n := c.turn
	c.replies.Start(c.ctx, func(ctx context.Context) bool { return c.speak(ctx, n, t, heard) }, c.afterReply)
}

// speak runs one reply in real time; it reports whether it ran to its
// end.
func (c *conn) speak(ctx context.Context, n int, t Turn, heard string) bool {
	text := strings.ReplaceAll(t.Reply, "{heard}", heard)
	if t.Tool != nil {
		args, _ := json.Marshal(t.Tool.Args)
		if c.send(map[string]any{"type": "tool-calls", "toolCallList": []any{map[string]any{
			"id": "call_" + strconv.Itoa(n), "type": "function",
			"function": map[string]any{"name": t.Tool.Name, "arguments": json.RawMessage(args)},
		}}}) != nil {
			return false
		}
	}
	rate := c.rec.SampleRate
	speech, err := fixtures.FakeTTS().Synthesize(ctx, voicetest.SpeechRequest{Text: text, Rate: rate})
	if err != nil {
		return false
	}
	if c.send(map[string]any{"type": "speech-update", "role": "assistant", "status": "started", "turn": n}) != nil {
		return false
	}
	words := strings.Fields(text)
	said := 0
	frames := speech.Frames(20 * time.Millisecond)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for i, f := range frames {
		if w := len(words) * (i + 1) / len(frames); w > said {
			said = w
			if c.send(map[string]any{"type": "transcript", "role": "assistant", "transcriptType": "partial", "transcript": strings.Join(words[:said], " ")}) != nil {
				return false
			}
		}
		if ctx.Err() != nil || c.ws.Write(ctx, websocket.MessageBinary, pcm.EncodePCM16(nil, f.Samples)) != nil {
			return false
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return false
		}
	}
	if ctx.Err() != nil {
		return false
	}
	return c.send(map[string]any{"type": "transcript", "role": "assistant", "transcriptType": "final", "transcript": text}) == nil &&
		c.send(map[string]any{"type": "speech-update", "role": "assistant", "status": "stopped", "turn": n}) == nil
}

// afterReply counts a completed reply and ends the call when told.
func (c *conn) afterReply() {
	var n int
	c.s.calls.Update(c.rec, func(cl *Call) { cl.Replies++; n = cl.Replies })
	if h := c.s.cfg.HangUpAfter; h > 0 && n == h {
		c.send(map[string]any{"type": "status-update", "status": "ended", "endedReason": "assistant-ended-call"})
		if err := c.ws.Close(websocket.StatusNormalClosure, ""); err != nil && !errors.Is(err, context.Canceled) {
			c.ws.CloseNow()
		}
	}
}
