package elevenlabs

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	neturl "net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// DefaultURL is ElevenLabs' Conversational AI (Agents Platform)
// WebSocket endpoint.
const DefaultURL = "wss://api.elevenlabs.io/v1/convai/conversation"

// DefaultEndSilence is the silence Agent.EndUtterance
// sends by default: about the 16000 zero bytes at 24 kHz that langwatch
// found the hosted service needs to close a scripted turn (prior-art §6.4).
const DefaultEndSilence = 330 * time.Millisecond

const elevenAdapter = "elevenlabs"

// Agent reaches an ElevenLabs Conversational AI agent (Agents
// Platform) over its WebSocket. voicetest plays the client: it sends
// conversation_initiation_client_data (with the overrides and dynamic
// variables set here), waits for conversation_initiation_metadata, which
// names the audio formats, streams the user's speech as
// {"user_audio_chunk": base64} in the agent's input format (PCM16 at the
// rate it names, or µ-law 8 kHz), answers every ping with a pong carrying
// its event_id, and sends user_message for text turns.
//
// What the adapter does with the agent's events:
//
//   - audio: decoded from the output format named in the metadata,
//     resampled to Session.Rate, AgentAudio. Audio whose event_id is
//     below the last interruption's (late audio of a cut response) is
//     dropped, as ElevenLabs' own clients do; the reply to the
//     interrupting turn shares the interruption's id and plays.
//   - agent_response: AgentTranscript with Final set (ElevenLabs sends the
//     whole response text, not deltas).
//   - agent_response_correction (the text actually spoken before a
//     barge-in): AgentData named "agent_response_correction" with
//     {"original":…, "corrected":…}.
//   - user_transcript: UserTranscript, Final.
//   - interruption: AgentInterrupted.
//   - client_tool_call: AgentToolCall; with OnToolCall set the adapter
//     answers with client_tool_result and reports AgentToolResult.
//     agent_tool_response (a server-side tool ran): AgentToolResult.
//   - ping: answered with pong; no event.
//   - the agent closing the WebSocket normally (the end_call tool):
//     AgentHangUp.
//   - vad_score and the other documented events are consumed silently; an
//     unknown event type is logged once and skipped. Frames that are not
//     JSON, lack "type", or carry bad audio are *FrameError.
//
// Honest capabilities: the protocol has no client end-of-turn event (the
// agent detects the end of speech itself, NativeVAD; EndUtterance only
// sends EndSilence of silence), no client cancel (barge-in is overlapping
// audio, which the agent answers with an interruption event), no marker of
// the end of the agent's turn (the runner waits for tail silence), and no
// DTMF event.
//
// agent_response carries the whole reply when the agent starts to speak,
// ahead of its audio, so the adapter declares Capabilities.TranscriptAhead:
// voicetest.AfterWords(n) then waits until n words have been heard,
// estimated from the audio played. The reply's length is unknown while its
// audio streams in (the protocol marks no end of turn), so the words are
// spread over no less than their length at Config.WordsPerMinute: set that
// to the agent's speaking rate for a barge-in at the nth word (a faster
// agent is interrupted a little late), or use voicetest.After(d) for a
// point in time.
//
// The API key travels only in the xi-api-key header, and a signed URL's
// signature is redacted from captures, logs and errors.
//
// Set the fields before the first Connect; an Agent may then serve
// parallel scenarios.
type Agent struct {
	// URL is the endpoint (ws:// or wss://), default DefaultURL;
	// AgentID is added as the agent_id query parameter.
	URL string
	// AgentID is the agent to talk to. Required unless URL or SignedURL
	// already names it.
	AgentID string
	// SignedURL, when set, is the full URL from ElevenLabs'
	// get-signed-url API (for private agents); it replaces URL and AgentID.
	SignedURL string
	// APIKey is sent as the xi-api-key header. Empty means the
	// ELEVENLABS_API_KEY environment variable (not used with SignedURL);
	// public agents need none.
	APIKey string
	// Prompt overrides the agent's system prompt
	// (conversation_config_override.agent.prompt.prompt).
	Prompt string
	// FirstMessage overrides what the agent says first.
	FirstMessage string
	// Language overrides the agent's language (e.g. "en").
	Language string
	// DynamicVariables fill the agent's {{variables}}.
	DynamicVariables map[string]any
	// EndSilence is the silence EndUtterance sends after the user's speech
	// so that the agent's turn detection hears the pause. Zero means
	// DefaultEndSilence; negative sends none.
	EndSilence time.Duration
	// OnToolCall, when set, answers the agent's client tool calls (see
	// ToolHandler). Without it calls are reported and left unanswered.
	OnToolCall wire.ToolHandler
	// WSOptions are the transport settings. DialTimeout also bounds the
	// wait for conversation_initiation_metadata.
	wire.WSOptions
}

// New returns an agent that talks to the ElevenLabs Conversational AI
// agent agentID at DefaultURL. See Agent for the fields
// that tune it.
func New(agentID string) *Agent { return &Agent{AgentID: agentID} }

// Conn is the Conn an Agent returns, with the ConvAI
// client messages that voicetest.Conn has no method for. Reach it with a
// type assertion, e.g. in a voicetest.Check step that holds the Conn, or
// when driving the Conn directly:
//
//	conn.(elevenlabs.Conn).SendContextualUpdate(ctx, "The caller is on the VIP list.")
type Conn interface {
	voicetest.Conn
	// SendContextualUpdate sends contextual_update: information the agent
	// takes into account without answering it.
	SendContextualUpdate(ctx context.Context, text string) error
	// SendUserActivity sends user_activity, which tells the agent that the
	// user is active (typing, say), so that it does not take the turn.
	SendUserActivity(ctx context.Context) error
	// SendEvent sends any client message as it is: a JSON object, for
	// messages this adapter has no method for. It is captured like every
	// other frame.
	SendEvent(ctx context.Context, event json.RawMessage) error
}

var _ Conn = (*elevenConn)(nil)

// elevenFormat is an audio format named in the initiation metadata.
type elevenFormat struct {
	name  string // as ElevenLabs names it, e.g. "pcm_16000"
	mulaw bool
	rate  int
}

// elevenFormats are the audio formats the Agents Platform documents for
// agent_output_audio_format and user_input_audio_format. Only these are
// accepted: the rate of the agent's audio sets how much it is resampled,
// and an agent that named "pcm_1" would have every audio event blown up
// 24000 times.
var elevenFormats = [...]string{"pcm_8000", "pcm_16000", "pcm_22050", "pcm_24000", "pcm_44100", "pcm_48000", "ulaw_8000"}

// parseElevenFormat parses the format named in field of the initiation
// metadata: one of elevenFormats, else a *wire.FormatError.
func parseElevenFormat(field, s string) (elevenFormat, error) {
	known := false
	for _, f := range elevenFormats {
		known = known || f == s
	}
	if !known {
		return elevenFormat{}, &wire.FormatError{What: field, Value: s, Allowed: elevenFormats[:],
			Hint: "the formats ElevenLabs documents; set the agent's audio formats to one of them"}
	}
	enc, rate, _ := strings.Cut(s, "_")
	n, _ := strconv.Atoi(rate)
	return elevenFormat{name: s, mulaw: enc == "ulaw", rate: n}, nil
}

func (f elevenFormat) audioFormat() voicetest.AudioFormat {
	if f.mulaw {
		return voicetest.AudioFormat{Encoding: "mulaw", Rate: f.rate}
	}
	return voicetest.AudioFormat{Encoding: "pcm16", Rate: f.rate}
}

// Client messages.
type (
	elevenInit struct {
		Type     string         `json:"type"`
		Override elevenOverride `json:"conversation_config_override"`
		Vars     map[string]any `json:"dynamic_variables,omitempty"`
	}
	elevenOverride struct {
		Agent *elevenAgentOverride `json:"agent,omitempty"`
	}
	elevenAgentOverride struct {
		Prompt       *elevenPrompt `json:"prompt,omitempty"`
		FirstMessage string        `json:"first_message,omitempty"`
		Language     string        `json:"language,omitempty"`
	}
	elevenPrompt struct {
		Prompt string `json:"prompt"`
	}
	elevenPong struct {
		Type    string `json:"type"`
		EventID int64  `json:"event_id"`
	}
	elevenUserMessage struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	elevenToolResult struct {
		Type       string `json:"type"`
		ToolCallID string `json:"tool_call_id"`
		Result     string `json:"result"`
		IsError    bool   `json:"is_error"`
	}
)

// elevenEvent is any server event; the payload is in <type>_event (or, for
// client_tool_call and agent_tool_response, under the type's own name).
type elevenEvent struct {
	Type     string `json:"type"`
	Metadata *struct {
		ConversationID string `json:"conversation_id"`
		OutputFormat   string `json:"agent_output_audio_format"`
		InputFormat    string `json:"user_input_audio_format"`
	} `json:"conversation_initiation_metadata_event"`
	Audio *struct {
		Audio   *string `json:"audio_base_64"`
		EventID int64   `json:"event_id"`
	} `json:"audio_event"`
	AgentResponse *struct {
		Text *string `json:"agent_response"`
	} `json:"agent_response_event"`
	Correction *struct {
		Original  string `json:"original_agent_response"`
		Corrected string `json:"corrected_agent_response"`
	} `json:"agent_response_correction_event"`
	UserTranscript *struct {
		Text *string `json:"user_transcript"`
	} `json:"user_transcription_event"`
	Interruption *struct {
		EventID int64 `json:"event_id"`
	} `json:"interruption_event"`
	Ping *struct {
		EventID *int64 `json:"event_id"`
		PingMs  int64  `json:"ping_ms"`
	} `json:"ping_event"`
	EventID  *int64 `json:"event_id"` // ping's id at top level, in older servers
	ToolCall *struct {
		Name       string          `json:"tool_name"`
		ID         string          `json:"tool_call_id"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"client_tool_call"`
	ToolResponse *struct {
		Name    string `json:"tool_name"`
		ID      string `json:"tool_call_id"`
		Type    string `json:"tool_type"`
		IsError bool   `json:"is_error"`
	} `json:"agent_tool_response"`
}

// elevenQuiet reports whether typ is a documented event the adapter
// consumes silently.
func elevenQuiet(typ string) bool {
	switch typ {
	case "vad_score", "internal_tentative_agent_response", "agent_chat_response_part",
		"agent_response_metadata", "asr_initiation_metadata", "mcp_tool_call",
		"mcp_connection_status", "internal_turn_probability", "internal_vad_score":
		return true
	}
	return false
}

// elevenConn is one ConvAI conversation.
type elevenConn struct {
	ws         *wire.Conn
	rate       int
	endSilence time.Duration
	onTool     wire.ToolHandler
	ready      chan struct{} // closed when the metadata arrived
	readyOnce  sync.Once

	// Set by the reader goroutine before ready is closed; read-only after.
	in, out        elevenFormat
	conversationID string
	metaErr        error

	// Send side, guarded by sendMu.
	sendMu  sync.Mutex
	up      wire.Upstream // the user's audio, session rate to wire rate
	wire    []byte
	msg     []byte
	silence []int16
	// silenceMsg is the user_audio_chunk of c.silence, the same bytes at
	// every EndUtterance: built once.
	silenceMsg []byte

	// The output resampler, used by the reader goroutine and flushDown.
	downMu     sync.Mutex
	down       *pcm.Resampler
	downHeld   bool // down holds samples that a flush would release
	flushTimer *time.Timer

	// Reader goroutine only.
	raw           []byte
	samples       []int16
	lastInterrupt int64
	unknown       map[string]bool
}

// Connect opens the ConvAI WebSocket, sends the initiation data and waits
// for the initiation metadata.
func (a *Agent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	if s.Rate <= 0 {
		return nil, fmt.Errorf("adapters: %s: session rate %d: %w", elevenAdapter, s.Rate, pcm.ErrBadRate)
	}
	url, err := a.dialURL()
	if err != nil {
		return nil, err
	}
	init := elevenInit{Type: "conversation_initiation_client_data", Vars: a.DynamicVariables}
	if a.Prompt != "" || a.FirstMessage != "" || a.Language != "" {
		ov := &elevenAgentOverride{FirstMessage: a.FirstMessage, Language: a.Language}
		if a.Prompt != "" {
			ov.Prompt = &elevenPrompt{Prompt: a.Prompt}
		}
		init.Override.Agent = ov
	}
	initMsg, err := json.Marshal(init)
	if err != nil {
		return nil, fmt.Errorf("adapters: %s: encoding the initiation data (DynamicVariables must be JSON values): %w", elevenAdapter, err)
	}
	opts := a.WSOptions
	opts.Header = opts.Header.Clone()
	if opts.Header == nil {
		opts.Header = http.Header{}
	}
	key := a.APIKey
	if key == "" && a.SignedURL == "" {
		key = os.Getenv("ELEVENLABS_API_KEY")
	}
	if key != "" {
		opts.Header.Set("xi-api-key", key)
	}
	silence := a.EndSilence
	switch {
	case silence == 0:
		silence = DefaultEndSilence
	case silence < 0:
		silence = 0
	}
	c := &elevenConn{rate: s.Rate, endSilence: silence, onTool: a.OnToolCall, ready: make(chan struct{}), unknown: map[string]bool{}}
	c.flushTimer = time.AfterFunc(time.Hour, c.flushDown)
	c.flushTimer.Stop()
	ws, err := wire.Dial(ctx, elevenAdapter, url, opts, s, nil)
	if err != nil {
		return nil, err
	}
	c.ws = ws
	ws.OnEnd(c.flushDown)
	ws.Start(c.decode)
	fail := func(err error) (voicetest.Conn, error) {
		c.Close()
		return nil, err
	}
	if err := ws.Write(ctx, websocket.MessageText, initMsg); err != nil {
		return fail(fmt.Errorf("adapters: %s: sending the initiation data: %w", elevenAdapter, err))
	}
	if err := c.awaitMetadata(ctx, opts.Resolved().DialTimeout); err != nil {
		return fail(err)
	}
	ws.Logf("%s: conversation %s started at %s (user audio %s, agent audio %s)", elevenAdapter, c.conversationID, wire.RedactURL(url), c.in.name, c.out.name)
	return c, nil
}

// dialURL returns the URL to dial.
func (a *Agent) dialURL() (string, error) {
	raw := a.SignedURL
	if raw == "" {
		raw = a.URL
		if raw == "" {
			raw = DefaultURL
		}
	}
	u, err := neturl.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("adapters: %s: URL %q: %w", elevenAdapter, wire.RedactURL(raw), err)
	}
	if u.Scheme != "ws" && u.Scheme != "wss" {
		return "", fmt.Errorf("adapters: %s: URL %q: scheme %q; use ws:// or wss://", elevenAdapter, wire.RedactURL(raw), u.Scheme)
	}
	if a.SignedURL != "" {
		return raw, nil
	}
	q := u.Query()
	switch {
	case a.AgentID != "":
		q.Set("agent_id", a.AgentID)
		u.RawQuery = q.Encode()
	case q.Get("agent_id") == "":
		return "", fmt.Errorf("adapters: %s: no agent: set elevenlabs.Agent.AgentID (or SignedURL for a private agent)", elevenAdapter)
	}
	return u.String(), nil
}

// awaitMetadata waits for conversation_initiation_metadata.
func (c *elevenConn) awaitMetadata(ctx context.Context, limit time.Duration) error {
	t := time.NewTimer(limit)
	defer t.Stop()
	for {
		select {
		case <-c.ready:
			return c.setupAudio()
		default:
		}
		ws := c.ws
		qerr, term := ws.Failure()
		if qerr != nil || term != nil {
			select {
			case <-c.ready:
				// The metadata arrived while the queue was read: what
				// followed it belongs to the conversation (Recv reports it).
				return c.setupAudio()
			default:
			}
		}
		switch {
		case qerr != nil:
			return fmt.Errorf("adapters: %s: starting the conversation: %w", elevenAdapter, qerr)
		case term != nil:
			return fmt.Errorf("adapters: %s: starting the conversation: %w", elevenAdapter, term)
		}
		select {
		case <-c.ready:
		case <-ws.Notify():
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return &voicetest.TimeoutError{Phase: voicetest.PhaseConnect, Timeout: limit,
				Hint: "the ElevenLabs server accepted the WebSocket but sent no conversation_initiation_metadata; check the agent ID and key, or raise WSOptions.DialTimeout"}
		}
	}
}

// setupAudio builds the resamplers once the formats are known.
func (c *elevenConn) setupAudio() error {
	if c.metaErr != nil {
		return fmt.Errorf("adapters: %s: %w", elevenAdapter, c.metaErr)
	}
	var err error
	if c.in.rate != c.rate {
		if c.up.Resampler, err = pcm.NewResampler(c.rate, c.in.rate); err != nil {
			return fmt.Errorf("adapters: %s: %w", elevenAdapter, err)
		}
	}
	c.silence = make([]int16, pcm.SamplesFor(c.in.rate, 100*time.Millisecond))
	return nil
}

// Capabilities reports what the ElevenLabs adapter supports.
func (c *elevenConn) Capabilities() voicetest.Capabilities {
	return voicetest.Capabilities{
		Adapter: elevenAdapter, Audio: true, Text: true,
		InputFormat: c.in.audioFormat(), OutputFormat: c.out.audioFormat(),
		StreamingTranscripts: true, TranscriptAhead: true, NativeVAD: true, ToolEvents: true,
	}
}

// sendChunkLocked sends samples at the input rate as one user_audio_chunk.
// Call with sendMu held.
func (c *elevenConn) sendChunkLocked(ctx context.Context, samples []int16) error {
	if len(samples) == 0 {
		return nil
	}
	c.msg = c.appendChunk(c.msg[:0], samples)
	return c.ws.WriteAudio(ctx, websocket.MessageText, c.msg)
}

// appendChunk appends the user_audio_chunk message of samples (at the
// input rate) to dst. Call with sendMu held.
func (c *elevenConn) appendChunk(dst []byte, samples []int16) []byte {
	if c.in.mulaw {
		c.wire = pcm.EncodeMulaw(c.wire[:0], samples)
	} else {
		c.wire = wire.AppendPCM16(c.wire[:0], samples)
	}
	b := append(dst, `{"user_audio_chunk":"`...)
	b = base64.StdEncoding.AppendEncode(b, c.wire)
	return append(b, `"}`...)
}

// SendAudio streams user speech as user_audio_chunk messages.
func (c *elevenConn) SendAudio(ctx context.Context, ch pcm.Chunk) error {
	if err := wire.CheckSendRate(elevenAdapter, ch.Rate, c.rate); err != nil {
		return err
	}
	if err := c.ws.Sendable(ctx); err != nil {
		return err
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	return c.sendChunkLocked(ctx, c.up.Process(ch.Samples))
}

// EndUtterance sends the resampler's tail and EndSilence of silence: the
// protocol has no end-of-turn message, and the agent detects the pause.
func (c *elevenConn) EndUtterance(ctx context.Context) error {
	if err := c.ws.Sendable(ctx); err != nil {
		return err
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if err := c.sendChunkLocked(ctx, c.up.Flush()); err != nil {
		return err
	}
	left := pcm.SamplesFor(c.in.rate, c.endSilence)
	for left > 0 {
		n := min(left, len(c.silence))
		var err error
		if n == len(c.silence) {
			if c.silenceMsg == nil {
				c.silenceMsg = c.appendChunk(nil, c.silence)
			}
			err = c.ws.WriteAudio(ctx, websocket.MessageText, c.silenceMsg)
		} else {
			err = c.sendChunkLocked(ctx, c.silence[:n])
		}
		if err != nil {
			return err
		}
		left -= n
	}
	return nil
}

// SendText sends a user_message, a text turn that bypasses speech
// recognition.
func (c *elevenConn) SendText(ctx context.Context, text string) error {
	if strings.TrimSpace(text) == "" {
		return fmt.Errorf("adapters: %s: SendText with empty text", elevenAdapter)
	}
	b, err := json.Marshal(elevenUserMessage{Type: "user_message", Text: text})
	if err != nil {
		return fmt.Errorf("adapters: %s: encoding user_message: %w", elevenAdapter, err)
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	return c.ws.Write(ctx, websocket.MessageText, b)
}

// SendContextualUpdate sends a contextual_update message.
func (c *elevenConn) SendContextualUpdate(ctx context.Context, text string) error {
	if strings.TrimSpace(text) == "" {
		return fmt.Errorf("adapters: %s: SendContextualUpdate with empty text", elevenAdapter)
	}
	b, err := json.Marshal(elevenUserMessage{Type: "contextual_update", Text: text})
	if err != nil {
		return fmt.Errorf("adapters: %s: encoding contextual_update: %w", elevenAdapter, err)
	}
	return c.SendEvent(ctx, b)
}

// SendUserActivity sends a user_activity message.
func (c *elevenConn) SendUserActivity(ctx context.Context) error {
	return c.SendEvent(ctx, json.RawMessage(`{"type":"user_activity"}`))
}

// SendEvent sends a client message as it is.
func (c *elevenConn) SendEvent(ctx context.Context, event json.RawMessage) error {
	if err := wire.CheckEvent(event); err != nil {
		return fmt.Errorf("adapters: %s: SendEvent: %w", elevenAdapter, err)
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	return c.ws.Write(ctx, websocket.MessageText, event)
}

// SendDTMF is unsupported: ConvAI has no DTMF event.
func (c *elevenConn) SendDTMF(context.Context, string) error {
	return &voicetest.UnsupportedError{Adapter: elevenAdapter, Capability: "DTMF events",
		Alternative: "the ConvAI WebSocket has no key-press event; voicetest.DTMF sends the keys as in-band tones in the user's audio"}
}

// Interrupt is unsupported: ConvAI has no client cancel.
func (c *elevenConn) Interrupt(context.Context) error {
	return &voicetest.UnsupportedError{Adapter: elevenAdapter, Capability: "native interrupt",
		Alternative: "ConvAI has no client cancel; barge in by sending user audio while the agent speaks (it answers with an interruption event)"}
}

// WireStats reports what crossed the WebSocket: frames each way, the
// agent's interruption events (clears) and the audio of interrupted
// responses the adapter dropped.
func (c *elevenConn) WireStats() voicetest.WireStats { return c.ws.Stats().Snapshot("elevenlabs") }

// Recv returns the agent's next event.
func (c *elevenConn) Recv(ctx context.Context) (voicetest.AgentEvent, error) {
	return c.ws.Recv(ctx)
}

// Close closes the WebSocket, ending the conversation.
func (c *elevenConn) Close() error {
	err := c.ws.Close(nil)
	c.flushTimer.Stop()
	return err
}

// decode turns one server event into agent events. It runs on the reader
// goroutine.
func (c *elevenConn) decode(typ websocket.MessageType, data []byte) ([]voicetest.AgentEvent, error) {
	if typ != websocket.MessageText {
		return nil, fmt.Errorf("got a binary frame of %d bytes; ConvAI events are JSON text frames", len(data))
	}
	var ev elevenEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, fmt.Errorf("not a JSON ConvAI event: %w", err)
	}
	missing := func(field string) error { return fmt.Errorf("%s event without %s", ev.Type, field) }
	switch ev.Type {
	case "":
		return nil, errors.New(`no "type" field; ConvAI events always name their type`)
	case "conversation_initiation_metadata":
		m := ev.Metadata
		if m == nil {
			return nil, missing("conversation_initiation_metadata_event")
		}
		var err error
		select {
		case <-c.ready:
			return nil, errors.New("a second conversation_initiation_metadata; the audio formats cannot change mid-conversation")
		default:
		}
		c.conversationID = m.ConversationID
		if c.in, err = parseElevenFormat("user_input_audio_format", m.InputFormat); err != nil {
			c.metaErr = err
		} else if c.out, err = parseElevenFormat("agent_output_audio_format", m.OutputFormat); err != nil {
			c.metaErr = err
		} else if c.out.rate != c.rate {
			if c.down, err = pcm.NewResampler(c.out.rate, c.rate); err != nil {
				c.metaErr = err
			}
		}
		c.readyOnce.Do(func() { close(c.ready) })
		return nil, nil
	case "audio":
		return c.audio(ev)
	case "agent_response":
		if ev.AgentResponse == nil || ev.AgentResponse.Text == nil {
			return nil, missing("agent_response_event.agent_response")
		}
		return []voicetest.AgentEvent{{Kind: voicetest.AgentTranscript, Text: *ev.AgentResponse.Text, Final: true}}, nil
	case "agent_response_correction":
		if ev.Correction == nil {
			return nil, missing("agent_response_correction_event")
		}
		d, _ := json.Marshal(map[string]string{"original": ev.Correction.Original, "corrected": ev.Correction.Corrected})
		return []voicetest.AgentEvent{{Kind: voicetest.AgentData, Text: "agent_response_correction", Data: d}}, nil
	case "user_transcript":
		if ev.UserTranscript == nil || ev.UserTranscript.Text == nil {
			return nil, missing("user_transcription_event.user_transcript")
		}
		return []voicetest.AgentEvent{{Kind: voicetest.UserTranscript, Text: *ev.UserTranscript.Text, Final: true}}, nil
	case "interruption":
		c.ws.Stats().Clear()
		if ev.Interruption != nil {
			c.lastInterrupt = max(c.lastInterrupt, ev.Interruption.EventID)
		}
		if c.down != nil {
			c.downMu.Lock()
			c.down.Reset()
			c.downHeld = false
			c.downMu.Unlock()
		}
		return []voicetest.AgentEvent{{Kind: voicetest.AgentInterrupted, Text: "interruption"}}, nil
	case "ping":
		id := ev.EventID
		if ev.Ping != nil && ev.Ping.EventID != nil {
			id = ev.Ping.EventID
		}
		if id == nil {
			return nil, missing("ping_event.event_id (the pong must echo it)")
		}
		b, _ := json.Marshal(elevenPong{Type: "pong", EventID: *id})
		if err := c.ws.Write(c.ws.Context(), websocket.MessageText, b); err != nil {
			c.ws.Logf("%s: answering ping %d: %v", elevenAdapter, *id, err)
		}
		return nil, nil
	case "client_tool_call":
		tc := ev.ToolCall
		if tc == nil || tc.Name == "" || tc.ID == "" {
			return nil, missing("client_tool_call.tool_name and tool_call_id")
		}
		args := tc.Parameters
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage(`{}`)
		}
		call := voicetest.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: append(json.RawMessage(nil), args...)}
		if c.onTool != nil {
			c.ws.Go(func() { c.answerTool(call) })
		}
		return []voicetest.AgentEvent{{Kind: voicetest.AgentToolCall, Tool: &call}}, nil
	case "agent_tool_response":
		tr := ev.ToolResponse
		if tr == nil || tr.Name == "" {
			return nil, missing("agent_tool_response.tool_name")
		}
		res, _ := json.Marshal(map[string]string{"tool_type": tr.Type})
		return []voicetest.AgentEvent{{Kind: voicetest.AgentToolResult, Tool: &voicetest.ToolCall{ID: tr.ID, Name: tr.Name, Result: res, IsError: tr.IsError}}}, nil
	}
	if elevenQuiet(ev.Type) {
		return nil, nil
	}
	if wire.LogOnce(c.unknown, ev.Type) {
		c.ws.Logf("%s: ignoring server event %q, which this adapter does not know (logged once)", elevenAdapter, ev.Type)
	}
	return nil, nil
}

// audio decodes one audio event.
func (c *elevenConn) audio(ev elevenEvent) ([]voicetest.AgentEvent, error) {
	a := ev.Audio
	if a == nil || a.Audio == nil || *a.Audio == "" {
		return nil, errors.New("audio event without audio_event.audio_base_64")
	}
	select {
	case <-c.ready:
	default:
		return nil, errors.New("audio before conversation_initiation_metadata named its format")
	}
	if a.EventID != 0 && a.EventID < c.lastInterrupt {
		// Audio of the response the interruption cut. The interruption
		// carries the id of the user turn that interrupts, which the
		// reply to that turn shares: ElevenLabs' clients keep audio whose
		// id is at least the interruption's (@elevenlabs/client
		// VoiceConversation.handleAudio, elevenlabs-python).
		c.ws.Stats().Dropped(1)
		return nil, nil
	}
	var err error
	c.raw, err = base64.StdEncoding.AppendDecode(c.raw[:0], []byte(*a.Audio))
	if err != nil {
		return nil, fmt.Errorf("audio_event.audio_base_64 is not base64: %w", err)
	}
	if c.out.mulaw {
		c.samples = pcm.DecodeMulaw(c.samples[:0], c.raw)
	} else if c.samples, err = pcm.DecodePCM16(c.samples[:0], c.raw); err != nil {
		return nil, fmt.Errorf("audio event %d: %d bytes of %s: %w (PCM16 has 2 bytes a sample)", a.EventID, len(c.raw), c.out.name, err)
	}
	if c.down == nil {
		return []voicetest.AgentEvent{wire.AudioEvent(c.rate, c.samples)}, nil
	}
	c.downMu.Lock()
	out := c.down.Process(make([]int16, 0, c.down.MaxOut(len(c.samples))), c.samples)
	c.downHeld = true
	c.downMu.Unlock()
	// The protocol marks no end of speech: release the resampler's
	// held-back tail once no audio has followed for a moment.
	c.flushTimer.Reset(elevenFlushAfter)
	if len(out) == 0 {
		return nil, nil
	}
	return []voicetest.AgentEvent{{Kind: voicetest.AgentAudio, Audio: pcm.Chunk{Rate: c.rate, Samples: out}}}, nil
}

// elevenFlushAfter is how long after the last audio event the resampler's
// tail (a few milliseconds of audio) is released. A gap this long in the
// middle of an utterance costs only a faint seam; the runner waits far
// longer (Timeouts.TailSilence) before it ends a turn.
const elevenFlushAfter = 100 * time.Millisecond

// flushDown releases the output resampler's tail, at the end of a stretch
// of agent audio.
func (c *elevenConn) flushDown() {
	c.downMu.Lock()
	if c.down == nil || !c.downHeld {
		c.downMu.Unlock()
		return
	}
	c.downHeld = false
	tail := c.down.Flush(nil)
	c.down.Reset()
	c.downMu.Unlock()
	if len(tail) > 0 {
		c.ws.PushEvent(voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: pcm.Chunk{Rate: c.rate, Samples: tail}})
	}
}

// answerTool runs OnToolCall for one client tool call and sends the
// result. It runs on its own goroutine, which Close waits for.
func (c *elevenConn) answerTool(call voicetest.ToolCall) {
	res, out := wire.RunTool(c.ws.Context(), c.onTool, call)
	c.ws.PushEvent(voicetest.AgentEvent{Kind: voicetest.AgentToolResult, Tool: &res})
	b, err := json.Marshal(elevenToolResult{Type: "client_tool_result", ToolCallID: call.ID, Result: out, IsError: res.IsError})
	if err == nil {
		c.sendMu.Lock()
		err = c.ws.Write(c.ws.Context(), websocket.MessageText, b)
		c.sendMu.Unlock()
	}
	if err != nil {
		c.ws.Logf("%s: sending the result of %s: %v", elevenAdapter, call.Name, err)
	}
}
