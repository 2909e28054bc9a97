// Package elevenpeer is a test double of the ElevenLabs Conversational AI
// (Agents Platform) WebSocket server, wss://api.elevenlabs.io/v1/convai/conversation.
// It lets the ElevenLabs adapter be tested on loopback against a peer that
// behaves as the hosted service does. Its messages follow the shapes of
// prior-art §6.4, ElevenLabs' "client events" documentation and the
// AsyncAPI types ElevenLabs publishes as @elevenlabs/types (0.23.0); the
// official browser SDK, @elevenlabs/client 1.25.0, drives it in
// internal/peers/sdkcheck (TestElevenLabsDoubleWithClientSDK, and
// ...TextOnly under Node).
//
// Like the real service it checks the handshake (the agent_id query
// parameter; the xi-api-key header or a signed URL's conversation_signature
// when the agent is private), answers the "convai" subprotocol the SDKs
// offer, accepts browsers from any origin, requires
// conversation_initiation_client_data as the first message, answers it
// with conversation_initiation_metadata naming the audio formats, speaks
// the first message (FirstMessageDelay later, as the service needs to
// synthesize it), and then holds the conversation: user_audio_chunk audio
// (base64 in the input format) is run through an energy turn detector (the
// server decides when the user has finished; there is no client
// end-of-turn event), a finished user turn gets user_transcript, and the
// reply agent_response (the whole text, with the first audio) and audio
// events.
//
// Event ids: each turn (the first message, each user turn) takes the next
// event_id, and its user_transcript, agent_response, client_tool_call and
// audio events carry it. User speech over the agent's audio is a barge-in:
// an interruption carrying the id of the user turn it starts (so a client
// keeps audio whose id is at least the interruption's, as the SDKs do),
// the audio stops, and an agent_response_correction (with the interrupted
// response's id) gives the words actually said.
//
// It sends ping events and records whether each pong echoes its event_id;
// it sends client_tool_call for scripted tool calls and waits for the
// matching client_tool_result; user_message (and a multimodal_message's
// text) is a user turn; feedback must rate an agent response it sent;
// user_activity and contextual_update are recorded. With
// conversation_config_override.conversation.text_only it replies with
// agent_response alone, no audio. It hangs up by closing the WebSocket
// normally, as the end_call tool does.
//
// What it says is scripted (Config.FirstMessage, Config.Turns) and its
// audio is fixtures.WordTones — one tone per word, 400 ms a word — in
// 100 ms audio events. It is a test double, not an agent.
package elevenpeer

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/internal/peers/peerkit"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// ToolCall is a client tool call a scripted turn makes.
type ToolCall struct {
	Name       string
	Parameters string // JSON object
}

// Turn scripts one user turn and the agent's answer.
type Turn struct {
	// UserTranscript is what the agent "heard", sent as user_transcript.
	// Empty means the turn's audio decoded by fixtures.FakeSTT (user
	// speech made with fixtures.FakeTTS), or "(inaudible)"; for a
	// user_message, its text.
	UserTranscript string
	// ToolCall, when set, is called (client_tool_call) before the reply;
	// the reply waits for the client_tool_result.
	ToolCall *ToolCall
	// Reply is what the agent says; "{heard}" in it is replaced by the
	// user transcript, so that a reply can prove the audio arrived intact.
	Reply string
}

// Fault is a way the server misbehaves right after the metadata.
type Fault int

// The faults.
const (
	// NoFault: the server behaves.
	NoFault Fault = iota
	// Stall: stops reading and writing (so answers no WebSocket ping).
	Stall
	// Abort: drops the connection without a closing handshake.
	Abort
	// OddAudio: every PCM audio event carries one byte too many.
	OddAudio
)

// Config sets the server's behaviour.
type Config struct {
	// AgentID is the agent the agent_id parameter must name (default
	// "agent_test").
	AgentID string
	// APIKey, when set, makes the agent private: the handshake needs the
	// xi-api-key header with this key, or the Signature.
	APIKey string
	// Signature, when set, is accepted as conversation_signature in the
	// query (a signed URL) in place of the key.
	Signature string
	// InputFormat and OutputFormat name the audio formats (default
	// "pcm_16000" both, the service's default).
	InputFormat, OutputFormat string
	// FirstMessage is what the agent says first, unless the client
	// overrides it; empty means the agent waits for the user.
	FirstMessage string
	// FirstMessageDelay is how long after the metadata the first message
	// starts (default 250 ms). The service synthesizes it first, so it
	// does not arrive together with the metadata; @elevenlabs/client
	// listens for events only once the metadata has set the session up
	// (WebSocketConnection.create), and under Node drops a message read
	// in the same chunk as the metadata.
	FirstMessageDelay time.Duration
	// Turns are the scripted user turns; turns past the script are
	// answered "Okay."
	Turns []Turn
	// ReplyDelay is how long the agent "thinks" before replying.
	ReplyDelay time.Duration
	// ChunkDelay is the pause between 100 ms audio events.
	ChunkDelay time.Duration
	// SilenceMs is the silence that ends a user turn (default 250).
	SilenceMs int
	// Threshold is the RMS above which 20 ms of input is speech (default
	// 500).
	Threshold float64
	// PingInterval, when positive, is how often the server sends a ping
	// event; the first goes right after the metadata.
	PingInterval time.Duration
	// HangUpAfter, when positive, closes the WebSocket (normally, reason
	// "end_call") once the HangUpAfter-th reply to the user (the first
	// message does not count) has been sent.
	HangUpAfter int
	// Fault is a misbehaviour to show after the metadata.
	Fault Fault
	// Send holds text frames sent verbatim after the metadata.
	Send []string
	// Listener, when set, is where the double serves instead of a port
	// of 127.0.0.1 (an in-memory listener, adaptertest.MemNet, to run a
	// test on virtual time); the double closes it.
	Listener net.Listener
}

// Conversation is what the server saw of one connection.
type Conversation struct {
	// Init is the conversation_initiation_client_data message, as sent.
	Init json.RawMessage
	// Errors are the protocol violations the server saw.
	Errors []string
	// Audio is the user audio received, decoded to samples at the input
	// rate.
	Audio []int16
	// Chunks counts user_audio_chunk messages.
	Chunks int
	// UserTurns counts the user turns the turn detector (or user_message)
	// ended.
	UserTurns int
	// Texts are the user_message texts.
	Texts []string
	// Pings and Pongs count pings sent and correct pongs received.
	Pings, Pongs int
	// ToolResults are the client_tool_result messages, as sent.
	ToolResults []json.RawMessage
	// Interruptions counts the barge-ins the server detected.
	Interruptions int
	// Replies counts the replies sent whole (not the first message).
	Replies int
	// Activity and ContextualUpdates count those messages.
	Activity, ContextualUpdates int
	// Contexts are the contextual_update texts.
	Contexts []string
	// Feedback are the feedback messages: the like or dislike (or "" for
	// null) and the event_id of the agent response it rates.
	Feedback []Feedback
	// Subprotocol is the WebSocket subprotocol agreed ("convai" when the
	// client offered it, as the official SDKs do).
	Subprotocol string
	// Ended reports that the connection is over.
	Ended bool
}

// Feedback is one feedback message.
type Feedback struct {
	Score   string
	EventID int64
}

// Server is a running ConvAI double.
type Server struct {
	// URL is the endpoint, ws://127.0.0.1:port/v1/convai/conversation
	// (without agent_id).
	URL string

	cfg   Config
	srv   *peerkit.Server
	convs *peerkit.Log[Conversation]
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
	if cfg.AgentID == "" {
		cfg.AgentID = "agent_test"
	}
	if cfg.InputFormat == "" {
		cfg.InputFormat = "pcm_16000"
	}
	if cfg.OutputFormat == "" {
		cfg.OutputFormat = "pcm_16000"
	}
	if cfg.SilenceMs <= 0 {
		cfg.SilenceMs = 250
	}
	if cfg.Threshold <= 0 {
		cfg.Threshold = 500
	}
	if cfg.FirstMessageDelay <= 0 {
		cfg.FirstMessageDelay = 250 * time.Millisecond
	}
	s := &Server{cfg: cfg, convs: peerkit.NewLog(cloneConversation)}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/convai/conversation", s.serve)
	s.srv = peerkit.Listen(cfg.Listener)
	s.URL = s.srv.WSURL("/v1/convai/conversation")
	s.srv.Serve(mux)
	return s
}

// SignedURL returns the URL with agent_id and the conversation_signature,
// as ElevenLabs' get-signed-url API returns it.
func (s *Server) SignedURL() string {
	return s.URL + "?agent_id=" + s.cfg.AgentID + "&conversation_signature=" + s.cfg.Signature
}

// Close stops the server and ends its conversations.
func (s *Server) Close() {
	s.srv.Close()
}

// Conversations returns a copy of what the server saw of each connection.
func (s *Server) Conversations() []Conversation { return s.convs.Snapshot() }

// cloneConversation copies a conversation, sharing no slices with it.
func cloneConversation(c *Conversation) Conversation {
	out := *c
	out.Errors = slices.Clone(c.Errors)
	out.Audio = slices.Clone(c.Audio)
	out.Texts = slices.Clone(c.Texts)
	out.ToolResults = slices.Clone(c.ToolResults)
	out.Contexts = slices.Clone(c.Contexts)
	out.Feedback = slices.Clone(c.Feedback)
	return out
}

// Wait waits until conversation i satisfies cond, or ctx ends.
func (s *Server) Wait(ctx context.Context, i int, cond func(Conversation) bool) (Conversation, error) {
	c, err := s.convs.Wait(ctx, i, cond)
	if err != nil {
		return c, fmt.Errorf("elevenpeer: conversation %d never reached the expected state (errors so far %q): %w", i, c.Errors, err)
	}
	return c, nil
}

func (s *Server) update(c *Conversation, f func(*Conversation)) { s.convs.Update(c, f) }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("agent_id") != s.cfg.AgentID {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"detail":{"status":"agent_not_found","message":"Agent %q not found"}}`, q.Get("agent_id"))
		return
	}
	if s.cfg.APIKey != "" {
		keyOK := r.Header.Get("xi-api-key") == s.cfg.APIKey
		sigOK := s.cfg.Signature != "" && q.Get("conversation_signature") == s.cfg.Signature
		if !keyOK && !sigOK {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"detail":{"status":"invalid_api_key","message":"This agent requires authentication"}}`)
			return
		}
	}
	ws, err := peerkit.Accept(w, r, 4<<20, "convai")
	if err != nil {
		return
	}
	conv := s.convs.Add(func(int) *Conversation { return &Conversation{Subprotocol: ws.Subprotocol()} })
	ctx, cancel := s.srv.CallContext()
	defer cancel()
	p := &peer{s: s, ws: ws, conv: conv, ctx: ctx, pending: map[string]bool{}, replied: map[int64]bool{}}
	p.run()
	s.update(conv, func(c *Conversation) { c.Ended = true })
	ws.CloseNow()
}

// peer is one conversation in progress. Only its run goroutine writes.
type peer struct {
	s    *Server
	ws   *websocket.Conn
	conv *Conversation
	ctx  context.Context

	in, out format
	// eventID numbers the turns, as the service does: each turn (the
	// first message, each user turn) takes the next id, and every event
	// of the turn carries it — user_transcript, agent_response,
	// client_tool_call, audio. A barge-in's interruption carries the id of
	// the turn it starts, so a client keeps audio whose id is at least the
	// last interruption's and drops older audio (@elevenlabs/client
	// VoiceConversation.handleAudio; elevenlabs-python's tests
	// "keeps_audio_with_interruption_event_id" and
	// "discards_audio_older_than_interruption").
	eventID     int64
	userEvent   int64          // the id of the user turn in progress, 0 when none
	replied     map[int64]bool // ids of the agent responses sent, for feedback
	pingID      int64
	pingsOut    map[int64]bool
	userTurn    int
	replies     int
	pending     map[string]bool // tool calls awaiting results
	waitTool    string
	afterTool   string
	afterToolID int64
	hungUp      bool
	textOnly    bool // conversation_config_override.conversation.text_only: replies without audio

	// Turn detection over the input.
	turnAudio      []int16 // the user turn's audio so far
	frame          []int16
	voiced, silent int
	inSpeech       bool
	firstMessage   string

	// The reply being spoken.
	speaking *reply
}

type reply struct {
	first   bool  // the first message, not a reply
	id      int64 // the turn's event_id
	started bool  // agent_response was sent
	words   []string
	audio   []int16 // at the output rate
	sent    int
	due     time.Time
}

type format struct {
	mulaw bool
	rate  int
}

func parseFormat(s string) format {
	enc, r, _ := strings.Cut(s, "_")
	n, _ := strconv.Atoi(r)
	return format{mulaw: enc == "ulaw", rate: n}
}

func (p *peer) errorf(f string, args ...any) {
	msg := fmt.Sprintf(f, args...)
	p.s.update(p.conv, func(c *Conversation) { c.Errors = append(c.Errors, msg) })
}

func (p *peer) write(v any) error { return peerkit.WriteJSON(p.ctx, p.ws, v) }

type clientMsg struct {
	Type       string          `json:"type"`
	UserAudio  *string         `json:"user_audio_chunk"`
	EventID    *int64          `json:"event_id"`
	Text       json.RawMessage `json:"text"`
	ToolCallID string          `json:"tool_call_id"`
	Result     json.RawMessage `json:"result"`
	IsError    *bool           `json:"is_error"`
	Override   json.RawMessage `json:"conversation_config_override"`
	Score      json.RawMessage `json:"score"`
	Files      json.RawMessage `json:"files"`
	File       json.RawMessage `json:"file"`
}

// text returns the message's text field when it is a string.
func (m clientMsg) text() (string, bool) {
	var s string
	if json.Unmarshal(m.Text, &s) != nil {
		return "", false
	}
	return s, true
}

func (p *peer) run() {
	p.in, p.out = parseFormat(p.s.cfg.InputFormat), parseFormat(p.s.cfg.OutputFormat)
	p.pingsOut = map[int64]bool{}
	_, data, err := p.ws.Read(p.ctx)
	if err != nil {
		return
	}
	var first clientMsg
	if json.Unmarshal(data, &first) != nil || first.Type != "conversation_initiation_client_data" {
		p.errorf("first message must be conversation_initiation_client_data, got %.80s", data)
		p.ws.Close(websocket.StatusPolicyViolation, "expected conversation_initiation_client_data")
		return
	}
	p.s.update(p.conv, func(c *Conversation) { c.Init = append(json.RawMessage(nil), data...) })
	var ov struct {
		Agent struct {
			FirstMessage *string `json:"first_message"`
		} `json:"agent"`
		Conversation struct {
			TextOnly bool `json:"text_only"`
		} `json:"conversation"`
	}
	if len(first.Override) > 0 {
		if err := json.Unmarshal(first.Override, &ov); err != nil {
			p.errorf("conversation_config_override is not an object: %v", err)
		}
	}
	p.textOnly = ov.Conversation.TextOnly
	p.firstMessage = p.s.cfg.FirstMessage
	if ov.Agent.FirstMessage != nil {
		p.firstMessage = *ov.Agent.FirstMessage
	}
	if err := p.write(map[string]any{"type": "conversation_initiation_metadata", "conversation_initiation_metadata_event": map[string]any{
		"conversation_id": "conv_test_1", "agent_output_audio_format": p.s.cfg.OutputFormat, "user_input_audio_format": p.s.cfg.InputFormat,
	}}); err != nil {
		return
	}
	for _, f := range p.s.cfg.Send {
		if p.ws.Write(p.ctx, websocket.MessageText, []byte(f)) != nil {
			return
		}
	}
	switch p.s.cfg.Fault {
	case Stall:
		<-p.ctx.Done()
		return
	case Abort:
		p.ws.CloseNow()
		return
	}
	type msg struct {
		data []byte
		err  error
	}
	msgs := make(chan msg, 4096)
	go func() {
		for {
			_, data, err := p.ws.Read(p.ctx)
			select {
			case msgs <- msg{data, err}:
			case <-p.ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	if p.firstMessage != "" {
		p.eventID++
		if p.startReply(p.firstMessage, p.s.cfg.FirstMessageDelay, p.eventID) != nil {
			return
		}
		p.speaking.first = true
	}
	var pingC <-chan time.Time
	if p.s.cfg.PingInterval > 0 {
		t := time.NewTicker(p.s.cfg.PingInterval)
		defer t.Stop()
		pingC = t.C
		if p.ping() != nil {
			return
		}
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for !p.hungUp {
		var tick <-chan time.Time
		if r := p.speaking; r != nil {
			if wait := time.Until(r.due); wait > 0 {
				timer.Reset(wait)
				tick = timer.C
			} else {
				if p.step() != nil {
					return
				}
				select {
				case m := <-msgs:
					if m.err != nil || p.handle(m.data) != nil {
						return
					}
				default:
				}
				continue
			}
		}
		select {
		case <-p.ctx.Done():
			return
		case <-pingC:
			if p.ping() != nil {
				return
			}
		case <-tick:
		case m := <-msgs:
			if m.err != nil || p.handle(m.data) != nil {
				return
			}
		}
	}
}

func (p *peer) ping() error {
	p.pingID++
	p.pingsOut[p.pingID] = true
	p.s.update(p.conv, func(c *Conversation) { c.Pings++ })
	return p.write(map[string]any{"type": "ping", "ping_event": map[string]any{"event_id": p.pingID, "ping_ms": 12}})
}

func (p *peer) handle(data []byte) error {
	var m clientMsg
	if err := json.Unmarshal(data, &m); err != nil {
		p.errorf("message is not JSON: %v", err)
		return nil
	}
	if m.UserAudio != nil {
		if m.Type != "" {
			p.errorf("user_audio_chunk message with a type %q; the chunk is a bare key", m.Type)
		}
		return p.audio(*m.UserAudio)
	}
	switch m.Type {
	case "pong":
		if m.EventID == nil || !p.pingsOut[*m.EventID] {
			p.errorf("pong with event_id %v, which no ping carried", m.EventID)
			return nil
		}
		delete(p.pingsOut, *m.EventID)
		p.s.update(p.conv, func(c *Conversation) { c.Pongs++ })
	case "user_message":
		text, _ := m.text()
		if strings.TrimSpace(text) == "" {
			p.errorf("user_message without text")
			return nil
		}
		return p.userText(text)
	case "multimodal_message":
		// A message with files; the double has no file store, so only
		// its text part is a user turn.
		var t struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		}
		if len(m.Files) > 0 || len(m.File) > 0 {
			p.errorf("multimodal_message with files: this double has no uploaded files to read")
		}
		if json.Unmarshal(m.Text, &t) != nil || t.Type != "user_message" || t.Text == nil || strings.TrimSpace(*t.Text) == "" {
			p.errorf("multimodal_message without a user_message text part: %s", data)
			return nil
		}
		return p.userText(*t.Text)
	case "user_activity":
		p.s.update(p.conv, func(c *Conversation) { c.Activity++ })
	case "contextual_update":
		text, ok := m.text()
		if !ok || text == "" {
			p.errorf("contextual_update without text")
			return nil
		}
		p.s.update(p.conv, func(c *Conversation) {
			c.ContextualUpdates++
			c.Contexts = append(c.Contexts, text)
		})
	case "feedback":
		// {"type":"feedback","score":"like"|"dislike"|null,"event_id":n}
		// rates the agent response n (@elevenlabs/types UserFeedback).
		var score *string
		if err := json.Unmarshal(m.Score, &score); err != nil || score != nil && *score != "like" && *score != "dislike" {
			p.errorf("feedback with score %s; want \"like\", \"dislike\" or null", m.Score)
			return nil
		}
		if m.EventID == nil || !p.replied[*m.EventID] {
			p.errorf("feedback for event_id %v, which no agent response carried", m.EventID)
			return nil
		}
		f := Feedback{EventID: *m.EventID}
		if score != nil {
			f.Score = *score
		}
		p.s.update(p.conv, func(c *Conversation) { c.Feedback = append(c.Feedback, f) })
	case "mcp_tool_approval_result":
		p.errorf("mcp_tool_approval_result for %q: this double made no MCP tool call awaiting approval", m.ToolCallID)
	case "client_tool_result":
		if !p.pending[m.ToolCallID] {
			p.errorf("client_tool_result for tool_call_id %q, which no call made", m.ToolCallID)
			return nil
		}
		var s string
		if json.Unmarshal(m.Result, &s) != nil || m.IsError == nil {
			p.errorf("client_tool_result needs a string result and is_error, got %s", data)
		}
		delete(p.pending, m.ToolCallID)
		p.s.update(p.conv, func(c *Conversation) { c.ToolResults = append(c.ToolResults, append(json.RawMessage(nil), data...)) })
		if m.ToolCallID == p.waitTool {
			p.waitTool = ""
			return p.startReply(p.afterTool, p.s.cfg.ReplyDelay, p.afterToolID)
		}
	case "conversation_initiation_client_data":
		p.errorf("a second conversation_initiation_client_data")
	default:
		p.errorf("unknown client message type %q", m.Type)
	}
	return nil
}

// audio takes one user_audio_chunk and runs the turn detector over it.
func (p *peer) audio(b64 string) error {
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		p.errorf("user_audio_chunk is not base64: %v", err)
		return nil
	}
	var samples []int16
	if p.in.mulaw {
		samples = pcm.DecodeMulaw(nil, b)
	} else if samples, err = pcm.DecodePCM16(nil, b); err != nil {
		p.errorf("user_audio_chunk: %v", err)
		return nil
	}
	p.s.update(p.conv, func(c *Conversation) {
		c.Chunks++
		c.Audio = append(c.Audio, samples...)
	})
	n := p.in.rate / 50
	p.frame = append(p.frame, samples...)
	p.turnAudio = append(p.turnAudio, samples...)
	for len(p.frame) >= n {
		var sum float64
		for _, v := range p.frame[:n] {
			sum += float64(v) * float64(v)
		}
		p.frame = p.frame[n:]
		if math.Sqrt(sum/float64(n)) > p.s.cfg.Threshold {
			p.voiced++
			p.silent = 0
			if p.voiced >= 3 && !p.inSpeech {
				p.inSpeech = true
				p.eventID++
				p.userEvent = p.eventID
				if p.speaking != nil {
					if err := p.interrupt(); err != nil {
						return err
					}
				}
			}
			continue
		}
		if !p.inSpeech {
			p.voiced = 0
			if len(p.turnAudio) > 2*p.in.rate {
				// Keep only the last seconds of silence before speech.
				p.turnAudio = append(p.turnAudio[:0], p.turnAudio[len(p.turnAudio)-p.in.rate:]...)
			}
			continue
		}
		p.silent++
		if p.silent*20 >= p.s.cfg.SilenceMs {
			p.inSpeech, p.voiced, p.silent = false, 0, 0
			heard := hear(p.turnAudio, p.in.rate)
			p.turnAudio = p.turnAudio[:0]
			if err := p.userTurnDone(heard); err != nil {
				return err
			}
		}
	}
	return nil
}

// interrupt stops the reply in progress, as the service does on barge-in:
// an interruption carrying the id of the user turn that interrupts, then
// the correction of the interrupted response to the words said.
func (p *peer) interrupt() error {
	r := p.speaking
	p.speaking = nil
	p.s.update(p.conv, func(c *Conversation) { c.Interruptions++ })
	if err := p.write(map[string]any{"type": "interruption", "interruption_event": map[string]any{"event_id": p.userEvent}}); err != nil {
		return err
	}
	if !r.started {
		return nil // nothing of it was said
	}
	said := min(len(r.words), (r.sent+pcm.SamplesFor(p.out.rate, fixtures.WordDuration)-1)/pcm.SamplesFor(p.out.rate, fixtures.WordDuration))
	return p.write(map[string]any{"type": "agent_response_correction", "agent_response_correction_event": map[string]any{
		"original_agent_response": strings.Join(r.words, " "), "corrected_agent_response": strings.Join(r.words[:said], " ") + "...",
		"event_id": r.id,
	}})
}

// userText takes a text message as a whole user turn.
func (p *peer) userText(text string) error {
	p.s.update(p.conv, func(c *Conversation) { c.Texts = append(c.Texts, text) })
	p.turnAudio = p.turnAudio[:0]
	p.eventID++
	p.userEvent = p.eventID
	return p.userTurnDone(text)
}

// userTurnDone answers a finished user turn, in which the agent heard
// heard. Its events carry the turn's event_id.
func (p *peer) userTurnDone(heard string) error {
	id := p.userEvent
	p.userEvent = 0
	if id == 0 { // a turn ended by silence without a detected start
		p.eventID++
		id = p.eventID
	}
	t := Turn{Reply: "Okay."}
	if p.userTurn < len(p.s.cfg.Turns) {
		t = p.s.cfg.Turns[p.userTurn]
	}
	if t.UserTranscript == "" {
		t.UserTranscript = heard
	}
	t.Reply = strings.ReplaceAll(t.Reply, "{heard}", t.UserTranscript)
	p.userTurn++
	p.s.update(p.conv, func(c *Conversation) { c.UserTurns++ })
	if err := p.write(map[string]any{"type": "user_transcript", "user_transcription_event": map[string]any{"user_transcript": t.UserTranscript, "event_id": id}}); err != nil {
		return err
	}
	if err := p.write(map[string]any{"type": "vad_score", "vad_score_event": map[string]any{"vad_score": 0.02}}); err != nil {
		return err
	}
	if t.ToolCall != nil {
		call := fmt.Sprintf("toolu_%d", p.userTurn)
		p.pending[call] = true
		p.waitTool, p.afterTool, p.afterToolID = call, t.Reply, id
		return p.write(map[string]any{"type": "client_tool_call", "client_tool_call": map[string]any{
			"tool_name": t.ToolCall.Name, "tool_call_id": call, "parameters": json.RawMessage(t.ToolCall.Parameters), "event_id": id,
		}})
	}
	return p.startReply(t.Reply, p.s.cfg.ReplyDelay, id)
}

// startReply schedules speaking text as the response of turn id, after
// delay: agent_response comes with the first audio, as the service sends
// it.
func (p *peer) startReply(text string, delay time.Duration, id int64) error {
	p.speaking = &reply{id: id, words: strings.Fields(text), audio: fixtures.WordTones(text, p.out.rate).Samples, due: time.Now().Add(delay)}
	return nil
}

// step sends the next audio event of the reply (the first preceded by
// agent_response).
func (p *peer) step() error {
	r := p.speaking
	if !r.started {
		r.started = true
		p.replied[r.id] = true
		if err := p.write(map[string]any{"type": "agent_response", "agent_response_event": map[string]any{"agent_response": strings.Join(r.words, " "), "event_id": r.id}}); err != nil {
			return err
		}
		if p.textOnly {
			r.sent = len(r.audio)
			return p.replyDone(r)
		}
	}
	n := min(pcm.SamplesFor(p.out.rate, 100*time.Millisecond), len(r.audio)-r.sent)
	var b []byte
	if p.out.mulaw {
		b = pcm.EncodeMulaw(nil, r.audio[r.sent:r.sent+n])
	} else {
		b = pcm.EncodePCM16(nil, r.audio[r.sent:r.sent+n])
		if p.s.cfg.Fault == OddAudio {
			b = append(b, 0)
		}
	}
	r.sent += n
	if err := p.write(map[string]any{"type": "audio", "audio_event": map[string]any{"audio_base_64": base64.StdEncoding.EncodeToString(b), "event_id": r.id}}); err != nil {
		return err
	}
	r.due = time.Now().Add(p.s.cfg.ChunkDelay)
	if r.sent < len(r.audio) {
		return nil
	}
	return p.replyDone(r)
}

// replyDone ends reply r, and hangs up after the HangUpAfter-th.
func (p *peer) replyDone(r *reply) error {
	p.speaking = nil
	if r.first {
		return nil
	}
	p.replies++
	p.s.update(p.conv, func(c *Conversation) { c.Replies++ })
	if p.s.cfg.HangUpAfter > 0 && p.replies >= p.s.cfg.HangUpAfter {
		p.hungUp = true
		return p.ws.Close(websocket.StatusNormalClosure, "end_call")
	}
	return nil
}

// hear decodes user audio made by fixtures.FakeTTS, the double's stand-in
// for speech recognition.
func hear(samples []int16, rate int) string {
	tr, err := fixtures.FakeSTT().Transcribe(context.Background(), voicetest.TranscriptionRequest{Audio: pcm.Chunk{Rate: rate, Samples: samples}})
	if err != nil || tr.Text == "" {
		return "(inaudible)"
	}
	return tr.Text
}
