// Package webrtcpeer is a test double of a voice bot served over WebRTC
// with one SDP offer/answer exchange over HTTP, as a Pipecat bot behind
// SmallWebRTCTransport serves one, built on github.com/pion/webrtc/v4 and
// libopus (gopkg.in/hraban/opus.v2).
//
// What it follows (Pipecat's documentation of the transport,
// docs.pipecat.ai/server/services/transport/small-webrtc and
// docs.pipecat.ai/client/js/transports/small-webrtc, and its code in
// github.com/pipecat-ai/pipecat, src/pipecat/transports/smallwebrtc/, and
// github.com/pipecat-ai/pipecat-client-web-transports,
// transports/small-webrtc-transport):
//
//   - Signalling: pipecat src/pipecat/transports/smallwebrtc/request_handler.py
//     (SmallWebRTCRequest {sdp, type, pc_id, restart_pc, request_data |
//     requestData}; handle_web_request answers {sdp, type, pc_id}; an
//     offer with a known pc_id renegotiates that connection) and
//     connection.py (get_answer). The double serves it at /api/offer,
//     answers 401 when Config.Key is set and the request's
//     "Authorization: Bearer" differs, 400 for a request that is not an
//     offer, and 404 for a pc_id it does not know.
//   - Media: Opus 48 kHz on the offered audio transceiver, both ways.
//   - Data channel (connection.py on_datachannel, and the client
//     @pipecat-ai/small-webrtc-transport createDataChannel): the client's
//     channel; "ping…" text is the client's keepalive; JSON with
//     type "signalling" carries trackStatus from the client and
//     renegotiate / peerLeft from the bot; any other JSON is an app
//     message: RTVI client messages (client-ready, send-text, dtmf,
//     llm-function-call-result) as in package pipecatpeer.
//
// THIS IS NOT PIPECAT. Behaviour: the bot decodes the user's Opus,
// detects speech by energy (an utterance ends after EndSilence of silent
// audio, as Pipecat's VAD stop does) and transcribes it with
// voicetest/fixtures' fake STT. Each reply is fixtures.FakeTTS speech at
// 48 kHz, sent as 20 ms Opus packets in real time; with RTVI it sends
// bot-started-speaking, bot-tts-text per word, bot-stopped-speaking and
// user-transcription. Voiced user audio while it speaks cuts the reply
// (bot-interrupted with RTVI). After HangUpAfter replies it sends
// peerLeft and closes the peer connection, as connection.py disconnect
// does, once the client has left or a second has passed (see
// awaitLeave). It ends a call when the client leaves (its SCTP association
// closes) or the connection fails. Every protocol violation is recorded
// in Call.Errors.
//
// Only loopback: the double gathers loopback ICE candidates only and does
// no multicast DNS.
package webrtcpeer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/transport/v5"
	"github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media"
	"github.com/voicetest-go/voicetest/internal/peers/peerkit"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
	"gopkg.in/hraban/opus.v2"
)

// Rate is the rate of the bot's audio (Opus's).
const Rate = pcm.Rate48k

// Fault is a way the bot misbehaves.
type Fault int

// The faults.
const (
	// NoFault: the bot behaves.
	NoFault Fault = iota
	// Mute: the call opens, and the bot answers nothing.
	Mute
	// NoMedia: the bot answers the offer, then closes its peer connection
	// at once: ICE never connects.
	NoMedia
)

// Turn is the bot's answer to one user turn.
type Turn struct {
	// Reply is what the bot says; "{heard}" is replaced by what it heard.
	// Empty means "Reply n.".
	Reply string
	// ToolCall, when set, is a function the bot runs itself first
	// (RTVI llm-function-call-in-progress and -stopped).
	ToolCall *ToolCall
}

// ToolCall is a function the bot calls in a turn.
type ToolCall struct {
	Name   string
	Args   map[string]any
	Result any
}

// Message is what the bot sends when the call opens.
type Message struct {
	// Data is a data channel message, sent as text unless Binary.
	Data   []byte
	Binary bool
	// Audio, when set instead, is PCM16 at Rate sent on the audio track
	// as 20 ms Opus packets, ten times faster than real time (a flood).
	Audio []int16
}

// Config sets the bot's behaviour.
type Config struct {
	// RTVI makes the bot speak RTVI on the data channel.
	RTVI bool
	// Turns are the answers to the user turns.
	Turns []Turn
	// EndSilence is the silence that ends an utterance (default 300 ms).
	EndSilence time.Duration
	// Threshold is the RMS above which audio is speech (default 300).
	Threshold float64
	// HangUpAfter, when positive, ends the call after that many replies.
	HangUpAfter int
	// Key, when set, is the bearer token the offer must carry.
	Key string
	// Fault is a misbehaviour.
	Fault Fault
	// Send holds what the bot sends once the data channel opens.
	Send []Message
	// IgnoreMaxMessageSize makes the bot disregard the client's SDP
	// max-message-size (a non-compliant or hostile server), so that it
	// can send larger data channel messages.
	IgnoreMaxMessageSize bool
	// Listener, when set, is where the double serves its offer endpoint
	// instead of a port of 127.0.0.1 (an in-memory listener,
	// adaptertest.MemNet, to run a test on virtual time); the double
	// closes it.
	Listener net.Listener
	// Net, when set, is the network of the bot's ICE candidates and
	// media instead of the machine's UDP sockets: a pion vnet.Net shared
	// with the client (its loopback), so that the bot and the client run
	// in one testing/synctest bubble, on virtual time.
	Net transport.Net
}

// Call is what the bot saw of one connection.
type Call struct {
	// PCID is the connection's id.
	PCID string
	// Offers counts the offers for it (renegotiations included).
	Offers int
	// RequestData is the offer's requestData, as JSON.
	RequestData string
	// Label is the data channel's label.
	Label string
	// TrackStatus holds the trackStatus messages, as JSON.
	TrackStatus []string
	// Pings counts the keepalive pings.
	Pings int
	// ClientReady reports an RTVI client-ready.
	ClientReady bool
	// Heard holds what each user turn said.
	Heard []string
	// Texts holds RTVI send-text contents; DTMF the keys pressed.
	Texts []string
	DTMF  string
	// Interruptions counts replies cut short; Replies those completed.
	Interruptions, Replies int
	// Errors are protocol violations the bot saw.
	Errors []string
	// Ended reports that the connection is over.
	Ended bool
}

func cloneCall(c *Call) Call {
	out := *c
	out.TrackStatus = append([]string(nil), c.TrackStatus...)
	out.Heard = append([]string(nil), c.Heard...)
	out.Texts = append([]string(nil), c.Texts...)
	out.Errors = append([]string(nil), c.Errors...)
	return out
}

// Server is a running bot.
type Server struct {
	// URL is the offer endpoint, http://127.0.0.1:port/api/offer.
	URL string

	cfg   Config
	srv   *peerkit.Server
	calls *peerkit.Log[Call]
	api   *webrtc.API

	mu      sync.Mutex
	conns   map[string]*conn
	closing bool // under mu: Close has begun, goTracked starts nothing
	lastID  int  // under mu: the number of the last connection made (newConn)
	wg      sync.WaitGroup
}

// goTracked runs f on a goroutine that Close waits for, unless Close has
// begun (then f does not run: Close ends every call itself). Every
// goroutine of the bot is one of these (or a reply's, on the same
// WaitGroup), so that nothing of it outlives Close: in a
// testing/synctest bubble a goroutine left running when the test ends is
// a deadlock.
func (s *Server) goTracked(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

// New starts a bot on loopback and closes it when the test ends.
func New(tb testing.TB, cfg Config) *Server {
	tb.Helper()
	s, err := Start(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Start starts a bot on loopback; Close stops it.
func Start(cfg Config) (*Server, error) {
	if cfg.EndSilence == 0 {
		cfg.EndSilence = 300 * time.Millisecond
	}
	if cfg.Threshold == 0 {
		cfg.Threshold = 300
	}
	var me webrtc.MediaEngine
	if err := me.RegisterCodec(webrtc.RTPCodecParameters{
		RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: Rate, Channels: 2, SDPFmtpLine: "minptime=10;useinbandfec=1"},
		PayloadType:        111,
	}, webrtc.RTPCodecTypeAudio); err != nil {
		return nil, err
	}
	var ir interceptor.Registry
	if err := webrtc.RegisterDefaultInterceptors(&me, &ir); err != nil {
		return nil, err
	}
	var se webrtc.SettingEngine
	se.SetIncludeLoopbackCandidate(true)
	se.SetIPFilter(func(ip net.IP) bool { return ip.IsLoopback() })
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	// The call ends when the client's SCTP association closes (newConn),
	// not from pion's own close on the client's DTLS close_notify: that
	// one races the association's end, and pion's SCTPTransport.Stop
	// then holds its lock through SCTP Abort's 200 ms flush wait while
	// the association's accept loop waits for the same lock, which on
	// virtual time (a goroutine blocked on a mutex stops the bubble's
	// clock) never ends.
	se.DisableCloseByDTLS(true)
	if cfg.Net != nil {
		se.SetNet(cfg.Net)
	}
	s := &Server{cfg: cfg, calls: peerkit.NewLog(cloneCall), conns: map[string]*conn{},
		api: webrtc.NewAPI(webrtc.WithMediaEngine(&me), webrtc.WithInterceptorRegistry(&ir), webrtc.WithSettingEngine(se))}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/offer", s.offer)
	s.srv = peerkit.Listen(cfg.Listener)
	s.URL = s.srv.URL + "/api/offer"
	s.srv.Serve(mux)
	return s, nil
}

// Close ends every call and stops the bot.
func (s *Server) Close() {
	s.srv.Close()
	// Let the calls handle what their clients sent before: a client that
	// has just left (its Close sent an SCTP ABORT) ends its call itself.
	// Closing the peer connection while pion handles that ABORT races
	// it: pion's SCTPTransport.Stop holds its lock through SCTP Abort's
	// 200 ms flush wait while the association's accept loop waits for the
	// same lock to report the close, which on virtual time (a goroutine
	// blocked on a mutex stops the bubble's clock) never ends. On virtual
	// time this pause is a guarantee (the clock moves only once every
	// goroutine of the bubble waits); on the real clock it costs 1 ms.
	time.Sleep(time.Millisecond)
	s.mu.Lock()
	conns := s.conns
	s.conns = map[string]*conn{}
	s.closing = true
	s.mu.Unlock()
	for _, c := range conns {
		c.end()
	}
	s.wg.Wait()
}

// Calls returns a copy of what the bot saw of each connection.
func (s *Server) Calls() []Call { return s.calls.Snapshot() }

// offerIn is SmallWebRTCRequest.
type offerIn struct {
	SDP          string          `json:"sdp"`
	Type         string          `json:"type"`
	PCID         *string         `json:"pc_id"`
	RestartPC    *bool           `json:"restart_pc"`
	RequestData  json.RawMessage `json:"request_data"`
	RequestData2 json.RawMessage `json:"requestData"`
}

var maxMessageSize = regexp.MustCompile(`(?m)^a=max-message-size:\d+`)

func (s *Server) offer(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if s.cfg.Key != "" && r.Header.Get("Authorization") != "Bearer "+s.cfg.Key {
		http.Error(w, `{"detail":"Unauthorized"}`, http.StatusUnauthorized)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var in offerIn
	if err == nil {
		err = json.Unmarshal(body, &in)
	}
	if err != nil || in.Type != "offer" || !strings.HasPrefix(in.SDP, "v=0") || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, fmt.Sprintf(`{"detail":"not a SmallWebRTCRequest offer (%v)"}`, err), http.StatusBadRequest)
		return
	}
	if s.cfg.IgnoreMaxMessageSize {
		in.SDP = maxMessageSize.ReplaceAllString(in.SDP, "a=max-message-size:1073741823")
	}
	var c *conn
	if in.PCID != nil && *in.PCID != "" {
		s.mu.Lock()
		c = s.conns[*in.PCID]
		s.mu.Unlock()
		if c == nil {
			http.Error(w, `{"detail":"Peer connection not found"}`, http.StatusNotFound)
			return
		}
	} else {
		if c, err = s.newConn(in); err != nil {
			http.Error(w, fmt.Sprintf(`{"detail":%q}`, err.Error()), http.StatusInternalServerError)
			return
		}
	}
	ans, err := c.answer(in.SDP)
	if err != nil {
		c.errorf("answering the offer: %v", err)
		http.Error(w, fmt.Sprintf(`{"detail":%q}`, err.Error()), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"sdp": ans, "type": "answer", "pc_id": c.id})
	if s.cfg.Fault == NoMedia {
		c.end()
	}
}

// conn is one call.
type conn struct {
	s   *Server
	id  string
	pc  *webrtc.PeerConnection
	out *webrtc.TrackLocalStaticSample
	rec *Call
	ctx context.Context

	cancel context.CancelFunc
	ended  atomic.Bool // end has begun

	// left is closed once the client has left (its SCTP ABORT ended the
	// association); leaveOnce guards it.
	left      chan struct{}
	leaveOnce sync.Once

	dcMu sync.Mutex
	dc   *webrtc.DataChannel

	encMu sync.Mutex
	enc   *opus.Encoder

	replies *peerkit.Replier

	// The track reader only.
	ear  peerkit.Ear
	turn int
}

func (s *Server) newConn(in offerIn) (*conn, error) {
	pc, err := s.api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		return nil, err
	}
	enc, err := opus.NewEncoder(Rate, 1, opus.AppVoIP)
	if err != nil {
		pc.Close()
		return nil, err
	}
	enc.SetBitrate(48000)
	s.mu.Lock()
	s.lastID++
	id := "SmallWebRTCConnection#" + strconv.Itoa(s.lastID)
	s.mu.Unlock()
	rd := in.RequestData
	if len(rd) == 0 {
		rd = in.RequestData2
	}
	rec := s.calls.Add(func(int) *Call { return &Call{PCID: id, RequestData: string(rd)} })
	ctx, cancel := s.srv.CallContext()
	c := &conn{s: s, id: id, pc: pc, rec: rec, ctx: ctx, cancel: cancel, enc: enc, replies: peerkit.NewReplier(&s.wg), left: make(chan struct{}),
		ear: peerkit.Ear{Rate: Rate, Threshold: s.cfg.Threshold, EndSilence: s.cfg.EndSilence}}
	pc.OnDataChannel(c.onDataChannel)
	pc.OnTrack(func(t *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		s.goTracked(func() { c.readAudio(t) })
	})
	pc.OnConnectionStateChange(func(st webrtc.PeerConnectionState) {
		if st == webrtc.PeerConnectionStateFailed || st == webrtc.PeerConnectionStateClosed {
			s.goTracked(c.end)
		}
	})
	// The client left: its SCTP ABORT (a WebRTC peer's close) ended the
	// association. pion calls this after its accept loop let go of the
	// transport's lock.
	pc.SCTP().OnClose(func(error) {
		c.leaveOnce.Do(func() { close(c.left) })
		s.goTracked(c.end)
	})
	s.mu.Lock()
	s.conns[id] = c
	s.mu.Unlock()
	return c, nil
}

// answer applies an offer and returns the answer, candidates included.
func (c *conn) answer(sdp string) (string, error) {
	if err := c.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: sdp}); err != nil {
		return "", err
	}
	if c.out == nil {
		out, err := webrtc.NewTrackLocalStaticSample(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: Rate, Channels: 2}, "audio", "bot")
		if err != nil {
			return "", err
		}
		sender, err := c.pc.AddTrack(out)
		if err != nil {
			return "", err
		}
		c.out = out
		c.s.goTracked(func() {
			for {
				if _, _, err := sender.ReadRTCP(); err != nil {
					return
				}
			}
		})
	}
	ans, err := c.pc.CreateAnswer(nil)
	if err != nil {
		return "", err
	}
	gathered := webrtc.GatheringCompletePromise(c.pc)
	if err := c.pc.SetLocalDescription(ans); err != nil {
		return "", err
	}
	select {
	case <-gathered:
	case <-time.After(10 * time.Second):
		return "", errors.New("ICE gathering did not complete")
	}
	c.s.calls.Update(c.rec, func(cl *Call) { cl.Offers++ })
	return c.pc.LocalDescription().SDP, nil
}

// end closes the call.
func (c *conn) end() {
	// Not a sync.Once: a second caller returns at once rather than wait
	// on the Once's mutex while the first is in pc.Close, which may wait
	// on the clock (SCTP Abort's flush): on virtual time a goroutine
	// blocked on a mutex stops the clock. Every other caller runs on a
	// goroutine Close waits for (goTracked), or in the offer handler,
	// which Close's srv.Close waits for.
	if c.ended.Swap(true) {
		return
	}
	c.cancel()
	c.replies.Cut()
	c.pc.Close()
	c.s.mu.Lock()
	delete(c.s.conns, c.id)
	c.s.mu.Unlock()
	c.s.calls.Update(c.rec, func(cl *Call) { cl.Ended = true })
}

func (c *conn) errorf(format string, args ...any) {
	c.s.calls.Update(c.rec, func(cl *Call) { cl.Errors = append(cl.Errors, fmt.Sprintf(format, args...)) })
}

func (c *conn) onDataChannel(dc *webrtc.DataChannel) {
	c.s.calls.Update(c.rec, func(cl *Call) { cl.Label = dc.Label() })
	// The channel is the bot's to send on from now: pion may deliver the
	// client's first message before it runs OnOpen, and the answer to it
	// must not be lost.
	c.dcMu.Lock()
	c.dc = dc
	c.dcMu.Unlock()
	dc.OnOpen(func() {
		if c.s.cfg.Fault == Mute {
			return
		}
		for _, m := range c.s.cfg.Send {
			var err error
			switch {
			case m.Audio != nil:
				err = c.flood(m.Audio)
			case m.Binary:
				err = dc.Send(m.Data)
			default:
				err = dc.SendText(string(m.Data))
			}
			if err != nil {
				if c.ctx.Err() == nil {
					c.errorf("sending: %v", err)
				}
				return
			}
		}
	})
	dc.OnMessage(func(m webrtc.DataChannelMessage) {
		if c.s.cfg.Fault == Mute {
			return
		}
		if !m.IsString {
			c.errorf("a binary data channel message of %d bytes", len(m.Data))
			return
		}
		c.clientMessage(string(m.Data))
	})
}

// flood sends audio on the track ten times faster than real time.
func (c *conn) flood(samples []int16) error {
	for len(samples) > 0 {
		n := min(len(samples), Rate/50)
		frame := samples[:n]
		if n < Rate/50 {
			frame = append(append([]int16(nil), frame...), make([]int16, Rate/50-n)...)
		}
		samples = samples[n:]
		if err := c.sendFrame(frame); err != nil {
			return err
		}
		select {
		case <-c.ctx.Done():
			return nil
		case <-time.After(2 * time.Millisecond):
		}
	}
	return nil
}

// sendFrame encodes and sends one 20 ms frame.
func (c *conn) sendFrame(frame []int16) error {
	c.encMu.Lock()
	defer c.encMu.Unlock()
	buf := make([]byte, 1500)
	n, err := c.enc.Encode(frame, buf)
	if err != nil {
		return err
	}
	return c.out.WriteSample(media.Sample{Data: buf[:n], Duration: 20 * time.Millisecond})
}

// send sends a data channel message as JSON text.
func (c *conn) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.dcMu.Lock()
	dc := c.dc
	c.dcMu.Unlock()
	if dc == nil {
		return errors.New("no data channel")
	}
	return dc.SendText(string(b))
}

// rtvi sends an RTVI server message, when the bot speaks RTVI.
func (c *conn) rtvi(typ string, data any) error {
	if !c.s.cfg.RTVI {
		return nil
	}
	m := map[string]any{"label": "rtvi-ai", "type": typ}
	if data != nil {
		m["data"] = data
	}
	return c.send(m)
}

func (c *conn) clientMessage(msg string) {
	if strings.HasPrefix(msg, "ping") {
		c.s.calls.Update(c.rec, func(cl *Call) { cl.Pings++ })
		return
	}
	var m struct {
		Type    string          `json:"type"`
		Label   string          `json:"label"`
		Message json.RawMessage `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(msg), &m); err != nil {
		c.errorf("a data channel message that is not JSON: %.100q", msg)
		return
	}
	if m.Type == "signalling" {
		var sm struct {
			Type          string `json:"type"`
			ReceiverIndex *int   `json:"receiver_index"`
			Enabled       *bool  `json:"enabled"`
		}
		if json.Unmarshal(m.Message, &sm) != nil || sm.Type != "trackStatus" || sm.ReceiverIndex == nil || sm.Enabled == nil {
			c.errorf("signalling message %s: the client sends trackStatus {receiver_index, enabled}", m.Message)
			return
		}
		c.s.calls.Update(c.rec, func(cl *Call) { cl.TrackStatus = append(cl.TrackStatus, string(m.Message)) })
		return
	}
	if m.Label != "rtvi-ai" {
		return // an app message for the pipeline
	}
	switch m.Type {
	case "client-ready":
		var d struct {
			Version string `json:"version"`
		}
		if json.Unmarshal(m.Data, &d) != nil || d.Version == "" {
			c.errorf("client-ready without version: %s", m.Data)
		}
		c.s.calls.Update(c.rec, func(cl *Call) { cl.ClientReady = true })
		c.rtvi("bot-ready", map[string]any{"version": "2.1.0"})
	case "send-text":
		var d struct {
			Content string `json:"content"`
		}
		if json.Unmarshal(m.Data, &d) != nil || d.Content == "" {
			c.errorf("send-text without content")
			return
		}
		c.s.calls.Update(c.rec, func(cl *Call) { cl.Texts = append(cl.Texts, d.Content) })
		c.userTurn(d.Content)
	case "dtmf":
		var d struct {
			Buttons []string `json:"buttons"`
		}
		if json.Unmarshal(m.Data, &d) != nil || len(d.Buttons) == 0 {
			c.errorf("dtmf without buttons")
			return
		}
		c.s.calls.Update(c.rec, func(cl *Call) { cl.DTMF += strings.Join(d.Buttons, "") })
		c.startReply(Turn{Reply: "You pressed " + strings.Join(d.Buttons, "") + "."}, "")
	default:
		c.errorf("RTVI client message %q this bot does not handle", m.Type)
	}
}

// readAudio decodes the user's Opus until the call ends.
func (c *conn) readAudio(t *webrtc.TrackRemote) {
	if !strings.EqualFold(t.Codec().MimeType, webrtc.MimeTypeOpus) {
		c.errorf("a %s track", t.Codec().MimeType)
		return
	}
	dec, err := opus.NewDecoder(Rate, 1)
	if err != nil {
		c.errorf("decoder: %v", err)
		return
	}
	buf := make([]int16, Rate*120/1000)
	for {
		p, _, err := t.ReadRTP()
		if err != nil {
			return
		}
		n, err := dec.Decode(p.Payload, buf)
		if err != nil {
			c.errorf("an RTP packet that is not Opus: %v", err)
			continue
		}
		if c.s.cfg.Fault == Mute {
			continue
		}
		c.audio(buf[:n])
	}
}

// audio takes 48 kHz user audio.
func (c *conn) audio(samples []int16) {
	started, utterance := c.ear.Hear(samples)
	if started {
		c.rtvi("user-started-speaking", nil)
		c.bargeIn()
	}
	if utterance != nil {
		c.rtvi("user-stopped-speaking", nil)
		heard := peerkit.Transcribe(c.ctx, Rate, utterance)
		c.rtvi("user-transcription", map[string]any{"text": heard, "user_id": "", "timestamp": time.Now().UTC().Format(time.RFC3339), "final": true})
		c.userTurn(heard)
	}
}

// userTurn answers what the user said.
func (c *conn) userTurn(heard string) {
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

// bargeIn cuts the reply in progress.
func (c *conn) bargeIn() {
	if !c.replies.Cut() {
		return
	}
	c.s.calls.Update(c.rec, func(cl *Call) { cl.Interruptions++ })
	c.rtvi("bot-interrupted", nil)
	c.rtvi("bot-stopped-speaking", nil)
}

// startReply starts a reply on its own goroutine, after the one before.
func (c *conn) startReply(t Turn, heard string) {
	c.bargeIn()
	n := c.turn
	c.replies.Start(c.ctx, func(ctx context.Context) bool { return c.speak(ctx, n, t, heard) }, c.afterReply)
}

// speak runs one reply in real time; it reports whether it ran to its
// end.
func (c *conn) speak(ctx context.Context, n int, t Turn, heard string) bool {
	text := strings.ReplaceAll(t.Reply, "{heard}", heard)
	if tc := t.ToolCall; tc != nil {
		id := "call_" + strconv.Itoa(n)
		c.rtvi("llm-function-call-in-progress", map[string]any{"tool_call_id": id, "function_name": tc.Name, "arguments": tc.Args})
		c.rtvi("llm-function-call-stopped", map[string]any{"tool_call_id": id, "cancelled": false, "function_name": tc.Name, "result": tc.Result})
	}
	speech, err := fixtures.FakeTTS().Synthesize(ctx, voicetest.SpeechRequest{Text: text, Rate: Rate})
	if err != nil {
		return false
	}
	if c.rtvi("bot-started-speaking", nil) != nil {
		return false
	}
	words := strings.Fields(text)
	frames := speech.Frames(20 * time.Millisecond)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for i, f := range frames {
		if w := len(words) * (i + 1) / len(frames); w > 0 {
			for _, word := range words[:w] {
				if c.rtvi("bot-tts-text", map[string]any{"text": word}) != nil {
					return false
				}
			}
			words = words[w:]
		}
		frame := f.Samples
		if len(frame) < Rate/50 {
			frame = append(append([]int16(nil), frame...), make([]int16, Rate/50-len(frame))...)
		}
		if ctx.Err() != nil || c.sendFrame(frame) != nil {
			return false
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return false
		}
	}
	return ctx.Err() == nil && c.rtvi("bot-stopped-speaking", nil) == nil
}

// afterReply counts a completed reply and leaves the call when told.
func (c *conn) afterReply() {
	var n int
	c.s.calls.Update(c.rec, func(cl *Call) { cl.Replies++; n = cl.Replies })
	if h := c.s.cfg.HangUpAfter; h > 0 && n == h {
		c.send(map[string]any{"type": "signalling", "message": map[string]any{"type": "peerLeft"}})
		c.s.goTracked(func() {
			c.flushData()
			c.awaitLeave()
			c.end()
		})
	}
}

// leaveWait bounds how long the bot waits, after its peerLeft, for the
// client to leave before it closes the peer connection itself.
const leaveWait = time.Second

// awaitLeave waits (up to leaveWait) for the client to leave after the
// bot's peerLeft. Not until the call's context ends: Close cancels it
// first, often just as the client closes, which is the race below. Pipecat closes its peer
// connection at once; this double lets the client's close go first,
// because pion's close racing the client's SCTP ABORT deadlocks on
// virtual time: SCTPTransport.Stop holds the transport's lock through
// SCTP Abort's 200 ms flush wait while the association's accept loop,
// ended by the ABORT, waits for that lock to report the close, and a
// goroutine blocked on a mutex stops a synctest bubble's clock (CI hung
// 7 minutes in adapters/webrtc's TestConformance that way). After the
// client's close, the accept loop has let go of the lock (OnClose runs
// after it), and Stop has nothing to race.
func (c *conn) awaitLeave() {
	select {
	case <-c.left:
	case <-time.After(leaveWait):
	}
}

// flushData waits (up to a second, or until the call ends) until the
// data channel has sent what it holds, as the bot's disconnect lets its
// last message go.
func (c *conn) flushData() {
	c.dcMu.Lock()
	dc := c.dc
	c.dcMu.Unlock()
	for i := 0; dc != nil && dc.BufferedAmount() > 0 && i < 100; i++ {
		select {
		case <-c.ctx.Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}
