package restaurant

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// Telephone audio as Twilio Media Streams carries it.
const (
	// PhoneRate is the sample rate of the call audio: 8 kHz.
	PhoneRate = pcm.Rate8k
	// frameSamples is one 20 ms Media Streams frame.
	frameSamples = 160
	// mediaChunk is the most audio the agent sends in one media message:
	// one second.
	mediaChunk = PhoneRate
)

// Defaults of ServerConfig.
const (
	// DefaultSilenceTimeout is how long the caller may stay silent, in
	// stream time, before the agent asks whether they are still there.
	DefaultSilenceTimeout = 5 * time.Second
)

// hangUpPause is how long, in stream time, the agent waits after its
// goodbye has played before it hangs up.
const hangUpPause = 300 * time.Millisecond

// sttPadding is the silence put before and after each utterance the
// agent transcribes.
const sttPadding = 200 * time.Millisecond

// ServerConfig configures a Server.
type ServerConfig struct {
	// TTS speaks the agent's replies. Required.
	TTS voicetest.TTS
	// Voice is passed to TTS ("" for the engine's default).
	Voice string
	// STT transcribes the caller. Required. The server hands it the
	// caller's speech widened to 16 kHz (see TelephoneSTT) with
	// CallerPhrases as Phrases.
	STT voicetest.STT
	// Book receives the bookings of every call. Nil makes a new one (see
	// Server.Book).
	Book *Book
	// SilenceTimeout is how long, in stream time, the caller may stay
	// silent before a re-prompt (default DefaultSilenceTimeout).
	SilenceTimeout time.Duration
	// VAD configures the energy voice activity detector that finds the
	// caller's speech; the zero value is pcm.DefaultVADConfig with a 400 ms
	// hangover.
	VAD pcm.VADConfig
	// Logf receives a line per call event; nil discards them.
	Logf func(format string, args ...any)
}

// Server is the restaurant's voice agent as a real deployment runs it: a
// Twilio Media Streams WebSocket server (the endpoint a
// <Connect><Stream url="wss://…"/> TwiML verb opens) with its own speech
// stack. Mount it on an HTTP server; each WebSocket connection is one call.
//
// For each call it:
//
//   - reads "connected", "start" (which must announce audio/x-mulaw at
//     8000 Hz), "media", "dtmf", "mark" and "stop" messages;
//   - decodes the caller's µ-law audio and runs an energy VAD (pcm.VAD) on
//     it to find where each utterance starts and ends, in stream time (the
//     media timestamps), never wall time;
//   - transcribes each utterance (the audio between the VAD's boundaries
//     widened to the whole burst of caller audio around them, cut on the
//     stream's 20 ms frames, with the line's digital-silence frames
//     dropped) through TelephoneSTT and the
//     configured engine, with CallerPhrases as a grammar;
//   - feeds the Dialogue, calls the book_table tool (the Book), speaks the
//     reply with the TTS as µ-law "media" followed by a "mark", and knows it
//     is speaking until Twilio echoes that mark;
//   - honours barge-in: caller speech (or a key press) while it is speaking
//     sends "clear", which makes Twilio drop the audio not yet played;
//   - re-prompts after SilenceTimeout of stream time with no speech while it
//     waits for the caller;
//   - hangs up (closes the stream) 300 ms of stream time after its goodbye
//     has played.
//
// Because the agent transcribes a span fixed by the audio itself, the same
// caller audio gives the same transcription request on every run, however
// the real clock jitters, so an STT cache replays it.
type Server struct {
	cfg  ServerConfig
	book *Book

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	calls  []*call
	closed bool
}

// NewServer returns a server for cfg, or an error saying which required
// field is missing or invalid.
func NewServer(cfg ServerConfig) (*Server, error) {
	if cfg.TTS == nil {
		return nil, errors.New("restaurant: ServerConfig.TTS is nil; give the agent a voice (speech.TTSForTest(t, \"flite\"))")
	}
	if cfg.STT == nil {
		return nil, errors.New("restaurant: ServerConfig.STT is nil; give the agent ears (speech.STTForTest(t, \"pocketsphinx\"))")
	}
	if cfg.SilenceTimeout < 0 {
		return nil, fmt.Errorf("restaurant: ServerConfig.SilenceTimeout is %v; use 0 for the default (%v) or a positive duration", cfg.SilenceTimeout, DefaultSilenceTimeout)
	}
	if cfg.SilenceTimeout == 0 {
		cfg.SilenceTimeout = DefaultSilenceTimeout
	}
	if cfg.VAD == (pcm.VADConfig{}) {
		cfg.VAD = pcm.DefaultVADConfig()
		cfg.VAD.Hangover = 400 * time.Millisecond
	}
	if err := cfg.VAD.Validate(); err != nil {
		return nil, fmt.Errorf("restaurant: ServerConfig.VAD: %w", err)
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	book := cfg.Book
	if book == nil {
		book = &Book{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{cfg: cfg, book: book, ctx: ctx, cancel: cancel}, nil
}

// Book returns the reservation book the server's calls write to.
func (s *Server) Book() *Book { return s.book }

// Close ends every call in progress and waits for their goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	return nil
}

// Line is one thing said on a call, as the agent knows it.
type Line struct {
	// Role is voicetest.RoleUser for what the agent heard (its own
	// transcription of the caller) and voicetest.RoleAgent for what it
	// said; key presses are user lines "[keys 2]".
	Role voicetest.Role `json:"role"`
	// Text is what was heard or said.
	Text string `json:"text"`
	// At is the stream time: where in the caller's audio stream it
	// happened (the start of the caller's speech, or the stream position
	// when the agent started its reply).
	At time.Duration `json:"at"`
	// Interrupted marks agent speech the caller barged in on.
	Interrupted bool `json:"interrupted,omitempty"`
}

// CallRecord is the agent's own account of one call.
type CallRecord struct {
	CallSid, StreamSid string
	// Parameters are the start message's customParameters.
	Parameters map[string]string
	// Lines are what the agent heard and said, in order.
	Lines []Line
	// Reservations are the bookings the call made.
	Reservations []Reservation
	// Silences counts the agent's silence re-prompts; Interruptions the
	// barge-ins.
	Silences, Interruptions int
	// HungUp reports that the agent ended the call after its goodbye.
	HungUp bool
	// Err is why the call failed, "" if it did not.
	Err string
}

// Calls returns the record of every call so far (those in progress too),
// oldest first.
func (s *Server) Calls() []CallRecord {
	s.mu.Lock()
	calls := append([]*call(nil), s.calls...)
	s.mu.Unlock()
	out := make([]CallRecord, 0, len(calls))
	for _, c := range calls {
		c.mu.Lock()
		r := c.rec
		r.Lines = append([]Line(nil), r.Lines...)
		r.Reservations = append([]Reservation(nil), r.Reservations...)
		c.mu.Unlock()
		out = append(out, r)
	}
	return out
}

// ServeHTTP accepts the Media Streams WebSocket and runs the call until the
// caller hangs up ("stop" or a closed socket), the agent hangs up, or the
// server closes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "restaurant: the server is closed", http.StatusServiceUnavailable)
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		s.cfg.Logf("restaurant: websocket accept: %v", err)
		return
	}
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	c := &call{s: s, ws: ws, ctx: ctx, dlg: NewDialogue(), events: make(chan callEvent, 64),
		silenceLimit: int64(pcm.SamplesFor(PhoneRate, s.cfg.SilenceTimeout))}
	c.vad, _ = pcm.NewVAD(PhoneRate, s.cfg.VAD) // validated in NewServer
	c.speechStart, c.speechEnd = -1, -1
	s.mu.Lock()
	s.calls = append(s.calls, c)
	s.mu.Unlock()

	brainDone := make(chan struct{})
	go func() {
		defer close(brainDone)
		c.brain()
	}()
	err = c.read()
	c.mu.Lock()
	if err != nil && c.rec.Err == "" && !c.rec.HungUp {
		c.rec.Err = err.Error()
	}
	failed := err != nil && !c.rec.HungUp
	c.mu.Unlock()
	if failed {
		// Tell Twilio why first: cancelling the brain's writes below
		// would drop the connection without a close frame.
		s.cfg.Logf("restaurant: call %s: %v", c.rec.CallSid, err)
		ws.Close(websocket.StatusInternalError, truncate(err.Error(), 120))
	}
	close(c.events)
	cancel() // stops a brain blocked in an engine or a write
	<-brainDone
	if !failed {
		ws.Close(websocket.StatusNormalClosure, "")
	}
}

// callEvent is work for a call's brain.
type callEvent struct {
	kind   string // "start", "speech", "keys", "silence"
	audio  pcm.Chunk
	digits string
	at     time.Duration // stream time
}

// call is one Media Streams connection.
type call struct {
	s   *Server
	ws  *websocket.Conn
	ctx context.Context
	dlg *Dialogue // used by the brain goroutine only

	events chan callEvent

	// Reader state (the read goroutine only).
	vad          *pcm.VAD
	vadEvents    []pcm.VADEvent
	pos          int64   // stream position of the next sample
	buf          []int16 // caller audio from bufStart to pos
	bufStart     int64
	speechStart  int64 // VAD start of the speech in progress, or -1
	speechEnd    int64 // VAD end of speech not yet cut, or -1
	zeroRun      int64 // samples of digital silence at the end of buf
	inSpeech     bool
	quiet        int64 // samples of silence while waiting for the caller
	silenceLimit int64
	started      bool
	hangUpAt     int64        // stream position to hang up at, 0 for none
	streamPos    atomic.Int64 // pos, for the brain

	// Shared between the reader and the brain.
	writeMu sync.Mutex // orders media+mark bursts and clears
	mu      sync.Mutex
	rec     CallRecord
	mark    string // the mark that ends the agent's current speech, "" if silent
	marks   int
	busy    int  // events queued or being handled
	hangUp  bool // hang up when mark is echoed
	over    bool // the dialogue is done
	sayLine int  // index in rec.Lines of the speech in progress
}

// read runs the receive side of the call until it ends.
func (c *call) read() error {
	for {
		typ, data, err := c.ws.Read(c.ctx)
		if err != nil {
			c.mu.Lock()
			hungUp := c.rec.HungUp
			c.mu.Unlock()
			if hungUp || c.s.ctx.Err() != nil || websocket.CloseStatus(err) == websocket.StatusNormalClosure || websocket.CloseStatus(err) == websocket.StatusGoingAway {
				return nil
			}
			return fmt.Errorf("reading from Twilio: %w", err)
		}
		if typ != websocket.MessageText {
			return fmt.Errorf("got a binary frame; Media Streams messages are JSON text")
		}
		var m inbound
		if err := json.Unmarshal(data, &m); err != nil {
			return fmt.Errorf("not a Media Streams message: %w", err)
		}
		switch m.Event {
		case "connected":
		case "start":
			if err := c.onStart(m); err != nil {
				return err
			}
		case "media":
			if err := c.onMedia(m); err != nil {
				return err
			}
			if c.hangUpAt > 0 && c.pos >= c.hangUpAt {
				c.mu.Lock()
				c.rec.HungUp = true
				c.mu.Unlock()
				return nil // the pause after the goodbye is over: hang up
			}
		case "dtmf":
			if m.DTMF.Digit == "" {
				return errors.New("dtmf message without dtmf.digit")
			}
			c.bargeIn("keys")
			c.enqueue(callEvent{kind: "keys", digits: m.DTMF.Digit, at: c.streamTime()})
		case "mark":
			if c.onMark(m.Mark.Name) {
				// The goodbye has played; hang up after a short pause,
				// as a person would (and so that the goodbye's end and
				// the hang-up are two distinct moments).
				c.hangUpAt = c.pos + int64(pcm.SamplesFor(PhoneRate, hangUpPause))
			}
		case "stop":
			c.flushSpeech()
			return nil
		default:
			return fmt.Errorf("unknown Media Streams event %q", m.Event)
		}
	}
}

// inbound is any message Twilio sends.
type inbound struct {
	Event     string `json:"event"`
	StreamSid string `json:"streamSid"`
	Start     struct {
		StreamSid        string            `json:"streamSid"`
		CallSid          string            `json:"callSid"`
		CustomParameters map[string]string `json:"customParameters"`
		MediaFormat      struct {
			Encoding   string `json:"encoding"`
			SampleRate int    `json:"sampleRate"`
			Channels   int    `json:"channels"`
		} `json:"mediaFormat"`
	} `json:"start"`
	Media struct {
		Track     string `json:"track"`
		Timestamp string `json:"timestamp"`
		Payload   string `json:"payload"`
	} `json:"media"`
	DTMF struct {
		Digit string `json:"digit"`
	} `json:"dtmf"`
	Mark struct {
		Name string `json:"name"`
	} `json:"mark"`
}

func (c *call) onStart(m inbound) error {
	if c.started {
		return errors.New("a second start message")
	}
	f := m.Start.MediaFormat
	if f.Encoding != "audio/x-mulaw" || f.SampleRate != PhoneRate || f.Channels != 1 {
		return fmt.Errorf("media format %s/%d Hz/%d channels; this agent takes audio/x-mulaw at 8000 Hz mono", f.Encoding, f.SampleRate, f.Channels)
	}
	sid := m.Start.StreamSid
	if sid == "" {
		sid = m.StreamSid
	}
	if sid == "" {
		return errors.New("start message without streamSid")
	}
	c.started = true
	c.mu.Lock()
	c.rec.StreamSid, c.rec.CallSid, c.rec.Parameters = sid, m.Start.CallSid, m.Start.CustomParameters
	c.mu.Unlock()
	c.enqueue(callEvent{kind: "start"})
	return nil
}

func (c *call) streamTime() time.Duration { return pcm.DurationOf(int(c.pos), PhoneRate) }

// onMedia takes one frame of caller audio.
func (c *call) onMedia(m inbound) error {
	if !c.started {
		return errors.New("media before start")
	}
	if m.Media.Track != "" && m.Media.Track != "inbound" {
		return nil // only the caller's audio is transcribed
	}
	mulaw, err := base64.StdEncoding.DecodeString(m.Media.Payload)
	if err != nil {
		return fmt.Errorf("media payload is not base64: %w", err)
	}
	// Place the frame at its timestamp: a gap (lost packets) becomes
	// silence, so stream time stays true to the call.
	if m.Media.Timestamp != "" {
		ms, err := strconv.ParseInt(m.Media.Timestamp, 10, 64)
		if err != nil {
			return fmt.Errorf("media timestamp %q is not a number of milliseconds", m.Media.Timestamp)
		}
		if at := ms * PhoneRate / 1000; at > c.pos {
			c.feed(make([]int16, at-c.pos))
		}
	}
	c.feed(pcm.DecodeMulaw(nil, mulaw))
	return nil
}

// How the agent cuts an utterance out of the stream, in samples.
var (
	// burstGap is the run of digital silence that separates two bursts of
	// caller audio.
	burstGap = int64(pcm.SamplesFor(PhoneRate, 200*time.Millisecond))
	// maxLead and maxTail bound how far an utterance reaches before the
	// VAD's start and after its end, on a line with no digital silence.
	maxLead = int64(pcm.SamplesFor(PhoneRate, time.Second))
	maxTail = int64(pcm.SamplesFor(PhoneRate, time.Second))
	// keepIdle is the audio kept while nobody speaks, for the lead.
	keepIdle = 2 * maxLead
)

// feed runs samples through the VAD and the utterance buffer.
func (c *call) feed(samples []int16) {
	c.buf = append(c.buf, samples...)
	c.pos += int64(len(samples))
	c.streamPos.Store(c.pos)
	if allZero(samples) {
		c.zeroRun += int64(len(samples))
	} else {
		c.zeroRun = 0
	}
	c.vadEvents = c.vad.Process(c.vadEvents[:0], samples)
	for _, ev := range c.vadEvents {
		switch ev.Type {
		case pcm.SpeechStart:
			if c.speechEnd >= 0 {
				c.cut() // the caller went on before the last burst ended
			}
			c.inSpeech, c.speechStart = true, ev.Sample
			c.bargeIn("speech")
		case pcm.SpeechEnd:
			c.inSpeech, c.speechEnd = false, ev.Sample
		}
	}
	if c.speechEnd >= 0 && (c.zeroRun >= burstGap || c.pos >= c.speechEnd+maxTail) {
		c.cut()
	}
	if c.speechStart < 0 {
		if drop := c.pos - keepIdle - c.bufStart; drop > 0 {
			drop = drop / frameSamples * frameSamples
			c.buf = c.buf[:copy(c.buf, c.buf[drop:])]
			c.bufStart += drop
		}
		c.countQuiet(int64(len(samples)))
	} else {
		c.quiet = 0
	}
}

// countQuiet advances the silence timer while the agent waits for the
// caller, and re-prompts when it runs out.
func (c *call) countQuiet(n int64) {
	c.mu.Lock()
	waiting := c.mark == "" && c.busy == 0 && !c.over
	c.mu.Unlock()
	if !waiting {
		c.quiet = 0
		return
	}
	c.quiet += n
	if c.quiet >= c.silenceLimit {
		c.quiet = 0
		c.enqueue(callEvent{kind: "silence", at: c.streamTime()})
	}
}

// cut takes the utterance the VAD found (speechStart to speechEnd) out of
// the stream and queues it for transcription.
//
// What is transcribed must not depend on the real clock, or the agent's
// STT requests would differ from run to run (and miss their cache). The
// VAD's boundaries alone do not achieve that: the line fills any gap in
// the caller's packets with frames of digital silence, how many depends
// on timing, and a frame added inside the utterance shifts the audio
// against boundaries taken relative to the VAD. So the utterance is the
// whole burst of caller audio around the speech: from the end of the last
// burstGap of digital silence before the VAD's start (at most maxLead
// before it) to the start of the first after its end (at most maxTail
// after it), cut on the stream's 20 ms frames, with its frames of pure
// digital silence dropped and a fixed sttPadding of silence added at
// each end. A line with continuous noise and no digital silence falls
// back on the VAD's boundaries and the two bounds.
func (c *call) cut() {
	start, end := c.speechStart, c.speechEnd
	c.speechStart, c.speechEnd = -1, -1
	frame := func(at int64) []int16 { // the frame at stream position at
		return c.buf[at-c.bufStart : min(at+frameSamples, c.pos)-c.bufStart]
	}
	from := max(start/frameSamples*frameSamples, c.bufStart)
	for zeros := int64(0); from-frameSamples >= max(c.bufStart, start-maxLead); from -= frameSamples {
		if allZero(frame(from - frameSamples)) {
			if zeros += frameSamples; zeros >= burstGap {
				from += zeros - frameSamples
				break
			}
		} else {
			zeros = 0
		}
	}
	to := c.pos - c.zeroRun
	if c.zeroRun < burstGap {
		to = min(c.pos, end+maxTail)
	}
	to = max(to, min(end, c.pos))
	pad := pcm.SamplesFor(PhoneRate, sttPadding)
	speech := make([]int16, pad, int(to-from)+2*pad)
	dropped := 0
	for at := from; at < to; at += frameSamples {
		if f := frame(at); !allZero(f) {
			speech = append(speech, f...)
		} else {
			dropped++
		}
	}
	speech = append(speech, make([]int16, pad)...)
	c.s.cfg.Logf("restaurant: call %s: caller spoke %v–%v of stream time; transcribing %v (samples %d–%d, %d silent frames dropped)",
		c.rec.CallSid, pcm.DurationOf(int(start), PhoneRate), pcm.DurationOf(int(end), PhoneRate),
		pcm.DurationOf(len(speech), PhoneRate), from, to, dropped)
	c.enqueue(callEvent{kind: "speech", audio: pcm.Chunk{Rate: PhoneRate, Samples: speech}, at: pcm.DurationOf(int(start), PhoneRate)})
}

// flushSpeech ends speech still going on when the caller hangs up.
func (c *call) flushSpeech() {
	for _, ev := range c.vad.Flush(c.vadEvents[:0]) {
		if ev.Type == pcm.SpeechEnd && c.speechStart >= 0 {
			c.speechEnd = ev.Sample
		}
	}
	if c.speechEnd >= 0 {
		c.cut()
	}
}

func allZero(f []int16) bool {
	for _, s := range f {
		if s != 0 {
			return false
		}
	}
	return true
}

// enqueue hands an event to the brain.
func (c *call) enqueue(ev callEvent) {
	c.mu.Lock()
	c.busy++
	c.mu.Unlock()
	select {
	case c.events <- ev:
	case <-c.ctx.Done():
	}
}

// bargeIn stops the agent's speech when the caller talks or presses a key
// over it: "clear" makes Twilio drop the audio it has not played.
func (c *call) bargeIn(why string) {
	c.mu.Lock()
	speaking := c.mark != "" && !c.hangUp
	if speaking {
		c.mark = ""
		c.rec.Interruptions++
		if c.sayLine >= 0 && c.sayLine < len(c.rec.Lines) {
			c.rec.Lines[c.sayLine].Interrupted = true
		}
	}
	sid := c.rec.StreamSid
	c.mu.Unlock()
	if !speaking {
		return
	}
	c.s.cfg.Logf("restaurant: call %s: barge-in (%s) at %v: clear", sid, why, c.streamTime())
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.writeJSON(outClear{Event: "clear", StreamSid: sid}); err != nil {
		c.s.cfg.Logf("restaurant: sending clear: %v", err)
	}
}

// onMark notes that Twilio has played the agent's speech up to a mark. It
// reports whether that was the goodbye, after which the agent hangs up.
func (c *call) onMark(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if name == "" || name != c.mark {
		return false // an old mark, echoed after a clear
	}
	c.mark = ""
	c.quiet = 0
	return c.hangUp
}

// brain handles the call's events one at a time: transcribe, decide, act,
// speak.
func (c *call) brain() {
	for ev := range c.events {
		if err := c.handle(ev); err != nil {
			c.mu.Lock()
			// A call that ended meanwhile is not a failure; the reader
			// records its own failure before anything else sees it.
			first := c.rec.Err == "" && c.ctx.Err() == nil
			if first {
				c.rec.Err = err.Error()
			}
			c.mu.Unlock()
			if first {
				c.s.cfg.Logf("restaurant: call %s: %v", c.rec.CallSid, err)
				c.ws.Close(websocket.StatusInternalError, truncate(err.Error(), 120))
			}
			for range c.events { // drain so the reader never blocks
			}
			return
		}
		c.mu.Lock()
		c.busy--
		c.over = c.dlg.Done()
		c.mu.Unlock()
	}
}

func (c *call) handle(ev callEvent) error {
	var r Reply
	switch ev.kind {
	case "start":
		r = c.dlg.Start()
	case "keys":
		c.addLine(Line{Role: voicetest.RoleUser, Text: "[keys " + ev.digits + "]", At: ev.at})
		r = c.dlg.Keys(ev.digits)
	case "silence":
		c.mu.Lock()
		c.rec.Silences++
		c.mu.Unlock()
		r = c.dlg.Silence()
	case "speech":
		stt := TelephoneSTT(c.s.cfg.STT, CallerPhrases())
		tr, err := stt.Transcribe(c.ctx, voicetest.TranscriptionRequest{Audio: ev.audio, Language: "en"})
		if err != nil {
			return fmt.Errorf("transcribing the caller: %w", err)
		}
		c.addLine(Line{Role: voicetest.RoleUser, Text: tr.Text, At: ev.at})
		r = c.dlg.Hear(tr.Text)
	}
	if r.Book != nil {
		res, err := c.s.book.Add(*r.Book)
		if err == nil {
			c.mu.Lock()
			c.rec.Reservations = append(c.rec.Reservations, res)
			c.mu.Unlock()
		}
		c.s.cfg.Logf("restaurant: call %s: %s(%+v) → %+v, %v", c.rec.CallSid, ToolBookTable, *r.Book, res, err)
		r = c.dlg.Booked(err)
	}
	return c.say(r)
}

func (c *call) addLine(l Line) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rec.Lines = append(c.rec.Lines, l)
	return len(c.rec.Lines) - 1
}

// say speaks r.Say as one burst of media messages followed by a mark.
func (c *call) say(r Reply) error {
	if r.Say == "" {
		return nil
	}
	audio, err := c.s.cfg.TTS.Synthesize(c.ctx, voicetest.SpeechRequest{Text: r.Say, Voice: c.s.cfg.Voice, Rate: PhoneRate})
	if err != nil {
		return fmt.Errorf("speaking %q: %w", r.Say, err)
	}
	if audio.Rate != PhoneRate {
		if audio, err = pcm.Resample(audio, PhoneRate); err != nil {
			return fmt.Errorf("speaking %q: %w", r.Say, err)
		}
	}
	mulaw := pcm.EncodeMulaw(nil, audio.Samples)

	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.mu.Lock()
	c.marks++
	name := "say-" + strconv.Itoa(c.marks)
	sid := c.rec.StreamSid
	c.mark, c.hangUp = name, r.HangUp
	c.rec.Lines = append(c.rec.Lines, Line{Role: voicetest.RoleAgent, Text: r.Say, At: pcm.DurationOf(int(c.streamPos.Load()), PhoneRate)})
	c.sayLine = len(c.rec.Lines) - 1
	c.mu.Unlock()
	// Up to a second of audio per message: Twilio takes media of any
	// length, and few large messages reach the caller as one unbroken
	// stretch of speech even when this machine stalls for a moment.
	for i := 0; i < len(mulaw); i += mediaChunk {
		f := mulaw[i:min(i+mediaChunk, len(mulaw))]
		if err := c.writeJSON(outMedia{Event: "media", StreamSid: sid, Media: outPayload{Payload: base64.StdEncoding.EncodeToString(f)}}); err != nil {
			return fmt.Errorf("sending audio: %w", err)
		}
	}
	if err := c.writeJSON(outMark{Event: "mark", StreamSid: sid, Mark: outMarkName{Name: name}}); err != nil {
		return fmt.Errorf("sending mark: %w", err)
	}
	return nil
}

func (c *call) writeJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.ctx, 10*time.Second)
	defer cancel()
	return c.ws.Write(ctx, websocket.MessageText, b)
}

type outMedia struct {
	Event     string     `json:"event"`
	StreamSid string     `json:"streamSid"`
	Media     outPayload `json:"media"`
}

type outPayload struct {
	Payload string `json:"payload"`
}

type outMark struct {
	Event     string      `json:"event"`
	StreamSid string      `json:"streamSid"`
	Mark      outMarkName `json:"mark"`
}

type outMarkName struct {
	Name string `json:"name"`
}

type outClear struct {
	Event     string `json:"event"`
	StreamSid string `json:"streamSid"`
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
