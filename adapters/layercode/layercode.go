package layercode

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
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
	// DefaultWebSocketURL is LayerCode's frontend WebSocket.
	DefaultWebSocketURL = "wss://api.layercode.com/v1/agents/web/websocket"
	// DefaultInputRate is the rate of client.audio (the browser
	// SDK records at 8 kHz).
	DefaultInputRate = 8000
	// DefaultOutputRate is the rate of response.audio (the
	// browser SDK plays at 16 kHz).
	DefaultOutputRate = 16000
	// DefaultChunk is the length of each client.audio message
	// (LayerCode Gym's chunk_ms).
	DefaultChunk = 100 * time.Millisecond
	// DefaultAckDelay is how long the agent's audio must have
	// stopped before the adapter acknowledges its playback. Agents stream
	// their speech about as fast as it plays, so the player runs dry for a
	// moment between chunks; the delay keeps such a gap from being taken
	// for the end of the response.
	DefaultAckDelay = 250 * time.Millisecond
)

// layerCodeVoicedRMS is the RMS level (int16 units) above which user audio
// counts as speech, starting an utterance (vad_start or trigger.turn.start).
const layerCodeVoicedRMS = 200

// AuthRequest is what the authorize hook is asked for: the body
// the LayerCode browser SDK posts to the customer backend's authorize
// endpoint, plus that endpoint and the extra headers.
type AuthRequest struct {
	// URL is Agent.AuthorizeURL.
	URL string
	// AgentID is the LayerCode agent (the body's agent_id).
	AgentID string
	// ConversationID resumes a conversation when set (conversation_id).
	ConversationID string
	// Metadata is passed on to the agent's webhooks (metadata).
	Metadata map[string]any
	// Header holds extra headers for the request (Authorization…).
	Header http.Header
	// Extra holds more top-level fields of the body.
	Extra map[string]any
}

// Auth is what authorizing a session returns.
type Auth struct {
	// SessionKey is the client_session_key that opens the WebSocket. It is
	// a secret: the adapter keeps it out of captures, logs and errors.
	SessionKey string
	// ConversationID identifies the conversation.
	ConversationID string
	// Trigger is the agent's turn trigger, "automatic" (the agent detects
	// the end of speech; the default) or "push_to_talk" (the client marks
	// each user turn with trigger.turn.start and trigger.turn.end).
	Trigger string
}

// Agent reaches a voice agent hosted on LayerCode through its
// frontend WebSocket, playing the browser SDK's side:
//
//  1. Authorize: POST {"agent_id","metadata","conversation_id"?} (plus
//     AuthorizeExtra) as JSON to
//     AuthorizeURL (the customer backend, which asks LayerCode for a session)
//     and read client_session_key, conversation_id and
//     config.transcription.trigger from the answer (camelCase keys are
//     accepted too). Authorize replaces this step with a function.
//  2. Open WebSocketURL?client_session_key=… and send client.ready.
//  3. Send the user's speech as client.audio messages of Chunk (base64
//     PCM16 mono at InputRate), with vad_events vad_start / vad_end around
//     each utterance (automatic trigger, as the SDK's VAD does) or
//     trigger.turn.start / trigger.turn.end (push to talk); text as
//     client.response.text.
//  4. Play the agent's response.audio (base64 PCM16 mono at OutputRate) on a
//     real-time playback clock, and acknowledge each response when its
//     audio has played (and PlaybackAckDelay has passed with no more) with
//     trigger.response.audio.replay_finished
//     (reason "completed", turn_id, last_delta_id_played).
//
// What the adapter does with the agent's messages:
//
//   - response.audio: decoded, resampled to Session.Rate, returned as
//     AgentAudio. Audio of a turn the user interrupted is dropped, as the
//     SDK's player drops interrupted tracks (when the agent sends turn_id;
//     without it the adapter cannot tell the turns apart).
//   - response.text.delta: AgentTranscript deltas; response.text after
//     them: the whole text (Final), without them: a delta (LayerCode
//     streams the text of the speech, so Capabilities.StreamingTranscripts
//     is set). The
//     text comes as the agent generates it, ahead of the audio that says
//     it, so Capabilities.TranscriptAhead is set too: voicetest.AfterWords(n)
//     waits until n words have been heard, estimated from the audio played
//     (the words spread over no less than their length at
//     Config.WordsPerMinute, since LayerCode marks no end of the agent's
//     turn; set it to the agent's speaking rate).
//   - response.data: AgentData with the content as Data.
//   - user.transcript.interim_delta and user.transcript.delta: UserTranscript
//     deltas; user.transcript: a final UserTranscript.
//   - turn.start role=assistant: starts tracking the new turn_id.
//   - turn.start role=user while agent audio is still playing, or before
//     the response's response.end (from a server that sends it) when its
//     audio only ran dry for a moment: the agent detected a barge-in. The
//     adapter stops playback, sends replay_finished with reason
//     "interrupted" and returns AgentInterrupted.
//   - response.end and turn.end: consumed (see below).
//   - LayerCode closing the WebSocket (status 1000 or 1001): AgentHangUp.
//   - anything else (malformed JSON, binary frames, unknown types, bad
//     base64, odd PCM16 byte counts): a *FrameError from Recv.
//
// Faithfulness choices:
//
//   - turn.start role=user marks the start of the user's speech, not the
//     end of the agent's turn. response.end and turn.end, which the SDK
//     handles, are not sent by every server (LayerCode Gym knows neither,
//     and the SDK itself ends an agent turn when its player runs dry), so
//     the adapter does not claim Capabilities.TurnEnd: the runner ends
//     agent turns by tail silence (Config.Timeouts.TailSilence plays the
//     part of LayerCode Gym's assistant_idle_timeout; raise it for an agent
//     that pauses between sentences).
//   - The protocol has no client-side cancel (the SDK only stops its own
//     player), so Interrupt is unsupported and barge-in is overlapping audio
//     (Capabilities.NativeInterrupt false).
//   - The protocol carries no DTMF: SendDTMF is unsupported (the runner then
//     sends in-band tones).
//   - Missing turn_id and delta_id are tolerated: the acknowledgement then
//     omits them.
//
// Set the fields before the first Connect; an Agent may then serve
// parallel scenarios.
type Agent struct {
	// AuthorizeURL is the customer backend's authorize endpoint, e.g.
	// "http://127.0.0.1:3000/api/authorize".
	AuthorizeURL string
	// AgentID is the LayerCode agent to talk to.
	AgentID string
	// ConversationID, when set, resumes that conversation.
	ConversationID string
	// Metadata is sent in the authorize request for the agent's webhooks.
	Metadata map[string]any
	// AuthorizeHeader holds extra headers for the authorize request, e.g.
	// Authorization. They never reach a capture.
	AuthorizeHeader http.Header
	// AuthorizeExtra holds more top-level fields for the authorize body,
	// e.g. custom_metadata and custom_headers for a backend built for
	// LayerCode Gym. agent_id, metadata and conversation_id take
	// precedence over fields of the same name here.
	AuthorizeExtra map[string]any
	// Authorize, when set, replaces the HTTP authorize request: it returns
	// the session for req (e.g. by calling LayerCode's authorize_session
	// API directly with an API key).
	Authorize func(ctx context.Context, req AuthRequest) (Auth, error)
	// HTTPClient makes the authorize request (default http.DefaultClient).
	// The request is bounded by WSOptions.DialTimeout.
	HTTPClient *http.Client
	// WebSocketURL is LayerCode's WebSocket (default
	// DefaultWebSocketURL).
	WebSocketURL string
	// WSOptions are the transport settings (headers, keepalive, limits).
	wire.WSOptions
	// InputRate and OutputRate are the rates of client.audio and
	// response.audio (defaults 8000 and 16000).
	InputRate, OutputRate int
	// Chunk is the length of each client.audio message (default 100 ms).
	// The last chunk of an utterance may be shorter.
	Chunk time.Duration
	// PlaybackAckDelay is how long playback must have run dry before the
	// adapter sends replay_finished (LayerCode Gym waits 0.4 s). Zero means
	// DefaultAckDelay.
	PlaybackAckDelay time.Duration
	// TextInput makes the adapter declare text input only
	// (client.response.text), as LayerCode Gym's send_as_text does, so the
	// runner sends the user's lines as text rather than speech.
	TextInput bool
}

// New returns an agent that reaches the LayerCode agent agentID,
// authorizing through the customer backend at authorizeURL. See
// Agent for the fields that tune it.
func New(authorizeURL, agentID string) *Agent {
	return &Agent{AuthorizeURL: authorizeURL, AgentID: agentID}
}

// Connect authorizes a session, opens the WebSocket and sends client.ready.
func (a *Agent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	if s.Rate <= 0 {
		return nil, fmt.Errorf("adapters: layercode: session rate %d: %w", s.Rate, pcm.ErrBadRate)
	}
	inRate, outRate, chunk := a.InputRate, a.OutputRate, a.Chunk
	if inRate == 0 {
		inRate = DefaultInputRate
	}
	if outRate == 0 {
		outRate = DefaultOutputRate
	}
	if chunk == 0 {
		chunk = DefaultChunk
	}
	ackDelay := a.PlaybackAckDelay
	if ackDelay == 0 {
		ackDelay = DefaultAckDelay
	}
	for _, r := range []struct {
		what string
		rate int
	}{{"InputRate", inRate}, {"OutputRate", outRate}} {
		if err := wire.CheckRate("layercode", r.what, r.rate, wire.StandardRates(), "leave InputRate and OutputRate 0 for 8000 and 16000"); err != nil {
			return nil, err
		}
	}
	switch {
	case chunk < 0:
		return nil, fmt.Errorf("adapters: layercode: Chunk %v is negative; leave it 0 for %v", chunk, DefaultChunk)
	case a.PlaybackAckDelay < 0:
		return nil, fmt.Errorf("adapters: layercode: PlaybackAckDelay %v is negative", a.PlaybackAckDelay)
	case a.Authorize == nil && a.AuthorizeURL == "":
		return nil, errors.New("adapters: layercode: no AuthorizeURL and no Authorize hook; set AuthorizeURL to your backend's authorize endpoint")
	case a.Authorize == nil && a.AgentID == "":
		return nil, errors.New("adapters: layercode: AgentID is empty; set it to the LayerCode agent's ID")
	}
	// One scrubber for the whole Connect: it learns the credentials of
	// the environment, the authorize request's credentials (headers, URL,
	// body) and the session key, and blanks them in the capture, the log
	// and every error, also where the backend or LayerCode echoes them.
	sc := a.WSOptions.Scrub
	if sc == nil {
		sc = scrub.New()
	}
	sc.AddEnv(os.Environ())
	sc.AddHeader(a.AuthorizeHeader)
	sc.AddURL(a.AuthorizeURL)
	s.Logf = wire.ScrubLogf(sc, s.Logf)
	logf := s.Logf
	capture := wire.NewCaptureWriter(s.Capture, logf)
	capture.SetScrubber(sc)
	opts := a.WSOptions.Resolved()

	auth, err := a.authorize(ctx, opts.DialTimeout, capture, sc)
	if err != nil {
		return nil, err
	}
	trigger := auth.Trigger
	switch trigger {
	case "":
		trigger = "automatic"
	case "automatic", "push_to_talk":
	default:
		return nil, fmt.Errorf("adapters: layercode: the agent's turn trigger is %q; the adapter knows automatic and push_to_talk", sc.String(trigger))
	}

	c := &lcConn{
		rate: s.Rate, inRate: inRate, outRate: outRate,
		chunkSamples: max(pcm.SamplesFor(inRate, chunk), 1),
		ackDelay:     ackDelay,
		pushToTalk:   trigger == "push_to_talk",
		textInput:    a.TextInput,
		conversation: auth.ConversationID,
		kick:         make(chan struct{}, 1),
	}
	if s.Rate != inRate {
		if c.up.Resampler, err = pcm.NewResampler(s.Rate, inRate); err != nil {
			return nil, fmt.Errorf("adapters: layercode: %w", err)
		}
	}
	if s.Rate != outRate {
		if c.down, err = pcm.NewResampler(outRate, s.Rate); err != nil {
			return nil, fmt.Errorf("adapters: layercode: %w", err)
		}
	}

	wsURL := a.WebSocketURL
	if wsURL == "" {
		wsURL = DefaultWebSocketURL
	}
	u, err := url.Parse(wsURL)
	if err != nil {
		return nil, fmt.Errorf("adapters: layercode: WebSocketURL %q: %w", sc.URL(wsURL), wire.ScrubError(sc, err))
	}
	q := u.Query()
	q.Set("client_session_key", auth.SessionKey)
	u.RawQuery = q.Encode()

	quiet := s
	quiet.Capture = nil // the adapter's own capture writer records the dial
	wopts := a.WSOptions
	wopts.Scrub = sc
	ws, err := wire.Dial(ctx, "layercode", u.String(), wopts, quiet, nil)
	if err != nil {
		err = wire.ScrubError(sc, err)
		capture.Note("error", err.Error())
		return nil, err
	}
	ws.SetCapture(capture)
	capture.Note("open", sc.URL(u.String()))
	c.ws = ws
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"type":"client.ready"}`)); err != nil {
		ws.Close(nil)
		return nil, fmt.Errorf("adapters: layercode: sending client.ready: %w", wire.ScrubError(sc, err))
	}
	ws.Start(c.decode)
	ws.Go(c.playbackLoop)
	logf("layercode: conversation %s with agent %s open (%s trigger, client audio %d Hz, agent audio %d Hz)",
		auth.ConversationID, a.AgentID, trigger, inRate, outRate)
	return c, nil
}

// authorize gets a session from the hook or the authorize endpoint.
func (a *Agent) authorize(ctx context.Context, timeout time.Duration, capture *wire.CaptureWriter, sc *scrub.Scrubber) (Auth, error) {
	req := AuthRequest{URL: a.AuthorizeURL, AgentID: a.AgentID, ConversationID: a.ConversationID,
		Metadata: a.Metadata, Header: a.AuthorizeHeader, Extra: a.AuthorizeExtra}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var auth Auth
	var err error
	if a.Authorize != nil {
		capture.Note("authorize", "calling the Authorize hook")
		auth, err = a.Authorize(actx, req)
		if err != nil {
			err = fmt.Errorf("adapters: layercode: Authorize hook: %w", err)
		}
	} else if err = wire.CheckPlaintext("layercode", a.AuthorizeURL, a.WSOptions); err == nil {
		capture.Note("authorize", "POST "+sc.URL(a.AuthorizeURL))
		auth, err = a.authorizeHTTP(actx, req, sc)
	}
	sc.Add(auth.SessionKey)
	if err != nil {
		if ctx.Err() == nil && actx.Err() != nil {
			err = &voicetest.TimeoutError{Phase: voicetest.PhaseConnect, Timeout: timeout,
				Hint: fmt.Sprintf("authorizing a LayerCode session (%v); check that the authorize endpoint answers, or raise WSOptions.DialTimeout", err)}
		}
		err = wire.ScrubError(sc, err)
		capture.Note("error", err.Error())
		return Auth{}, err
	}
	if auth.SessionKey == "" {
		err := errors.New("adapters: layercode: authorization returned no client session key; the authorize endpoint must answer with client_session_key")
		capture.Note("error", err.Error())
		return Auth{}, err
	}
	capture.Note("authorized", "conversation "+sc.String(auth.ConversationID)+" (client session key withheld)")
	return auth, nil
}

// authorizeHTTP posts the SDK's authorize body to req.URL.
// It learns the credential fields of the body it sends into sc, and
// scrubs the URL and the answer it quotes in errors with it.
func (a *Agent) authorizeHTTP(ctx context.Context, req AuthRequest, sc *scrub.Scrubber) (Auth, error) {
	body := make(map[string]any, len(req.Extra)+3)
	for k, v := range req.Extra {
		body[k] = v
	}
	body["agent_id"], body["metadata"] = req.AgentID, req.Metadata
	if req.Metadata == nil {
		body["metadata"] = map[string]any{}
	}
	if req.ConversationID != "" {
		body["conversation_id"] = req.ConversationID
	}
	b, err := json.Marshal(body)
	if err != nil {
		return Auth{}, fmt.Errorf("adapters: layercode: encoding the authorize request (is Metadata JSON-encodable?): %w", err)
	}
	sc.AddJSON(b)
	where := sc.URL(req.URL)
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, req.URL, bytes.NewReader(b))
	if err != nil {
		return Auth{}, fmt.Errorf("adapters: layercode: AuthorizeURL %q: %w", where, err)
	}
	for k, vs := range req.Header {
		for _, v := range vs {
			hr.Header.Add(k, v)
		}
	}
	hr.Header.Set("Content-Type", "application/json")
	client := a.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(hr)
	if err != nil {
		return Auth{}, fmt.Errorf("adapters: layercode: authorize request to %s: %w", where, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Auth{}, fmt.Errorf("adapters: layercode: reading the authorize response from %s: %w", where, err)
	}
	if resp.StatusCode/100 != 2 {
		return Auth{}, fmt.Errorf("adapters: layercode: authorize request to %s: HTTP %s: %s; check AgentID and AuthorizeHeader", where, resp.Status, wire.Excerpt(sc.JSON(bytes.TrimSpace(raw))))
	}
	var ans struct {
		Key1   string `json:"client_session_key"`
		Key2   string `json:"clientSessionKey"`
		Conv1  string `json:"conversation_id"`
		Conv2  string `json:"conversationId"`
		Config struct {
			Transcription struct {
				Trigger string `json:"trigger"`
			} `json:"transcription"`
		} `json:"config"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		return Auth{}, fmt.Errorf("adapters: layercode: the authorize response from %s is not the expected JSON object: %w", where, err)
	}
	auth := Auth{SessionKey: cmpOr(ans.Key1, ans.Key2), ConversationID: cmpOr(ans.Conv1, ans.Conv2, req.ConversationID),
		Trigger: ans.Config.Transcription.Trigger}
	if auth.SessionKey == "" {
		return Auth{}, fmt.Errorf("adapters: layercode: the authorize response from %s has no client_session_key (or clientSessionKey); check the backend's authorize endpoint", where)
	}
	return auth, nil
}

func cmpOr(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// lcConn is one LayerCode conversation.
type lcConn struct {
	ws                    *wire.Conn
	rate, inRate, outRate int
	chunkSamples          int
	ackDelay              time.Duration
	pushToTalk, textInput bool
	conversation          string

	// Send side, used by the runner's sending goroutine.
	sendMu  sync.Mutex
	up      wire.Upstream // the user's audio, session rate to wire rate
	pending []int16       // input-rate audio not yet sent
	userOn  bool          // an utterance is in progress (vad_start sent)
	msg     []byte
	pcmBuf  []byte

	// Playback and receive state, shared by the reader goroutine and the
	// playback loop.
	mu          sync.Mutex
	down        *pcm.Resampler
	samples     []int16
	raw         []byte
	playEnd     time.Time // when the agent's queued audio ends playing
	unacked     bool      // audio arrived that replay_finished has not covered
	flushed     bool      // the resampler's tail was flushed since the last audio
	turnID      string    // the agent's current turn
	lastDelta   string
	droppedTurn string // audio of this turn was interrupted; drop the rest
	// responding: audio of the agent's current response arrived and its
	// response.end has not; sendsEnd: the server sends response.end at
	// all (LayerCode does; LayerCode Gym and some servers do not).
	responding, sendsEnd bool
	kick                 chan struct{}

	// Reader goroutine only.
	textDeltas bool // the agent's turn has sent response.text.delta
}

// Capabilities reports what the LayerCode adapter supports.
func (c *lcConn) Capabilities() voicetest.Capabilities {
	return voicetest.Capabilities{
		Adapter:              "layercode",
		Audio:                !c.textInput,
		Text:                 true,
		InputFormat:          voicetest.AudioFormat{Encoding: "pcm16", Rate: c.inRate},
		OutputFormat:         voicetest.AudioFormat{Encoding: "pcm16", Rate: c.outRate},
		StreamingTranscripts: true,
		TranscriptAhead:      true,
		NativeVAD:            !c.pushToTalk,
	}
}

// SendAudio sends user speech as client.audio messages of the configured
// chunk length; the first voiced audio of an utterance is preceded by
// vad_events vad_start (or trigger.turn.start under push to talk).
func (c *lcConn) SendAudio(ctx context.Context, ch pcm.Chunk) error {
	if err := wire.CheckSendRate("layercode", ch.Rate, c.rate); err != nil {
		return err
	}
	if c.textInput {
		return &voicetest.UnsupportedError{Adapter: "layercode", Capability: "audio input",
			Alternative: "the adapter was built with TextInput: send text, or leave TextInput false"}
	}
	if err := c.ws.Sendable(ctx); err != nil {
		return err
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	c.pending = append(c.pending, c.up.Process(ch.Samples)...)
	if !c.userOn && pcm.RMS(ch) > layerCodeVoicedRMS {
		c.userOn = true
		start := `{"type":"vad_events","event":"vad_start"}`
		if c.pushToTalk {
			start = `{"type":"trigger.turn.start","role":"user"}`
		}
		if err := c.ws.Write(ctx, websocket.MessageText, []byte(start)); err != nil {
			return err
		}
	}
	return c.sendChunksLocked(ctx, false)
}

// sendChunksLocked sends every whole chunk pending, and with flush the
// partial last one. Call with sendMu held.
func (c *lcConn) sendChunksLocked(ctx context.Context, flush bool) error {
	n := 0
	defer func() { c.pending = c.pending[:copy(c.pending, c.pending[n:])] }()
	for len(c.pending)-n >= c.chunkSamples || flush && len(c.pending) > n {
		end := min(n+c.chunkSamples, len(c.pending))
		c.pcmBuf = wire.AppendPCM16(c.pcmBuf[:0], c.pending[n:end])
		b := append(c.msg[:0], `{"type":"client.audio","content":"`...)
		b = base64.StdEncoding.AppendEncode(b, c.pcmBuf)
		b = append(b, `"}`...)
		c.msg = b
		if err := c.ws.WriteAudio(ctx, websocket.MessageText, b); err != nil {
			return err
		}
		n = end
	}
	return nil
}

// EndUtterance sends the rest of the utterance's audio and vad_events
// vad_end (or trigger.turn.end under push to talk).
func (c *lcConn) EndUtterance(ctx context.Context) error {
	if c.textInput {
		return nil
	}
	if err := c.ws.Sendable(ctx); err != nil {
		return err
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	c.pending = append(c.pending, c.up.Flush()...)
	if err := c.sendChunksLocked(ctx, true); err != nil {
		return err
	}
	if !c.userOn {
		return nil
	}
	c.userOn = false
	end := `{"type":"vad_events","event":"vad_end"}`
	if c.pushToTalk {
		end = `{"type":"trigger.turn.end","role":"user"}`
	}
	return c.ws.Write(ctx, websocket.MessageText, []byte(end))
}

// SendText sends a client.response.text message.
func (c *lcConn) SendText(ctx context.Context, text string) error {
	if strings.TrimSpace(text) == "" {
		return errors.New("adapters: layercode: SendText with empty text; LayerCode ignores an empty client.response.text")
	}
	b, err := json.Marshal(struct {
		Type    string `json:"type"`
		Content string `json:"content"`
	}{"client.response.text", text})
	if err != nil {
		return fmt.Errorf("adapters: layercode: encoding text: %w", err)
	}
	return c.ws.Write(ctx, websocket.MessageText, b)
}

// SendDTMF is unsupported: the LayerCode WebSocket carries no key presses.
func (c *lcConn) SendDTMF(context.Context, string) error {
	return &voicetest.UnsupportedError{Adapter: "layercode", Capability: "DTMF events",
		Alternative: "LayerCode's WebSocket has no DTMF message; send the tones in-band as audio (the runner does so for voicetest.DTMF steps) or the digits as text"}
}

// Interrupt is unsupported: LayerCode has no client-side cancel.
func (c *lcConn) Interrupt(context.Context) error {
	return &voicetest.UnsupportedError{Adapter: "layercode", Capability: "native interrupt",
		Alternative: "LayerCode has no client-side cancel; barge in by sending user audio while the agent speaks (LayerCode answers with turn.start role=user)"}
}

// WireStats reports what crossed the WebSocket: frames each way, the
// barge-ins that cut the agent's audio (turn.start of the user while it
// played: clears) and the audio of interrupted turns the adapter dropped.
func (c *lcConn) WireStats() voicetest.WireStats { return c.ws.Stats().Snapshot("layercode") }

// Recv returns the agent's next event.
func (c *lcConn) Recv(ctx context.Context) (voicetest.AgentEvent, error) {
	return c.ws.Recv(ctx)
}

// Close closes the WebSocket (LayerCode has no goodbye message).
func (c *lcConn) Close() error { return c.ws.Close(nil) }

// lcInbound is any message LayerCode sends.
type lcInbound struct {
	Type    string          `json:"type"`
	Content json.RawMessage `json:"content"`
	Role    string          `json:"role"`
	TurnID  string          `json:"turn_id"`
	DeltaID string          `json:"delta_id"`
}

// decode turns one message from LayerCode into events. It runs on the
// reader goroutine.
func (c *lcConn) decode(typ websocket.MessageType, data []byte) ([]voicetest.AgentEvent, error) {
	if typ != websocket.MessageText {
		return nil, fmt.Errorf("got a binary frame of %d bytes; LayerCode messages are JSON text frames", len(data))
	}
	var m lcInbound
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("not a JSON LayerCode message: %w", err)
	}
	switch m.Type {
	case "response.audio":
		return c.decodeAudio(m)
	case "response.text.delta":
		text, err := lcString(m)
		if err != nil {
			return nil, err
		}
		c.textDeltas = true
		return []voicetest.AgentEvent{{Kind: voicetest.AgentTranscript, Text: text}}, nil
	case "response.text":
		text, err := lcString(m)
		if err != nil {
			return nil, err
		}
		// After response.text.delta messages, response.text is the whole
		// text (the frontend WebSocket API reference); without them it is
		// a piece, as servers that send no deltas (and LayerCode Gym) have
		// it.
		return []voicetest.AgentEvent{{Kind: voicetest.AgentTranscript, Text: text, Final: c.textDeltas}}, nil
	case "response.end", "turn.end":
		// The end of the agent's response and of a turn, which the SDK
		// handles (LayercodeClient._handleWebSocketMessage). The runner
		// still ends the agent's turn by its audio: servers that do not
		// send them exist, and the SDK ends a turn by its playback.
		if m.Type == "response.end" {
			c.mu.Lock()
			c.responding, c.sendsEnd = false, true
			c.mu.Unlock()
		}
		return nil, nil
	case "response.data":
		if len(m.Content) == 0 {
			return nil, errors.New("response.data without content")
		}
		return []voicetest.AgentEvent{{Kind: voicetest.AgentData, Data: append(json.RawMessage(nil), m.Content...)}}, nil
	case "user.transcript.interim_delta", "user.transcript.delta", "user.transcript":
		text, err := lcString(m)
		if err != nil {
			return nil, err
		}
		return []voicetest.AgentEvent{{Kind: voicetest.UserTranscript, Text: text, Final: m.Type == "user.transcript"}}, nil
	case "turn.start":
		switch m.Role {
		case "assistant":
			c.mu.Lock()
			if m.TurnID != "" {
				c.turnID = m.TurnID
			}
			c.mu.Unlock()
			c.textDeltas = false
			return nil, nil
		case "user":
			return c.userTurnStarted(), nil
		}
		return nil, fmt.Errorf("turn.start with role %q; expected user or assistant", m.Role)
	case "":
		return nil, errors.New(`no "type" field; expected a LayerCode message such as response.audio`)
	}
	return nil, fmt.Errorf("unknown message type %q; LayerCode sends turn.start, turn.end, response.audio, response.text(.delta), response.data, response.end and user.transcript(.delta, .interim_delta)", m.Type)
}

// lcString returns the message's content as a string.
func lcString(m lcInbound) (string, error) {
	var s string
	if len(m.Content) == 0 {
		return "", fmt.Errorf("%s without content", m.Type)
	}
	if err := json.Unmarshal(m.Content, &s); err != nil {
		return "", fmt.Errorf("%s content is not a string: %w", m.Type, err)
	}
	return s, nil
}

// decodeAudio plays one response.audio.
func (c *lcConn) decodeAudio(m lcInbound) ([]voicetest.AgentEvent, error) {
	// m.Content was validated by the Unmarshal of the whole message; a
	// string without escapes (base64 needs none) is used as it is.
	b64 := []byte(m.Content)
	if len(b64) < 2 || b64[0] != '"' || b64[len(b64)-1] != '"' {
		return nil, errors.New("response.audio content is not a base64 string")
	}
	if bytes.IndexByte(b64, '\\') >= 0 {
		var s string
		if err := json.Unmarshal(b64, &s); err != nil {
			return nil, fmt.Errorf("response.audio content: %w", err)
		}
		b64 = []byte(s)
	} else {
		b64 = b64[1 : len(b64)-1]
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var err error
	c.raw, err = base64.StdEncoding.AppendDecode(c.raw[:0], b64)
	if err != nil {
		return nil, fmt.Errorf("response.audio content is not base64: %w", err)
	}
	c.samples, err = pcm.DecodePCM16(c.samples[:0], c.raw)
	if err != nil {
		return nil, fmt.Errorf("response.audio: %w", err)
	}
	if m.TurnID != "" && m.TurnID == c.droppedTurn {
		c.ws.Stats().Dropped(1)
		return nil, nil // the user interrupted this turn: the SDK drops its audio
	}
	if m.TurnID != "" && m.TurnID != c.turnID {
		c.turnID = m.TurnID
	}
	if m.DeltaID != "" {
		c.lastDelta = m.DeltaID
	}
	now := time.Now()
	if c.playEnd.Before(now) {
		c.playEnd = now
	}
	c.playEnd = c.playEnd.Add(pcm.DurationOf(len(c.samples), c.outRate))
	c.unacked, c.flushed, c.responding = true, false, true
	select {
	case c.kick <- struct{}{}:
	default:
	}
	if c.down == nil {
		return []voicetest.AgentEvent{wire.AudioEvent(c.rate, c.samples)}, nil
	}
	out := c.down.Process(make([]int16, 0, c.down.MaxOut(len(c.samples))), c.samples)
	if len(out) == 0 {
		return nil, nil
	}
	return []voicetest.AgentEvent{{Kind: voicetest.AgentAudio, Audio: pcm.Chunk{Rate: c.rate, Samples: out}}}, nil
}

// userTurnStarted handles turn.start role=user: a barge-in when agent audio
// is still playing, or when the server, which ends each response with
// response.end, has not ended the current one: its audio then only ran
// dry for a moment (it streams in real time, and a loaded machine or
// network delays a chunk), as a browser's player would ride out.
func (c *lcConn) userTurnStarted() []voicetest.AgentEvent {
	c.mu.Lock()
	midResponse := c.sendsEnd && c.responding
	if !c.unacked && !midResponse {
		c.mu.Unlock()
		return nil
	}
	now := time.Now()
	interrupted := now.Before(c.playEnd) || midResponse
	c.responding = false
	var tail []voicetest.AgentEvent
	if interrupted {
		c.ws.Stats().Clear()
		c.droppedTurn = c.turnID
		if c.down != nil {
			c.down.Reset()
		}
		c.playEnd = now
	} else if !c.flushed {
		tail = c.flushLocked()
	}
	ack := c.ackLocked(interrupted)
	c.mu.Unlock()
	c.sendAck(ack)
	if interrupted {
		return []voicetest.AgentEvent{{Kind: voicetest.AgentInterrupted, Text: "turn.start role=user"}}
	}
	return tail
}

// flushLocked returns the resampler's tail as an event. Call with mu held.
func (c *lcConn) flushLocked() []voicetest.AgentEvent {
	if c.down == nil {
		return nil
	}
	if tail := c.down.Flush(nil); len(tail) > 0 {
		return []voicetest.AgentEvent{{Kind: voicetest.AgentAudio, Audio: pcm.Chunk{Rate: c.rate, Samples: tail}}}
	}
	return nil
}

// ackLocked builds the replay_finished message for the audio played so
// far and marks it acknowledged. Call with mu held.
func (c *lcConn) ackLocked(interrupted bool) []byte {
	c.unacked = false
	b := []byte(`{"type":"trigger.response.audio.replay_finished","reason":"`)
	if interrupted {
		b = append(b, "interrupted"...)
	} else {
		b = append(b, "completed"...)
	}
	b = append(b, '"')
	if c.turnID != "" {
		b = append(b, `,"turn_id":`...)
		b = strconv.AppendQuote(b, c.turnID)
	}
	if c.lastDelta != "" {
		b = append(b, `,"last_delta_id_played":`...)
		b = strconv.AppendQuote(b, c.lastDelta)
	}
	return append(b, '}')
}

// sendAck writes an acknowledgement. A failed write means the transport is
// gone, which Recv reports by itself; it is only logged.
func (c *lcConn) sendAck(b []byte) {
	if err := c.ws.Write(context.Background(), websocket.MessageText, b); err != nil && c.ws.ClosedErr() == nil {
		c.ws.Logf("layercode: sending replay_finished: %v", err)
	}
}

// playbackLoop follows the playback clock: when the agent's audio has
// played, it flushes the resampler's tail (so the last few milliseconds of
// a response arrive with it, not with the next response); once playback
// has stayed dry for PlaybackAckDelay, it acknowledges the response.
func (c *lcConn) playbackLoop() {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-c.ws.Context().Done():
			return
		case <-c.kick:
		case <-t.C:
		}
		c.mu.Lock()
		if !c.unacked {
			c.mu.Unlock()
			continue
		}
		now := time.Now()
		if !c.flushed && !now.Before(c.playEnd) {
			c.flushed = true
			if tail := c.flushLocked(); tail != nil {
				c.ws.PushEvent(tail[0]) // under mu, so it precedes later audio
			}
		}
		due := c.playEnd
		if c.flushed {
			due = due.Add(c.ackDelay)
		}
		if wait := due.Sub(now); wait > 0 {
			c.mu.Unlock()
			t.Reset(wait)
			continue
		}
		ack := c.ackLocked(false)
		c.mu.Unlock()
		c.sendAck(ack)
	}
}
