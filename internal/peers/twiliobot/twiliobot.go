// Package twiliobot is a test double of a bot that serves Twilio Media
// Streams: the server side of the WebSocket that Twilio opens for
// <Connect><Stream>. It lets the Twilio adapter be tested on loopback against
// a peer that behaves as a real bot (Pipecat's Twilio transport) does.
//
// The bot checks what a strict bot checks: "connected" then "start" before
// any media (Pipecat's runner reads exactly those two messages and needs
// start.streamSid and start.callSid), string sequence numbers that count up
// by one over every message, media chunks that count up by one with
// timestamps 20 ms apart, 160-byte µ-law payloads, and a final "stop". Every
// violation is recorded in Call.Errors.
//
// Its behaviour: it detects the end of each user utterance by energy (a run
// of silent frames, or a gap with no frames at all), answers with a tone
// burst queued all at once followed by a mark (as bots do: Twilio plays the
// queue and echoes the mark), considers itself speaking until the mark is
// echoed, and sends "clear" when user speech starts while it speaks
// (barge-in). It collects DTMF digits and answers "#" with a reply. It can
// greet first, hang up after a number of replies (closing the WebSocket once
// the last reply's mark is echoed), delay its replies, and misbehave in the
// ways listed under Fault.
package twiliobot

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/internal/peers/peerkit"
	"github.com/voicetest-go/voicetest/pcm"
)

// Fault is a way the bot misbehaves, right after the start message.
type Fault int

// The faults.
const (
	// NoFault: the bot behaves.
	NoFault Fault = iota
	// MalformedJSON: sends a text frame that is not JSON.
	MalformedJSON
	// BinaryFrame: sends a binary frame.
	BinaryFrame
	// UnknownEvent: sends {"event":"dance"}.
	UnknownEvent
	// WrongStreamSid: sends media for another stream.
	WrongStreamSid
	// BadPayload: sends media whose payload is not base64.
	BadPayload
	// HugeFrame: sends a 2 MiB text frame.
	HugeFrame
	// Stall: stops reading and writing (so answers no ping) until the
	// server closes.
	Stall
	// Abort: drops the connection without a closing handshake.
	Abort
)

// Config sets the bot's behaviour. The zero value is a polite bot that
// answers each utterance with a 400 ms tone and never hangs up.
type Config struct {
	// Greeting, when positive, is the length of the tone the bot says
	// first, followed by the mark "greeting".
	Greeting time.Duration
	// ReplyDuration is the length of each reply (default 400 ms).
	ReplyDuration time.Duration
	// ReplyDelay is how long the bot thinks before replying.
	ReplyDelay time.Duration
	// HangUpAfter, when positive, makes the bot close the WebSocket once
	// the mark of its HangUpAfter-th reply has been echoed.
	HangUpAfter int
	// SilenceFrames is how many consecutive silent frames end an utterance
	// (default 10, i.e. 200 ms).
	SilenceFrames int
	// Gap, when positive, also ends an utterance when no frame arrives for
	// this long, for callers that send nothing after speaking. It is off
	// by default because it depends on the wall clock, which a loaded test
	// machine stretches.
	Gap time.Duration
	// Threshold is the RMS level above which a frame is speech (default
	// 500).
	Threshold float64
	// Fault is a misbehaviour to show right after start.
	Fault Fault
	// CallerMarks makes the bot take a mark named "utt-N" from the caller
	// as the end of an utterance (the non-standard twilio.Agent.CallerMarks
	// mode), besides its energy detection.
	CallerMarks bool
	// Send holds text frames to send verbatim right after start (before
	// the greeting), with "{sid}" replaced by the stream's SID: a way to
	// script any malformed message.
	Send []string
	// Listener, when set, is where the double serves instead of a port
	// of 127.0.0.1 (an in-memory listener, adaptertest.MemNet, to run a
	// test on virtual time); the double closes it.
	Listener net.Listener
}

// StartInfo is what the bot read from the start message.
type StartInfo struct {
	StreamSid, AccountSid, CallSid string
	Tracks                         []string
	CustomParameters               map[string]string
	Encoding                       string
	SampleRate, Channels           int
}

// Call is what the bot saw of one call.
type Call struct {
	Start StartInfo
	// Errors are the protocol violations the bot saw.
	Errors []string
	// Media is how many media frames arrived.
	Media int
	// Audio is the caller's audio as received, decoded from µ-law (8 kHz).
	Audio []int16
	// Utterances holds, per detected user utterance, how many voiced
	// frames it had.
	Utterances []int
	// DTMF holds the digits received, in order.
	DTMF string
	// Echoes holds the names of the marks echoed back, in order.
	Echoes []string
	// CallerMarks holds the "utt-N" marks the caller sent (CallerMarks).
	CallerMarks []string
	// Clears counts the clear messages the bot sent (barge-ins).
	Clears int
	// Replies counts the replies the bot sent.
	Replies int
	// Stopped reports that a valid stop message arrived.
	Stopped bool
	// Ended reports that the connection is over.
	Ended bool
}

// Server is a running bot.
type Server struct {
	// URL is the bot's ws:// address.
	URL string

	cfg   Config
	srv   *peerkit.Server
	calls *peerkit.Log[Call]
}

// New starts a bot on loopback and closes it when the test ends.
func New(tb testing.TB, cfg Config) *Server {
	tb.Helper()
	s := Start(cfg)
	tb.Cleanup(s.Close)
	return s
}

// Start starts a bot on loopback; Close stops it.
func Start(cfg Config) *Server {
	if cfg.ReplyDuration <= 0 {
		cfg.ReplyDuration = 400 * time.Millisecond
	}
	if cfg.SilenceFrames <= 0 {
		cfg.SilenceFrames = 10
	}
	if cfg.Threshold <= 0 {
		cfg.Threshold = 500
	}
	s := &Server{cfg: cfg, calls: peerkit.NewLog(cloneCall)}
	s.srv = peerkit.Listen(cfg.Listener)
	s.URL = s.srv.WSURL("")
	s.srv.Serve(http.HandlerFunc(s.serve))
	return s
}

// Close stops the bot and ends its calls.
func (s *Server) Close() {
	s.srv.Close()
}

// Calls returns a copy of what the bot saw of each call so far.
func (s *Server) Calls() []Call { return s.calls.Snapshot() }

// cloneCall copies a call, sharing no slices with it.
func cloneCall(c *Call) Call {
	out := *c
	out.Errors = append([]string(nil), c.Errors...)
	out.Utterances = append([]int(nil), c.Utterances...)
	out.Echoes = append([]string(nil), c.Echoes...)
	out.CallerMarks = append([]string(nil), c.CallerMarks...)
	out.Audio = append([]int16(nil), c.Audio...)
	return out
}

// WaitCall waits until call i satisfies cond, or ctx ends, and returns it.
func (s *Server) WaitCall(ctx context.Context, i int, cond func(Call) bool) (Call, error) {
	c, err := s.calls.Wait(ctx, i, cond)
	if err != nil {
		return c, fmt.Errorf("twiliobot: call %d never reached the expected state (last: %+v): %w", i, c, err)
	}
	return c, nil
}

// update changes a call under the lock and wakes WaitCall.
func (s *Server) update(c *Call, f func(*Call)) { s.calls.Update(c, f) }

func (c *Call) errorf(format string, args ...any) {
	c.Errors = append(c.Errors, fmt.Sprintf(format, args...))
}

// inbound is any message Twilio sends.
type inbound struct {
	Event          string          `json:"event"`
	SequenceNumber *string         `json:"sequenceNumber"`
	StreamSid      string          `json:"streamSid"`
	Protocol       string          `json:"protocol"`
	Version        string          `json:"version"`
	Start          *startBody      `json:"start"`
	Media          *mediaBody      `json:"media"`
	DTMF           *dtmfBody       `json:"dtmf"`
	Mark           *markBody       `json:"mark"`
	Stop           json.RawMessage `json:"stop"`
}

type startBody struct {
	StreamSid        string            `json:"streamSid"`
	AccountSid       string            `json:"accountSid"`
	CallSid          string            `json:"callSid"`
	Tracks           []string          `json:"tracks"`
	CustomParameters map[string]string `json:"customParameters"`
	MediaFormat      struct {
		Encoding   string `json:"encoding"`
		SampleRate int    `json:"sampleRate"`
		Channels   int    `json:"channels"`
	} `json:"mediaFormat"`
}

type mediaBody struct {
	Track     string `json:"track"`
	Chunk     string `json:"chunk"`
	Timestamp string `json:"timestamp"`
	Payload   string `json:"payload"`
}

type dtmfBody struct {
	Track string `json:"track"`
	Digit string `json:"digit"`
}

type markBody struct {
	Name string `json:"name"`
}

// session is one call in progress.
type session struct {
	s    *Server
	ws   *websocket.Conn
	call *Call
	ctx  context.Context
	sid  string

	seq, chunk     int
	voiced, silent int
	inSpeech       bool
	speaking       bool   // a reply's mark has not been echoed yet
	outstanding    string // that mark's name
	hangUpOn       string // close once this mark is echoed
	digits         string
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	ws, err := peerkit.Accept(w, r, 1<<20)
	if err != nil {
		return
	}
	call := s.calls.Add(func(int) *Call { return &Call{} })
	ctx, cancel := s.srv.CallContext()
	defer cancel()
	ss := &session{s: s, ws: ws, call: call, ctx: ctx}
	err = ss.run()
	s.update(call, func(c *Call) {
		if err != nil {
			c.errorf("%v", err)
		}
		c.Ended = true
	})
	ws.CloseNow()
}

// errPolicy is a protocol violation that ends the call.
var errPolicy = errors.New("protocol violation")

func (ss *session) fail(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	ss.ws.Close(websocket.StatusPolicyViolation, "twiliobot: protocol violation")
	return fmt.Errorf("%w: %s", errPolicy, msg)
}

func (ss *session) read() (inbound, error) {
	_, data, err := ss.ws.Read(ss.ctx)
	if err != nil {
		return inbound{}, err
	}
	var m inbound
	if err := json.Unmarshal(data, &m); err != nil {
		return inbound{}, ss.fail("message is not JSON: %v", err)
	}
	return m, nil
}

// checkSeq checks that a message carries the next sequence number.
func (ss *session) checkSeq(m inbound) {
	ss.seq++
	if m.SequenceNumber == nil {
		ss.s.update(ss.call, func(c *Call) { c.errorf("%s without sequenceNumber", m.Event) })
		return
	}
	if *m.SequenceNumber != strconv.Itoa(ss.seq) {
		got := *m.SequenceNumber
		ss.s.update(ss.call, func(c *Call) { c.errorf("%s: sequenceNumber %q, want %q", m.Event, got, strconv.Itoa(ss.seq)) })
		if n, err := strconv.Atoi(got); err == nil {
			ss.seq = n
		}
	}
}

func (ss *session) run() error {
	m, err := ss.read()
	if err != nil {
		return err
	}
	if m.Event != "connected" || m.Protocol != "Call" || m.Version == "" {
		return ss.fail("first message must be connected with protocol Call and a version, got %q", m.Event)
	}
	if m, err = ss.read(); err != nil {
		return err
	}
	if m.Event != "start" || m.Start == nil {
		return ss.fail("second message must be start, got %q", m.Event)
	}
	ss.checkSeq(m)
	st := m.Start
	switch {
	case !sidOK(st.StreamSid, "MZ") || m.StreamSid != st.StreamSid:
		return ss.fail("start: bad streamSid %q / %q", m.StreamSid, st.StreamSid)
	case !sidOK(st.CallSid, "CA"):
		return ss.fail("start: bad callSid %q", st.CallSid)
	case !sidOK(st.AccountSid, "AC"):
		return ss.fail("start: bad accountSid %q", st.AccountSid)
	case st.MediaFormat.Encoding != "audio/x-mulaw" || st.MediaFormat.SampleRate != 8000 || st.MediaFormat.Channels != 1:
		return ss.fail("start: media format %+v, want audio/x-mulaw 8000 Hz mono", st.MediaFormat)
	case len(st.Tracks) == 0:
		return ss.fail("start: no tracks")
	}
	ss.sid = st.StreamSid
	ss.s.update(ss.call, func(c *Call) {
		c.Start = StartInfo{
			StreamSid: st.StreamSid, AccountSid: st.AccountSid, CallSid: st.CallSid,
			Tracks: st.Tracks, CustomParameters: st.CustomParameters,
			Encoding: st.MediaFormat.Encoding, SampleRate: st.MediaFormat.SampleRate, Channels: st.MediaFormat.Channels,
		}
	})
	if done, err := ss.fault(); done || err != nil {
		return err
	}
	for _, f := range ss.s.cfg.Send {
		if err := ss.ws.Write(ss.ctx, websocket.MessageText, []byte(strings.ReplaceAll(f, "{sid}", ss.sid))); err != nil {
			return err
		}
	}
	if ss.s.cfg.Greeting > 0 {
		if err := ss.reply("greeting", ss.s.cfg.Greeting, 350); err != nil {
			return err
		}
	}
	return ss.loop()
}

// fault shows the configured misbehaviour; done reports that the call is
// over.
func (ss *session) fault() (done bool, err error) {
	text := func(s string) error { return ss.ws.Write(ss.ctx, websocket.MessageText, []byte(s)) }
	switch ss.s.cfg.Fault {
	case MalformedJSON:
		err = text(`{"event":"media","streamSid":`)
	case BinaryFrame:
		err = ss.ws.Write(ss.ctx, websocket.MessageBinary, []byte{1, 2, 3})
	case UnknownEvent:
		err = text(`{"event":"dance","streamSid":"` + ss.sid + `"}`)
	case WrongStreamSid:
		err = text(`{"event":"media","streamSid":"MZ00000000000000000000000000000000","media":{"payload":"//8="}}`)
	case BadPayload:
		err = text(`{"event":"media","streamSid":"` + ss.sid + `","media":{"payload":"not base64!"}}`)
	case HugeFrame:
		err = text(`{"event":"media","streamSid":"` + ss.sid + `","media":{"payload":"` + strings.Repeat("A", 2<<20) + `"}}`)
	case Stall:
		<-ss.ctx.Done()
		return true, nil
	case Abort:
		ss.ws.CloseNow()
		return true, nil
	}
	return false, err
}

// loop handles the call until it ends.
func (ss *session) loop() error {
	type msg struct {
		m   inbound
		err error
	}
	// Buffered so that the bot keeps reading, and so answering pings, while
	// it thinks (ReplyDelay), as a real bot's WebSocket server does.
	msgs := make(chan msg, 4096)
	go func() {
		for {
			m, err := ss.read()
			select {
			case msgs <- msg{m, err}:
			case <-ss.ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	gap := time.NewTimer(time.Hour)
	defer gap.Stop()
	for {
		select {
		case <-ss.ctx.Done():
			return nil
		case <-gap.C:
			if ss.inSpeech {
				if err := ss.endOfSpeech(); err != nil {
					return err
				}
			}
		case r := <-msgs:
			if r.err != nil {
				if websocket.CloseStatus(r.err) == websocket.StatusNormalClosure {
					return nil
				}
				return r.err
			}
			if ss.s.cfg.Gap > 0 {
				gap.Reset(ss.s.cfg.Gap)
			}
			done, err := ss.handle(r.m)
			if done || err != nil {
				return err
			}
		}
	}
}

// handle reacts to one message; done reports that the bot hung up.
func (ss *session) handle(m inbound) (done bool, err error) {
	if m.Event != "connected" && m.StreamSid != ss.sid {
		ss.s.update(ss.call, func(c *Call) { c.errorf("%s for streamSid %q, want %q", m.Event, m.StreamSid, ss.sid) })
	}
	switch m.Event {
	case "media":
		ss.checkSeq(m)
		return false, ss.media(m)
	case "dtmf":
		ss.checkSeq(m)
		if m.DTMF == nil || m.DTMF.Track != "inbound_track" || len(m.DTMF.Digit) != 1 {
			ss.s.update(ss.call, func(c *Call) { c.errorf("bad dtmf %+v", m.DTMF) })
			return false, nil
		}
		ss.s.update(ss.call, func(c *Call) { c.DTMF += m.DTMF.Digit })
		ss.digits += m.DTMF.Digit
		if m.DTMF.Digit == "#" {
			name := "dtmf-" + ss.digits
			ss.digits = ""
			return false, ss.reply(name, ss.s.cfg.ReplyDuration, 700)
		}
	case "mark":
		ss.checkSeq(m)
		if m.Mark == nil || m.Mark.Name == "" {
			ss.s.update(ss.call, func(c *Call) { c.errorf("mark echo without a name") })
			return false, nil
		}
		if strings.HasPrefix(m.Mark.Name, "utt-") && ss.s.cfg.CallerMarks {
			ss.s.update(ss.call, func(c *Call) { c.CallerMarks = append(c.CallerMarks, m.Mark.Name) })
			if ss.inSpeech {
				return false, ss.endOfSpeech()
			}
			return false, nil
		}
		ss.s.update(ss.call, func(c *Call) { c.Echoes = append(c.Echoes, m.Mark.Name) })
		if m.Mark.Name == ss.outstanding {
			ss.speaking = false
		}
		if m.Mark.Name == ss.hangUpOn {
			ss.ws.Close(websocket.StatusNormalClosure, "goodbye")
			return true, nil
		}
	case "stop":
		ss.checkSeq(m)
		var stop struct {
			AccountSid string `json:"accountSid"`
			CallSid    string `json:"callSid"`
		}
		if err := json.Unmarshal(m.Stop, &stop); err != nil || stop.CallSid != ss.call.Start.CallSid || stop.AccountSid != ss.call.Start.AccountSid {
			ss.s.update(ss.call, func(c *Call) { c.errorf("bad stop body %s", m.Stop) })
		}
		ss.s.update(ss.call, func(c *Call) { c.Stopped = true })
	case "connected", "start":
		ss.s.update(ss.call, func(c *Call) { c.errorf("%s in the middle of the stream", m.Event) })
	default:
		ss.s.update(ss.call, func(c *Call) { c.errorf("unknown event %q", m.Event) })
	}
	return false, nil
}

func (ss *session) media(m inbound) error {
	md := m.Media
	if md == nil {
		ss.s.update(ss.call, func(c *Call) { c.errorf("media without body") })
		return nil
	}
	var problems []string
	ss.chunk++
	if md.Track != "inbound" {
		problems = append(problems, fmt.Sprintf("track %q", md.Track))
	}
	if md.Chunk != strconv.Itoa(ss.chunk) {
		problems = append(problems, fmt.Sprintf("chunk %q, want %d", md.Chunk, ss.chunk))
	}
	if want := strconv.Itoa((ss.chunk - 1) * 20); md.Timestamp != want {
		problems = append(problems, fmt.Sprintf("timestamp %q, want %s", md.Timestamp, want))
	}
	payload, err := base64.StdEncoding.DecodeString(md.Payload)
	if err != nil || len(payload) != 160 {
		problems = append(problems, fmt.Sprintf("payload of %d bytes (err %v), want 160", len(payload), err))
	}
	ss.s.update(ss.call, func(c *Call) {
		c.Media++
		for _, p := range problems {
			c.errorf("media: %s", p)
		}
	})
	if len(payload) == 0 {
		return nil
	}
	samples := pcm.DecodeMulaw(nil, payload)
	ss.s.update(ss.call, func(c *Call) { c.Audio = append(c.Audio, samples...) })
	var sum float64
	for _, v := range samples {
		sum += float64(v) * float64(v)
	}
	if math.Sqrt(sum/float64(len(samples))) > ss.s.cfg.Threshold {
		ss.voiced++
		ss.silent = 0
		ss.inSpeech = true
		if ss.speaking && ss.voiced >= 3 { // barge-in
			ss.speaking = false
			ss.hangUpOn = ""
			ss.s.update(ss.call, func(c *Call) { c.Clears++ })
			return ss.send(map[string]any{"event": "clear", "streamSid": ss.sid})
		}
		return nil
	}
	if ss.inSpeech {
		ss.silent++
		if ss.silent >= ss.s.cfg.SilenceFrames {
			return ss.endOfSpeech()
		}
	}
	return nil
}

func (ss *session) endOfSpeech() error {
	voiced := ss.voiced
	ss.inSpeech, ss.voiced, ss.silent = false, 0, 0
	n := 0
	ss.s.update(ss.call, func(c *Call) {
		c.Utterances = append(c.Utterances, voiced)
		n = len(c.Utterances)
	})
	if d := ss.s.cfg.ReplyDelay; d > 0 {
		select {
		case <-time.After(d):
		case <-ss.ctx.Done():
			return nil
		}
	}
	return ss.reply("reply-"+strconv.Itoa(n), ss.s.cfg.ReplyDuration, 300+100*float64(n))
}

// reply queues a tone of d at freq Hz and the mark name after it.
func (ss *session) reply(name string, d time.Duration, freq float64) error {
	n := pcm.SamplesFor(8000, d)
	tone := make([]int16, n)
	for i := range tone {
		tone[i] = int16(8000 * math.Sin(2*math.Pi*freq*float64(i)/8000))
	}
	mulaw := pcm.EncodeMulaw(nil, tone)
	for len(mulaw) > 0 {
		k := min(len(mulaw), 160)
		if err := ss.send(map[string]any{"event": "media", "streamSid": ss.sid, "media": map[string]string{"payload": base64.StdEncoding.EncodeToString(mulaw[:k])}}); err != nil {
			return err
		}
		mulaw = mulaw[k:]
	}
	if err := ss.send(map[string]any{"event": "mark", "streamSid": ss.sid, "mark": map[string]string{"name": name}}); err != nil {
		return err
	}
	ss.speaking, ss.outstanding = true, name
	replies := 0
	ss.s.update(ss.call, func(c *Call) {
		if name != "greeting" {
			c.Replies++
		}
		replies = c.Replies
	})
	if h := ss.s.cfg.HangUpAfter; h > 0 && replies == h && name != "greeting" {
		ss.hangUpOn = name
	}
	return nil
}

func (ss *session) send(v any) error { return peerkit.WriteJSON(ss.ctx, ss.ws, v) }

func sidOK(s, prefix string) bool {
	if len(s) != 34 || !strings.HasPrefix(s, prefix) {
		return false
	}
	for _, r := range s[2:] {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}
