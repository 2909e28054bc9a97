// Package layercodepeer is a test double of LayerCode's voice-agent service
// as a browser client sees it: the customer backend's authorize endpoint
// (which, in production, asks LayerCode's POST /v1/agents/web/authorize_session
// for a client session key) and LayerCode's frontend WebSocket
// (/v1/agents/web/websocket?client_session_key=…). It lets the LayerCode
// adapter be tested on loopback against a peer that checks the client's
// messages as LayerCode does and runs a scripted, deterministic conversation.
// LayerCode's browser SDK, @layercode/js-sdk 2.8.10, drives it in
// internal/peers/sdkcheck (TestLayerCodeDoubleWithJSSDK).
//
// THIS IS NOT LAYERCODE. It speaks the protocol of LayerCode's JS SDK
// (src/interfaces.ts and LayercodeClient._handleWebSocketMessage, the SDK
// that ships), of the frontend WebSocket API reference
// (docs.layercode.com/api-reference/frontend_ws_api, and its AsyncAPI
// description) and of LayerCode Gym. The client sends client.ready first,
// then client.audio (base64 PCM16 mono, 8 kHz by default), vad_events,
// trigger.turn.start/end (push to talk), client.response.text,
// client.response.data and trigger.response.audio.replay_finished; the
// server sends turn.start and turn.end (role user or assistant, with
// turn_id), response.text.delta (the reply's text as it comes) and
// response.text (the whole text), response.data, response.audio (base64
// PCM16 mono, 16 kHz by default, with turn_id and delta_id), response.end,
// and user.transcript(.delta, .interim_delta).
//
// Where the documentation and the SDK disagree, the double follows the SDK
// and takes both: replay_finished comes from the SDK as
// {"reason":"completed"} alone, whenever its player runs dry or is stopped
// (after a barge-in too), while LayerCode Gym and the AsyncAPI description
// add turn_id and use "interrupted" for a cut reply.
//
// Behaviour: the peer detects user speech by energy in client.audio and
// sends turn.start(user); the utterance ends at vad_end (or
// trigger.turn.end, or EndSilence of silent audio). It then sends the user
// transcripts (when Config.Transcribe is set) and turn.end(user), and after
// ReplyDelay answers with turn.start(assistant), the reply's
// response.text.delta word by word and response.text, its response.data,
// its audio in chunks, and response.end. It considers itself speaking until
// the client acknowledges playback with replay_finished, after the whole
// reply has been sent; it then sends turn.end(assistant). Voiced user audio
// (or client.response.text) while it speaks is a barge-in: it stops sending
// the reply and sends turn.start(user); the reply is over, and the next
// acknowledgement without a turn_id is taken for it. After HangUpAfter
// replies have been played (acknowledged as completed) it closes the
// WebSocket, as LayerCode does when the agent ends the call. Every protocol
// violation is recorded in Call.Errors, and Fault makes it misbehave.
package layercodepeer

import (
	"context"
	"encoding/base64"
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
)

// Fault is a way the peer misbehaves.
type Fault int

// The faults. Those about frames happen right after client.ready.
const (
	// NoFault: the peer behaves.
	NoFault Fault = iota
	// MalformedJSON sends a text frame that is not JSON.
	MalformedJSON
	// BinaryFrame sends a binary frame.
	BinaryFrame
	// UnknownType sends {"type":"response.dance"}.
	UnknownType
	// BadAudio sends response.audio whose content is not base64.
	BadAudio
	// OddAudio sends response.audio with an odd number of PCM16 bytes.
	OddAudio
	// Stall stops reading and writing (so answers no ping) until the
	// peer closes.
	Stall
	// Abort drops the connection without a closing handshake.
	Abort
	// AuthFail makes the authorize endpoint answer 401.
	AuthFail
	// NoSessionKey makes the authorize endpoint answer without a
	// client_session_key.
	NoSessionKey
	// StallAuthorize makes the authorize endpoint never answer (until the
	// peer closes).
	StallAuthorize
)

// Reply is what the agent says in one turn.
type Reply struct {
	// Text is spoken (as audio) and sent as response.text.
	Text string
	// Data, when not nil, is sent as a response.data message.
	Data json.RawMessage
	// Pause, when positive, holds the reply's audio back for that long
	// after its first chunk, as a loaded server or a slow network does:
	// the client's player runs dry in the middle of the response.
	Pause time.Duration
}

// Config sets the peer's behaviour. The zero value is a polite agent that
// answers each utterance with "Reply N." and never hangs up.
type Config struct {
	// AgentID is the agent_id the authorize request must carry (default
	// "agent-test").
	AgentID string
	// Token, when set, is the bearer token the authorize request must
	// carry in its Authorization header.
	Token string
	// Trigger is "automatic" (default) or "push_to_talk", returned in the
	// authorize response's config.transcription.trigger.
	Trigger string
	// Greeting, when set, is said first, right after client.ready.
	Greeting string
	// Replies returns the reply to user utterance n (from 1), given what
	// was heard (the transcript, or "" without Transcribe). Nil answers
	// "Reply n.".
	Replies func(n int, heard string) Reply
	// ReplyDelay is how long the agent thinks before replying.
	ReplyDelay time.Duration
	// Speech turns reply text into audio at rate. Nil makes a 500 Hz tone
	// of WordDuration per word.
	Speech func(text string, rate int) pcm.Chunk
	// WordDuration is the default speech's length per word (default
	// 150 ms).
	WordDuration time.Duration
	// Chunk is the length of each response.audio (default 100 ms).
	Chunk time.Duration
	// OutputRate is the rate of response.audio (default 16000), InputRate
	// the rate client.audio is taken to be (default 8000).
	OutputRate, InputRate int
	// EndSilence ends an utterance after this much silent client audio
	// (default 400 ms), for clients that send no vad_end.
	EndSilence time.Duration
	// Threshold is the RMS above which client audio is speech (default
	// 300).
	Threshold float64
	// Transcribe, when set, transcribes each user utterance (at InputRate);
	// the peer then sends user.transcript.interim_delta, .delta and
	// user.transcript.
	Transcribe func(pcm.Chunk) string
	// OmitTurnIDs leaves turn_id and delta_id out of every message, as
	// older servers do.
	OmitTurnIDs bool
	// HangUpAfter, when positive, closes the WebSocket once the
	// HangUpAfter-th reply (the greeting counts as one) has been
	// acknowledged as played to completion.
	HangUpAfter int
	// RealTimeAudio sends each reply's audio chunks at the rate they
	// play, as a streaming TTS does, rather than all at once.
	RealTimeAudio bool
	// KeepTalking keeps sending a reply's audio after a barge-in, as a
	// server that is slow to stop does; the client must drop it.
	KeepTalking bool
	// Fault is a misbehaviour.
	Fault Fault
	// Send holds text frames sent verbatim after client.ready.
	Send []string
	// Listener, when set, is where the double serves instead of a port
	// of 127.0.0.1 (an in-memory listener, adaptertest.MemNet, to run a
	// test on virtual time); the double closes it.
	Listener net.Listener
}

// Ack is one trigger.response.audio.replay_finished the client sent.
type Ack struct {
	Reason, TurnID, LastDeltaID string
}

// Call is what the peer saw of one conversation.
type Call struct {
	// AgentID, Metadata, Body (all of it) and Header are from the
	// authorize request.
	AgentID  string
	Metadata map[string]any
	Body     map[string]any
	Header   http.Header
	// SessionKey and ConversationID are what authorize returned.
	SessionKey, ConversationID string
	// Errors are the protocol violations the peer saw.
	Errors []string
	// Types are the types of the client's messages, in order, without
	// client.audio.
	Types []string
	// AudioMessages counts client.audio messages; Audio is their audio.
	AudioMessages int
	Audio         []int16
	// Heard holds each user utterance's transcript ("" without
	// Transcribe), or a client.response.text's content.
	Heard []string
	// Data are the client.response.data payloads (their data objects).
	Data []json.RawMessage
	// Acks are the playback acknowledgements, in order.
	Acks []Ack
	// Interruptions counts barge-ins.
	Interruptions int
	// Replies counts the replies started.
	Replies int
	// Connected reports that the WebSocket opened; Ended that it is over.
	Connected, Ended bool
}

// Peer is a running LayerCode test double.
type Peer struct {
	// AuthorizeURL is the customer backend's authorize endpoint.
	AuthorizeURL string
	// WebSocketURL is the frontend WebSocket, without the query.
	WebSocketURL string

	cfg   Config
	srv   *peerkit.Server
	calls *peerkit.Log[Call]

	mu   sync.Mutex
	keys map[string]*Call // session keys not yet used
}

// New starts a peer on loopback and closes it when the test ends.
func New(tb testing.TB, cfg Config) *Peer {
	tb.Helper()
	p := Start(cfg)
	tb.Cleanup(p.Close)
	return p
}

// Close stops the peer and ends its conversations.
func (p *Peer) Close() {
	p.srv.Close() // ends stalls first
}

// Start starts a peer on loopback; Close stops it.
func Start(cfg Config) *Peer {
	if cfg.AgentID == "" {
		cfg.AgentID = "agent-test"
	}
	if cfg.Trigger == "" {
		cfg.Trigger = "automatic"
	}
	if cfg.WordDuration <= 0 {
		cfg.WordDuration = 150 * time.Millisecond
	}
	if cfg.Chunk <= 0 {
		cfg.Chunk = 100 * time.Millisecond
	}
	if cfg.OutputRate <= 0 {
		cfg.OutputRate = 16000
	}
	if cfg.InputRate <= 0 {
		cfg.InputRate = 8000
	}
	if cfg.EndSilence <= 0 {
		cfg.EndSilence = 400 * time.Millisecond
	}
	if cfg.Threshold <= 0 {
		cfg.Threshold = 300
	}
	p := &Peer{cfg: cfg, calls: peerkit.NewLog(cloneCall), keys: map[string]*Call{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/authorize", p.authorize)
	mux.HandleFunc("GET /v1/agents/web/websocket", p.serveWS)
	p.srv = peerkit.Listen(cfg.Listener)
	p.AuthorizeURL = p.srv.URL + "/api/authorize"
	p.WebSocketURL = p.srv.WSURL("/v1/agents/web/websocket")
	p.srv.Serve(mux)
	return p
}

// Calls returns a copy of what the peer saw of each conversation so far.
func (p *Peer) Calls() []Call { return p.calls.Snapshot() }

// cloneCall copies a call, sharing no slices with it.
func cloneCall(c *Call) Call {
	out := *c
	out.Errors = append([]string(nil), c.Errors...)
	out.Types = append([]string(nil), c.Types...)
	out.Audio = append([]int16(nil), c.Audio...)
	out.Heard = append([]string(nil), c.Heard...)
	out.Acks = append([]Ack(nil), c.Acks...)
	out.Data = append([]json.RawMessage(nil), c.Data...)
	return out
}

// WaitCall waits until conversation i satisfies cond, or ctx ends.
func (p *Peer) WaitCall(ctx context.Context, i int, cond func(Call) bool) (Call, error) {
	c, err := p.calls.Wait(ctx, i, cond)
	if err != nil {
		return c, fmt.Errorf("layercodepeer: call %d never reached the expected state (last: %+v): %w", i, c, err)
	}
	return c, nil
}

func (p *Peer) update(c *Call, f func(*Call)) { p.calls.Update(c, f) }

func (c *Call) errorf(format string, args ...any) {
	c.Errors = append(c.Errors, fmt.Sprintf(format, args...))
}

// authorize plays the customer backend's authorize endpoint.
func (p *Peer) authorize(w http.ResponseWriter, r *http.Request) {
	switch p.cfg.Fault {
	case AuthFail:
		http.Error(w, `{"error":"invalid agent credentials"}`, http.StatusUnauthorized)
		return
	case StallAuthorize:
		select {
		case <-p.srv.Done():
		case <-r.Context().Done():
		}
		return
	}
	if p.cfg.Token != "" && r.Header.Get("Authorization") != "Bearer "+p.cfg.Token {
		http.Error(w, `{"error":"missing or wrong bearer token"}`, http.StatusUnauthorized)
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		http.Error(w, `{"error":"Content-Type must be application/json"}`, http.StatusUnsupportedMediaType)
		return
	}
	var body struct {
		AgentID        string         `json:"agent_id"`
		ConversationID string         `json:"conversation_id"`
		Metadata       map[string]any `json:"metadata"`
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<16))
	var all map[string]any
	if err == nil {
		err = json.Unmarshal(raw, &all)
	}
	if err == nil {
		err = json.Unmarshal(raw, &body)
	}
	if err != nil {
		http.Error(w, `{"error":"body is not a JSON object of the authorize request"}`, http.StatusBadRequest)
		return
	}
	if body.AgentID != p.cfg.AgentID {
		http.Error(w, fmt.Sprintf(`{"error":"unknown agent_id %q"}`, body.AgentID), http.StatusNotFound)
		return
	}
	var key, conv string
	c := p.calls.Add(func(i int) *Call {
		n := i + 1
		key = fmt.Sprintf("lcsk_test_%04d_secret", n)
		conv = body.ConversationID
		if conv == "" {
			conv = fmt.Sprintf("conv_%04d", n)
		}
		return &Call{AgentID: body.AgentID, Metadata: body.Metadata, Body: all, Header: r.Header.Clone(), SessionKey: key, ConversationID: conv}
	})
	p.mu.Lock()
	p.keys[key] = c
	p.mu.Unlock()
	resp := map[string]any{
		"client_session_key": key,
		"conversation_id":    conv,
		"config": map[string]any{
			"transcription": map[string]any{"trigger": p.cfg.Trigger, "can_interrupt": true, "automatic": p.cfg.Trigger == "automatic"},
			"vad":           map[string]any{"enabled": true},
		},
	}
	if p.cfg.Fault == NoSessionKey {
		delete(resp, "client_session_key")
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

func (p *Peer) serveWS(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("client_session_key")
	p.mu.Lock()
	c := p.keys[key]
	delete(p.keys, key) // a key opens one connection
	p.mu.Unlock()
	if c == nil {
		http.Error(w, "invalid or used client_session_key", http.StatusForbidden)
		return
	}
	ws, err := peerkit.Accept(w, r, 1<<20)
	if err != nil {
		return
	}
	p.update(c, func(c *Call) { c.Connected = true })
	ctx, cancel := p.srv.CallContext()
	defer cancel()
	s := &conv{p: p, ws: ws, call: c, ctx: ctx}
	err = s.run()
	s.wg.Wait()
	p.update(c, func(c *Call) {
		if err != nil {
			c.errorf("%v", err)
		}
		c.Ended = true
	})
	ws.CloseNow()
}

// errEnd ends the conversation without an error.
var errEnd = errors.New("conversation over")

// conv is one conversation in progress.
type conv struct {
	p    *Peer
	ws   *websocket.Conn
	call *Call
	ctx  context.Context
	wg   sync.WaitGroup

	mu        sync.Mutex
	ready     bool
	userOn    bool    // user speech in progress
	silent    int     // silent samples since the last voiced audio
	utterance []int16 // audio of the utterance in progress
	preroll   []int16 // the last prerollLen of audio before it
	utterNo   int
	turnNo    int
	speaking  string             // turn_id of the reply not yet acknowledged
	sentAll   string             // turn_id of the last reply sent whole
	cut       string             // turn_id of the reply a barge-in cut, not yet acknowledged
	cancel    context.CancelFunc // stops sending the current reply
	played    int                // replies acknowledged as completed
	hangUp    bool
}

func (s *conv) send(v any) error { return peerkit.WriteJSON(s.ctx, s.ws, v) }

// clientMsg is any message the client sends.
type clientMsg struct {
	Type              string          `json:"type"`
	Content           *string         `json:"content"`
	Data              json.RawMessage `json:"data"`
	Event             string          `json:"event"`
	Role              string          `json:"role"`
	Reason            string          `json:"reason"`
	TurnID            string          `json:"turn_id"`
	LastDeltaIDPlayed string          `json:"last_delta_id_played"`
}

func (s *conv) run() error {
	for {
		typ, data, err := s.ws.Read(s.ctx)
		if err != nil {
			if websocket.CloseStatus(err) >= 0 || s.ctx.Err() != nil {
				return nil
			}
			s.mu.Lock()
			hung := s.hangUp
			s.mu.Unlock()
			if hung {
				return nil
			}
			return fmt.Errorf("read: %w", err)
		}
		if typ != websocket.MessageText {
			s.p.update(s.call, func(c *Call) { c.errorf("binary frame of %d bytes; LayerCode takes JSON text frames", len(data)) })
			continue
		}
		var m clientMsg
		if err := json.Unmarshal(data, &m); err != nil {
			s.p.update(s.call, func(c *Call) { c.errorf("not JSON: %v", err) })
			continue
		}
		if m.Type != "client.audio" {
			s.p.update(s.call, func(c *Call) { c.Types = append(c.Types, m.Type) })
		}
		s.mu.Lock()
		ready := s.ready
		s.mu.Unlock()
		if !ready && m.Type != "client.ready" {
			s.p.update(s.call, func(c *Call) { c.errorf("%s before client.ready", m.Type) })
			continue
		}
		if err := s.handle(m); err != nil {
			if errors.Is(err, errEnd) {
				return nil
			}
			return err
		}
	}
}

func (s *conv) handle(m clientMsg) error {
	switch m.Type {
	case "client.ready":
		s.mu.Lock()
		again := s.ready
		s.ready = true
		s.mu.Unlock()
		if again {
			s.p.update(s.call, func(c *Call) { c.errorf("client.ready sent twice") })
			return nil
		}
		return s.onReady()
	case "client.audio":
		if m.Content == nil {
			s.p.update(s.call, func(c *Call) { c.errorf("client.audio without content") })
			return nil
		}
		b, err := base64.StdEncoding.DecodeString(*m.Content)
		if err != nil {
			s.p.update(s.call, func(c *Call) { c.errorf("client.audio content is not base64: %v", err) })
			return nil
		}
		samples, err := pcm.DecodePCM16(nil, b)
		if err != nil {
			s.p.update(s.call, func(c *Call) { c.errorf("client.audio: %v", err) })
			return nil
		}
		s.p.update(s.call, func(c *Call) { c.AudioMessages++; c.Audio = append(c.Audio, samples...) })
		return s.onAudio(samples)
	case "vad_events":
		switch m.Event {
		case "vad_start":
		case "vad_end":
			return s.endUtterance()
		case "vad_model_failed":
		default:
			s.p.update(s.call, func(c *Call) { c.errorf("vad_events with unknown event %q", m.Event) })
		}
	case "trigger.turn.start", "trigger.turn.end":
		if m.Role != "user" {
			s.p.update(s.call, func(c *Call) { c.errorf("%s with role %q, want user", m.Type, m.Role) })
			return nil
		}
		if m.Type == "trigger.turn.end" {
			return s.endUtterance()
		}
		s.mu.Lock()
		speaking := s.speaking != ""
		s.mu.Unlock()
		if speaking {
			return s.bargeIn()
		}
	case "client.response.text":
		if m.Content == nil || strings.TrimSpace(*m.Content) == "" {
			s.p.update(s.call, func(c *Call) { c.errorf("client.response.text without content") })
			return nil
		}
		// The SDK stops its player before it sends text
		// (sendClientResponseText): text over the agent's speech cuts it.
		s.mu.Lock()
		s.cutLocked()
		s.utterNo++
		n := s.utterNo
		s.mu.Unlock()
		s.p.update(s.call, func(c *Call) { c.Heard = append(c.Heard, *m.Content) })
		s.reply(n, *m.Content)
	case "client.response.data":
		// {"type":"client.response.data","data":{…}}: structured data for
		// the agent's webhook (the SDK's sendClientResponseData; the
		// frontend WebSocket API's ClientResponseData).
		if len(m.Data) == 0 || m.Data[0] != '{' {
			s.p.update(s.call, func(c *Call) { c.errorf("client.response.data without a data object") })
			return nil
		}
		s.p.update(s.call, func(c *Call) { c.Data = append(c.Data, append(json.RawMessage(nil), m.Data...)) })
	case "trigger.response.audio.replay_finished":
		return s.onAck(m)
	default:
		s.p.update(s.call, func(c *Call) { c.errorf("unknown message type %q", m.Type) })
	}
	return nil
}

func (s *conv) onReady() error {
	switch s.p.cfg.Fault {
	case MalformedJSON:
		if err := s.ws.Write(s.ctx, websocket.MessageText, []byte(`{"type":"response.text","content":`)); err != nil {
			return err
		}
	case BinaryFrame:
		if err := s.ws.Write(s.ctx, websocket.MessageBinary, []byte{1, 2, 3}); err != nil {
			return err
		}
	case UnknownType:
		if err := s.send(map[string]string{"type": "response.dance"}); err != nil {
			return err
		}
	case BadAudio:
		if err := s.send(map[string]string{"type": "response.audio", "content": "!!not base64!!", "turn_id": "t0"}); err != nil {
			return err
		}
	case OddAudio:
		if err := s.send(map[string]string{"type": "response.audio", "content": base64.StdEncoding.EncodeToString([]byte{1, 2, 3}), "turn_id": "t0"}); err != nil {
			return err
		}
	case Stall:
		<-s.ctx.Done()
		return errEnd
	case Abort:
		s.ws.CloseNow()
		return errEnd
	}
	for _, f := range s.p.cfg.Send {
		if err := s.ws.Write(s.ctx, websocket.MessageText, []byte(f)); err != nil {
			return err
		}
	}
	if s.p.cfg.Greeting != "" {
		s.speak(Reply{Text: s.p.cfg.Greeting}, 0)
	}
	return nil
}

// prerollLen is the audio before the detected start of speech that an
// utterance keeps.
const prerollLen = 300 * time.Millisecond

func (s *conv) onAudio(samples []int16) error {
	voiced := rms(samples) > s.p.cfg.Threshold
	s.mu.Lock()
	startNow := voiced && !s.userOn
	if startNow {
		// The utterance keeps the audio just before it (prefix padding,
		// as speech detectors do): a chunk whose speech begins late is
		// not loud enough on average to count as voiced. The SDK sends
		// chunks of about 205 ms.
		s.utterance = append(s.utterance, s.preroll...)
		s.preroll = s.preroll[:0]
	}
	if voiced {
		s.userOn = true
		s.silent = 0
	} else if s.userOn {
		s.silent += len(samples)
	}
	if s.userOn {
		s.utterance = append(s.utterance, samples...)
	} else {
		s.preroll = append(s.preroll, samples...)
		if max := pcm.SamplesFor(s.p.cfg.InputRate, prerollLen); len(s.preroll) > max {
			s.preroll = s.preroll[:copy(s.preroll, s.preroll[len(s.preroll)-max:])]
		}
	}
	speaking := s.speaking != ""
	end := s.userOn && pcm.DurationOf(s.silent, s.p.cfg.InputRate) >= s.p.cfg.EndSilence
	s.mu.Unlock()
	if startNow {
		if speaking {
			if err := s.bargeIn(); err != nil {
				return err
			}
		} else {
			s.mu.Lock()
			turn := "user-" + strconv.Itoa(s.utterNo+1)
			s.mu.Unlock()
			if err := s.send(s.msg("turn.start", "role", "user", "turn_id", turn)); err != nil {
				return err
			}
		}
	}
	if end {
		return s.endUtterance()
	}
	return nil
}

// bargeIn stops the current reply: turn.start role=user tells the client
// to stop playing it (the SDK then interrupts its player).
func (s *conv) bargeIn() error {
	s.mu.Lock()
	s.cutLocked()
	turn := "user-" + strconv.Itoa(s.utterNo+1)
	s.mu.Unlock()
	s.p.update(s.call, func(c *Call) { c.Interruptions++ })
	return s.send(s.msg("turn.start", "role", "user", "turn_id", turn))
}

// cutLocked ends the reply in progress without waiting for the client to
// acknowledge it: the SDK sends no acknowledgement of its own for a cut
// reply, only the "completed" its player reports when it stops, which is
// then taken for the cut reply's. Call with mu held.
func (s *conv) cutLocked() {
	if s.speaking == "" {
		return
	}
	if s.cancel != nil && !s.p.cfg.KeepTalking {
		s.cancel()
	}
	s.cut, s.speaking = s.speaking, ""
}

func (s *conv) endUtterance() error {
	s.mu.Lock()
	if !s.userOn {
		s.mu.Unlock()
		return nil
	}
	audio := s.utterance
	s.utterance, s.userOn, s.silent = nil, false, 0
	s.utterNo++
	n := s.utterNo
	s.mu.Unlock()
	heard := ""
	if s.p.cfg.Transcribe != nil {
		heard = s.p.cfg.Transcribe(pcm.Chunk{Rate: s.p.cfg.InputRate, Samples: audio})
		turn := fmt.Sprintf("user-%d", n)
		words := strings.Fields(heard)
		for i := range words {
			part := strings.Join(words[:i+1], " ")
			if err := s.send(s.msg("user.transcript.interim_delta", "content", part, "turn_id", turn, "delta_counter", i+1)); err != nil {
				return err
			}
		}
		if err := s.send(s.msg("user.transcript.delta", "content", heard, "turn_id", turn, "delta_counter", len(words)+1)); err != nil {
			return err
		}
		if err := s.send(s.msg("user.transcript", "content", heard, "turn_id", turn)); err != nil {
			return err
		}
	}
	if err := s.send(s.msg("turn.end", "role", "user", "turn_id", fmt.Sprintf("user-%d", n))); err != nil {
		return err
	}
	s.p.update(s.call, func(c *Call) { c.Heard = append(c.Heard, heard) })
	s.reply(n, heard)
	return nil
}

func (s *conv) reply(n int, heard string) {
	r := Reply{Text: "Reply " + strconv.Itoa(n) + "."}
	if s.p.cfg.Replies != nil {
		r = s.p.cfg.Replies(n, heard)
	}
	s.speak(r, s.p.cfg.ReplyDelay)
}

// speak sends a reply on its own goroutine, after delay.
func (s *conv) speak(r Reply, delay time.Duration) {
	ctx, cancel := context.WithCancel(s.ctx)
	s.mu.Lock()
	if s.cancel != nil {
		s.cancel()
	}
	s.cancel = cancel
	s.turnNo++
	turn := "turn-" + strconv.Itoa(s.turnNo)
	s.speaking = turn
	s.mu.Unlock()
	s.p.update(s.call, func(c *Call) { c.Replies++ })
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
		s.sendReply(ctx, turn, r)
	}()
}

func (s *conv) sendReply(ctx context.Context, turn string, r Reply) {
	// Writes use the connection's context: coder/websocket closes the
	// connection when a write's context ends mid-frame, and a barge-in
	// only ends the reply.
	write := func(v any) bool {
		if ctx.Err() != nil {
			return false
		}
		b, _ := json.Marshal(v)
		return s.ws.Write(s.ctx, websocket.MessageText, b) == nil
	}
	if !write(s.msg("turn.start", "role", "assistant", "turn_id", turn)) {
		return
	}
	words := strings.Fields(r.Text)
	for i, w := range words {
		if i < len(words)-1 {
			w += " "
		}
		if !write(s.msg("response.text.delta", "content", w, "turn_id", turn)) {
			return
		}
	}
	if !write(s.msg("response.text", "content", r.Text, "turn_id", turn)) {
		return
	}
	if r.Data != nil && !write(s.msg("response.data", "content", r.Data, "turn_id", turn)) {
		return
	}
	var audio pcm.Chunk
	if s.p.cfg.Speech != nil {
		audio = s.p.cfg.Speech(r.Text, s.p.cfg.OutputRate)
	} else {
		audio = toneSpeech(len(words), s.p.cfg.WordDuration, s.p.cfg.OutputRate)
	}
	next := time.Now()
	for i, f := range audio.Frames(s.p.cfg.Chunk) {
		if i == 1 && r.Pause > 0 {
			next = next.Add(r.Pause)
		}
		if s.p.cfg.RealTimeAudio && i > 0 {
			next = next.Add(s.p.cfg.Chunk)
			t := time.NewTimer(time.Until(next))
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
		b64 := base64.StdEncoding.EncodeToString(pcm.EncodePCM16(nil, f.Samples))
		if !write(s.msg("response.audio", "content", b64, "turn_id", turn, "delta_id", turn+"-d"+strconv.Itoa(i+1))) {
			return
		}
	}
	// The whole reply is out before response.end is: a client that has
	// it may acknowledge at once.
	s.mu.Lock()
	s.sentAll = turn
	s.mu.Unlock()
	write(s.msg("response.end", "turn_id", turn))
}

// onAck takes a trigger.response.audio.replay_finished. The SDK sends
// {"reason":"completed"} alone each time its player runs dry or is
// stopped (LayercodeClient._clientResponseAudioReplayFinished, from
// WavStreamPlayer's "stop"), after a barge-in too; LayerCode Gym and the
// AsyncAPI description of the frontend WebSocket API add turn_id and use
// "interrupted" for a cut reply. Both are taken: an acknowledgement
// without turn_id is the current reply's once all its audio has been
// sent, else the cut reply's, else a stray one (recorded, no effect). A
// completed reply gets turn.end role=assistant.
func (s *conv) onAck(m clientMsg) error {
	if m.Reason != "completed" && m.Reason != "interrupted" {
		s.p.update(s.call, func(c *Call) {
			c.errorf("replay_finished with reason %q, want completed or interrupted", m.Reason)
		})
		return nil
	}
	s.p.update(s.call, func(c *Call) {
		c.Acks = append(c.Acks, Ack{Reason: m.Reason, TurnID: m.TurnID, LastDeltaID: m.LastDeltaIDPlayed})
	})
	s.mu.Lock()
	known := true
	if n, err := strconv.Atoi(strings.TrimPrefix(m.TurnID, "turn-")); m.TurnID != "" && (err != nil || n < 1 || n > s.turnNo) {
		known = false
	}
	turn := m.TurnID
	if turn == "" {
		switch {
		case s.speaking != "" && s.sentAll == s.speaking:
			turn = s.speaking
		case s.cut != "":
			turn = s.cut
		}
	}
	completed := false
	switch turn {
	case "":
	case s.cut:
		s.cut = "" // the cut reply is over; it does not count as played
	case s.speaking:
		if m.Reason == "interrupted" { // a client that cut it itself
			s.speaking = ""
			break
		}
		if s.sentAll != turn {
			break // the player ran dry before the rest arrived
		}
		s.speaking = ""
		completed = true
		s.played++
		s.hangUp = s.p.cfg.HangUpAfter > 0 && s.played >= s.p.cfg.HangUpAfter
	}
	hangUp := completed && s.hangUp
	s.mu.Unlock()
	if !known {
		s.p.update(s.call, func(c *Call) { c.errorf("replay_finished for turn_id %q, which the server never sent", m.TurnID) })
	}
	if completed {
		if err := s.send(s.msg("turn.end", "role", "assistant", "turn_id", turn)); err != nil {
			return err
		}
	}
	if hangUp {
		s.ws.Close(websocket.StatusNormalClosure, "conversation ended by agent")
		return errEnd
	}
	return nil
}

// msg builds a server message with the given key/value pairs, dropping
// turn_id and delta_id under OmitTurnIDs.
func (s *conv) msg(typ string, kv ...any) map[string]any {
	m := map[string]any{"type": typ}
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i].(string)
		if s.p.cfg.OmitTurnIDs && (k == "turn_id" || k == "delta_id") {
			continue
		}
		m[k] = kv[i+1]
	}
	return m
}

// toneSpeech is the default reply audio: a 500 Hz tone, per word.
func toneSpeech(words int, per time.Duration, rate int) pcm.Chunk {
	n := pcm.SamplesFor(rate, time.Duration(max(words, 1))*per)
	s := make([]int16, n)
	for i := range s {
		s[i] = int16(6000 * math.Sin(2*math.Pi*500*float64(i)/float64(rate)))
	}
	return pcm.Chunk{Rate: rate, Samples: s}
}

func rms(s []int16) float64 {
	if len(s) == 0 {
		return 0
	}
	var sum float64
	for _, v := range s {
		sum += float64(v) * float64(v)
	}
	return math.Sqrt(sum / float64(len(s)))
}
