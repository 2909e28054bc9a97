// Package twiliophone reaches a voice agent at a phone number, through
// Twilio: voicetest places a call from one of your Twilio numbers to the
// agent's number (Dial mode), or waits for the agent to call one of your
// Twilio numbers (Wait mode), and talks to it over the call's
// bidirectional Media Stream.
//
// Why a package of its own rather than options on adapters/twilio: there
// voicetest plays Twilio and dials a bot's Media Streams server; here
// voicetest is the app behind a real Twilio call. It serves the TwiML
// webhook and the Media Stream WebSocket (the server side of the same
// messages), drives Twilio's REST API, and hears the agent through a
// phone line that is never silent. The two share no code path, and a
// test of a bot's WebSocket should not compile a webhook server.
//
// How a call goes (Twilio's documentation: REST API 2010-04-01 Calls and
// IncomingPhoneNumbers resources, TwiML <Connect><Stream> and <Play
// digits>, Media Streams WebSocket messages, webhook security):
//
//   - Connect starts (or shares) voicetest's webhook server on Listen,
//     which Twilio must reach at PublicURL (a tunnel such as ngrok, or a
//     public host). Each call gets a random token in its paths.
//   - Dial mode (From and To set): POST Calls.json {To, From, Url:
//     PublicURL/twilio/voice/<token>, Method: POST}. Wait mode (WaitOn
//     set): GET IncomingPhoneNumbers.json?PhoneNumber=WaitOn, remember its
//     VoiceUrl and VoiceMethod, point them at the webhook, and run
//     Trigger (which makes the agent call); Close restores them.
//   - The webhook checks X-Twilio-Signature (HMAC-SHA1 of the full URL
//     and the sorted POST parameters, keyed with AuthToken) and the
//     AccountSid, and answers <Connect><Stream url="wss://…/twilio/media/<token>">
//     with a <Parameter name="voicetest"> holding the token. A request
//     with a bad signature is refused (403) and fails Connect, which
//     says what to check. In Wait mode a call from another number than
//     ExpectCaller is answered <Reject/>.
//   - Connect returns once the stream's "start" has arrived; RingTimeout
//     bounds the wait (a *voicetest.TimeoutError in phase connect), and
//     the call is hung up.
//
// On the stream, the user's speech goes as "media" messages of 20 ms of
// µ-law at 8 kHz, paced so that at most MaxAhead is queued at Twilio
// ahead of the line's clock; EndUtterance sends a mark ("utt-N") after
// it and returns once Twilio echoes the mark, that is once the agent has
// heard the whole utterance. The agent detects the end of the user's
// speech itself (Capabilities.NativeVAD).
//
// The agent's side: "media" (the call's audio) is decoded, put through a
// silence gate (a phone line carries silence, or noise, between the
// agent's words: packets whose peak is below SilenceThreshold are held
// back, reported only when the agent's sound resumes within 400 ms, and
// dropped otherwise), resampled to Session.Rate and reported as
// AgentAudio. A "dtmf" (the agent pressed a key) is AgentData named
// "dtmf" with {"digit"}; a mark voicetest did not send is AgentData named
// "mark". "stop" (or the stream closing) when voicetest did not ask for
// it is the call ending: AgentHangUp, then a
// *voicetest.TransportClosedError. Anything else (text that is not JSON,
// a binary frame, an unknown event, another stream's message, media that
// is not base64) is a *wire.FrameError; the Conn stays usable.
//
// Key presses (SendDTMF) update the live call with new TwiML: <Play
// digits="…"/> followed by the same <Connect><Stream>. Twilio stops the
// current stream, plays the tones into the call, and opens a new stream,
// which the Conn takes up; SendDTMF returns once it has started. Keys are
// 0-9, * and #.
//
// The phone line has no text and no caller-side cancel: SendText and
// Interrupt return an *voicetest.UnsupportedError (barge-in is
// overlapping audio; Twilio does not tell the caller when the agent cut
// its own speech).
//
// Close hangs the call up (POST Calls/<sid>.json Status=completed),
// restores the number's voice URL in Wait mode, and stops the webhook
// server when no call uses it.
//
// Secrets: AuthToken, APIKeySecret, the Account SID and every phone
// number (From, To, WaitOn, ExpectCaller, and the From and To of the
// webhook) are blanked in the capture, the log, errors and events, as are
// the credentials of the environment.
package twiliophone

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/internal/evqueue"
	"github.com/voicetest-go/voicetest/adapters/internal/silencegate"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/scrub"
)

// Defaults of Agent.
const (
	// DefaultAPIBase is Twilio's REST API.
	DefaultAPIBase = "https://api.twilio.com"
	// DefaultListen is the webhook server's address.
	DefaultListen = "127.0.0.1:0"
	// DefaultRingTimeout bounds the wait for the call's stream.
	DefaultRingTimeout = 60 * time.Second
	// DefaultRequestTimeout bounds each REST request.
	DefaultRequestTimeout = 10 * time.Second
	// DefaultMaxAhead is how much user speech may be queued at Twilio.
	DefaultMaxAhead = 200 * time.Millisecond
	// DefaultSilenceThreshold is the peak (of 32767) below which a packet
	// of the call's audio is silence.
	DefaultSilenceThreshold = 300
	// DefaultMaxFrameBytes bounds one stream message.
	DefaultMaxFrameBytes = 1 << 20
	// DefaultMaxQueueBytes bounds the agent's events queued while the
	// runner is not reading.
	DefaultMaxQueueBytes = 32 << 20
)

const (
	adapterName = "twiliophone"
	lineRate    = pcm.Rate8k
	frameBytes  = 160 // 20 ms of µ-law
	maxPause    = lineRate * 400 / 1000
	maxBody     = 1 << 20
	// writeTimeout bounds a write to the stream.
	writeTimeout = 10 * time.Second
)

// Agent is a voice agent at a phone number, reached through Twilio. Set
// the fields before the first Connect. In Dial mode an Agent may serve
// parallel scenarios (one call each); in Wait mode one call at a time
// waits on a number.
type Agent struct {
	// AccountSid is your Twilio account ("AC…").
	AccountSid string
	// AuthToken is the account's Auth Token: it signs Twilio's webhooks
	// and, without an API key, authenticates the REST requests.
	AuthToken string
	// APIKeySid and APIKeySecret, when set, authenticate the REST
	// requests instead of AuthToken.
	APIKeySid, APIKeySecret string

	// From is your Twilio number that places the call, and To the
	// agent's number (Dial mode), in E.164 ("+15551234567").
	From, To string
	// WaitOn is your Twilio number the agent calls (Wait mode).
	WaitOn string
	// ExpectCaller, in Wait mode, when set, is the only number whose call
	// is taken; others are rejected.
	ExpectCaller string
	// Trigger, in Wait mode, runs once the number points at voicetest: it
	// makes the agent call (an outbound-call API of the agent's).
	Trigger func(ctx context.Context) error

	// PublicURL is the base URL at which Twilio reaches the webhook
	// server, e.g. "https://abcd.ngrok.app" forwarding to Listen. Empty
	// means the server's own URL (only a loopback Twilio double can use
	// that).
	PublicURL string
	// Listen is the webhook server's address (default DefaultListen).
	Listen string
	// Listener, when set, is where the webhook server serves instead of
	// Listen: a test's in-memory listener, with a Twilio double that
	// reaches it in process, to run a call on virtual time. The server
	// closes it when the last call ends, so it serves one Agent's calls
	// while they overlap.
	Listener net.Listener
	// APIBase is Twilio's REST API (default DefaultAPIBase).
	APIBase string

	// RingTimeout bounds the wait from placing the call (or pointing the
	// number) to the stream's start (default DefaultRingTimeout).
	RingTimeout time.Duration
	// RequestTimeout bounds each REST request (default
	// DefaultRequestTimeout).
	RequestTimeout time.Duration
	// MaxAhead is how much user speech may be queued at Twilio ahead of
	// the line (default DefaultMaxAhead).
	MaxAhead time.Duration
	// SilenceThreshold is the peak below which a packet of the call's
	// audio is not reported (default DefaultSilenceThreshold; negative
	// reports every packet).
	SilenceThreshold int
	// MaxFrameBytes bounds one stream message (default
	// DefaultMaxFrameBytes); a larger one ends the call with an error
	// naming this field.
	MaxFrameBytes int64
	// MaxQueueBytes bounds the agent's events queued while the runner is
	// not reading (default DefaultMaxQueueBytes); past it the call ends
	// with a *voicetest.LimitError naming this field.
	MaxQueueBytes int64
	// HTTPClient makes the REST requests (default http.DefaultClient).
	HTTPClient *http.Client
	// Scrub, when set, is the scrubber the calls learn their secrets into.
	Scrub *scrub.Scrubber

	mu      sync.Mutex
	srv     *server
	refs    int
	waiting map[string]bool // numbers a Wait-mode call points at voicetest
}

// server is the webhook and Media Streams server the Agent's calls share.
type server struct {
	http  *http.Server
	local string // http://host:port
	done  chan struct{}

	mu    sync.Mutex
	conns map[string]*conn // by token
}

// Capabilities reports what the phone line supports.
func (c *conn) Capabilities() voicetest.Capabilities {
	f := voicetest.AudioFormat{Encoding: "mulaw", Rate: lineRate}
	return voicetest.Capabilities{Adapter: adapterName, Audio: true, NativeVAD: true, DTMF: true, InputFormat: f, OutputFormat: f}
}

// conn is one call.
type conn struct {
	a        *Agent
	token    string
	rate     int
	public   string // the base URL Twilio reaches
	sc       *scrub.Scrubber
	cap      *wire.CaptureWriter
	logf     func(string, ...any)
	call     *evqueue.Call
	stats    wire.Stats
	maxAhead time.Duration
	maxQueue int64
	maxFrame int64
	reqWait  time.Duration
	restore  *number // Wait mode: the number's voice URL to put back
	srv      *server

	ctx    context.Context // lives until Close or the end of the call
	cancel context.CancelFunc

	mu         sync.Mutex
	callSid    string
	cur        *stream       // the current stream, nil between streams
	last       *stream       // the last stream that started
	ready      chan struct{} // closed when a stream has started; replaced by a redirect
	setupErr   error         // why the call could not be set up (a bad webhook)
	setupFail  chan struct{}
	redirect   bool          // voicetest asked for a new stream (SendDTMF)
	markWaiter string        // the utterance mark EndUtterance waits for
	markEcho   chan struct{} // closed when it is echoed

	sendMu  sync.Mutex
	up      wire.Upstream
	pending []byte // µ-law less than a frame
	playEnd time.Time
	utt     int
	buf     []int16
	out     []byte // the last media message sent

	// The current stream's reader only.
	down wire.Downstream
	gate silencegate.Gate
}

// stream is one Media Stream of the call.
type stream struct {
	ws        *websocket.Conn
	streamSid string
	wmu       sync.Mutex
	done      chan struct{} // the reader returned
	// batched: the connection batches writes and bounds each kernel
	// write by writeTimeout, closing the connection when one stalls (see
	// media); a write then needs no deadline of its own.
	batched   bool
	mediaTail []byte // the end of a media message to it (under the conn's sendMu)
}

// number is a phone number's voice configuration.
type number struct {
	sid, voiceURL, voiceMethod string
}

// Connect sets the call up and returns once its stream has started.
func (a *Agent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	if s.Rate <= 0 {
		return nil, fmt.Errorf("adapters: %s: session rate %d: %w", adapterName, s.Rate, pcm.ErrBadRate)
	}
	dial := a.From != "" || a.To != ""
	switch {
	case a.AccountSid == "" || a.AuthToken == "":
		return nil, fmt.Errorf("adapters: %s: set Agent.AccountSid and Agent.AuthToken (e.g. from TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN): the token also checks Twilio's webhook signatures", adapterName)
	case dial && a.WaitOn != "":
		return nil, fmt.Errorf("adapters: %s: set From and To to place a call, or WaitOn to wait for one, not both", adapterName)
	case dial && (a.From == "" || a.To == ""):
		return nil, fmt.Errorf("adapters: %s: placing a call needs both From (your Twilio number) and To (the agent's number)", adapterName)
	case !dial && a.WaitOn == "":
		return nil, fmt.Errorf("adapters: %s: set From and To to place a call to the agent, or WaitOn to wait for the agent's call", adapterName)
	case (a.APIKeySid == "") != (a.APIKeySecret == ""):
		return nil, fmt.Errorf("adapters: %s: set both APIKeySid and APIKeySecret, or neither", adapterName)
	}
	if a.PublicURL == "" && !loopbackURL(a.apiBase()) {
		return nil, fmt.Errorf("adapters: %s: set Agent.PublicURL to the https address at which Twilio reaches the webhook server (a tunnel such as ngrok to Agent.Listen): Twilio cannot call back to this machine's loopback address", adapterName)
	}
	sc := a.Scrub
	if sc == nil {
		sc = scrub.New()
	}
	sc.AddEnv(os.Environ())
	sc.Add(a.AuthToken, a.APIKeySecret, a.AccountSid, a.From, a.To, a.WaitOn, a.ExpectCaller)
	sc.AddURL(a.PublicURL)
	logf := wire.ScrubLogf(sc, s.Logf)
	capture := wire.NewCaptureWriter(s.Capture, logf)
	capture.SetScrubber(sc)
	c := &conn{a: a, rate: s.Rate, sc: sc, cap: capture, logf: logf, down: wire.Downstream{Rate: s.Rate},
		ready: make(chan struct{}), setupFail: make(chan struct{}),
		maxAhead: cmp(a.MaxAhead, DefaultMaxAhead), reqWait: cmp(a.RequestTimeout, DefaultRequestTimeout),
		maxQueue: cmp(a.MaxQueueBytes, DefaultMaxQueueBytes), maxFrame: cmp(a.MaxFrameBytes, DefaultMaxFrameBytes)}
	c.gate = silencegate.Gate{Threshold: a.SilenceThreshold, MaxPause: maxPause}
	if c.gate.Threshold == 0 {
		c.gate.Threshold = DefaultSilenceThreshold
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.call = evqueue.NewCall(adapterName, c.maxQueue, "Agent.MaxQueueBytes", sc, logf, capture, func(bool) {
		c.cancel()
		c.mu.Lock()
		st := c.cur
		c.mu.Unlock()
		if st != nil {
			st.ws.CloseNow()
		}
	})
	var err error
	if s.Rate != lineRate {
		if c.up.Resampler, err = pcm.NewResampler(s.Rate, lineRate); err != nil {
			return nil, fmt.Errorf("adapters: %s: %w", adapterName, err)
		}
	}
	tok := make([]byte, 16)
	rand.Read(tok)
	c.token = hex.EncodeToString(tok)
	sc.Add(c.token)

	srv, err := a.acquire()
	if err != nil {
		return nil, wire.ScrubError(sc, err)
	}
	c.public = strings.TrimRight(a.PublicURL, "/")
	if c.public == "" {
		c.public = srv.local
	}
	if err := wire.CheckPlaintext(adapterName, a.apiBase(), wire.WSOptions{}); err != nil {
		a.release()
		return nil, wire.ScrubError(sc, err)
	}
	c.srv = srv
	srv.mu.Lock()
	srv.conns[c.token] = c
	srv.mu.Unlock()
	ring := cmp(a.RingTimeout, DefaultRingTimeout)
	capture.Note("open", "POST "+sc.URL(a.apiBase())+" (Twilio's REST API; the call's stream follows)")
	if err := c.setUp(ctx, ring, dial); err != nil {
		c.Close()
		return nil, wire.ScrubError(sc, err)
	}
	logf("%s: call %s in progress (%s)", adapterName, c.callSid, map[bool]string{true: "placed", false: "taken"}[dial])
	return c, nil
}

// loopbackURL reports whether raw is a URL of this machine.
func loopbackURL(raw string) bool {
	u, err := neturl.Parse(raw)
	if err != nil {
		return false
	}
	if strings.EqualFold(u.Hostname(), "localhost") {
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}

// cmp returns v, or def when v is not positive.
func cmp[T int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

func (a *Agent) apiBase() string {
	if a.APIBase != "" {
		return strings.TrimRight(a.APIBase, "/")
	}
	return DefaultAPIBase
}

// setUp places the call (or points the number and triggers the agent)
// and waits for the stream.
func (c *conn) setUp(ctx context.Context, ring time.Duration, dial bool) error {
	a := c.a
	rctx, cancel := context.WithTimeout(ctx, ring)
	defer cancel()
	voice := c.public + "/twilio/voice/" + c.token
	if dial {
		var call struct {
			Sid string `json:"sid"`
		}
		form := neturl.Values{"To": {a.To}, "From": {a.From}, "Url": {voice}, "Method": {"POST"}}
		if err := c.rest(rctx, http.MethodPost, "Calls.json", form, &call); err != nil {
			return c.ringErr(ctx, rctx, ring, fmt.Errorf("placing the call: %w", err))
		}
		c.mu.Lock()
		c.callSid = call.Sid
		c.mu.Unlock()
	} else {
		if err := c.pointNumber(rctx, voice); err != nil {
			return c.ringErr(ctx, rctx, ring, err)
		}
		if a.Trigger != nil {
			if err := a.Trigger(rctx); err != nil {
				return c.ringErr(ctx, rctx, ring, fmt.Errorf("adapters: %s: Agent.Trigger: %w", adapterName, err))
			}
		}
	}
	c.mu.Lock()
	ready := c.ready
	c.mu.Unlock()
	select {
	case <-ready:
		return nil
	case <-c.setupFail:
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.setupErr
	case <-c.ctx.Done():
		if err := c.call.ClosedErr(); err != nil {
			return err
		}
		return fmt.Errorf("adapters: %s: the call ended while it was set up", adapterName)
	case <-rctx.Done():
		what := "the call was placed, but Twilio never opened its stream (did the agent answer? can Twilio reach PublicURL?)"
		if !dial {
			what = "the number points at voicetest, but no call came (did the agent call it? can Twilio reach PublicURL?)"
		}
		return c.ringErr(ctx, rctx, ring, errors.New(what))
	}
}

// ringErr returns err, as a *voicetest.TimeoutError when RingTimeout
// ended the wait.
func (c *conn) ringErr(ctx, rctx context.Context, ring time.Duration, err error) error {
	if ctx.Err() == nil && rctx.Err() != nil {
		return &voicetest.TimeoutError{Phase: voicetest.PhaseConnect, Timeout: ring,
			Hint: fmt.Sprintf("%v; raise Agent.RingTimeout if the call takes longer to connect", err)}
	}
	return err
}

// pointNumber points WaitOn's voice URL at voice, keeping the old one for
// Close.
func (c *conn) pointNumber(ctx context.Context, voice string) error {
	a := c.a
	a.mu.Lock()
	if a.waiting[a.WaitOn] {
		a.mu.Unlock()
		return fmt.Errorf("adapters: %s: another call of this Agent already waits on the number; Wait mode takes one call at a time per number", adapterName)
	}
	if a.waiting == nil {
		a.waiting = map[string]bool{}
	}
	a.waiting[a.WaitOn] = true
	a.mu.Unlock()
	var list struct {
		Numbers []struct {
			Sid         string `json:"sid"`
			Phone       string `json:"phone_number"`
			VoiceURL    string `json:"voice_url"`
			VoiceMethod string `json:"voice_method"`
		} `json:"incoming_phone_numbers"`
	}
	if err := c.rest(ctx, http.MethodGet, "IncomingPhoneNumbers.json?PhoneNumber="+neturl.QueryEscape(a.WaitOn), nil, &list); err != nil {
		c.unwait()
		return fmt.Errorf("finding the number to wait on: %w", err)
	}
	i := slices.IndexFunc(list.Numbers, func(n struct {
		Sid         string `json:"sid"`
		Phone       string `json:"phone_number"`
		VoiceURL    string `json:"voice_url"`
		VoiceMethod string `json:"voice_method"`
	}) bool {
		return n.Phone == a.WaitOn
	})
	if i < 0 {
		c.unwait()
		return fmt.Errorf("adapters: %s: Agent.WaitOn is not one of the account's phone numbers", adapterName)
	}
	n := list.Numbers[i]
	c.sc.AddURL(n.VoiceURL)
	if err := c.rest(ctx, http.MethodPost, "IncomingPhoneNumbers/"+n.Sid+".json", neturl.Values{"VoiceUrl": {voice}, "VoiceMethod": {"POST"}}, nil); err != nil {
		c.unwait()
		return fmt.Errorf("pointing the number at voicetest: %w", err)
	}
	c.restore = &number{sid: n.Sid, voiceURL: n.VoiceURL, voiceMethod: n.VoiceMethod}
	c.logf("%s: the number's calls come to voicetest until Close", adapterName)
	return nil
}

func (c *conn) unwait() {
	c.a.mu.Lock()
	delete(c.a.waiting, c.a.WaitOn)
	c.a.mu.Unlock()
}

// rest makes one REST request of the account: path is under
// /2010-04-01/Accounts/<sid>/; a form body for POST; out, when not nil,
// takes the JSON answer.
func (c *conn) rest(ctx context.Context, method, path string, form neturl.Values, out any) error {
	a := c.a
	rctx, cancel := context.WithTimeout(ctx, c.reqWait)
	defer cancel()
	u := a.apiBase() + "/2010-04-01/Accounts/" + neturl.PathEscape(a.AccountSid) + "/" + path
	var body io.Reader
	enc := ""
	if form != nil {
		enc = form.Encode()
		body = strings.NewReader(enc)
	}
	req, err := http.NewRequestWithContext(rctx, method, u, body)
	if err != nil {
		return fmt.Errorf("adapters: %s: %w", adapterName, err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	user, pass := a.AccountSid, a.AuthToken
	if a.APIKeySid != "" {
		user, pass = a.APIKeySid, a.APIKeySecret
	}
	req.SetBasicAuth(user, pass)
	c.cap.Frame("send", websocket.MessageText, []byte(method+" "+path+" "+enc))
	client := a.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() == nil && rctx.Err() != nil {
			return &voicetest.TimeoutError{Phase: voicetest.PhaseConnect, Timeout: c.reqWait,
				Hint: fmt.Sprintf("Twilio's REST API at %s did not answer %s %s; check APIBase, or raise Agent.RequestTimeout", c.sc.URL(a.apiBase()), method, path)}
		}
		return fmt.Errorf("adapters: %s: %s %s: %w", adapterName, method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return fmt.Errorf("adapters: %s: reading the answer to %s %s: %w", adapterName, method, path, err)
	}
	c.cap.Frame("recv", websocket.MessageText, b)
	if resp.StatusCode/100 != 2 {
		var e struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		json.Unmarshal(b, &e)
		hint := ""
		if resp.StatusCode == http.StatusUnauthorized {
			hint = "; check AccountSid and AuthToken (or APIKeySid and APIKeySecret)"
		}
		return fmt.Errorf("adapters: %s: Twilio answered %s %s with HTTP %s (code %d: %s)%s", adapterName, method, path, resp.Status, e.Code, c.sc.String(e.Message), hint)
	}
	if len(b) > maxBody {
		return fmt.Errorf("adapters: %s: the answer to %s %s is over %d bytes", adapterName, method, path, maxBody)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("adapters: %s: the answer to %s %s is not the resource's JSON: %w", adapterName, method, path, err)
		}
	}
	return nil
}

// acquire starts the webhook server for the first call.
func (a *Agent) acquire() (*server, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.srv != nil {
		a.refs++
		return a.srv, nil
	}
	ln := a.Listener
	if ln == nil {
		addr := a.Listen
		if addr == "" {
			addr = DefaultListen
		}
		var err error
		ln, err = net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("adapters: %s: the webhook server cannot listen on Agent.Listen %q: %w", adapterName, addr, err)
		}
	}
	s := &server{local: "http://" + ln.Addr().String(), conns: map[string]*conn{}, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /twilio/voice/{token}", s.voice)
	mux.HandleFunc("GET /twilio/media/{token}", s.media)
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, netConnKey{}, c) }}
	go func() {
		defer close(s.done)
		// A stream's media messages come in bursts (Fast pacing, a
		// backlog): its connection batches their writes (serve).
		s.http.Serve(wire.BatchListener(ln))
	}()
	a.srv, a.refs = s, 1
	return s, nil
}

// release stops the webhook server after the last call.
func (a *Agent) release() {
	a.mu.Lock()
	a.refs--
	var s *server
	if a.refs == 0 {
		s, a.srv = a.srv, nil
	}
	a.mu.Unlock()
	if s != nil {
		s.http.Close()
		<-s.done
	}
}

func (s *server) conn(token string) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns[token]
}

// validSignature checks X-Twilio-Signature of a POST of form to fullURL.
func validSignature(authToken, fullURL string, form neturl.Values, sig string) bool {
	keys := make([]string, 0, len(form))
	for k := range form {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString(fullURL)
	for _, k := range keys {
		for _, v := range form[k] {
			b.WriteString(k)
			b.WriteString(v)
		}
	}
	m := hmac.New(sha1.New, []byte(authToken))
	m.Write([]byte(b.String()))
	want := base64.StdEncoding.EncodeToString(m.Sum(nil))
	return hmac.Equal([]byte(want), []byte(sig))
}

// voice is the TwiML webhook.
func (s *server) voice(w http.ResponseWriter, r *http.Request) {
	c := s.conn(r.PathValue("token"))
	if c == nil {
		http.NotFound(w, r)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "not a form", http.StatusBadRequest)
		return
	}
	c.sc.Add(r.PostForm.Get("From"), r.PostForm.Get("To"))
	c.cap.Frame("recv", websocket.MessageText, []byte("POST "+r.URL.Path+" "+r.PostForm.Encode()))
	full := c.public + r.URL.RequestURI()
	if !validSignature(c.a.AuthToken, full, r.PostForm, r.Header.Get("X-Twilio-Signature")) {
		http.Error(w, "bad X-Twilio-Signature", http.StatusForbidden)
		c.failSetUp(fmt.Errorf("adapters: %s: a webhook request for the call had a missing or wrong X-Twilio-Signature, and was refused: check Agent.AuthToken, and that Agent.PublicURL (%s) is the URL Twilio requests", adapterName, c.sc.URL(c.public)))
		return
	}
	if r.PostForm.Get("AccountSid") != c.a.AccountSid {
		http.Error(w, "another account", http.StatusForbidden)
		c.failSetUp(fmt.Errorf("adapters: %s: a webhook request for the call came from another Twilio account than Agent.AccountSid", adapterName))
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	if c.a.WaitOn != "" && c.a.ExpectCaller != "" && r.PostForm.Get("From") != c.a.ExpectCaller {
		c.logf("%s: rejected a call from another number than ExpectCaller", adapterName)
		io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Response><Reject/></Response>`)
		return
	}
	c.mu.Lock()
	if c.callSid == "" {
		c.callSid = r.PostForm.Get("CallSid")
	}
	c.mu.Unlock()
	doc := c.twiml("")
	c.cap.Frame("send", websocket.MessageText, []byte(doc))
	io.WriteString(w, doc)
}

// twiml returns the call's TwiML: digits played first (if any), then the
// stream.
func (c *conn) twiml(digits string) string {
	ws := "ws" + strings.TrimPrefix(c.public, "http") + "/twilio/media/" + c.token
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><Response>`)
	if digits != "" {
		fmt.Fprintf(&b, `<Play digits="%s"/>`, html.EscapeString(digits))
	}
	fmt.Fprintf(&b, `<Connect><Stream url="%s"><Parameter name="voicetest" value="%s"/></Stream></Connect></Response>`, html.EscapeString(ws), c.token)
	return b.String()
}

// failSetUp makes a Connect in progress fail with err.
func (c *conn) failSetUp(err error) {
	c.logf("%v", err)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.setupErr == nil {
		c.setupErr = err
		close(c.setupFail)
	}
}

// inbound is a message from Twilio on the stream.
type inbound struct {
	Event     string `json:"event"`
	StreamSid string `json:"streamSid"`
	Start     *struct {
		StreamSid        string            `json:"streamSid"`
		CallSid          string            `json:"callSid"`
		CustomParameters map[string]string `json:"customParameters"`
		MediaFormat      struct {
			Encoding   string `json:"encoding"`
			SampleRate int    `json:"sampleRate"`
		} `json:"mediaFormat"`
	} `json:"start"`
	Media *struct {
		Track   string `json:"track"`
		Payload string `json:"payload"`
	} `json:"media"`
	Mark *struct {
		Name string `json:"name"`
	} `json:"mark"`
	DTMF *struct {
		Digit string `json:"digit"`
	} `json:"dtmf"`
}

// netConnKey is the key of a request's network connection in its
// context.
type netConnKey struct{}

// media is the Media Stream WebSocket.
func (s *server) media(w http.ResponseWriter, r *http.Request) {
	c := s.conn(r.PathValue("token"))
	if c == nil {
		http.NotFound(w, r)
		return
	}
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	ws.SetReadLimit(c.maxFrame)
	// From here the connection batches its writes: the media messages of
	// an utterance sent faster than real time go in few system calls. A
	// kernel write stuck for writeTimeout (Twilio stopped reading) closes
	// it, as the per-message timeout of send does.
	batched := false
	if nc, ok := r.Context().Value(netConnKey{}).(net.Conn); ok {
		if flusher := wire.StartBatching(nc, writeTimeout, nil); flusher != nil {
			batched = true
			done := make(chan struct{})
			go func() { defer close(done); flusher() }()
			defer func() { <-done }() // serve closed the connection: the flusher ends
		}
	}
	c.serve(ws, batched)
}

// serve reads one stream: connected, start, then the call's messages.
// batched says the connection batches its writes and bounds them (see
// media).
func (c *conn) serve(ws *websocket.Conn, batched bool) {
	defer ws.CloseNow()
	ctx, cancel := context.WithTimeout(c.ctx, 10*time.Second)
	st, err := c.handshake(ctx, ws)
	cancel()
	if st != nil {
		st.batched = batched
	}
	if err != nil {
		c.logf("%s: a stream that did not start: %v", adapterName, err)
		c.failSetUp(fmt.Errorf("adapters: %s: the call's stream did not start: %w", adapterName, err))
		ws.Close(websocket.StatusPolicyViolation, "not a Twilio stream for this call")
		return
	}
	defer close(st.done)
	c.mu.Lock()
	prev := c.last
	c.last = st
	c.mu.Unlock()
	if prev != nil { // the stream before a redirect: let its reader finish
		select {
		case <-prev.done:
		case <-c.ctx.Done():
			return
		}
	}
	if c.call.Ended() || c.call.Closing() {
		return
	}
	c.mu.Lock()
	c.cur, c.redirect = st, false
	close(c.ready)
	c.mu.Unlock()
	c.cap.Note("stream", "stream "+st.streamSid+" started")
	for {
		typ, data, err := ws.Read(c.ctx)
		if err != nil {
			c.streamEnded(st, err)
			return
		}
		c.stats.FrameIn(len(data))
		c.cap.Frame("recv", typ, data)
		if stop := c.message(st, typ, data); stop {
			c.streamEnded(st, nil)
			return
		}
	}
}

// handshake reads "connected" and "start", and checks the stream is the
// call's.
func (c *conn) handshake(ctx context.Context, ws *websocket.Conn) (*stream, error) {
	for {
		typ, data, err := ws.Read(ctx)
		if err != nil {
			return nil, err
		}
		c.stats.FrameIn(len(data))
		c.cap.Frame("recv", typ, data)
		var m inbound
		if typ != websocket.MessageText || json.Unmarshal(data, &m) != nil {
			return nil, fmt.Errorf("a message that is not Twilio's JSON: %s", wire.Excerpt(c.sc.Bytes(data)))
		}
		switch m.Event {
		case "connected":
			continue
		case "start":
			if m.Start == nil || m.Start.CustomParameters["voicetest"] != c.token {
				return nil, errors.New("a start message without this call's voicetest parameter")
			}
			if f := m.Start.MediaFormat; f.Encoding != "audio/x-mulaw" || f.SampleRate != lineRate {
				return nil, fmt.Errorf("a stream of %s at %d Hz; Twilio streams audio/x-mulaw at 8000 Hz", f.Encoding, f.SampleRate)
			}
			return &stream{ws: ws, streamSid: m.Start.StreamSid, done: make(chan struct{})}, nil
		default:
			return nil, fmt.Errorf("a %q message before start", m.Event)
		}
	}
}

// message handles one message of the stream; it reports true on stop.
func (c *conn) message(st *stream, typ websocket.MessageType, data []byte) bool {
	if typ != websocket.MessageText {
		c.push(nil, fmt.Errorf("a binary frame of %d bytes; Twilio sends JSON text", len(data)), data)
		return false
	}
	var m inbound
	if err := json.Unmarshal(data, &m); err != nil {
		c.push(nil, fmt.Errorf("a message that is not JSON: %w", err), data)
		return false
	}
	if m.StreamSid != st.streamSid {
		c.push(nil, fmt.Errorf("a %s message for stream %q, not the call's", m.Event, m.StreamSid), data)
		return false
	}
	switch {
	case m.Event == "media" && m.Media != nil:
		b, err := base64.StdEncoding.DecodeString(m.Media.Payload)
		if err != nil {
			c.push(nil, fmt.Errorf("media whose payload is not base64: %w", err), data)
			return false
		}
		if m.Media.Track != "" && m.Media.Track != "inbound" {
			return false // a track voicetest did not ask for
		}
		c.buf = pcm.DecodeMulaw(c.buf[:0], b)
		out := c.gate.Process(c.buf)
		if out == nil {
			return false
		}
		evs, err := c.down.Append(nil, lineRate, slices.Clone(out))
		c.push(evs, err, data)
	case m.Event == "mark" && m.Mark != nil:
		c.mu.Lock()
		mine := m.Mark.Name == c.markWaiter && c.markWaiter != ""
		if mine {
			close(c.markEcho)
			c.markWaiter = ""
		}
		c.mu.Unlock()
		if !mine {
			b, _ := json.Marshal(map[string]string{"name": m.Mark.Name})
			c.push([]voicetest.AgentEvent{{Kind: voicetest.AgentData, Text: "mark", Data: b}}, nil, nil)
		}
	case m.Event == "dtmf" && m.DTMF != nil:
		b, _ := json.Marshal(map[string]string{"digit": m.DTMF.Digit})
		c.push([]voicetest.AgentEvent{{Kind: voicetest.AgentData, Text: "dtmf", Data: b}}, nil, nil)
	case m.Event == "stop":
		return true
	default:
		c.push(nil, fmt.Errorf("a %q message Twilio does not send on a started stream", m.Event), data)
	}
	return false
}

// streamEnded handles the end of a stream: a redirect voicetest asked for,
// or the end of the call.
func (c *conn) streamEnded(st *stream, err error) {
	c.mu.Lock()
	if c.cur == st {
		c.cur = nil
	}
	redirect, closing := c.redirect, c.call.Closing()
	if c.markWaiter != "" { // the stream's audio was cut: nothing to wait for
		close(c.markEcho)
		c.markWaiter = ""
	}
	c.mu.Unlock()
	switch {
	case closing || redirect:
		return
	case errors.Is(err, websocket.ErrMessageTooBig):
		c.call.Fail(fmt.Errorf("the stream sent a message larger than %d bytes; raise Agent.MaxFrameBytes if that is expected: %w", c.maxFrame, err))
	default:
		c.push(c.down.Flush(nil), nil, nil)
		c.call.Finish(&voicetest.TransportClosedError{Adapter: adapterName}, "the call ended (Twilio stopped its stream)")
	}
}

// push queues events and an error about frame (see evqueue.Call.Deliver).
func (c *conn) push(evs []voicetest.AgentEvent, err error, frame []byte) {
	c.call.Deliver(evs, err, frame)
}

// closedErr returns why nothing can be sent: the call ended or Close was
// called.
func (c *conn) closedErr() error { return c.call.ClosedErr() }

// current waits for a started stream (after a redirect) and returns it.
func (c *conn) current(ctx context.Context) (*stream, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := c.closedErr(); err != nil {
			return nil, err
		}
		c.mu.Lock()
		st, ready := c.cur, c.ready
		c.mu.Unlock()
		if st != nil {
			return st, nil
		}
		select {
		case <-ready:
		case <-ctx.Done():
		case <-c.ctx.Done():
		}
	}
}

// markMessage returns the mark message named name for stream sid: the
// bytes json.Marshal gives for map[string]any{"event": "mark",
// "streamSid": sid, "mark": map[string]string{"name": name}} (keys
// sorted), built without reflection on maps.
func markMessage(sid, name string) []byte {
	js, _ := json.Marshal(sid)
	jn, _ := json.Marshal(name)
	b := make([]byte, 0, 48+len(js)+len(jn))
	b = append(b, `{"event":"mark","mark":{"name":`...)
	b = append(b, jn...)
	b = append(b, `},"streamSid":`...)
	b = append(b, js...)
	return append(b, '}')
}

// write writes the message b to Twilio on st.
func (c *conn) write(ctx context.Context, st *stream, b []byte) error {
	st.wmu.Lock()
	defer st.wmu.Unlock()
	// On a batched connection the write only copies b into the batch,
	// and the batch's kernel writes are bounded: a deadline here would
	// cost a timer and a context per message (a third of the harness's
	// CPU in a turn). Elsewhere each write has its own.
	wctx := context.Background()
	if !st.batched {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, writeTimeout)
		defer cancel()
	} else if err := ctx.Err(); err != nil {
		return &voicetest.TransportClosedError{Adapter: adapterName, Err: fmt.Errorf("writing to the stream: %w", err)}
	}
	c.cap.Frame("send", websocket.MessageText, b)
	if err := st.ws.Write(wctx, websocket.MessageText, b); err != nil {
		if cerr := c.closedErr(); cerr != nil {
			return cerr
		}
		return &voicetest.TransportClosedError{Adapter: adapterName, Err: fmt.Errorf("writing to the stream: %w", err)}
	}
	c.stats.FrameOut(len(b))
	return nil
}

// SendAudio sends user speech as 20 ms µ-law media messages, at most
// MaxAhead ahead of the line.
func (c *conn) SendAudio(ctx context.Context, ch pcm.Chunk) error {
	if err := wire.CheckSendRate(adapterName, ch.Rate, c.rate); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.closedErr(); err != nil {
		return err
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	c.pending = pcm.EncodeMulaw(c.pending, c.up.Process(ch.Samples))
	return c.sendFramesLocked(ctx, false)
}

// sendFramesLocked sends the whole frames pending; with flush, also the
// last partial one padded with µ-law silence. Call with sendMu held.
func (c *conn) sendFramesLocked(ctx context.Context, flush bool) error {
	if flush && len(c.pending)%frameBytes != 0 {
		for len(c.pending)%frameBytes != 0 {
			c.pending = append(c.pending, 0xFF)
		}
	}
	n := 0
	defer func() { c.pending = c.pending[:copy(c.pending, c.pending[n:])] }()
	for len(c.pending)-n >= frameBytes {
		now := time.Now()
		if c.playEnd.Before(now) {
			c.playEnd = now // the line was idle: the next frame plays now
		}
		if wait := c.playEnd.Sub(now) - c.maxAhead; wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-c.ctx.Done():
				t.Stop()
				return c.closedErr()
			}
		}
		st, err := c.current(ctx)
		if err != nil {
			return err
		}
		// The bytes json.Marshal gives for {"event": "media", "streamSid":
		// …, "media": {"payload": …}}, built in a reused buffer.
		if st.mediaTail == nil {
			sid, _ := json.Marshal(st.streamSid)
			st.mediaTail = append(append([]byte(`"},"streamSid":`), sid...), '}')
		}
		b := append(c.out[:0], `{"event":"media","media":{"payload":"`...)
		b = wire.AppendBase64(b, c.pending[n:n+frameBytes])
		c.out = append(b, st.mediaTail...)
		if err := c.write(ctx, st, c.out); err != nil {
			return err
		}
		c.playEnd = c.playEnd.Add(20 * time.Millisecond)
		n += frameBytes
	}
	return nil
}

// EndUtterance sends the rest of the speech and a mark, and returns once
// Twilio echoes the mark: the agent has heard it all.
func (c *conn) EndUtterance(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	c.pending = pcm.EncodeMulaw(c.pending, c.up.Flush())
	if err := c.sendFramesLocked(ctx, true); err != nil {
		return err
	}
	st, err := c.current(ctx)
	if err != nil {
		return err
	}
	c.utt++
	name := "utt-" + strconv.Itoa(c.utt)
	echo := make(chan struct{})
	c.mu.Lock()
	c.markWaiter, c.markEcho = name, echo
	c.mu.Unlock()
	if err := c.write(ctx, st, markMessage(st.streamSid, name)); err != nil {
		return err
	}
	select {
	case <-echo:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		return c.closedErr()
	}
}

// SendDTMF plays the digits into the call with <Play digits> and returns
// once the new stream has started.
func (c *conn) SendDTMF(ctx context.Context, digits string) error {
	if digits == "" {
		return fmt.Errorf("adapters: %s: SendDTMF with no digits", adapterName)
	}
	for _, d := range digits {
		if !strings.ContainsRune("0123456789*#", d) {
			return fmt.Errorf("adapters: %s: SendDTMF: %q is not a key Twilio's <Play digits> plays; use 0-9, * and #", adapterName, d)
		}
	}
	if err := c.closedErr(); err != nil {
		return err
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	c.mu.Lock()
	c.redirect, c.ready = true, make(chan struct{})
	sid := c.callSid
	c.mu.Unlock()
	if err := c.rest(ctx, http.MethodPost, "Calls/"+sid+".json", neturl.Values{"Twiml": {c.twiml(digits)}}, nil); err != nil {
		c.mu.Lock()
		c.redirect = false
		c.mu.Unlock()
		return err
	}
	c.playEnd = time.Time{}
	_, err := c.current(ctx)
	return err
}

// SendText is unsupported: a phone call carries audio.
func (c *conn) SendText(context.Context, string) error {
	return &voicetest.UnsupportedError{Adapter: adapterName, Capability: "text input",
		Alternative: "a phone call carries only speech and key presses; use spoken steps (voicetest.UserSays)"}
}

// Interrupt is unsupported: barge-in is overlapping audio.
func (c *conn) Interrupt(context.Context) error {
	return &voicetest.UnsupportedError{Adapter: adapterName, Capability: "native interrupt",
		Alternative: "a phone line has no caller-side cancel; barge in by sending user audio while the agent speaks"}
}

// Recv returns the agent's next event.
func (c *conn) Recv(ctx context.Context) (voicetest.AgentEvent, error) { return c.call.Recv(ctx) }

// WireStats reports the stream messages and REST exchanges
// (voicetest.WireStatsReporter).
func (c *conn) WireStats() voicetest.WireStats { return c.stats.Snapshot(adapterName) }

// Close hangs the call up, restores the number in Wait mode and releases
// the webhook server. It returns an error only when the agent's events
// went past MaxQueueBytes (a *voicetest.LimitError), every time, or when
// the number's voice URL could not be restored.
func (c *conn) Close() error {
	if !c.call.BeginClose() {
		return c.call.Limit()
	}
	ended := c.call.Ended()
	c.mu.Lock()
	sid, st := c.callSid, c.cur
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), c.reqWait)
	defer cancel()
	var errs []error
	if sid != "" && !ended {
		if err := c.rest(ctx, http.MethodPost, "Calls/"+sid+".json", neturl.Values{"Status": {"completed"}}, nil); err != nil {
			c.logf("%s: hanging up: %v", adapterName, err)
		}
	}
	if c.restore != nil {
		if err := c.rest(ctx, http.MethodPost, "IncomingPhoneNumbers/"+c.restore.sid+".json",
			neturl.Values{"VoiceUrl": {c.restore.voiceURL}, "VoiceMethod": {c.restore.voiceMethod}}, nil); err != nil {
			errs = append(errs, fmt.Errorf("adapters: %s: restoring the number's voice URL (do it by hand in Twilio's console): %w", adapterName, err))
		}
		c.unwait()
	} else if c.a.WaitOn != "" {
		c.unwait()
	}
	c.call.Finish(nil, "")
	if st != nil {
		st.ws.Close(websocket.StatusNormalClosure, "")
		<-st.done
	}
	c.srv.mu.Lock()
	delete(c.srv.conns, c.token)
	c.srv.mu.Unlock()
	c.a.release()
	c.cap.Note("closed", "closed by voicetest")
	limit := c.call.Limit()
	if limit != nil && len(errs) == 0 {
		return limit
	}
	if limit != nil {
		errs = append([]error{limit}, errs...)
	}
	return wire.ScrubError(c.sc, errors.Join(errs...))
}
