// Package webrtc reaches a voice agent over WebRTC, signalled by one SDP
// offer/answer exchange over HTTP, as Pipecat's SmallWebRTCTransport and
// similar servers take it, built on github.com/pion/webrtc/v4 with Opus
// through libopus (gopkg.in/hraban/opus.v2, cgo).
//
// Signalling (Pipecat src/pipecat/transports/smallwebrtc/request_handler.py,
// SmallWebRTCRequest, and the client
// @pipecat-ai/small-webrtc-transport's negotiate): voicetest makes an
// offer with one sendrecv audio transceiver (Opus 48 kHz) and one ordered
// data channel (label "chat" by default), waits for its ICE candidates to
// be gathered, and POSTs
//
//	{"sdp": "<offer>", "type": "offer", "pc_id": null, "restart_pc": false, "requestData": …}
//
// as JSON to Agent.URL, with Agent.Header (an Authorization header, for a
// bot behind a gateway). The server answers 200 with
//
//	{"sdp": "<answer>", "type": "answer", "pc_id": "<id>"}
//
// Trickle ICE (Pipecat's PATCH with candidates) is not used: the offer
// holds every candidate. Connect returns once the data channel is open.
//
// Audio: from the moment the call opens, the adapter sends one 20 ms Opus
// frame (mono, 48 kHz) every 20 ms on the audio track, as a browser's
// microphone does: the user's speech when some is queued, silence
// otherwise. SendAudio resamples the speech and queues it, blocking while
// more than 100 ms is queued, so that it returns about as fast as a
// microphone captures; EndUtterance returns once the last of it is sent.
// The agent's Opus packets are decoded, resampled to Session.Rate and
// reported as AgentAudio, through a silence gate: a WebRTC sender keeps
// sending packets of silence between utterances, and the runner would
// take them for speech. Packets whose decoded audio peaks below
// Agent.SilenceThreshold are held back, and reported only when the
// agent's sound resumes within 400 ms (so that the pauses between its
// words keep their length); longer silence is dropped. Packets lost on
// the way (gaps in the RTP sequence) are counted in the wire statistics
// (DroppedFrames).
//
// The agent detects the end of the user's speech itself
// (Capabilities.NativeVAD), from the silence that follows it.
//
// Data channel (Pipecat src/pipecat/transports/smallwebrtc/connection.py):
// when it opens, voicetest sends the signalling message
// {"type":"signalling","message":{"type":"trackStatus","receiver_index":0,"enabled":true}}
// (its microphone is on), a keepalive "ping: <ms>" every second (Pipecat
// takes a connection whose pings stop for 3 s as gone), and, with
// Agent.RTVI, the RTVI client-ready message. From the agent it takes the
// signalling messages peerLeft (the bot left: AgentHangUp) and
// renegotiate (voicetest makes a new offer with the pc_id and posts it),
// and transport messages: RTVI ones (with Agent.RTVI the adapter declares
// transcripts, turn ends, tool events, text and DTMF; see
// adapters/internal/rtvi for what each message becomes), and any other
// JSON as AgentData named "message". A binary message, or text that is
// not JSON, is a *wire.FrameError; the Conn stays usable.
//
// Barge-in is overlapping audio, which the agent's VAD hears; there is no
// caller-side cancel (Capabilities.NativeInterrupt is false). An RTVI
// bot's bot-interrupted is AgentInterrupted.
//
// The end of the call: peerLeft, the agent closing the data channel, or
// the peer connection failing. The first two are AgentHangUp, then a
// *voicetest.TransportClosedError; a failed connection is a
// *voicetest.TransportClosedError that says so.
//
// Bounds and secrets as for the WebSocket adapters: the receive queue is
// bounded by MaxQueueBytes; a data channel message larger than
// MaxFrameBytes (advertised to the agent as the SDP max-message-size)
// ends the connection with an error naming the setting; the credentials
// of Header, of the URL and of the environment are blanked from the
// capture, the log, errors and events.
//
// # Pipecat bots
//
// A Pipecat bot run with SmallWebRTCTransport (the development runner's
// "-t webrtc", or an app that serves SmallWebRTCRequestHandler) is
// reached at its offer endpoint:
//
//	bot := webrtc.New("http://127.0.0.1:7860/api/offer")
//	bot.RTVI = true // the bot runs RTVI (RTVIProcessor, RTVIObserver)
//
// Such a bot takes audio at 16 kHz after its own resampling, hears the
// user through its VAD, and sends RTVI messages on the data channel when
// its pipeline has an RTVIProcessor.
package webrtc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	"github.com/pion/datachannel"
	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/transport/v5"
	"github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media"
	"github.com/voicetest-go/voicetest/adapters/internal/evqueue"
	"github.com/voicetest-go/voicetest/adapters/internal/rtvi"
	"github.com/voicetest-go/voicetest/adapters/internal/silencegate"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/scrub"
	"gopkg.in/hraban/opus.v2"
)

// Defaults of Agent.
const (
	// DefaultDataChannel is the label of the data channel, as Pipecat's
	// client names it.
	DefaultDataChannel = "chat"
	// DefaultBitrate is the Opus bitrate of the user's speech, in bits
	// per second.
	DefaultBitrate = 32000
	// DefaultSilenceThreshold is the peak (of 32767) below which a packet
	// of the agent's audio is silence.
	DefaultSilenceThreshold = 100
	// DefaultDialTimeout bounds Connect: the offer's HTTP exchange, ICE,
	// DTLS and the data channel's opening.
	DefaultDialTimeout = 10 * time.Second
	// DefaultCloseTimeout bounds Close.
	DefaultCloseTimeout = 2 * time.Second
	// DefaultMaxFrameBytes bounds one data channel message.
	DefaultMaxFrameBytes = 1 << 20
	// DefaultMaxQueueBytes bounds what the connection holds of the agent's
	// events while the runner is busy.
	DefaultMaxQueueBytes = 32 << 20
)

// opusRate is Opus's clock rate and the rate voicetest codes at.
const opusRate = pcm.Rate48k

// frameSamples is one 20 ms Opus frame at opusRate.
const frameSamples = opusRate / 50

// maxOpusSamples is the longest Opus packet, 120 ms, at opusRate.
const maxOpusSamples = opusRate * 120 / 1000

// maxAhead bounds the user's speech queued for the pacer (100 ms at
// opusRate): SendAudio waits past it.
const maxAhead = opusRate / 10

// maxPause is the longest silence inside the agent's speech that the
// silence gate keeps (at opusRate).
const maxPause = opusRate * 400 / 1000

// maxAnswerBytes bounds the HTTP answer to the offer.
const maxAnswerBytes = 1 << 20

// keepalive is the interval of the data channel pings.
const keepalive = time.Second

// adapterName names the adapter in errors and capabilities.
const adapterName = "webrtc"

// Agent is a voice agent reached over WebRTC. Set the fields before the
// first Connect; an Agent may then serve parallel scenarios.
type Agent struct {
	// URL is the agent's offer endpoint, e.g.
	// "http://127.0.0.1:7860/api/offer".
	URL string
	// Header holds extra HTTP headers of the offer request, e.g.
	// Authorization. Their credentials are secrets.
	Header http.Header
	// RequestData, when not nil, is sent as the offer's requestData
	// (Pipecat hands it to the bot).
	RequestData any
	// RTVI reports that the agent speaks RTVI on the data channel (a
	// Pipecat bot with an RTVIProcessor).
	RTVI bool
	// DataChannel is the label of the data channel (default
	// DefaultDataChannel).
	DataChannel string
	// ICEServers are STUN or TURN URLs, for an agent behind NAT; none by
	// default. For an agent on this machine (a loopback URL) the adapter
	// gathers loopback candidates only.
	ICEServers []string
	// Bitrate is the Opus bitrate of the user's speech (default
	// DefaultBitrate).
	Bitrate int
	// SilenceThreshold is the peak below which a packet of the agent's
	// audio is not reported (default DefaultSilenceThreshold; negative
	// reports every packet).
	SilenceThreshold int
	// OnToolCall, when set, answers the functions an RTVI bot asks the
	// client to run (llm-function-call).
	OnToolCall wire.ToolHandler
	// DialTimeout bounds Connect when its ctx has no earlier deadline
	// (default DefaultDialTimeout).
	DialTimeout time.Duration
	// CloseTimeout bounds Close (default DefaultCloseTimeout).
	CloseTimeout time.Duration
	// MaxFrameBytes is the largest data channel message the agent may
	// send (default DefaultMaxFrameBytes); a larger one ends the
	// connection with an error naming this field.
	MaxFrameBytes int64
	// MaxQueueBytes bounds the agent's events queued while the runner is
	// not reading (default DefaultMaxQueueBytes); past it the connection
	// ends with a *voicetest.LimitError naming this field.
	MaxQueueBytes int64
	// RequireTLS refuses a plain-text offer URL (http://) to any host but
	// loopback.
	RequireTLS bool
	// Scrub, when set, is the scrubber the connection learns its secrets
	// into (see wire.WSOptions.Scrub).
	Scrub *scrub.Scrubber
	// HTTPClient posts the offer (default: a client of its own).
	HTTPClient *http.Client

	// net, when set, is the network of the call's ICE candidates and
	// media instead of the machine's sockets: the package's tests set a
	// pion vnet.Net shared with the loopback bot (SetNet, in
	// export_test.go) to run a call in a testing/synctest bubble.
	net transport.Net
}

// New returns an agent whose offer endpoint is url.
func New(url string) *Agent { return &Agent{URL: url} }

// conn is one call.
type conn struct {
	rtviOn    bool
	rate      int
	threshold int
	closeWait time.Duration
	maxFrame  int64
	onTool    wire.ToolHandler
	agent     *Agent
	header    http.Header
	client    *http.Client

	pc    *webrtc.PeerConnection
	track *webrtc.TrackLocalStaticSample
	sc    *scrub.Scrubber
	cap   *wire.CaptureWriter
	logf  func(string, ...any)
	call  *evqueue.Call
	stats wire.Stats

	ctx    context.Context // lives until Close or the end of the call
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// Send side: userMu serializes SendAudio and EndUtterance (and the
	// resampler, up); sendMu guards what they share with the pacer.
	userMu  sync.Mutex
	sendMu  sync.Mutex
	flush   bool          // send the partial last frame
	sent    chan struct{} // capacity 1: the pacer took a frame
	enc     *opus.Encoder // the pacer's
	up      wire.Upstream
	pending []int16 // speech at opusRate not yet sent, at most maxAhead
	msgID   int     // under dcMu

	// The data channel, set once open.
	dcMu sync.Mutex
	dc   dcWriter

	// The agent's side, under recvMu: the audio reader and the data
	// channel reader both decode into the same turn.
	recvMu sync.Mutex
	down   wire.Downstream
	rtv    rtvi.Decoder

	mu     sync.Mutex
	pcID   string
	opened chan struct{}
}

// dcWriter is the detached data channel's write side.
type dcWriter interface {
	WriteDataChannel(p []byte, isString bool) (int, error)
}

// Capabilities reports what the WebRTC adapter supports.
func (c *conn) Capabilities() voicetest.Capabilities {
	f := voicetest.AudioFormat{Encoding: "opus", Rate: opusRate}
	return voicetest.Capabilities{
		Adapter: adapterName, Audio: true, NativeVAD: true, InputFormat: f, OutputFormat: f,
		StreamingTranscripts: c.rtviOn, TranscriptAhead: c.rtviOn, TurnEnd: c.rtviOn, ToolEvents: c.rtviOn,
		Text: c.rtviOn, DTMF: c.rtviOn,
	}
}

// isLoopback reports whether host names this machine.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Connect posts the offer, applies the answer and waits until the data
// channel is open.
func (a *Agent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	if s.Rate <= 0 {
		return nil, fmt.Errorf("adapters: %s: session rate %d: %w", adapterName, s.Rate, pcm.ErrBadRate)
	}
	u, err := neturl.Parse(a.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("adapters: %s: Agent.URL %q is not an http:// or https:// offer endpoint", adapterName, wire.RedactURL(a.URL))
	}
	sc := a.Scrub
	if sc == nil {
		sc = scrub.New()
	}
	sc.AddEnv(os.Environ())
	sc.AddHeader(a.Header)
	sc.AddURL(a.URL)
	if err := wire.CheckPlaintext(adapterName, a.URL, wire.WSOptions{RequireTLS: a.RequireTLS}); err != nil {
		return nil, wire.ScrubError(sc, err)
	}
	c := &conn{
		rtviOn: a.RTVI, rate: s.Rate, threshold: a.SilenceThreshold, onTool: a.OnToolCall, agent: a,
		header: a.Header, client: a.HTTPClient, sc: sc, down: wire.Downstream{Rate: s.Rate}, opened: make(chan struct{}), sent: make(chan struct{}, 1),
		closeWait: a.CloseTimeout, maxFrame: a.MaxFrameBytes,
	}
	if c.threshold == 0 {
		c.threshold = DefaultSilenceThreshold
	}
	if c.closeWait <= 0 {
		c.closeWait = DefaultCloseTimeout
	}
	if c.maxFrame <= 0 {
		c.maxFrame = DefaultMaxFrameBytes
	}
	if c.maxFrame > 1<<30 {
		return nil, fmt.Errorf("adapters: %s: Agent.MaxFrameBytes %d is above the 1 GiB SCTP allows", adapterName, c.maxFrame)
	}
	maxQueue := a.MaxQueueBytes
	if maxQueue <= 0 {
		maxQueue = DefaultMaxQueueBytes
	}
	if s.Rate != opusRate {
		if c.up.Resampler, err = pcm.NewResampler(s.Rate, opusRate); err != nil {
			return nil, fmt.Errorf("adapters: %s: %w", adapterName, err)
		}
	}
	bitrate := a.Bitrate
	if bitrate == 0 {
		bitrate = DefaultBitrate
	}
	if c.enc, err = opus.NewEncoder(opusRate, 1, opus.AppVoIP); err != nil {
		return nil, fmt.Errorf("adapters: %s: making the Opus encoder: %w", adapterName, err)
	}
	if err := c.enc.SetBitrate(bitrate); err != nil {
		return nil, fmt.Errorf("adapters: %s: Agent.Bitrate %d: %w (Opus takes 6000 to 510000)", adapterName, bitrate, err)
	}
	if c.client == nil {
		c.client = &http.Client{}
	}
	c.logf = wire.ScrubLogf(sc, s.Logf)
	c.cap = wire.NewCaptureWriter(s.Capture, c.logf)
	c.cap.SetScrubber(sc)
	c.call = evqueue.NewCall(adapterName, maxQueue, "Agent.MaxQueueBytes", sc, c.logf, c.cap, c.ended)
	c.rtv = rtvi.Decoder{Adapter: adapterName, Down: &c.down, Logf: c.logf}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	if c.onTool != nil {
		c.rtv.Answer = func(call voicetest.ToolCall) { c.goTracked(func() { c.answerTool(call) }) }
	}

	dialTimeout := a.DialTimeout
	if dialTimeout <= 0 {
		dialTimeout = DefaultDialTimeout
	}
	dctx, dcancel := context.WithTimeout(ctx, dialTimeout)
	defer dcancel()
	c.cap.Note("open", sc.URL(a.URL))
	if err := c.open(dctx, isLoopback(u.Hostname())); err != nil {
		c.Close()
		err = wire.ScrubError(sc, err)
		if ctx.Err() == nil && dctx.Err() != nil {
			return nil, &voicetest.TimeoutError{
				Phase: voicetest.PhaseConnect, Timeout: dialTimeout,
				Hint: sc.String(fmt.Sprintf("the WebRTC agent at %s did not complete the call's set-up (%v); check that it is running and reachable for media, or raise Agent.DialTimeout", sc.URL(a.URL), err)),
			}
		}
		return nil, err
	}
	c.logf("%s: call open at %s (pc_id %s, RTVI %v)", adapterName, sc.URL(a.URL), c.pcID, a.RTVI)
	return c, nil
}

// api returns the pion API of one call: Opus, the default interceptors
// (NACK, RTCP reports), data channels read detached, and the agent's
// largest data channel message.
func (c *conn) api(loopback bool) (*webrtc.API, error) {
	var me webrtc.MediaEngine
	if err := me.RegisterCodec(webrtc.RTPCodecParameters{
		RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: opusRate, Channels: 2, SDPFmtpLine: "minptime=10;useinbandfec=1"},
		PayloadType:        111,
	}, webrtc.RTPCodecTypeAudio); err != nil {
		return nil, err
	}
	var ir interceptor.Registry
	if err := webrtc.RegisterDefaultInterceptors(&me, &ir); err != nil {
		return nil, err
	}
	var se webrtc.SettingEngine
	se.DetachDataChannels()
	se.SetSCTPMaxMessageSize(uint32(c.maxFrame))
	if loopback {
		// An agent on this machine: no traffic to any other address, no
		// multicast DNS.
		se.SetIncludeLoopbackCandidate(true)
		se.SetIPFilter(func(ip net.IP) bool { return ip.IsLoopback() })
		se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
		se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4, webrtc.NetworkTypeUDP6})
	}
	if c.agent.net != nil {
		se.SetNet(c.agent.net)
	}
	return webrtc.NewAPI(webrtc.WithMediaEngine(&me), webrtc.WithInterceptorRegistry(&ir), webrtc.WithSettingEngine(se)), nil
}

// open sets the call up: the peer connection, the offer and its answer,
// and the data channel.
func (c *conn) open(ctx context.Context, loopback bool) error {
	api, err := c.api(loopback)
	if err != nil {
		return fmt.Errorf("adapters: %s: %w", adapterName, err)
	}
	var servers []webrtc.ICEServer
	if len(c.agent.ICEServers) > 0 {
		servers = []webrtc.ICEServer{{URLs: c.agent.ICEServers}}
	}
	pc, err := api.NewPeerConnection(webrtc.Configuration{ICEServers: servers})
	if err != nil {
		return fmt.Errorf("adapters: %s: %w", adapterName, err)
	}
	c.mu.Lock()
	c.pc = pc
	c.mu.Unlock()
	c.track, err = webrtc.NewTrackLocalStaticSample(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: opusRate, Channels: 2}, "audio", "voicetest")
	if err != nil {
		return fmt.Errorf("adapters: %s: %w", adapterName, err)
	}
	tr, err := pc.AddTransceiverFromTrack(c.track, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionSendrecv})
	if err != nil {
		return fmt.Errorf("adapters: %s: %w", adapterName, err)
	}
	sender := tr.Sender()
	c.goTracked(func() { // RTCP for the sender: read until the call ends
		for {
			if _, _, err := sender.ReadRTCP(); err != nil {
				return
			}
		}
	})
	label := c.agent.DataChannel
	if label == "" {
		label = DefaultDataChannel
	}
	ordered := true
	dc, err := pc.CreateDataChannel(label, &webrtc.DataChannelInit{Ordered: &ordered})
	if err != nil {
		return fmt.Errorf("adapters: %s: %w", adapterName, err)
	}
	dc.OnOpen(func() {
		raw, err := dc.Detach()
		if err != nil {
			c.finish(&voicetest.TransportClosedError{Adapter: adapterName, Err: fmt.Errorf("data channel: %w", err)}, "")
			return
		}
		c.dcMu.Lock()
		c.dc = raw
		c.dcMu.Unlock()
		if !c.goTracked(func() { c.readData(raw) }) {
			raw.Close()
			return
		}
		close(c.opened)
	})
	pc.OnTrack(func(t *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		if t.Kind() != webrtc.RTPCodecTypeAudio || !strings.EqualFold(t.Codec().MimeType, webrtc.MimeTypeOpus) {
			c.logf("%s: ignoring the agent's %s track (%s): voicetest takes Opus audio", adapterName, t.Kind(), t.Codec().MimeType)
			return
		}
		c.goTracked(func() { c.readAudio(t) })
	})
	pc.OnConnectionStateChange(func(st webrtc.PeerConnectionState) {
		switch st {
		case webrtc.PeerConnectionStateFailed:
			c.finish(&voicetest.TransportClosedError{Adapter: adapterName, Err: errors.New("the WebRTC connection failed (ICE or DTLS): the agent's media stopped answering")}, "")
		case webrtc.PeerConnectionStateClosed:
			c.finish(&voicetest.TransportClosedError{Adapter: adapterName}, "the agent closed the peer connection")
		}
	})
	if err := c.negotiate(ctx, false); err != nil {
		return err
	}
	select {
	case <-c.opened:
	case <-ctx.Done():
		return fmt.Errorf("adapters: %s: waiting for the data channel to open: %w", adapterName, ctx.Err())
	case <-c.ctx.Done():
		if err := c.call.ClosedErr(); err != nil {
			return err
		}
		return fmt.Errorf("adapters: %s: the call ended while it was set up", adapterName)
	}
	c.sendSignalling(map[string]any{"type": "trackStatus", "receiver_index": 0, "enabled": true})
	c.goTracked(c.pingLoop)
	c.goTracked(c.pace)
	if c.rtviOn {
		if err := c.sendRTVI("client-ready", rtvi.ClientReady()); err != nil {
			return err
		}
	}
	return nil
}

// offerRequest is the body of the offer POST (Pipecat's
// SmallWebRTCRequest).
type offerRequest struct {
	SDP         string  `json:"sdp"`
	Type        string  `json:"type"`
	PCID        *string `json:"pc_id"`
	RestartPC   bool    `json:"restart_pc"`
	RequestData any     `json:"requestData,omitempty"`
}

// answer is the server's answer.
type answer struct {
	SDP  string `json:"sdp"`
	Type string `json:"type"`
	PCID string `json:"pc_id"`
}

// negotiate makes an offer, posts it and applies the answer.
func (c *conn) negotiate(ctx context.Context, again bool) error {
	c.mu.Lock()
	pc := c.pc
	var pcID *string
	if again {
		id := c.pcID
		pcID = &id
	}
	c.mu.Unlock()
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		return fmt.Errorf("adapters: %s: making the offer: %w", adapterName, err)
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(offer); err != nil {
		return fmt.Errorf("adapters: %s: %w", adapterName, err)
	}
	select {
	case <-gathered:
	case <-ctx.Done():
		return fmt.Errorf("adapters: %s: gathering ICE candidates: %w", adapterName, ctx.Err())
	}
	body, err := json.Marshal(offerRequest{SDP: pc.LocalDescription().SDP, Type: "offer", PCID: pcID, RequestData: c.agent.RequestData})
	if err != nil {
		return fmt.Errorf("adapters: %s: Agent.RequestData: %w", adapterName, err)
	}
	c.sc.AddJSON(body)
	c.cap.Frame("send", websocket.MessageText, body)
	c.stats.FrameOut(len(body))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.agent.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("adapters: %s: %w", adapterName, err)
	}
	for k, vs := range c.header {
		req.Header[k] = append([]string(nil), vs...)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("adapters: %s: posting the offer to %s: %w", adapterName, c.sc.URL(c.agent.URL), err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return fmt.Errorf("adapters: %s: reading the answer: %w", adapterName, err)
	}
	c.cap.Frame("recv", websocket.MessageText, b)
	c.stats.FrameIn(len(b))
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("adapters: %s: the agent refused the offer with HTTP %s: check the credentials in Agent.Header", adapterName, resp.Status)
	case resp.StatusCode/100 != 2:
		return fmt.Errorf("adapters: %s: the agent answered the offer with HTTP %s: %s", adapterName, resp.Status, wire.Excerpt(c.sc.Bytes(b)))
	case len(b) > maxAnswerBytes:
		return fmt.Errorf("adapters: %s: the answer is over %d bytes", adapterName, maxAnswerBytes)
	}
	var ans answer
	if err := json.Unmarshal(b, &ans); err != nil || ans.Type != "answer" || ans.SDP == "" {
		return fmt.Errorf("adapters: %s: the answer is not {\"sdp\",\"type\":\"answer\",\"pc_id\"}: %s", adapterName, wire.Excerpt(c.sc.Bytes(b)))
	}
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: ans.SDP}); err != nil {
		return fmt.Errorf("adapters: %s: the agent's answer: %w", adapterName, err)
	}
	c.mu.Lock()
	c.pcID = ans.PCID
	c.mu.Unlock()
	return nil
}

// goTracked runs f on a goroutine that Close waits for; it reports false,
// running nothing, once Close has begun.
func (c *conn) goTracked(f func()) bool { return c.call.Go(&c.wg, f) }

// push queues events and an error about frame (see evqueue.Call.Deliver).
// Call with recvMu held, so that the audio and data channel readers queue
// in the order they decoded.
func (c *conn) push(evs []voicetest.AgentEvent, err error, frame []byte) {
	c.call.Deliver(evs, err, frame)
}

// fail ends the call for cause, which the adapter found.
func (c *conn) fail(cause error) { c.call.Fail(cause) }

// finish ends the call once (see evqueue.Call.Finish); the peer
// connection is closed on a goroutine of its own (finish may run on one
// of pion's).
func (c *conn) finish(terminal error, hangUp string) { c.call.Finish(terminal, hangUp) }

// ended releases the call's transport when it ends.
func (c *conn) ended(closing bool) {
	c.cancel()
	c.mu.Lock()
	pc := c.pc
	c.mu.Unlock()
	if pc != nil && !closing {
		c.goTracked(func() { pc.Close() }) // ends the readers
	}
}

// readAudio decodes the agent's audio track until the call ends.
func (c *conn) readAudio(t *webrtc.TrackRemote) {
	dec, err := opus.NewDecoder(opusRate, 1)
	if err != nil {
		c.fail(fmt.Errorf("making the Opus decoder: %w", err))
		return
	}
	buf := make([]int16, maxOpusSamples)
	var last uint16
	first := true
	gate := silencegate.Gate{Threshold: c.threshold, MaxPause: maxPause}
	for {
		p, _, err := t.ReadRTP()
		if err != nil {
			return // the call ended; finish says why
		}
		c.stats.FrameIn(len(p.Payload))
		c.cap.Frame("recv", websocket.MessageBinary, p.Payload)
		if !first {
			d := p.SequenceNumber - last
			if d == 0 || d > 0x8000 {
				c.stats.Dropped(1) // duplicate or late: its time has passed
				continue
			}
			if d > 1 {
				c.stats.Dropped(int(d - 1))
			}
		}
		first, last = false, p.SequenceNumber
		n, err := dec.Decode(p.Payload, buf)
		c.recvMu.Lock()
		if err != nil {
			c.push(nil, fmt.Errorf("an RTP packet of %d bytes that is not Opus: %w", len(p.Payload), err), p.Payload)
			c.recvMu.Unlock()
			continue
		}
		out := gate.Process(buf[:n])
		if out == nil {
			c.recvMu.Unlock()
			continue
		}
		c.rtv.Audio()
		evs, err := c.down.Append(nil, opusRate, slices.Clone(out))
		c.push(evs, err, nil)
		c.recvMu.Unlock()
	}
}

// readData reads the data channel until it closes, into one buffer of
// MaxFrameBytes: a larger message is refused, not read.
func (c *conn) readData(dc datachannel.ReadWriteCloser) {
	buf := make([]byte, c.maxFrame)
	for {
		n, isString, err := dc.ReadDataChannel(buf)
		if errors.Is(err, io.ErrShortBuffer) {
			c.fail(fmt.Errorf("the agent sent a data channel message larger than %d bytes, past the max-message-size voicetest offered; raise Agent.MaxFrameBytes if that is expected", c.maxFrame))
			return
		}
		if err != nil {
			if c.call.Closing() || c.ctx.Err() != nil {
				return
			}
			c.finish(&voicetest.TransportClosedError{Adapter: adapterName}, "the agent closed the data channel")
			return
		}
		data := buf[:n]
		c.stats.FrameIn(n)
		typ := websocket.MessageBinary
		if isString {
			typ = websocket.MessageText
		}
		c.cap.Frame("recv", typ, data)
		c.recvMu.Lock()
		evs, err := c.message(isString, data)
		c.push(evs, err, data)
		c.recvMu.Unlock()
	}
}

// message decodes one data channel message. Call with recvMu held.
func (c *conn) message(isString bool, data []byte) ([]voicetest.AgentEvent, error) {
	if !isString {
		return nil, fmt.Errorf("a binary data channel message of %d bytes; the agent's transport messages are JSON text", len(data))
	}
	var m struct {
		Type    string `json:"type"`
		Message *struct {
			Type string `json:"type"`
		} `json:"message"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("a data channel message that is not JSON: %w", err)
	}
	if m.Type == "signalling" && m.Message != nil {
		switch m.Message.Type {
		case "peerLeft":
			evs := c.down.Flush(nil)
			c.push(evs, nil, nil)
			c.finish(&voicetest.TransportClosedError{Adapter: adapterName}, "the agent left the call (peerLeft)")
			return nil, nil
		case "renegotiate":
			c.goTracked(c.renegotiate)
			return nil, nil
		}
		return nil, fmt.Errorf("an unknown signalling message %q; Pipecat sends renegotiate and peerLeft", m.Message.Type)
	}
	return c.rtv.Message(data)
}

// renegotiate answers the agent's renegotiate with a new offer.
func (c *conn) renegotiate() {
	ctx, cancel := context.WithTimeout(c.ctx, DefaultDialTimeout)
	defer cancel()
	if err := c.negotiate(ctx, true); err != nil && c.ctx.Err() == nil {
		c.fail(fmt.Errorf("renegotiating at the agent's request: %w", err))
	}
}

// pingLoop sends Pipecat's keepalive until the call ends.
func (c *conn) pingLoop() {
	t := time.NewTicker(keepalive)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		if err := c.sendData("ping: "+strconv.FormatInt(time.Now().UnixMilli(), 10), true); err != nil {
			return
		}
	}
}

// sendData sends one data channel message.
func (c *conn) sendData(msg string, text bool) error {
	c.dcMu.Lock()
	defer c.dcMu.Unlock()
	if c.dc == nil {
		return &voicetest.TransportClosedError{Adapter: adapterName, Err: errors.New("the data channel is not open")}
	}
	if err := c.closedErr(); err != nil {
		return err
	}
	typ := websocket.MessageBinary
	if text {
		typ = websocket.MessageText
		c.sc.AddJSON([]byte(msg))
	}
	c.cap.Frame("send", typ, []byte(msg))
	if _, err := c.dc.WriteDataChannel([]byte(msg), text); err != nil {
		return &voicetest.TransportClosedError{Adapter: adapterName, Err: fmt.Errorf("data channel: %w", err)}
	}
	c.stats.FrameOut(len(msg))
	return nil
}

// sendSignalling sends a signalling message; a failure is logged (the
// call goes on without it, as Pipecat's client does).
func (c *conn) sendSignalling(msg map[string]any) {
	b, _ := json.Marshal(map[string]any{"type": "signalling", "message": msg})
	if err := c.sendData(string(b), true); err != nil {
		c.logf("%s: sending %s: %v", adapterName, b, err)
	}
}

// sendRTVI sends an RTVI client message.
func (c *conn) sendRTVI(typ string, data any) error {
	c.dcMu.Lock()
	c.msgID++
	id := c.msgID
	c.dcMu.Unlock()
	b, err := rtvi.ClientMessage(id, typ, data)
	if err != nil {
		return fmt.Errorf("adapters: %s: %w", adapterName, err)
	}
	return c.sendData(string(b), true)
}

// answerTool runs OnToolCall for a client-run function and sends
// llm-function-call-result.
func (c *conn) answerTool(call voicetest.ToolCall) {
	res, _ := wire.RunTool(c.ctx, c.onTool, call)
	c.recvMu.Lock()
	c.push([]voicetest.AgentEvent{{Kind: voicetest.AgentToolResult, Tool: &res}}, nil, nil)
	c.recvMu.Unlock()
	if err := c.sendRTVI("llm-function-call-result", rtvi.FunctionCallResult(call, res)); err != nil && c.ctx.Err() == nil {
		c.logf("%s: sending the result of %s: %v", adapterName, call.Name, err)
	}
}

// closedErr returns why nothing can be sent: the call ended or Close was
// called.
func (c *conn) closedErr() error { return c.call.ClosedErr() }

// sendable returns why nothing can be sent now, or nil.
func (c *conn) sendable(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.closedErr()
}

// SendAudio queues user speech for the pacer, which sends it as 20 ms
// Opus frames in real time; it blocks while more than maxAhead is queued,
// so that it returns about as fast as a microphone would have captured
// the speech.
func (c *conn) SendAudio(ctx context.Context, ch pcm.Chunk) error {
	if err := wire.CheckSendRate(adapterName, ch.Rate, c.rate); err != nil {
		return err
	}
	if err := c.sendable(ctx); err != nil {
		return err
	}
	c.userMu.Lock()
	defer c.userMu.Unlock()
	return c.queueLocked(ctx, c.up.Process(ch.Samples))
}

// queueLocked appends samples (at opusRate) to what the pacer sends,
// waiting for room past maxAhead. Call with userMu held.
func (c *conn) queueLocked(ctx context.Context, samples []int16) error {
	for {
		c.sendMu.Lock()
		n := min(len(samples), maxAhead-len(c.pending))
		if n > 0 {
			c.pending = append(c.pending, samples[:n]...)
			samples = samples[n:]
		}
		c.sendMu.Unlock()
		if len(samples) == 0 {
			return nil
		}
		if err := c.waitSent(ctx); err != nil {
			return err
		}
	}
}

// waitSent waits until the pacer has taken a frame, ctx ends or the call
// ends.
func (c *conn) waitSent(ctx context.Context) error {
	select {
	case <-c.sent:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		return c.closedErr()
	}
}

// pace sends a 20 ms Opus frame every 20 ms until the call ends, as a
// browser's microphone track does: the user's queued speech, or silence.
// Speech starts once three frames are queued (a jitter buffer for a
// caller that sends in real time) or EndUtterance flushes it.
func (c *conn) pace() {
	silence := make([]int16, frameSamples)
	frame := make([]int16, frameSamples)
	packet := make([]byte, 1500)
	speaking := false
	next := time.Now()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		f := silence
		c.sendMu.Lock()
		n := len(c.pending)
		if n >= frameSamples && (speaking || n >= 3*frameSamples) || c.flush && n > 0 {
			k := copy(frame, c.pending)
			clear(frame[k:])
			c.pending = c.pending[:copy(c.pending, c.pending[k:])]
			f, speaking = frame, true
		} else {
			speaking = false // nothing queued, or an underrun
		}
		if len(c.pending) == 0 {
			c.flush = false
		}
		c.sendMu.Unlock()
		select {
		case c.sent <- struct{}{}:
		default:
		}
		k, err := c.enc.Encode(f, packet)
		if err != nil {
			c.fail(fmt.Errorf("encoding Opus: %w", err))
			return
		}
		if c.closedErr() != nil {
			return
		}
		c.cap.Frame("send", websocket.MessageBinary, packet[:k])
		if err := c.track.WriteSample(media.Sample{Data: packet[:k], Duration: 20 * time.Millisecond}); err != nil {
			if c.closedErr() == nil {
				c.fail(fmt.Errorf("sending audio: %w", err))
			}
			return
		}
		c.stats.FrameOut(k)
		next = next.Add(20 * time.Millisecond)
		now := time.Now()
		if now.Sub(next) > 200*time.Millisecond {
			next = now // the machine stalled: do not send a burst to catch up
		}
		t.Reset(next.Sub(now))
	}
}

// EndUtterance sends the rest of the speech, padded to a whole frame, and
// returns once the pacer has sent it; silence follows, as from a
// microphone, for the agent's VAD to hear the end of the turn.
func (c *conn) EndUtterance(ctx context.Context) error {
	if err := c.sendable(ctx); err != nil {
		return err
	}
	c.userMu.Lock()
	defer c.userMu.Unlock()
	if err := c.queueLocked(ctx, c.up.Flush()); err != nil {
		return err
	}
	for {
		c.sendMu.Lock()
		left := len(c.pending)
		if left > 0 {
			c.flush = true
		}
		c.sendMu.Unlock()
		if left == 0 {
			return nil
		}
		if err := c.waitSent(ctx); err != nil {
			return err
		}
	}
}

// SendText sends an RTVI send-text message.
func (c *conn) SendText(ctx context.Context, text string) error {
	if !c.rtviOn {
		return &voicetest.UnsupportedError{Adapter: adapterName, Capability: "text input",
			Alternative: "text reaches a WebRTC agent only as RTVI send-text on the data channel (set Agent.RTVI for a bot that runs RTVI); use spoken steps (voicetest.UserSays)"}
	}
	if strings.TrimSpace(text) == "" {
		return fmt.Errorf("adapters: %s: SendText with empty text", adapterName)
	}
	if err := c.sendable(ctx); err != nil {
		return err
	}
	return c.sendRTVI("send-text", rtvi.SendText(text))
}

// SendDTMF sends the RTVI dtmf message.
func (c *conn) SendDTMF(ctx context.Context, digits string) error {
	if !c.rtviOn {
		return &voicetest.UnsupportedError{Adapter: adapterName, Capability: "DTMF events",
			Alternative: "key presses reach a WebRTC agent only as the RTVI dtmf message (set Agent.RTVI for a bot that runs RTVI); voicetest.DTMF sends in-band tones otherwise"}
	}
	if err := wire.CheckDTMF(digits); err != nil {
		return fmt.Errorf("adapters: %s: %w", adapterName, err)
	}
	data, err := rtvi.DTMF(digits)
	if err != nil {
		return fmt.Errorf("adapters: %s: %w", adapterName, err)
	}
	if err := c.sendable(ctx); err != nil {
		return err
	}
	return c.sendRTVI("dtmf", data)
}

// Interrupt is unsupported: barge-in over WebRTC is overlapping audio.
func (c *conn) Interrupt(context.Context) error {
	return &voicetest.UnsupportedError{Adapter: adapterName, Capability: "native interrupt",
		Alternative: "a WebRTC agent has no caller-side cancel; barge in by sending user audio while it speaks (its VAD hears it)"}
}

// Recv returns the agent's next event.
func (c *conn) Recv(ctx context.Context) (voicetest.AgentEvent, error) { return c.call.Recv(ctx) }

// WireStats reports what crossed the wire (voicetest.WireStatsReporter):
// RTP packets and data channel messages each way, the offer and its
// answer, and the agent's packets lost or late (DroppedFrames).
func (c *conn) WireStats() voicetest.WireStats { return c.stats.Snapshot(adapterName) }

// Close leaves the call and releases everything. It returns an error
// only when the agent's events went past Agent.MaxQueueBytes while
// nothing read them (a *voicetest.LimitError), every time it is called.
func (c *conn) Close() error {
	if !c.call.BeginClose() {
		return c.call.Limit()
	}
	c.mu.Lock()
	pc := c.pc
	c.mu.Unlock()
	c.finish(nil, "")
	done := make(chan struct{})
	go func() {
		if pc != nil {
			if err := pc.Close(); err != nil {
				c.logf("%s: closing: %v", adapterName, err)
			}
		}
		c.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(c.closeWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		c.logf("%s: the peer connection did not close within %v (Agent.CloseTimeout); its goroutines end in the background", adapterName, c.closeWait)
		c.cap.Note("error", "closing: timed out")
	}
	c.cap.Note("closed", "closed by voicetest")
	return c.call.Limit()
}
