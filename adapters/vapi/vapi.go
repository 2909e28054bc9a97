// Package vapi reaches a Vapi assistant (vapi.ai) over Vapi's WebSocket
// transport: it creates a call through Vapi's REST API and talks over the
// WebSocket the call returns, raw PCM16 both ways.
//
// What it follows (docs.vapi.ai/calls/websocket-transport; source
// fern/calls/websocket-transport.mdx in github.com/VapiAI/docs; the
// client message schemas of Vapi's OpenAPI document):
//
//  1. Connect posts {"assistantId": …} (or "assistant", a transient
//     assistant), "assistantOverrides" and CallExtra, with
//     "transport": {"provider": "vapi.websocket", "audioFormat":
//     {"format": "pcm_s16le", "container": "raw", "sampleRate": SampleRate}}
//     to BaseURL + "/call" with "Authorization: Bearer <APIKey>" (the
//     private key), and reads transport.websocketCallUrl from the Call it
//     answers.
//  2. It opens that WebSocket. The user's speech goes as binary frames of
//     PCM16 (little endian, mono, SampleRate); the assistant's speech
//     comes the same way and is resampled to Session.Rate.
//  3. Close sends the documented {"type": "hangup"} and closes the socket.
//
// What the adapter does with the assistant's JSON messages (Vapi's client
// messages, as assistant.clientMessages selects them):
//
//   - "transcript" role assistant: a partial is the text so far of what
//     the assistant is saying; the words it adds are AgentTranscript
//     deltas, and the final one is the whole utterance (Final). Role user
//     (final only): a UserTranscript.
//   - "speech-update" role assistant status "stopped": AgentTurnEnd (the
//     assistant finished speaking), unless the user cut that speech (then
//     user-interrupted ended it); the others are consumed.
//   - "user-interrupted": AgentInterrupted (Vapi heard the user over the
//     assistant and stopped it).
//   - "tool-calls": one AgentToolCall per function of toolCallList.
//   - "status-update" with status "ended": AgentHangUp with the
//     endedReason; Vapi then closes the socket.
//   - any other message with a type (conversation-update, model-output,
//     metadata, hang, …): AgentData named by its type.
//   - text that is not a JSON object with a type, a known message with
//     fields of the wrong shape, or a binary frame of an odd number of
//     bytes: a *wire.FrameError; the Conn stays usable.
//
// Vapi detects the end of the user's speech itself
// (Capabilities.NativeVAD): EndUtterance sends EndSilence of silence, as a
// microphone stream carries it after the words. Barge-in is overlapping
// audio; the transport has no caller-side cancel, no DTMF and no text
// input, so Interrupt, SendDTMF and SendText return an
// *voicetest.UnsupportedError (the runner sends DTMF as in-band tones).
//
// Secrets: the API key, the credentials of WSOptions.Header, of the URLs
// and of the environment are blanked from the capture, the log, errors
// and events. The key goes only to the REST API, never on the WebSocket.
package vapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	"github.com/voicetest-go/voicetest/voicetest/scrub"
)

// Defaults of Agent.
const (
	// DefaultBaseURL is Vapi's API.
	DefaultBaseURL = "https://api.vapi.ai"
	// DefaultSampleRate is the rate of the call's PCM16 (Vapi's default).
	DefaultSampleRate = 16000
	// DefaultEndSilence is the silence EndUtterance sends.
	DefaultEndSilence = time.Second
)

// adapterName names the adapter in errors and capabilities.
const adapterName = "vapi"

// maxCallBytes bounds the answer to POST /call.
const maxCallBytes = 1 << 20

// Agent is a Vapi assistant reached over Vapi's WebSocket transport. Set
// the fields before the first Connect; an Agent may then serve parallel
// scenarios, each a call of its own.
type Agent struct {
	// APIKey is Vapi's private API key. It is a secret.
	APIKey string
	// AssistantID is the assistant to call. Set it or Assistant.
	AssistantID string
	// Assistant, when set instead, is a transient assistant (Vapi's
	// CreateAssistantDTO) sent as the call's "assistant".
	Assistant any
	// AssistantOverrides, when set, is the call's "assistantOverrides"
	// (variableValues, firstMessage, …).
	AssistantOverrides any
	// CallExtra holds more top-level fields of the call (name, metadata,
	// customer, …); "transport" and the assistant fields above take
	// precedence.
	CallExtra map[string]any
	// BaseURL is Vapi's API (default DefaultBaseURL).
	BaseURL string
	// SampleRate is the rate of the call's audio both ways (default
	// DefaultSampleRate).
	SampleRate int
	// EndSilence is the silence EndUtterance sends after the user's
	// speech, for Vapi's endpointing to hear the end of the turn (default
	// DefaultEndSilence; negative sends none).
	EndSilence time.Duration
	// HTTPClient creates the call (default http.DefaultClient). The
	// request is bounded by WSOptions.DialTimeout.
	HTTPClient *http.Client
	// WSOptions are the settings of the call's WebSocket (keepalive,
	// bounds, RequireTLS, which also applies to BaseURL).
	wire.WSOptions
}

// New returns an agent that calls the assistant assistantID with the
// private key apiKey.
func New(apiKey, assistantID string) *Agent { return &Agent{APIKey: apiKey, AssistantID: assistantID} }

// Connect creates the call and opens its WebSocket.
func (a *Agent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	if s.Rate <= 0 {
		return nil, fmt.Errorf("adapters: %s: session rate %d: %w", adapterName, s.Rate, pcm.ErrBadRate)
	}
	rate := a.SampleRate
	if rate == 0 {
		rate = DefaultSampleRate
	}
	if err := wire.CheckRate(adapterName, "SampleRate", rate, wire.StandardRates(), "leave it 0 for 16000"); err != nil {
		return nil, err
	}
	switch {
	case a.APIKey == "":
		return nil, fmt.Errorf("adapters: %s: Agent.APIKey is empty; set it to your Vapi private key (e.g. from VAPI_API_KEY)", adapterName)
	case (a.AssistantID == "") == (a.Assistant == nil):
		return nil, fmt.Errorf("adapters: %s: set exactly one of Agent.AssistantID and Agent.Assistant", adapterName)
	}
	base := a.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	if u, err := neturl.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("adapters: %s: Agent.BaseURL %q is not an http:// or https:// URL", adapterName, wire.RedactURL(base))
	}
	sc := a.WSOptions.Scrub
	if sc == nil {
		sc = scrub.New()
	}
	sc.AddEnv(os.Environ())
	sc.Add(a.APIKey)
	sc.AddHeader(a.WSOptions.Header)
	sc.AddURL(base)
	logf := wire.ScrubLogf(sc, s.Logf)
	capture := wire.NewCaptureWriter(s.Capture, logf)
	capture.SetScrubber(sc)
	if err := wire.CheckPlaintext(adapterName, base, a.WSOptions); err != nil {
		return nil, wire.ScrubError(sc, err)
	}
	opts := a.WSOptions.Resolved()

	call, err := a.createCall(ctx, strings.TrimRight(base, "/")+"/call", rate, opts.DialTimeout, capture, sc)
	if err != nil {
		err = wire.ScrubError(sc, err)
		capture.Note("error", err.Error())
		return nil, err
	}
	c := &conn{rate: s.Rate, wireRate: rate, down: wire.Downstream{Rate: s.Rate}, callID: call.ID}
	switch {
	case a.EndSilence < 0:
	case a.EndSilence == 0:
		c.endSilence = pcm.SamplesFor(rate, DefaultEndSilence)
	default:
		c.endSilence = pcm.SamplesFor(rate, a.EndSilence)
	}
	if s.Rate != rate {
		if c.up.Resampler, err = pcm.NewResampler(s.Rate, rate); err != nil {
			return nil, fmt.Errorf("adapters: %s: %w", adapterName, err)
		}
	}
	quiet := s
	quiet.Capture = nil // capture records the dial
	wopts := a.WSOptions
	wopts.Scrub = sc
	ws, err := wire.Dial(ctx, adapterName, call.URL, wopts, quiet, nil)
	if err != nil {
		err = wire.ScrubError(sc, err)
		capture.Note("error", err.Error())
		return nil, err
	}
	ws.SetCapture(capture)
	capture.Note("transport", sc.URL(call.URL))
	c.ws = ws
	ws.Start(c.decode)
	logf("%s: call %s open (PCM16 %d Hz)", adapterName, call.ID, rate)
	return c, nil
}

// createdCall is what the adapter keeps of the Call Vapi answers.
type createdCall struct {
	ID  string
	URL string // transport.websocketCallUrl
}

// createCall posts the call and reads its WebSocket URL.
func (a *Agent) createCall(ctx context.Context, endpoint string, rate int, timeout time.Duration, capture *wire.CaptureWriter, sc *scrub.Scrubber) (createdCall, error) {
	body := make(map[string]any, len(a.CallExtra)+3)
	for k, v := range a.CallExtra {
		body[k] = v
	}
	delete(body, "assistantId")
	delete(body, "assistant")
	if a.AssistantID != "" {
		body["assistantId"] = a.AssistantID
	} else {
		body["assistant"] = a.Assistant
	}
	if a.AssistantOverrides != nil {
		body["assistantOverrides"] = a.AssistantOverrides
	}
	body["transport"] = map[string]any{"provider": "vapi.websocket",
		"audioFormat": map[string]any{"format": "pcm_s16le", "container": "raw", "sampleRate": rate}}
	b, err := json.Marshal(body)
	if err != nil {
		return createdCall{}, fmt.Errorf("adapters: %s: encoding the call (are Assistant, AssistantOverrides and CallExtra JSON-encodable?): %w", adapterName, err)
	}
	sc.AddJSON(b)
	capture.Note("open", "POST "+sc.URL(endpoint)+" (the call's creation; its WebSocket follows)")
	capture.Frame("send", websocket.MessageText, b)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, endpoint, bytes.NewReader(b))
	if err != nil {
		return createdCall{}, fmt.Errorf("adapters: %s: %w", adapterName, err)
	}
	req.Header.Set("Authorization", "Bearer "+a.APIKey)
	req.Header.Set("Content-Type", "application/json")
	client := a.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() == nil && cctx.Err() != nil {
			return createdCall{}, &voicetest.TimeoutError{Phase: voicetest.PhaseConnect, Timeout: timeout,
				Hint: fmt.Sprintf("Vapi at %s did not answer the call's creation; check BaseURL, or raise WSOptions.DialTimeout", sc.URL(endpoint))}
		}
		return createdCall{}, fmt.Errorf("adapters: %s: creating the call at %s: %w", adapterName, sc.URL(endpoint), err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxCallBytes+1))
	if err != nil {
		return createdCall{}, fmt.Errorf("adapters: %s: reading the created call: %w", adapterName, err)
	}
	capture.Frame("recv", websocket.MessageText, raw)
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return createdCall{}, fmt.Errorf("adapters: %s: Vapi refused the key with HTTP %s: %s; check Agent.APIKey (the private key, not the public one)", adapterName, resp.Status, wire.Excerpt(sc.JSON(raw)))
	case resp.StatusCode/100 != 2:
		return createdCall{}, fmt.Errorf("adapters: %s: creating the call: HTTP %s: %s", adapterName, resp.Status, wire.Excerpt(sc.JSON(raw)))
	case len(raw) > maxCallBytes:
		return createdCall{}, fmt.Errorf("adapters: %s: the created call is over %d bytes", adapterName, maxCallBytes)
	}
	var ans struct {
		ID        string `json:"id"`
		Transport struct {
			URL string `json:"websocketCallUrl"`
		} `json:"transport"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil || ans.Transport.URL == "" {
		return createdCall{}, fmt.Errorf("adapters: %s: the created call has no transport.websocketCallUrl: %s", adapterName, wire.Excerpt(sc.JSON(raw)))
	}
	sc.AddURL(ans.Transport.URL)
	return createdCall{ID: ans.ID, URL: ans.Transport.URL}, nil
}

// conn is one call.
type conn struct {
	ws             *wire.Conn
	rate, wireRate int
	endSilence     int // samples at wireRate
	callID         string

	sendMu sync.Mutex
	up     wire.Upstream
	spoke  bool
	buf    []byte

	// Reader goroutine only.
	down    wire.Downstream
	partial string // the assistant's partial transcript so far
	cut     bool   // user-interrupted came since the assistant last started speaking
}

// Capabilities reports what the Vapi adapter supports.
func (c *conn) Capabilities() voicetest.Capabilities {
	f := voicetest.AudioFormat{Encoding: "pcm16", Rate: c.wireRate}
	return voicetest.Capabilities{
		Adapter: adapterName, Audio: true, InputFormat: f, OutputFormat: f,
		StreamingTranscripts: true, NativeVAD: true, TurnEnd: true, ToolEvents: true,
	}
}

// SendAudio sends user speech as one binary frame of PCM16.
func (c *conn) SendAudio(ctx context.Context, ch pcm.Chunk) error {
	if err := wire.CheckSendRate(adapterName, ch.Rate, c.rate); err != nil {
		return err
	}
	if err := c.ws.Sendable(ctx); err != nil {
		return err
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	c.spoke = true
	return c.writeLocked(ctx, c.up.Process(ch.Samples))
}

// writeLocked sends samples at wireRate as one binary frame. Call with
// sendMu held.
func (c *conn) writeLocked(ctx context.Context, samples []int16) error {
	if len(samples) == 0 {
		return nil
	}
	c.buf = wire.AppendPCM16(c.buf[:0], samples)
	return c.ws.Write(ctx, websocket.MessageBinary, c.buf)
}

// EndUtterance sends the rest of the speech and EndSilence of silence, in
// 100 ms frames.
func (c *conn) EndUtterance(ctx context.Context) error {
	if err := c.ws.Sendable(ctx); err != nil {
		return err
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if err := c.writeLocked(ctx, c.up.Flush()); err != nil {
		return err
	}
	if !c.spoke {
		return nil
	}
	c.spoke = false
	frame := make([]int16, c.wireRate/10)
	for left := c.endSilence; left > 0; left -= len(frame) {
		if err := c.writeLocked(ctx, frame[:min(left, len(frame))]); err != nil {
			return err
		}
	}
	return nil
}

// SendText is unsupported: the WebSocket transport takes audio.
func (c *conn) SendText(context.Context, string) error {
	return &voicetest.UnsupportedError{Adapter: adapterName, Capability: "text input",
		Alternative: "Vapi's WebSocket transport carries the user's audio only; use spoken steps (voicetest.UserSays)"}
}

// SendDTMF is unsupported: the transport has no key press message.
func (c *conn) SendDTMF(context.Context, string) error {
	return &voicetest.UnsupportedError{Adapter: adapterName, Capability: "DTMF events",
		Alternative: "Vapi's WebSocket transport has no key press message; voicetest.DTMF sends in-band tones instead"}
}

// Interrupt is unsupported: barge-in is overlapping audio.
func (c *conn) Interrupt(context.Context) error {
	return &voicetest.UnsupportedError{Adapter: adapterName, Capability: "native interrupt",
		Alternative: "Vapi stops the assistant when it hears the user: barge in by sending user audio while it speaks"}
}

// Recv returns the assistant's next event.
func (c *conn) Recv(ctx context.Context) (voicetest.AgentEvent, error) { return c.ws.Recv(ctx) }

// WireStats reports the frames exchanged on the call's WebSocket
// (voicetest.WireStatsReporter).
func (c *conn) WireStats() voicetest.WireStats { return c.ws.Stats().Snapshot(adapterName) }

// Close sends {"type":"hangup"} and closes the socket. It returns an
// error only when the assistant went past one of the bounds (a
// *voicetest.LimitError).
func (c *conn) Close() error {
	return c.ws.Close(func() {
		if c.ws.ClosedErr() != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := c.ws.Write(ctx, websocket.MessageText, []byte(`{"type":"hangup"}`)); err != nil {
			c.ws.Logf("%s: sending hangup: %v", adapterName, err)
		}
	})
}

// message is the part of Vapi's client messages the adapter reads.
type message struct {
	Type           string          `json:"type"`
	Role           *string         `json:"role"`
	TranscriptType string          `json:"transcriptType"`
	Transcript     *string         `json:"transcript"`
	Status         string          `json:"status"`
	EndedReason    string          `json:"endedReason"`
	ToolCallList   json.RawMessage `json:"toolCallList"`
}

// toolCall is one function of toolCallList.
type toolCall struct {
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// decode turns one frame into events.
func (c *conn) decode(typ websocket.MessageType, data []byte) ([]voicetest.AgentEvent, error) {
	if typ == websocket.MessageBinary {
		if len(data)%2 != 0 {
			return nil, fmt.Errorf("a binary frame of %d bytes: PCM16 comes in whole 2-byte samples", len(data))
		}
		samples, err := pcm.DecodePCM16(nil, data)
		if err != nil {
			return nil, err
		}
		return c.down.Append(nil, c.wireRate, samples)
	}
	var m message
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("a text frame that is not a JSON object: %w", err)
	}
	switch m.Type {
	case "":
		return nil, errors.New(`a message without a "type"`)
	case "transcript":
		if m.Role == nil || m.Transcript == nil || (m.TranscriptType != "partial" && m.TranscriptType != "final") {
			return nil, errors.New(`a transcript needs role, transcript and transcriptType "partial" or "final"`)
		}
		return c.transcript(*m.Role, m.TranscriptType == "final", *m.Transcript)
	case "speech-update":
		if m.Role == nil || (*m.Role != "assistant" && *m.Role != "user") || (m.Status != "started" && m.Status != "stopped") {
			return nil, errors.New(`a speech-update needs role "assistant" or "user" and status "started" or "stopped"`)
		}
		if *m.Role != "assistant" {
			return nil, nil
		}
		if m.Status == "started" {
			c.cut = false
			return nil, nil
		}
		c.partial = ""
		if c.cut {
			// The end of the speech the user cut: AgentInterrupted
			// already ended that turn, and the runner is in the next.
			c.cut = false
			return nil, nil
		}
		return append(c.down.Flush(nil), voicetest.AgentEvent{Kind: voicetest.AgentTurnEnd}), nil
	case "user-interrupted":
		c.partial, c.cut = "", true
		c.down.Reset()
		return []voicetest.AgentEvent{{Kind: voicetest.AgentInterrupted}}, nil
	case "tool-calls":
		var calls []toolCall
		if err := json.Unmarshal(m.ToolCallList, &calls); err != nil || len(calls) == 0 {
			return nil, errors.New("a tool-calls message needs a toolCallList of {id, function: {name, arguments}}")
		}
		evs := make([]voicetest.AgentEvent, 0, len(calls))
		for _, tc := range calls {
			if tc.Function.Name == "" {
				return nil, errors.New("a tool call without function.name")
			}
			args := tc.Function.Arguments
			var s string
			if json.Unmarshal(args, &s) == nil { // arguments as a JSON string
				args = json.RawMessage(s)
			}
			if !json.Valid(args) {
				return nil, fmt.Errorf("the arguments of tool call %s are not JSON", tc.Function.Name)
			}
			evs = append(evs, voicetest.AgentEvent{Kind: voicetest.AgentToolCall, Tool: &voicetest.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args}})
		}
		return evs, nil
	case "status-update":
		if m.Status == "ended" {
			reason := "Vapi ended the call"
			if m.EndedReason != "" {
				reason += ": " + m.EndedReason
			}
			return append(c.down.Flush(nil), voicetest.AgentEvent{Kind: voicetest.AgentHangUp, Text: reason}), nil
		}
	}
	return []voicetest.AgentEvent{{Kind: voicetest.AgentData, Text: m.Type, Data: json.RawMessage(bytes.Clone(data))}}, nil
}

// transcript turns a transcript message into events.
func (c *conn) transcript(role string, final bool, text string) ([]voicetest.AgentEvent, error) {
	switch role {
	case "user":
		if !final {
			return nil, nil // the user's partials are guesses Vapi revises
		}
		return []voicetest.AgentEvent{{Kind: voicetest.UserTranscript, Text: text, Final: true}}, nil
	case "assistant":
		if final {
			c.partial = ""
			return []voicetest.AgentEvent{{Kind: voicetest.AgentTranscript, Text: text, Final: true}}, nil
		}
		// A partial holds the text so far: report what it adds. A
		// revision that is not an extension is left to the final.
		delta, ok := strings.CutPrefix(text, c.partial)
		if !ok {
			return nil, nil
		}
		c.partial = text
		if strings.TrimSpace(delta) == "" {
			return nil, nil
		}
		return []voicetest.AgentEvent{{Kind: voicetest.AgentTranscript, Text: delta}}, nil
	}
	return nil, fmt.Errorf("a transcript for role %q; Vapi sends assistant and user", role)
}
