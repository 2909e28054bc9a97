package realtime

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	neturl "net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// Defaults of Agent.
const (
	// DefaultURL is OpenAI's Realtime WebSocket endpoint.
	DefaultURL = "wss://api.openai.com/v1/realtime"
	// DefaultModel is the model asked for when Agent.Model
	// is empty.
	DefaultModel = "gpt-realtime"
)

// realtimeRate is the rate of Realtime's audio/pcm (beta "pcm16") format.
const realtimeRate = pcm.Rate24k

// realtimeAdapter names the adapter in errors and capabilities.
const realtimeAdapter = "openai-realtime"

// Agent reaches an agent that speaks the OpenAI Realtime protocol
// over WebSocket: OpenAI's own speech-to-speech models, or any server that
// implements the protocol. voicetest plays the client: it configures the
// session (session.update), streams the user's speech as
// input_audio_buffer.append events of base64 PCM16 at 24 kHz (resampled
// from Session.Rate), and turns the server's events into agent events.
//
// Both protocol generations are understood: the GA names
// (response.output_audio.delta, response.output_audio_transcript.delta, …)
// and the older beta ones (response.audio.delta,
// response.audio_transcript.delta, …). Beta selects the beta session shape
// and header.
//
// What the adapter does with the server's events:
//
//   - audio deltas: decoded, resampled to Session.Rate, AgentAudio.
//   - audio transcript (and text) deltas: AgentTranscript; their "done"
//     event gives the whole transcript with Final set.
//   - conversation.item.input_audio_transcription.delta / .completed:
//     UserTranscript (with InputTranscription set); .failed: AgentLog.
//   - response.function_call_arguments.done (or a function_call output
//     item): AgentToolCall. With OnToolCall set, the adapter answers the
//     calls once the response is done (conversation.item.create of a
//     function_call_output, then response.create) and reports each answer
//     as AgentToolResult.
//   - response.done: AgentTurnEnd when completed (or incomplete, with an
//     AgentLog saying why); AgentInterrupted when cancelled (by Interrupt or
//     by the server's own turn detection); when failed, AgentTurnEnd and
//     then an *Error from Recv.
//   - error: an *Error from Recv; the Conn stays usable.
//   - the server closing the WebSocket normally: AgentHangUp.
//   - every other documented event is consumed silently; an event type the
//     adapter does not know is logged once and skipped (the protocol grows
//     new events, and a new one must not fail every test). Frames that are
//     not JSON, lack "type", or carry bad audio are *FrameError.
//
// Turns: with TurnDetection nil the session is configured with
// "turn_detection": null and EndUtterance commits the input buffer and asks
// for a response (input_audio_buffer.commit + response.create), as a
// push-to-talk client does; the server requires at least 100 ms of audio
// per commit. With TurnDetection set the server detects the end of speech
// itself (Capabilities.NativeVAD) and EndUtterance only appends EndSilence
// of silence so that its detector hears the pause.
//
// Interrupt sends response.cancel for the response in progress (a native
// interrupt) and conversation.item.truncate for the assistant audio item
// being played, cut at the audio played so far, as a client that plays
// audio in real time does (each delta plays when it arrives or when the
// one before has played, whichever is later, so a stalled stream does not
// count as played); the server answers with a
// cancelled response.done, which becomes AgentInterrupted.
//
// The server streams transcript deltas as the model generates them, ahead
// of the audio's playback, so the adapter declares
// Capabilities.TranscriptAhead: voicetest.AfterWords(n) then waits until n
// words have been heard, estimated by spreading the words received over the
// audio received (and, until response.done, over no less than their length
// at Config.WordsPerMinute) and counting those whose share has played.
//
// DTMF: the Realtime API has no client event for key presses
// (input_audio_buffer.dtmf_event_received exists only for SIP calls,
// server side), so SendDTMF is unsupported and voicetest.DTMF sends in-band
// tones instead.
//
// The API key is sent only in the Authorization header: it never appears in
// the wire capture (which holds frames, not headers) or in logs.
//
// Set the fields before the first Connect; an Agent may then serve
// parallel scenarios.
type Agent struct {
	// URL is the Realtime WebSocket endpoint (ws:// or wss://), default
	// DefaultURL. A "model" query parameter is added when the URL
	// has none.
	URL string
	// APIKey is sent as "Authorization: Bearer <key>". Empty means the
	// OPENAI_API_KEY environment variable; a connection to OpenAI's own
	// host without either is an error. Other servers may need none.
	APIKey string
	// Model is the model to ask for (default DefaultModel).
	Model string
	// Instructions are the session's system instructions.
	Instructions string
	// Voice is the output voice ("marin", "alloy", …); empty leaves the
	// server's default.
	Voice string
	// Tools are the functions the model may call.
	Tools []Tool
	// ToolChoice is "auto" (the default when Tools are set), "none" or
	// "required".
	ToolChoice string
	// TurnDetection, when not nil, turns on the server's voice activity
	// detection. Nil sends "turn_detection": null (manual commits).
	TurnDetection *TurnDetection
	// EndSilence is the silence EndUtterance appends under server turn
	// detection. Zero means the detector's silence duration (500 ms when
	// unset) plus 300 ms, or 1 s for semantic_vad; negative sends none.
	EndSilence time.Duration
	// InputTranscription names the model that transcribes the user's audio
	// ("gpt-4o-transcribe", "whisper-1"); the transcripts arrive as
	// UserTranscript events. Empty turns transcription off.
	InputTranscription string
	// Greeting makes the agent speak first: Connect sends response.create
	// once the session is configured.
	Greeting bool
	// Beta speaks the beta protocol: header "OpenAI-Beta: realtime=v1" and
	// the flat session shape (input_audio_format "pcm16", modalities,
	// input_audio_transcription). The adapter accepts either generation's
	// event names whatever this says.
	Beta bool
	// OnToolCall, when set, answers the model's function calls (see
	// ToolHandler). Without it calls are reported but never answered, and
	// the turn ends with the call.
	OnToolCall wire.ToolHandler
	// WSOptions are the transport settings (extra headers, keepalive,
	// limits). DialTimeout also bounds the wait for session.updated.
	wire.WSOptions
}

// Tool is a function the Realtime model may call.
type Tool struct {
	// Name is the function's name.
	Name string
	// Description tells the model when to call it.
	Description string
	// Parameters is the JSON Schema of its arguments (an object schema);
	// nil means no arguments.
	Parameters json.RawMessage
}

// TurnDetection configures the Realtime server's voice activity detection.
type TurnDetection struct {
	// Type is "server_vad" (the default) or "semantic_vad".
	Type string
	// Threshold is server_vad's activation threshold (0–1); zero leaves
	// the server's default (0.5).
	Threshold float64
	// PrefixPadding is the audio kept before detected speech; zero leaves
	// the server's default (300 ms).
	PrefixPadding time.Duration
	// SilenceDuration is the silence that ends speech; zero leaves the
	// server's default (500 ms).
	SilenceDuration time.Duration
	// Eagerness is semantic_vad's "low", "medium", "high" or "auto".
	Eagerness string
}

// Error is an error the Realtime server reported: an "error" event,
// or a response that ended with status "failed". Recv returns it; the
// conversation can go on.
type Error struct {
	// Type is the error's type, e.g. "invalid_request_error" or
	// "server_error".
	Type string
	// Code is the error's code, e.g. "input_audio_buffer_commit_empty",
	// when it has one.
	Code string
	// Message is the server's explanation.
	Message string
	// Param names the offending parameter, when the server says.
	Param string
	// EventID is the event_id of the client event that caused the error,
	// when the server says.
	EventID string
}

// Error returns the server's error with its type, code, parameter and
// client event.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("adapters: openai-realtime: server error")
	if e.Type != "" {
		b.WriteString(" " + e.Type)
	}
	if e.Code != "" {
		b.WriteString(" (" + e.Code + ")")
	}
	b.WriteString(": " + e.Message)
	if e.Param != "" {
		b.WriteString(" [param " + e.Param + "]")
	}
	if e.EventID != "" {
		b.WriteString(" [client event " + e.EventID + "]")
	}
	return b.String()
}

// Conn is the Conn an Agent returns, with a way to send the
// client events that voicetest.Conn has no method for (a mid-call
// session.update, a system message through conversation.item.create, …).
// Reach it with a type assertion: conn.(realtime.Conn).
type Conn interface {
	voicetest.Conn
	// SendEvent sends a client event as it is: one JSON object with its
	// "type". It is captured like every other frame. Events that change
	// the response state behind the adapter's back (response.create,
	// response.cancel) are allowed; the adapter follows the server's
	// events, not its own requests; but audio appended this way is not
	// counted by EndUtterance, which commits only audio sent by SendAudio.
	SendEvent(ctx context.Context, event json.RawMessage) error
}

var _ Conn = (*realtimeConn)(nil)

// New returns an agent that speaks the OpenAI Realtime protocol
// to OpenAI with model (DefaultModel when empty). Set URL to reach
// another server, and the other fields of Agent to configure the
// session.
func New(model string) *Agent { return &Agent{Model: model} }

// Connect opens the Realtime WebSocket, configures the session and waits
// until the server confirms it (session.updated). A session.update the
// server rejects fails Connect with the server's *Error.
func (a *Agent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	if s.Rate <= 0 {
		return nil, fmt.Errorf("adapters: %s: session rate %d: %w", realtimeAdapter, s.Rate, pcm.ErrBadRate)
	}
	update, err := a.sessionUpdate()
	if err != nil {
		return nil, err
	}
	url, err := a.dialURL()
	if err != nil {
		return nil, err
	}
	opts := a.WSOptions
	opts.Header = opts.Header.Clone()
	if opts.Header == nil {
		opts.Header = http.Header{}
	}
	key := a.APIKey
	if key == "" {
		key = os.Getenv("OPENAI_API_KEY")
	}
	if key != "" {
		opts.Header.Set("Authorization", "Bearer "+key)
	} else if u, _ := neturl.Parse(url); u != nil && u.Hostname() == "api.openai.com" {
		return nil, fmt.Errorf("adapters: %s: no API key for %s; set realtime.Agent.APIKey or the OPENAI_API_KEY environment variable", realtimeAdapter, u.Host)
	}
	if a.Beta {
		opts.Header.Set("OpenAI-Beta", "realtime=v1")
	}
	c := &realtimeConn{
		rate:      s.Rate,
		onTool:    a.OnToolCall,
		ready:     make(chan struct{}),
		unknown:   map[string]bool{},
		serverVAD: a.TurnDetection != nil,
	}
	if c.serverVAD {
		c.endSilence = a.endSilence()
	}
	if s.Rate != realtimeRate {
		if c.up.Resampler, err = pcm.NewResampler(s.Rate, realtimeRate); err != nil {
			return nil, fmt.Errorf("adapters: %s: %w", realtimeAdapter, err)
		}
		if c.down, err = pcm.NewResampler(realtimeRate, s.Rate); err != nil {
			return nil, fmt.Errorf("adapters: %s: %w", realtimeAdapter, err)
		}
	}
	ws, err := wire.Dial(ctx, realtimeAdapter, url, opts, s, nil)
	if err != nil {
		return nil, err
	}
	c.ws = ws
	ws.Start(c.decode)
	fail := func(err error) (voicetest.Conn, error) {
		ws.Close(nil)
		return nil, err
	}
	if err := ws.Write(ctx, websocket.MessageText, update); err != nil {
		return fail(fmt.Errorf("adapters: %s: sending session.update: %w", realtimeAdapter, err))
	}
	if err := c.awaitSession(ctx, opts.Resolved().DialTimeout); err != nil {
		return fail(err)
	}
	if a.Greeting {
		if err := c.send(ctx, []byte(rtResponseCreate)); err != nil {
			return fail(fmt.Errorf("adapters: %s: asking for the greeting: %w", realtimeAdapter, err))
		}
	}
	mode := "manual commits"
	if c.serverVAD {
		mode = "server turn detection"
	}
	ws.Logf("%s: session configured at %s (%s)", realtimeAdapter, wire.RedactURL(url), mode)
	return c, nil
}

// dialURL returns the endpoint with its model parameter.
func (a *Agent) dialURL() (string, error) {
	raw := a.URL
	if raw == "" {
		raw = DefaultURL
	}
	u, err := neturl.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("adapters: %s: URL %q: %w", realtimeAdapter, raw, err)
	}
	if u.Scheme != "ws" && u.Scheme != "wss" {
		return "", fmt.Errorf("adapters: %s: URL %q: scheme %q; use ws:// or wss://", realtimeAdapter, raw, u.Scheme)
	}
	q := u.Query()
	if q.Get("model") == "" {
		q.Set("model", a.model())
		u.RawQuery = q.Encode()
	}
	return u.String(), nil
}

func (a *Agent) model() string {
	if a.Model == "" {
		return DefaultModel
	}
	return a.Model
}

// endSilence returns the silence EndUtterance appends under server VAD.
func (a *Agent) endSilence() time.Duration {
	switch {
	case a.EndSilence < 0:
		return 0
	case a.EndSilence > 0:
		return a.EndSilence
	case a.TurnDetection.Type == "semantic_vad":
		return time.Second
	}
	sd := a.TurnDetection.SilenceDuration
	if sd <= 0 {
		sd = 500 * time.Millisecond
	}
	return sd + 300*time.Millisecond
}

// Client event shapes.
type (
	rtSessionUpdate struct {
		Type    string `json:"type"`
		Session any    `json:"session"`
	}
	rtSessionGA struct {
		Type             string        `json:"type"`
		Model            string        `json:"model"`
		Instructions     string        `json:"instructions,omitempty"`
		OutputModalities []string      `json:"output_modalities"`
		Audio            rtAudioConfig `json:"audio"`
		Tools            []rtTool      `json:"tools,omitempty"`
		ToolChoice       string        `json:"tool_choice,omitempty"`
	}
	rtAudioConfig struct {
		Input  rtAudioInput  `json:"input"`
		Output rtAudioOutput `json:"output"`
	}
	rtAudioInput struct {
		Format        rtFormat        `json:"format"`
		TurnDetection json.RawMessage `json:"turn_detection"`
		Transcription *rtTranscribe   `json:"transcription,omitempty"`
	}
	rtAudioOutput struct {
		Format rtFormat `json:"format"`
		Voice  string   `json:"voice,omitempty"`
	}
	rtFormat struct {
		Type string `json:"type"`
		Rate int    `json:"rate"`
	}
	rtTranscribe struct {
		Model string `json:"model"`
	}
	rtSessionBeta struct {
		Modalities              []string        `json:"modalities"`
		Instructions            string          `json:"instructions,omitempty"`
		Voice                   string          `json:"voice,omitempty"`
		InputAudioFormat        string          `json:"input_audio_format"`
		OutputAudioFormat       string          `json:"output_audio_format"`
		InputAudioTranscription *rtTranscribe   `json:"input_audio_transcription,omitempty"`
		TurnDetection           json.RawMessage `json:"turn_detection"`
		Tools                   []rtTool        `json:"tools,omitempty"`
		ToolChoice              string          `json:"tool_choice,omitempty"`
	}
	rtTool struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	}
	rtTurnDetection struct {
		Type              string   `json:"type"`
		Threshold         *float64 `json:"threshold,omitempty"`
		PrefixPaddingMs   *int64   `json:"prefix_padding_ms,omitempty"`
		SilenceDurationMs *int64   `json:"silence_duration_ms,omitempty"`
		Eagerness         string   `json:"eagerness,omitempty"`
		CreateResponse    bool     `json:"create_response"`
		InterruptResponse bool     `json:"interrupt_response"`
	}
	rtItemCreate struct {
		Type string `json:"type"`
		Item any    `json:"item"`
	}
	rtMessageItem struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content []rtContentPart `json:"content"`
	}
	rtContentPart struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	rtFunctionOutputItem struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
		Output string `json:"output"`
	}
	rtCancel struct {
		Type       string `json:"type"`
		ResponseID string `json:"response_id,omitempty"`
	}
	rtTruncate struct {
		Type         string `json:"type"`
		ItemID       string `json:"item_id"`
		ContentIndex int    `json:"content_index"`
		AudioEndMs   int64  `json:"audio_end_ms"`
	}
)

// Fixed client events.
const (
	rtResponseCreate = `{"type":"response.create"}`
	rtCommit         = `{"type":"input_audio_buffer.commit"}`
)

// sessionUpdate builds the session.update event, checking the options.
func (a *Agent) sessionUpdate() ([]byte, error) {
	td := json.RawMessage(`null`)
	if d := a.TurnDetection; d != nil {
		t := rtTurnDetection{Type: d.Type, Eagerness: d.Eagerness, CreateResponse: true, InterruptResponse: true}
		if t.Type == "" {
			t.Type = "server_vad"
		}
		switch t.Type {
		case "server_vad":
			if d.Eagerness != "" {
				return nil, fmt.Errorf("adapters: %s: TurnDetection.Eagerness is for semantic_vad, not server_vad", realtimeAdapter)
			}
			if d.Threshold < 0 || d.Threshold > 1 {
				return nil, fmt.Errorf("adapters: %s: TurnDetection.Threshold %v is outside 0–1", realtimeAdapter, d.Threshold)
			}
			if d.Threshold > 0 {
				t.Threshold = &d.Threshold
			}
			if d.PrefixPadding < 0 || d.SilenceDuration < 0 {
				return nil, fmt.Errorf("adapters: %s: TurnDetection durations must not be negative", realtimeAdapter)
			}
			if d.PrefixPadding > 0 {
				ms := d.PrefixPadding.Milliseconds()
				t.PrefixPaddingMs = &ms
			}
			if d.SilenceDuration > 0 {
				ms := d.SilenceDuration.Milliseconds()
				t.SilenceDurationMs = &ms
			}
		case "semantic_vad":
			if d.Threshold != 0 || d.PrefixPadding != 0 || d.SilenceDuration != 0 {
				return nil, fmt.Errorf("adapters: %s: semantic_vad takes only Eagerness; Threshold, PrefixPadding and SilenceDuration are for server_vad", realtimeAdapter)
			}
			switch d.Eagerness {
			case "", "auto", "low", "medium", "high":
			default:
				return nil, fmt.Errorf("adapters: %s: TurnDetection.Eagerness %q; use auto, low, medium or high", realtimeAdapter, d.Eagerness)
			}
		default:
			return nil, fmt.Errorf("adapters: %s: TurnDetection.Type %q; use server_vad or semantic_vad (or a nil TurnDetection for manual commits)", realtimeAdapter, d.Type)
		}
		td, _ = json.Marshal(t)
	}
	var tools []rtTool
	for i, t := range a.Tools {
		if t.Name == "" {
			return nil, fmt.Errorf("adapters: %s: Tools[%d] has no Name", realtimeAdapter, i)
		}
		if len(t.Parameters) > 0 && !json.Valid(t.Parameters) {
			return nil, fmt.Errorf("adapters: %s: Tools[%d] (%s): Parameters is not valid JSON", realtimeAdapter, i, t.Name)
		}
		tools = append(tools, rtTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	choice := a.ToolChoice
	switch choice {
	case "":
		if len(tools) > 0 {
			choice = "auto"
		}
	case "auto", "none", "required":
	default:
		return nil, fmt.Errorf("adapters: %s: ToolChoice %q; use auto, none or required", realtimeAdapter, choice)
	}
	var tr *rtTranscribe
	if a.InputTranscription != "" {
		tr = &rtTranscribe{Model: a.InputTranscription}
	}
	var session any
	if a.Beta {
		session = rtSessionBeta{
			Modalities: []string{"audio", "text"}, Instructions: a.Instructions, Voice: a.Voice,
			InputAudioFormat: "pcm16", OutputAudioFormat: "pcm16", InputAudioTranscription: tr,
			TurnDetection: td, Tools: tools, ToolChoice: choice,
		}
	} else {
		session = rtSessionGA{
			Type: "realtime", Model: a.model(), Instructions: a.Instructions,
			OutputModalities: []string{"audio"},
			Audio: rtAudioConfig{
				Input:  rtAudioInput{Format: rtFormat{Type: "audio/pcm", Rate: realtimeRate}, TurnDetection: td, Transcription: tr},
				Output: rtAudioOutput{Format: rtFormat{Type: "audio/pcm", Rate: realtimeRate}, Voice: a.Voice},
			},
			Tools: tools, ToolChoice: choice,
		}
	}
	b, err := json.Marshal(rtSessionUpdate{Type: "session.update", Session: session})
	if err != nil {
		return nil, fmt.Errorf("adapters: %s: encoding session.update: %w", realtimeAdapter, err)
	}
	return b, nil
}

// rtServerEvent is any event the server sends; which fields are set depends
// on Type.
type rtServerEvent struct {
	Type       string  `json:"type"`
	Delta      *string `json:"delta"`
	Transcript *string `json:"transcript"`
	Text       *string `json:"text"`
	ItemID     string  `json:"item_id"`
	CallID     string  `json:"call_id"`
	Name       string  `json:"name"`
	Arguments  string  `json:"arguments"`
	Error      *struct {
		Type    string `json:"type"`
		Code    string `json:"code"`
		Message string `json:"message"`
		Param   string `json:"param"`
		EventID string `json:"event_id"`
	} `json:"error"`
	Response *struct {
		ID            string `json:"id"`
		Status        string `json:"status"`
		StatusDetails *struct {
			Type   string `json:"type"`
			Reason string `json:"reason"`
			Error  *struct {
				Type    string `json:"type"`
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		} `json:"status_details"`
		Output []rtServerItem `json:"output"`
	} `json:"response"`
	Item *rtServerItem `json:"item"`
}

type rtServerItem struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Role      string `json:"role"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// rtQuiet reports whether typ is a documented server event that carries
// nothing a test needs; the adapter consumes those silently.
func rtQuiet(typ string) bool {
	switch typ {
	case "session.created", "transcription_session.updated", "conversation.created",
		"conversation.item.added", "conversation.item.created", "conversation.item.done",
		"conversation.item.retrieved", "conversation.item.truncated", "conversation.item.deleted",
		"conversation.item.input_audio_transcription.segment",
		"input_audio_buffer.committed", "input_audio_buffer.cleared",
		"input_audio_buffer.speech_started", "input_audio_buffer.speech_stopped",
		"input_audio_buffer.timeout_triggered", "input_audio_buffer.dtmf_event_received",
		"output_audio_buffer.started", "output_audio_buffer.stopped", "output_audio_buffer.cleared",
		"response.content_part.added", "response.content_part.done",
		"response.function_call_arguments.delta", "rate_limits.updated",
		"mcp_list_tools.in_progress", "mcp_list_tools.completed", "mcp_list_tools.failed",
		"response.mcp_call_arguments.delta", "response.mcp_call_arguments.done",
		"response.mcp_call.in_progress", "response.mcp_call.completed", "response.mcp_call.failed":
		return true
	}
	return false
}

// realtimeConn is one Realtime session.
type realtimeConn struct {
	ws         *wire.Conn
	rate       int
	onTool     wire.ToolHandler
	serverVAD  bool
	endSilence time.Duration
	ready      chan struct{} // closed at the first session.updated

	// Send side, guarded by sendMu.
	sendMu      sync.Mutex
	up          wire.Upstream // the user's audio, session rate to wire rate
	msg         []byte
	sendPCM     []byte
	uncommitted int // input samples (24 kHz) appended since the last commit

	// Response state, written by the reader goroutine and read by
	// Interrupt; guarded by mu.
	mu        sync.Mutex
	respID    string // the response in progress, "" when none
	item      string // the assistant audio item being played
	itemAudio int    // its samples received (24 kHz)
	// itemEnd is when its audio received so far ends playing: each delta
	// plays after the one before, or at once after a stall.
	itemEnd    time.Time
	itemTrunc  bool // it was truncated already
	sessionSet bool

	// Reader goroutine only.
	down    *pcm.Resampler
	pcmBuf  []byte
	samples []int16
	calls   []voicetest.ToolCall
	seen    map[string]bool // call IDs reported in this response
	unknown map[string]bool // unknown event types already logged
}

// awaitSession waits for session.updated, a rejected session.update, or
// the connection's end.
func (c *realtimeConn) awaitSession(ctx context.Context, limit time.Duration) error {
	t := time.NewTimer(limit)
	defer t.Stop()
	for {
		select {
		case <-c.ready:
			return nil
		default:
		}
		ws := c.ws
		qerr, term := ws.Failure()
		if qerr != nil || term != nil {
			select {
			case <-c.ready:
				// session.updated arrived while the queue was read: the
				// session is configured, and what followed it belongs to
				// the conversation (Recv reports it).
				return nil
			default:
			}
		}
		switch {
		case qerr != nil:
			return fmt.Errorf("adapters: %s: configuring the session: %w", realtimeAdapter, qerr)
		case term != nil:
			return fmt.Errorf("adapters: %s: configuring the session: %w", realtimeAdapter, term)
		}
		select {
		case <-c.ready:
			return nil
		case <-ws.Notify():
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return &voicetest.TimeoutError{Phase: voicetest.PhaseConnect, Timeout: limit,
				Hint: "the Realtime server accepted the WebSocket but never confirmed session.update with session.updated; check that it speaks the Realtime protocol, or raise WSOptions.DialTimeout"}
		}
	}
}

// Capabilities reports what the Realtime adapter supports.
func (c *realtimeConn) Capabilities() voicetest.Capabilities {
	f := voicetest.AudioFormat{Encoding: "pcm16", Rate: realtimeRate}
	return voicetest.Capabilities{
		Adapter: realtimeAdapter, Audio: true, Text: true, InputFormat: f, OutputFormat: f,
		StreamingTranscripts: true, TranscriptAhead: true, NativeVAD: c.serverVAD,
		NativeInterrupt: true, TurnEnd: true, ToolEvents: true,
	}
}

// send writes one client event.
func (c *realtimeConn) send(ctx context.Context, ev []byte) error {
	return c.ws.Write(ctx, websocket.MessageText, ev)
}

// sendJSON marshals and writes one client event.
func (c *realtimeConn) sendJSON(ctx context.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("adapters: %s: encoding %T: %w", realtimeAdapter, v, err)
	}
	return c.send(ctx, b)
}

// appendLocked sends samples (at 24 kHz) as one input_audio_buffer.append.
// Call with sendMu held.
func (c *realtimeConn) appendLocked(ctx context.Context, samples []int16) error {
	if len(samples) == 0 {
		return nil
	}
	b := append(c.msg[:0], `{"type":"input_audio_buffer.append","audio":"`...)
	c.pcmBufSend(samples)
	b = wire.AppendBase64(b, c.sendPCM)
	b = append(b, `"}`...)
	c.msg = b
	if err := c.ws.WriteAudio(ctx, websocket.MessageText, b); err != nil {
		return err
	}
	c.uncommitted += len(samples)
	return nil
}

// SendAudio appends user speech to the server's input audio buffer.
func (c *realtimeConn) SendAudio(ctx context.Context, ch pcm.Chunk) error {
	if err := wire.CheckSendRate(realtimeAdapter, ch.Rate, c.rate); err != nil {
		return err
	}
	if err := c.ws.Sendable(ctx); err != nil {
		return err
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	return c.appendLocked(ctx, c.up.Process(ch.Samples))
}

// EndUtterance ends the user's turn: with manual commits it commits the
// input buffer and asks for a response; under server turn detection it
// appends EndSilence of silence.
func (c *realtimeConn) EndUtterance(ctx context.Context) error {
	if err := c.ws.Sendable(ctx); err != nil {
		return err
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if err := c.appendLocked(ctx, c.up.Flush()); err != nil {
		return err
	}
	if c.serverVAD {
		if c.endSilence > 0 {
			return c.appendLocked(ctx, make([]int16, pcm.SamplesFor(realtimeRate, c.endSilence)))
		}
		return nil
	}
	if c.uncommitted == 0 {
		return nil // nothing was said: nothing to commit
	}
	if err := c.send(ctx, []byte(rtCommit)); err != nil {
		return err
	}
	c.uncommitted = 0
	return c.send(ctx, []byte(rtResponseCreate))
}

// SendText adds a user text message to the conversation and asks for a
// response.
func (c *realtimeConn) SendText(ctx context.Context, text string) error {
	if strings.TrimSpace(text) == "" {
		return fmt.Errorf("adapters: %s: SendText with empty text", realtimeAdapter)
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	err := c.sendJSON(ctx, rtItemCreate{Type: "conversation.item.create", Item: rtMessageItem{
		Type: "message", Role: "user", Content: []rtContentPart{{Type: "input_text", Text: text}},
	}})
	if err != nil {
		return err
	}
	return c.send(ctx, []byte(rtResponseCreate))
}

// SendEvent sends a client event as it is.
func (c *realtimeConn) SendEvent(ctx context.Context, event json.RawMessage) error {
	if err := wire.CheckEvent(event); err != nil {
		return fmt.Errorf("adapters: %s: SendEvent: %w", realtimeAdapter, err)
	}
	var ev struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(event, &ev); ev.Type == "" {
		return fmt.Errorf("adapters: %s: SendEvent: event %.80q has no \"type\"; every Realtime client event names its type", realtimeAdapter, event)
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	return c.send(ctx, event)
}

// SendDTMF is unsupported: the Realtime API has no client DTMF event.
func (c *realtimeConn) SendDTMF(context.Context, string) error {
	return &voicetest.UnsupportedError{Adapter: realtimeAdapter, Capability: "DTMF events",
		Alternative: "the Realtime API has no client event for key presses (input_audio_buffer.dtmf_event_received is server-side, for SIP calls only); voicetest.DTMF sends them as in-band tones in the user's audio"}
}

// Interrupt cancels the response in progress (response.cancel) and
// truncates the assistant audio at what has played so far
// (conversation.item.truncate).
func (c *realtimeConn) Interrupt(ctx context.Context) error {
	if err := c.ws.ClosedErr(); err != nil {
		return err
	}
	c.mu.Lock()
	resp, item, n, end, trunc := c.respID, c.item, c.itemAudio, c.itemEnd, c.itemTrunc
	if item != "" && n > 0 {
		c.itemTrunc = true
	}
	c.mu.Unlock()
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if resp != "" {
		if err := c.sendJSON(ctx, rtCancel{Type: "response.cancel", ResponseID: resp}); err != nil {
			return err
		}
		c.ws.Stats().Cancel()
	}
	if item != "" && n > 0 && !trunc {
		received := pcm.DurationOf(n, realtimeRate)
		played := received - max(time.Until(end), 0) // what is queued has not played
		if played < received {
			return c.sendJSON(ctx, rtTruncate{Type: "conversation.item.truncate", ItemID: item, AudioEndMs: played.Milliseconds()})
		}
	}
	return nil
}

// WireStats reports what crossed the WebSocket: frames each way, the
// caller's response.cancel messages and the responses the server
// cancelled.
func (c *realtimeConn) WireStats() voicetest.WireStats { return c.ws.Stats().Snapshot(realtimeAdapter) }

// Recv returns the agent's next event.
func (c *realtimeConn) Recv(ctx context.Context) (voicetest.AgentEvent, error) {
	return c.ws.Recv(ctx)
}

// Close closes the WebSocket, ending the session.
func (c *realtimeConn) Close() error { return c.ws.Close(nil) }

// decode turns one server event into agent events. It runs on the reader
// goroutine.
func (c *realtimeConn) decode(typ websocket.MessageType, data []byte) ([]voicetest.AgentEvent, error) {
	if typ != websocket.MessageText {
		return nil, fmt.Errorf("got a binary frame of %d bytes; Realtime server events are JSON text frames", len(data))
	}
	var ev rtServerEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, fmt.Errorf("not a JSON Realtime event: %w", err)
	}
	switch ev.Type {
	case "":
		return nil, errors.New(`no "type" field; Realtime server events always name their type`)
	case "session.updated":
		c.mu.Lock()
		if !c.sessionSet {
			c.sessionSet = true
			close(c.ready)
		}
		c.mu.Unlock()
		return nil, nil
	case "error":
		if ev.Error == nil {
			return nil, errors.New(`error event without an "error" object`)
		}
		e := ev.Error
		return nil, wire.AgentError{Err: &Error{Type: e.Type, Code: e.Code, Message: e.Message, Param: e.Param, EventID: e.EventID}}
	case "response.created":
		if ev.Response == nil || ev.Response.ID == "" {
			return nil, errors.New("response.created without response.id")
		}
		c.mu.Lock()
		c.respID = ev.Response.ID
		c.mu.Unlock()
		c.calls, c.seen = c.calls[:0], map[string]bool{}
		return nil, nil
	case "response.output_item.added":
		if ev.Item != nil && ev.Item.Type == "message" {
			c.mu.Lock()
			c.item, c.itemAudio, c.itemTrunc = ev.Item.ID, 0, false
			c.mu.Unlock()
		}
		return nil, nil
	case "response.output_audio.delta", "response.audio.delta":
		return c.audioDelta(ev)
	case "response.output_audio.done", "response.audio.done":
		return c.flushAudio(nil), nil
	case "response.output_audio_transcript.delta", "response.audio_transcript.delta",
		"response.output_text.delta", "response.text.delta":
		if ev.Delta == nil {
			return nil, fmt.Errorf("%s without delta", ev.Type)
		}
		return []voicetest.AgentEvent{{Kind: voicetest.AgentTranscript, Text: *ev.Delta}}, nil
	case "response.output_audio_transcript.done", "response.audio_transcript.done":
		if ev.Transcript == nil {
			return nil, fmt.Errorf("%s without transcript", ev.Type)
		}
		return []voicetest.AgentEvent{{Kind: voicetest.AgentTranscript, Text: *ev.Transcript, Final: true}}, nil
	case "response.output_text.done", "response.text.done":
		if ev.Text == nil {
			return nil, fmt.Errorf("%s without text", ev.Type)
		}
		return []voicetest.AgentEvent{{Kind: voicetest.AgentTranscript, Text: *ev.Text, Final: true}}, nil
	case "conversation.item.input_audio_transcription.delta":
		if ev.Delta == nil {
			return nil, fmt.Errorf("%s without delta", ev.Type)
		}
		return []voicetest.AgentEvent{{Kind: voicetest.UserTranscript, Text: *ev.Delta}}, nil
	case "conversation.item.input_audio_transcription.completed":
		if ev.Transcript == nil {
			return nil, fmt.Errorf("%s without transcript", ev.Type)
		}
		return []voicetest.AgentEvent{{Kind: voicetest.UserTranscript, Text: *ev.Transcript, Final: true}}, nil
	case "conversation.item.input_audio_transcription.failed":
		msg := "unknown reason"
		if ev.Error != nil {
			msg = ev.Error.Message
		}
		return []voicetest.AgentEvent{{Kind: voicetest.AgentLog, Text: "the server could not transcribe the user's audio: " + msg}}, nil
	case "response.function_call_arguments.done":
		return c.toolCall(ev.CallID, ev.Name, ev.Arguments)
	case "response.output_item.done":
		if it := ev.Item; it != nil && it.Type == "function_call" && !c.seen[it.CallID] {
			return c.toolCall(it.CallID, it.Name, it.Arguments)
		}
		return nil, nil
	case "response.done":
		return c.responseDone(ev)
	}
	if rtQuiet(ev.Type) {
		return nil, nil
	}
	if wire.LogOnce(c.unknown, ev.Type) {
		c.ws.Logf("%s: ignoring server event %q, which this adapter does not know (logged once)", realtimeAdapter, ev.Type)
	}
	return nil, nil
}

// audioDelta decodes one audio delta.
func (c *realtimeConn) audioDelta(ev rtServerEvent) ([]voicetest.AgentEvent, error) {
	if ev.Delta == nil || *ev.Delta == "" {
		return nil, fmt.Errorf("%s without audio in delta", ev.Type)
	}
	var err error
	c.pcmBuf, err = base64.StdEncoding.AppendDecode(c.pcmBuf[:0], []byte(*ev.Delta))
	if err != nil {
		return nil, fmt.Errorf("%s: delta is not base64: %w", ev.Type, err)
	}
	c.samples, err = pcm.DecodePCM16(c.samples[:0], c.pcmBuf)
	if err != nil {
		return nil, fmt.Errorf("%s: %d bytes of audio: %w (PCM16 has 2 bytes a sample)", ev.Type, len(c.pcmBuf), err)
	}
	c.mu.Lock()
	now := time.Now()
	if ev.ItemID != "" && ev.ItemID != c.item {
		c.item, c.itemAudio, c.itemTrunc = ev.ItemID, 0, false
	}
	if c.itemAudio == 0 || c.itemEnd.Before(now) {
		c.itemEnd = now
	}
	c.itemAudio += len(c.samples)
	c.itemEnd = c.itemEnd.Add(pcm.DurationOf(len(c.samples), realtimeRate))
	c.mu.Unlock()
	if c.down == nil {
		return []voicetest.AgentEvent{wire.AudioEvent(c.rate, c.samples)}, nil
	}
	out := c.down.Process(make([]int16, 0, c.down.MaxOut(len(c.samples))), c.samples)
	if len(out) == 0 {
		return nil, nil
	}
	return []voicetest.AgentEvent{{Kind: voicetest.AgentAudio, Audio: pcm.Chunk{Rate: c.rate, Samples: out}}}, nil
}

// flushAudio appends the resampler's held-back tail to evs.
func (c *realtimeConn) flushAudio(evs []voicetest.AgentEvent) []voicetest.AgentEvent {
	if c.down == nil {
		return evs
	}
	if tail := c.down.Flush(nil); len(tail) > 0 {
		evs = append(evs, voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: pcm.Chunk{Rate: c.rate, Samples: tail}})
	}
	return evs
}

// toolCall reports one function call.
func (c *realtimeConn) toolCall(id, name, args string) ([]voicetest.AgentEvent, error) {
	if name == "" {
		return nil, errors.New("function call without a name")
	}
	if len(c.seen) >= wire.MaxResponseCalls {
		return nil, &voicetest.LimitError{What: "the tool calls of one Realtime response", Limit: wire.MaxResponseCalls, Unit: "calls", Name: "wire.MaxResponseCalls"}
	}
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	c.seen[id] = true
	raw, ok := wire.ToolArguments(args)
	call := voicetest.ToolCall{ID: id, Name: name, Arguments: raw}
	c.calls = append(c.calls, call)
	evs := []voicetest.AgentEvent{{Kind: voicetest.AgentToolCall, Tool: &call}}
	if !ok {
		evs = append(evs, voicetest.AgentEvent{Kind: voicetest.AgentLog, Text: fmt.Sprintf("the arguments of the %s call are not valid JSON: %s", name, args)})
	}
	return evs, nil
}

// responseDone ends a response.
func (c *realtimeConn) responseDone(ev rtServerEvent) ([]voicetest.AgentEvent, error) {
	if ev.Response == nil {
		return nil, errors.New("response.done without response")
	}
	r := ev.Response
	c.mu.Lock()
	if c.respID == r.ID {
		c.respID = ""
	}
	c.mu.Unlock()
	evs := c.flushAudio(nil)
	// A call reported only in the final output.
	for _, it := range r.Output {
		if it.Type == "function_call" && !c.seen[it.CallID] {
			more, err := c.toolCall(it.CallID, it.Name, it.Arguments)
			if err != nil {
				return evs, err
			}
			evs = append(evs, more...)
		}
	}
	calls := c.calls
	c.calls = nil
	switch r.Status {
	case "completed":
		if len(calls) > 0 && c.onTool != nil {
			c.ws.Go(func() { c.answerTools(calls) })
			return evs, nil // the turn goes on with the follow-up response
		}
		return append(evs, voicetest.AgentEvent{Kind: voicetest.AgentTurnEnd}), nil
	case "cancelled":
		c.ws.Stats().Clear()
		reason := "cancelled"
		if d := r.StatusDetails; d != nil && d.Reason != "" {
			reason += " (" + d.Reason + ")"
		}
		return append(evs, voicetest.AgentEvent{Kind: voicetest.AgentInterrupted, Text: "response " + reason}), nil
	case "incomplete":
		reason := "unknown reason"
		if d := r.StatusDetails; d != nil && d.Reason != "" {
			reason = d.Reason
		}
		return append(evs,
			voicetest.AgentEvent{Kind: voicetest.AgentLog, Text: "the response ended incomplete: " + reason},
			voicetest.AgentEvent{Kind: voicetest.AgentTurnEnd}), nil
	case "failed":
		evs = append(evs, voicetest.AgentEvent{Kind: voicetest.AgentTurnEnd})
		re := &Error{Type: "response_failed", Message: "the response failed"}
		if d := r.StatusDetails; d != nil && d.Error != nil {
			re = &Error{Type: d.Error.Type, Code: d.Error.Code, Message: "response failed: " + d.Error.Message}
		}
		return evs, wire.AgentError{Err: re}
	}
	return evs, fmt.Errorf("response.done with unknown status %q; expected completed, cancelled, incomplete or failed", r.Status)
}

// answerTools runs OnToolCall for each call of a finished response, sends
// the outputs and asks for the follow-up response. It runs on its own
// goroutine, which Close waits for.
func (c *realtimeConn) answerTools(calls []voicetest.ToolCall) {
	ctx := c.ws.Context()
	outputs := make([]rtFunctionOutputItem, 0, len(calls))
	for _, call := range calls {
		res, out := wire.RunTool(ctx, c.onTool, call)
		c.ws.PushEvent(voicetest.AgentEvent{Kind: voicetest.AgentToolResult, Tool: &res})
		outputs = append(outputs, rtFunctionOutputItem{Type: "function_call_output", CallID: call.ID, Output: out})
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	for i, o := range outputs {
		if err := c.sendJSON(ctx, rtItemCreate{Type: "conversation.item.create", Item: o}); err != nil {
			c.ws.Logf("%s: sending the result of %s: %v", realtimeAdapter, calls[i].Name, err)
			return
		}
	}
	if err := c.send(ctx, []byte(rtResponseCreate)); err != nil {
		c.ws.Logf("%s: asking for the response after tool calls: %v", realtimeAdapter, err)
	}
}

// pcmBufSend encodes samples as PCM16 LE into c.sendPCM.
func (c *realtimeConn) pcmBufSend(samples []int16) {
	c.sendPCM = wire.AppendPCM16(c.sendPCM[:0], samples)
}
