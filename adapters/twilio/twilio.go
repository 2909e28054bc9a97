package twilio

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	mrand "math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// Pacing says how the Twilio adapter runs the phone line's clock.
type Pacing uint8

const (
	// RealTime runs the line as Twilio does: the adapter sends one 20 ms
	// media frame every 20 ms for the whole call, filling the gaps between
	// user utterances with µ-law silence (a phone line is never silent on
	// the wire, and bots' voice activity detectors rely on that), and it
	// echoes the bot's marks when the audio queued before them has played
	// in real time. SendAudio returns once its audio is on the wire.
	RealTime Pacing = iota
	// Fast sends user audio as soon as SendAudio is called, sends nothing
	// between utterances (except Agent.EndSilence after each), and
	// echoes the bot's marks at once, as if its audio had played
	// instantly. A bot that detects the end of speech from silence frames
	// then needs EndSilence, or silence the runner sends
	// (voicetest.Silence).
	//
	// This is the adapter's phone-line clock; voicetest.Config.Pacing is
	// the runner's. Under RealTime the line paces user audio even when the
	// runner sends it fast.
	Fast
)

// String returns "realtime" or "fast".
func (p Pacing) String() string {
	switch p {
	case RealTime:
		return "realtime"
	case Fast:
		return "fast"
	}
	return "Pacing(" + strconv.Itoa(int(p)) + ")"
}

// Twilio Media Streams framing constants.
const (
	twilioRate       = pcm.Rate8k
	twilioFrameBytes = 160 // 20 ms of 8 kHz µ-law
	twilioFrameDur   = 20 * time.Millisecond
	// twilioLineHold is how long the RealTime line waits for the rest of an
	// open utterance before it sends silence: a runner delayed by a loaded
	// machine must not put a pause in the middle of the user's speech.
	twilioLineHold = time.Second
)

// Agent reaches a bot that serves the Twilio Media Streams protocol
// (the WebSocket a <Connect><Stream url="wss://…"/> TwiML verb opens).
// voicetest plays Twilio's side of the call: it connects to the bot, sends
// "connected" and "start" (with stream, call and account SIDs, custom
// parameters and the µ-law 8 kHz media format), streams the caller's speech
// as "media" frames of 20 ms (160 µ-law bytes, string sequenceNumber, chunk
// and timestamp, timestamp in ms of stream time), sends "dtmf" events for key
// presses and "stop" at the end; it plays the bot's "media", echoes its
// "mark"s when the audio before them has played, and honours "clear".
//
// What the adapter does with the bot's messages:
//
//   - media: decoded, resampled to Session.Rate, returned as AgentAudio.
//   - mark: returned as AgentData named "mark" with data {"name":"…"}, in
//     order after the audio it follows, and echoed back to the bot (after the
//     queued audio has played under RealTime pacing; at once under Fast, or
//     when a clear drops the audio). A mark is not necessarily the end of a
//     turn, so the adapter does not claim Capabilities.TurnEnd.
//   - clear: returned as AgentInterrupted; pending marks are echoed at once.
//   - the bot closing the WebSocket (status 1000 or 1001): AgentHangUp.
//
// Faithfulness choices (see Twilio's websocket-messages reference):
//
//   - Twilio sends no message when the caller stops speaking: marks go from
//     the bot to Twilio and are only echoed back (prior-art §6.1: "A mark is
//     echoed back when the audio queued before it has played"). So by
//     default EndUtterance sends no invented caller-side mark; it only
//     flushes the last partial frame, and the bot must detect the end of
//     speech itself (Capabilities.NativeVAD). CallerMarks opts into a
//     non-standard "utt-N" mark for bots built to use one.
//   - Twilio has no caller-side cancel, so Interrupt is unsupported and
//     barge-in is overlapping audio (Capabilities.NativeInterrupt false).
//   - Twilio carries DTMF in-band as "dtmf" events on bidirectional streams,
//     one per digit, so SendDTMF is supported.
//   - The caller cannot send text: SendText is unsupported.
//   - start.tracks is ["inbound"], as for every bidirectional stream.
//
// Set the fields before the first Connect; an Agent may then serve
// parallel scenarios.
type Agent struct {
	// URL is the bot's Media Streams WebSocket, e.g. "ws://127.0.0.1:8080/media".
	URL string
	// WSOptions are the transport settings (headers, keepalive, limits).
	wire.WSOptions
	// CustomParameters are sent in start.customParameters, as the
	// <Parameter> elements of <Stream> would be.
	CustomParameters map[string]string
	// AccountSid and CallSid, when set, are sent as they are ("AC" or "CA"
	// and 32 hex digits). Otherwise they are generated.
	AccountSid, CallSid string
	// Seed, when not zero, makes the generated SIDs deterministic: they
	// derive from Seed and Session.Name, so a scenario gets the same SIDs
	// on every run (stable captures) and different scenarios get different
	// ones. Zero draws them from crypto/rand.
	Seed uint64
	// Pacing is RealTime (the default) or Fast.
	Pacing Pacing
	// CallerMarks makes EndUtterance send a mark named "utt-N" (N counting
	// the utterances from 1) after the user's speech. Real Twilio never
	// sends a mark of its own, only echoes the bot's, so this is off by
	// default; turn it on only for a bot built to take such a mark as the
	// end of the caller's turn. With it, Capabilities().NativeVAD is false.
	CallerMarks bool
	// EndSilence, under Fast pacing, is how much silence EndUtterance
	// sends after the user's speech (rounded up to 20 ms frames), as the
	// phone line would carry while the bot's voice activity detector
	// waits for the end of speech. Zero sends none. RealTime pacing sends
	// silence continuously and ignores it. Keep it no longer than the
	// silence the bot needs: the runner takes the end of EndUtterance as
	// the end of the user's speech, so a bot that answers while the rest
	// of the silence is still being sent gets no latency for that turn.
	EndSilence time.Duration
}

// New returns an agent that speaks Twilio Media Streams to the bot at url.
// See Agent for the fields that tune it.
func New(url string) *Agent { return &Agent{URL: url} }

// twilioCaps returns the capabilities of a Twilio Conn.
func twilioCaps(callerMarks bool) voicetest.Capabilities {
	return voicetest.Capabilities{
		Adapter:      "twilio",
		Audio:        true,
		InputFormat:  voicetest.AudioFormat{Encoding: "mulaw", Rate: twilioRate},
		OutputFormat: voicetest.AudioFormat{Encoding: "mulaw", Rate: twilioRate},
		NativeVAD:    !callerMarks,
		DTMF:         true,
	}
}

// Connect opens the Media Streams WebSocket and sends "connected" and "start".
func (a *Agent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	if s.Rate <= 0 {
		return nil, fmt.Errorf("adapters: twilio: session rate %d: %w", s.Rate, pcm.ErrBadRate)
	}
	if a.Pacing > Fast {
		return nil, fmt.Errorf("adapters: twilio: unknown pacing %v; use twilio.RealTime or twilio.Fast", a.Pacing)
	}
	account, call, stream, err := a.sids(s.Name)
	if err != nil {
		return nil, err
	}
	if a.EndSilence < 0 {
		return nil, fmt.Errorf("adapters: twilio: EndSilence %v is negative", a.EndSilence)
	}
	c := &twilioConn{
		endSilence:  int((a.EndSilence + twilioFrameDur - 1) / twilioFrameDur),
		callerMarks: a.CallerMarks,
		pacing:      a.Pacing,
		rate:        s.Rate,
		accountSid:  account,
		callSid:     call,
		streamSid:   stream,
		tickCh:      make(chan struct{}),
		kick:        make(chan struct{}, 1),
	}
	if s.Rate != twilioRate {
		if c.up.Resampler, err = pcm.NewResampler(s.Rate, twilioRate); err != nil {
			return nil, fmt.Errorf("adapters: twilio: %w", err)
		}
		if c.down, err = pcm.NewResampler(twilioRate, s.Rate); err != nil {
			return nil, fmt.Errorf("adapters: twilio: %w", err)
		}
	}
	silence := make([]int16, twilioFrameBytes)
	c.silence = pcm.EncodeMulaw(nil, silence)

	ws, err := wire.Dial(ctx, "twilio", a.URL, a.WSOptions, s, nil)
	if err != nil {
		return nil, err
	}
	c.ws = ws
	params := a.CustomParameters
	if params == nil {
		params = map[string]string{}
	}
	connected, _ := json.Marshal(twilioConnected{Event: "connected", Protocol: "Call", Version: "1.0.0"})
	c.seq = 1
	start, err := json.Marshal(twilioStart{
		Event: "start", SequenceNumber: "1", StreamSid: stream,
		Start: twilioStartBody{
			StreamSid: stream, AccountSid: account, CallSid: call,
			Tracks:           []string{"inbound"},
			CustomParameters: params,
			MediaFormat:      twilioMediaFormat{Encoding: "audio/x-mulaw", SampleRate: twilioRate, Channels: 1},
		},
	})
	if err != nil {
		ws.Close(nil)
		return nil, fmt.Errorf("adapters: twilio: encoding start: %w", err)
	}
	for _, m := range [][]byte{connected, start} {
		if err := ws.Write(ctx, websocket.MessageText, m); err != nil {
			ws.Close(nil)
			return nil, fmt.Errorf("adapters: twilio: opening the stream: %w", err)
		}
	}
	ws.Start(c.decode)
	ws.Go(c.echoLoop)
	if c.pacing == RealTime {
		ws.Go(c.lineLoop)
	}
	ws.Logf("twilio: stream %s (call %s) started at %s, %v pacing", stream, call, a.URL, a.Pacing)
	return c, nil
}

// sids returns the account, call and stream SIDs of a new stream.
func (a *Agent) sids(name string) (account, call, stream string, err error) {
	for _, f := range []struct{ field, val, prefix string }{
		{"AccountSid", a.AccountSid, "AC"}, {"CallSid", a.CallSid, "CA"},
	} {
		if f.val != "" && !validSid(f.val, f.prefix) {
			return "", "", "", fmt.Errorf("adapters: twilio: %s %q is not a Twilio SID; use %q followed by 32 lowercase hex digits, or leave it empty to generate one", f.field, f.val, f.prefix)
		}
	}
	var next func(prefix string) string
	if a.Seed == 0 {
		next = func(prefix string) string {
			var b [16]byte
			rand.Read(b[:])
			return prefix + hex.EncodeToString(b[:])
		}
	} else {
		h := fnv.New64a()
		h.Write([]byte(name))
		r := mrand.New(mrand.NewPCG(a.Seed, h.Sum64()))
		next = func(prefix string) string {
			var b [16]byte
			binary.BigEndian.PutUint64(b[:8], r.Uint64())
			binary.BigEndian.PutUint64(b[8:], r.Uint64())
			return prefix + hex.EncodeToString(b[:])
		}
	}
	account, call, stream = next("AC"), next("CA"), next("MZ")
	if a.AccountSid != "" {
		account = a.AccountSid
	}
	if a.CallSid != "" {
		call = a.CallSid
	}
	return account, call, stream, nil
}

// validSid reports whether s is prefix followed by 32 lowercase hex digits.
func validSid(s, prefix string) bool {
	if len(s) != 34 || s[:2] != prefix {
		return false
	}
	for _, r := range s[2:] {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return false
		}
	}
	return true
}

// Messages Twilio sends.
type twilioConnected struct {
	Event    string `json:"event"`
	Protocol string `json:"protocol"`
	Version  string `json:"version"`
}

type twilioStart struct {
	Event          string          `json:"event"`
	SequenceNumber string          `json:"sequenceNumber"`
	Start          twilioStartBody `json:"start"`
	StreamSid      string          `json:"streamSid"`
}

type twilioStartBody struct {
	AccountSid       string            `json:"accountSid"`
	StreamSid        string            `json:"streamSid"`
	CallSid          string            `json:"callSid"`
	Tracks           []string          `json:"tracks"`
	CustomParameters map[string]string `json:"customParameters"`
	MediaFormat      twilioMediaFormat `json:"mediaFormat"`
}

type twilioMediaFormat struct {
	Encoding   string `json:"encoding"`
	SampleRate int    `json:"sampleRate"`
	Channels   int    `json:"channels"`
}

type twilioDTMF struct {
	Event          string         `json:"event"`
	StreamSid      string         `json:"streamSid"`
	SequenceNumber string         `json:"sequenceNumber"`
	DTMF           twilioDTMFBody `json:"dtmf"`
}

type twilioDTMFBody struct {
	Track string `json:"track"`
	Digit string `json:"digit"`
}

type twilioMark struct {
	Event          string         `json:"event"`
	SequenceNumber string         `json:"sequenceNumber"`
	StreamSid      string         `json:"streamSid"`
	Mark           twilioMarkBody `json:"mark"`
}

type twilioMarkBody struct {
	Name string `json:"name"`
}

type twilioStop struct {
	Event          string         `json:"event"`
	SequenceNumber string         `json:"sequenceNumber"`
	StreamSid      string         `json:"streamSid"`
	Stop           twilioStopBody `json:"stop"`
}

type twilioStopBody struct {
	AccountSid string `json:"accountSid"`
	CallSid    string `json:"callSid"`
}

// twilioInbound is any message the bot sends.
type twilioInbound struct {
	Event     string `json:"event"`
	StreamSid string `json:"streamSid"`
	Media     struct {
		Payload string `json:"payload"`
	} `json:"media"`
	Mark struct {
		Name string `json:"name"`
	} `json:"mark"`
}

// pendingMark is a bot mark waiting for its audio to play.
type pendingMark struct {
	name string
	due  time.Time
	at   time.Time // when it arrived, for its echo delay
}

// twilioConn is one Media Stream.
type twilioConn struct {
	ws          *wire.Conn
	pacing      Pacing
	endSilence  int  // silence frames EndUtterance sends under Fast pacing
	callerMarks bool // EndUtterance sends a mark
	utterances  int  // caller marks sent
	rate        int
	accountSid  string
	callSid     string
	streamSid   string
	silence     []byte // one frame of µ-law silence

	// Send side. sendMu orders every message voicetest sends, so that
	// sequence numbers follow wire order; it also guards the playback
	// state below (marks are echoed by whoever holds it).
	sendMu    sync.Mutex
	seq       int           // last sequenceNumber sent
	chunk     int           // last media chunk number sent
	up        wire.Upstream // the user's audio, session rate to wire rate
	pending   []byte        // µ-law audio not yet sent
	flushReq  bool          // send the partial frame at the next tick
	speaking  bool          // an utterance is open: SendAudio since EndUtterance
	lastAudio time.Time     // when SendAudio last ran
	stopped   bool          // stop was sent; send nothing more
	msg       []byte        // message buffer
	tickCh    chan struct{}
	due       []pendingMark // marks being echoed (echo goroutine's buffer)

	// Playback of the bot's audio, under playMu (taken after sendMu when
	// both are needed). The reader goroutine takes only playMu, so it never
	// waits for a write.
	playMu  sync.Mutex
	playEnd time.Time // when the bot's queued audio finishes playing
	marks   []pendingMark
	kick    chan struct{} // capacity 1: marks may be due; wakes echoLoop

	// Receive side, used only by the reader goroutine.
	down    *pcm.Resampler
	mulaw   []byte
	samples []int16
}

// Capabilities reports what the Twilio adapter supports.
func (c *twilioConn) Capabilities() voicetest.Capabilities { return twilioCaps(c.callerMarks) }

// WireStats reports what crossed the Media Stream: frames each way, the
// bot's marks and their echoes with the delay (its audio's playback),
// the caller's own marks (CallerMarks) and the bot's clears.
func (c *twilioConn) WireStats() voicetest.WireStats { return c.ws.Stats().Snapshot("twilio") }

// SendAudio streams user speech as 20 ms media frames.
func (c *twilioConn) SendAudio(ctx context.Context, ch pcm.Chunk) error {
	if err := wire.CheckSendRate("twilio", ch.Rate, c.rate); err != nil {
		return err
	}
	if err := c.ws.Sendable(ctx); err != nil {
		return err
	}
	c.sendMu.Lock()
	c.pending = pcm.EncodeMulaw(c.pending, c.up.Process(ch.Samples))
	c.speaking, c.lastAudio = true, time.Now()
	if c.pacing == Fast {
		err := c.sendFramesLocked(ctx, false)
		c.sendMu.Unlock()
		return err
	}
	c.sendMu.Unlock()
	return c.waitLine(ctx, false)
}

// EndUtterance flushes the last partial frame of the utterance (and under
// Fast pacing sends EndSilence). Twilio has no message for the end of the
// caller's speech; the bot detects it itself, unless CallerMarks is set.
func (c *twilioConn) EndUtterance(ctx context.Context) error {
	if err := c.ws.Sendable(ctx); err != nil {
		return err
	}
	c.sendMu.Lock()
	c.pending = pcm.EncodeMulaw(c.pending, c.up.Flush())
	if c.pacing == Fast {
		defer c.sendMu.Unlock()
		if err := c.sendFramesLocked(ctx, true); err != nil {
			return err
		}
		for range c.endSilence {
			if err := c.sendMediaLocked(ctx, c.silence); err != nil {
				return err
			}
		}
		return c.sendCallerMarkLocked(ctx)
	}
	c.flushReq = len(c.pending) > 0
	c.speaking = false
	c.sendMu.Unlock()
	if err := c.waitLine(ctx, true); err != nil {
		return err
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	return c.sendCallerMarkLocked(ctx)
}

// sendCallerMarkLocked sends the "utt-N" mark if CallerMarks is set. Call
// with sendMu held.
func (c *twilioConn) sendCallerMarkLocked(ctx context.Context) error {
	if !c.callerMarks {
		return nil
	}
	c.utterances++
	name := "utt-" + strconv.Itoa(c.utterances)
	c.ws.Stats().MarkSent()
	return c.sendJSONLocked(ctx, func(seq string) any {
		return twilioMark{Event: "mark", SequenceNumber: seq, StreamSid: c.streamSid, Mark: twilioMarkBody{Name: name}}
	})
}

// SendText is unsupported: a phone caller cannot send text.
func (c *twilioConn) SendText(context.Context, string) error {
	return &voicetest.UnsupportedError{Adapter: "twilio", Capability: "text input", Alternative: "a phone caller can only speak or press keys: use spoken steps (voicetest.UserSays) or DTMF"}
}

// Interrupt is unsupported: Twilio has no caller-side cancel.
func (c *twilioConn) Interrupt(context.Context) error {
	return &voicetest.UnsupportedError{Adapter: "twilio", Capability: "native interrupt", Alternative: "Twilio has no caller-side cancel; barge in by sending user audio while the bot speaks (the bot answers with a clear)"}
}

// SendDTMF sends one dtmf event per digit, after any audio already sent.
func (c *twilioConn) SendDTMF(ctx context.Context, digits string) error {
	if err := wire.CheckDTMF(digits); err != nil {
		return fmt.Errorf("adapters: twilio: %w", err)
	}
	if err := c.ws.ClosedErr(); err != nil {
		return err
	}
	if c.pacing == RealTime {
		c.sendMu.Lock()
		c.flushReq = len(c.pending) > 0
		c.speaking = false
		c.sendMu.Unlock()
		if err := c.waitLine(ctx, true); err != nil {
			return err
		}
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if c.pacing == Fast {
		if err := c.sendFramesLocked(ctx, true); err != nil {
			return err
		}
	}
	for _, d := range digits {
		if err := c.sendJSONLocked(ctx, func(seq string) any {
			return twilioDTMF{Event: "dtmf", StreamSid: c.streamSid, SequenceNumber: seq, DTMF: twilioDTMFBody{Track: "inbound_track", Digit: string(d)}}
		}); err != nil {
			return err
		}
	}
	return nil
}

// Recv returns the bot's next event.
func (c *twilioConn) Recv(ctx context.Context) (voicetest.AgentEvent, error) {
	return c.ws.Recv(ctx)
}

// Close sends "stop" and closes the WebSocket.
func (c *twilioConn) Close() error {
	return c.ws.Close(func() {
		c.sendMu.Lock()
		defer c.sendMu.Unlock()
		if c.stopped {
			return
		}
		if c.ws.ClosedErr() != nil {
			c.stopped = true
			return // the bot already hung up: nothing to stop
		}
		if c.pacing == Fast && len(c.pending) > 0 {
			c.sendFramesLocked(context.Background(), true)
		}
		// Marks whose audio has played are echoed before the stream stops.
		if err := c.echoDueLocked(time.Now()); err != nil {
			c.ws.Logf("twilio: echoing mark: %v", err)
		}
		c.stopped = true
		err := c.sendJSONLocked(context.Background(), func(seq string) any {
			return twilioStop{Event: "stop", SequenceNumber: seq, StreamSid: c.streamSid, Stop: twilioStopBody{AccountSid: c.accountSid, CallSid: c.callSid}}
		})
		if err != nil {
			c.ws.Logf("twilio: sending stop: %v", err)
		}
	})
}

// sendJSONLocked sends the message build returns for the next sequence
// number. Call with sendMu held.
func (c *twilioConn) sendJSONLocked(ctx context.Context, build func(seq string) any) error {
	c.seq++
	b, err := json.Marshal(build(strconv.Itoa(c.seq)))
	if err != nil {
		return fmt.Errorf("adapters: twilio: encoding message: %w", err)
	}
	return c.ws.Write(ctx, websocket.MessageText, b)
}

// sendMediaLocked sends one media frame of µ-law bytes. Call with sendMu
// held.
func (c *twilioConn) sendMediaLocked(ctx context.Context, frame []byte) error {
	c.seq++
	ts := int64(c.chunk) * twilioFrameDur.Milliseconds()
	c.chunk++
	b := append(c.msg[:0], `{"event":"media","sequenceNumber":"`...)
	b = strconv.AppendInt(b, int64(c.seq), 10)
	b = append(b, `","streamSid":"`...)
	b = append(b, c.streamSid...)
	b = append(b, `","media":{"track":"inbound","chunk":"`...)
	b = strconv.AppendInt(b, int64(c.chunk), 10)
	b = append(b, `","timestamp":"`...)
	b = strconv.AppendInt(b, ts, 10)
	b = append(b, `","payload":"`...)
	b = base64.StdEncoding.AppendEncode(b, frame)
	b = append(b, `"}}`...)
	c.msg = b
	return c.ws.WriteAudio(ctx, websocket.MessageText, b)
}

// sendFramesLocked sends every whole frame pending (Fast pacing); with
// flush, also the partial last one, padded with silence.
func (c *twilioConn) sendFramesLocked(ctx context.Context, flush bool) error {
	n := 0
	defer func() { c.pending = c.pending[:copy(c.pending, c.pending[n:])] }()
	for len(c.pending)-n >= twilioFrameBytes {
		if err := c.sendMediaLocked(ctx, c.pending[n:n+twilioFrameBytes]); err != nil {
			return err
		}
		n += twilioFrameBytes
	}
	if flush && len(c.pending) > n {
		c.pending = append(c.pending, c.silence[:twilioFrameBytes-(len(c.pending)-n)]...)
		if err := c.sendMediaLocked(ctx, c.pending[n:]); err != nil {
			return err
		}
		n = len(c.pending)
	}
	return nil
}

// waitLine waits (RealTime pacing) until the line has sent every whole
// pending frame, or with all, every pending byte.
func (c *twilioConn) waitLine(ctx context.Context, all bool) error {
	for {
		c.sendMu.Lock()
		left, ch := len(c.pending), c.tickCh
		c.sendMu.Unlock()
		if left == 0 || !all && left < twilioFrameBytes {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.ws.Context().Done():
			if err := c.ws.ClosedErr(); err != nil {
				return err
			}
			return &voicetest.TransportClosedError{Adapter: "twilio", Err: errors.New("the Conn was closed")}
		}
	}
}

// twilioMaxCatchUp bounds how far the RealTime line may fall behind the
// wall clock and still catch up. Up to it, the late frames go out back to
// back, as packets a network delayed arrive in a burst, so a loaded
// machine does not stretch the caller's speech (the runner's timeline and
// the bot's stream time stay on the wall clock); beyond it (a stopped
// process, a debugger) the line resyncs and the lost time stays lost.
const twilioMaxCatchUp = time.Second

// lineLoop is the RealTime phone line: one media frame every 20 ms.
func (c *twilioConn) lineLoop() {
	next := time.Now()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-c.ws.Context().Done():
			return
		case <-timer.C:
		}
		if !c.tick() {
			return
		}
		next = next.Add(twilioFrameDur)
		if late := time.Since(next); late > twilioMaxCatchUp {
			c.ws.Logf("twilio: the line fell %v behind real time (machine overloaded?); resyncing", late.Round(time.Millisecond))
			next = time.Now()
		}
		timer.Reset(time.Until(next))
	}
}

// tick sends the line's next frame and echoes the marks whose audio has
// played. It reports false when the line must stop.
func (c *twilioConn) tick() bool {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if c.stopped {
		return false
	}
	frame, fromPending := c.silence, false
	switch {
	case len(c.pending) >= twilioFrameBytes:
		frame, fromPending = c.pending[:twilioFrameBytes], true
	case c.speaking && !c.flushReq && time.Since(c.lastAudio) < twilioLineHold:
		// The rest of the utterance is late: wait for it (sending nothing,
		// so the stream's time does not advance) rather than put silence
		// in the middle of the speech.
		frame = nil
	case len(c.pending) > 0:
		// The end of an utterance, or a stale partial frame: pad it.
		c.pending = append(c.pending, c.silence[:twilioFrameBytes-len(c.pending)]...)
		frame, fromPending = c.pending, true
	}
	var err error
	if frame != nil {
		err = c.sendMediaLocked(context.Background(), frame)
	}
	if fromPending {
		c.pending = c.pending[:copy(c.pending, c.pending[twilioFrameBytes:])]
		if len(c.pending) == 0 {
			c.flushReq = false
		}
	}
	if err == nil && c.marksDue(time.Now()) {
		c.wake()
	}
	close(c.tickCh)
	c.tickCh = make(chan struct{})
	if err != nil {
		c.ws.Logf("twilio: line stopped: %v", err)
		return false
	}
	return true
}

// echoLoop echoes the bot's marks when they are due: woken by the line
// (RealTime, once their audio has played), by a new mark (Fast) or by a
// clear.
func (c *twilioConn) echoLoop() {
	for {
		select {
		case <-c.ws.Context().Done():
			return
		case <-c.kick:
		}
		if err := c.echoDue(time.Now()); err != nil {
			c.ws.Logf("twilio: echoing mark: %v", err)
			return
		}
	}
}

// wake wakes echoLoop.
func (c *twilioConn) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// marksDue reports whether a mark is due by now.
func (c *twilioConn) marksDue(now time.Time) bool {
	c.playMu.Lock()
	defer c.playMu.Unlock()
	return len(c.marks) > 0 && !c.marks[0].due.After(now)
}

// echoDue echoes, in order, the marks due by now.
func (c *twilioConn) echoDue(now time.Time) error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	return c.echoDueLocked(now)
}

// echoDueLocked is echoDue with sendMu held.
func (c *twilioConn) echoDueLocked(now time.Time) error {
	if c.stopped {
		return nil
	}
	c.playMu.Lock()
	n := 0
	for n < len(c.marks) && !c.marks[n].due.After(now) {
		n++
	}
	c.due = append(c.due[:0], c.marks[:n]...)
	c.marks = c.marks[:copy(c.marks, c.marks[n:])]
	c.playMu.Unlock()
	for _, m := range c.due {
		if err := c.sendJSONLocked(context.Background(), func(seq string) any {
			return twilioMark{Event: "mark", SequenceNumber: seq, StreamSid: c.streamSid, Mark: twilioMarkBody{Name: m.name}}
		}); err != nil {
			return err
		}
		c.ws.Stats().MarkEchoed(time.Since(m.at))
	}
	return nil
}

// decode turns one message from the bot into events. It runs on the reader
// goroutine.
func (c *twilioConn) decode(typ websocket.MessageType, data []byte) ([]voicetest.AgentEvent, error) {
	if typ != websocket.MessageText {
		return nil, fmt.Errorf("got a binary frame of %d bytes; Twilio Media Streams messages are JSON text frames", len(data))
	}
	var m twilioInbound
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("not a JSON Media Streams message: %w", err)
	}
	if m.Event == "" {
		return nil, errors.New(`no "event" field; expected media, mark or clear`)
	}
	if m.Event == "media" || m.Event == "mark" || m.Event == "clear" {
		if m.StreamSid != c.streamSid {
			return nil, fmt.Errorf("%s for streamSid %q, but this stream is %q; echo the streamSid of the start message", m.Event, m.StreamSid, c.streamSid)
		}
	}
	switch m.Event {
	case "media":
		if m.Media.Payload == "" {
			return nil, errors.New(`media message without audio in media.payload`)
		}
		var err error
		c.mulaw, err = base64.StdEncoding.AppendDecode(c.mulaw[:0], []byte(m.Media.Payload))
		if err != nil {
			return nil, fmt.Errorf("media.payload is not base64: %w", err)
		}
		c.queuePlayback(len(c.mulaw))
		c.samples = pcm.DecodeMulaw(c.samples[:0], c.mulaw)
		if c.down == nil {
			return []voicetest.AgentEvent{wire.AudioEvent(c.rate, c.samples)}, nil
		}
		out := c.down.Process(make([]int16, 0, c.down.MaxOut(len(c.samples))), c.samples)
		if len(out) == 0 {
			return nil, nil
		}
		return []voicetest.AgentEvent{{Kind: voicetest.AgentAudio, Audio: pcm.Chunk{Rate: c.rate, Samples: out}}}, nil
	case "mark":
		if m.Mark.Name == "" {
			return nil, errors.New(`mark message without mark.name`)
		}
		var evs []voicetest.AgentEvent
		if c.down != nil { // the mark follows all the audio before it
			if tail := c.down.Flush(nil); len(tail) > 0 {
				evs = append(evs, voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: pcm.Chunk{Rate: c.rate, Samples: tail}})
			}
		}
		c.ws.Stats().MarkReceived()
		payload, _ := json.Marshal(twilioMarkBody{Name: m.Mark.Name})
		evs = append(evs, voicetest.AgentEvent{Kind: voicetest.AgentData, Text: "mark", Data: payload})
		return evs, c.queueMark(m.Mark.Name)
	case "clear":
		c.ws.Stats().Clear()
		if c.down != nil {
			c.down.Reset()
		}
		return []voicetest.AgentEvent{{Kind: voicetest.AgentInterrupted, Text: "clear"}}, c.clearPlayback()
	}
	return nil, fmt.Errorf("unknown event %q; a bot may send media, mark or clear", m.Event)
}

// queuePlayback adds n µ-law bytes of bot audio to the playback queue.
func (c *twilioConn) queuePlayback(n int) {
	now := time.Now()
	c.playMu.Lock()
	if c.playEnd.Before(now) {
		c.playEnd = now
	}
	c.playEnd = c.playEnd.Add(pcm.DurationOf(n, twilioRate))
	c.playMu.Unlock()
}

// queueMark schedules the echo of a bot mark: when the audio before it has
// played (RealTime), or now (Fast).
func (c *twilioConn) queueMark(name string) error {
	now := time.Now()
	c.playMu.Lock()
	due := c.playEnd
	if c.pacing == Fast || due.Before(now) {
		due = now
	}
	if len(c.marks) >= wire.MaxPendingMarks {
		c.playMu.Unlock()
		return &voicetest.LimitError{What: "the bot's marks waiting for their audio to play", Limit: wire.MaxPendingMarks, Unit: "marks", Name: "wire.MaxPendingMarks"}
	}
	c.marks = append(c.marks, pendingMark{name: name, due: due, at: now})
	c.playMu.Unlock()
	if c.pacing == Fast {
		c.wake()
	}
	return nil
}

// clearPlayback drops the bot's queued audio and has its pending marks
// echoed at once.
func (c *twilioConn) clearPlayback() error {
	now := time.Now()
	c.playMu.Lock()
	c.playEnd = now
	for i := range c.marks {
		c.marks[i].due = now
	}
	c.playMu.Unlock()
	c.wake()
	return nil
}
