package handler

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/voicetest-go/voicetest/internal/inproc"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// frameDur is the length of the AgentAudio frames of audio mode.
const frameDur = 20 * time.Millisecond

// voicedRMS is the RMS level (int16 units, about -44 dBFS) above which a
// chunk of user audio counts as speech for barge-in and inactivity.
const voicedRMS = 200

type msgKind uint8

const (
	msgInput     msgKind = iota + 1 // an Event for the handler (ev); user marks user input
	msgUtterance                    // transcribed user speech (text)
	msgInterrupt                    // Conn.Interrupt
	msgVoiced                       // voiced user audio arrived
	msgOutput                       // an output request (out)
	msgCallDone                     // a handler call returned (callID, err, stack)
	msgTaskStart                    // Call.Go (text = name, task)
	msgTaskDone                     // a task returned (text = name, err, stack)
	msgClose                        // Conn.Close
)

// message is what goroutines send to the agent loop.
type message struct {
	kind   msgKind
	ev     Event
	user   bool
	text   string
	out    *outReq
	from   *Call
	callID int
	err    error
	stack  []byte
	task   TaskFunc
}

type outKind uint8

const (
	outSay outKind = iota + 1
	outPlay
	outSilence
	outEvent
	outHangUp
)

// outReq is one output a Call view made.
type outReq struct {
	kind          outKind
	from          *Call
	text          string
	audio         pcm.Chunk
	dur           time.Duration
	interruptible bool
	ev            voicetest.AgentEvent
	reply         chan error // speech only
	sp            speech     // its speech, once emitted (agentLoop.sp points here)
}

func (r *outReq) isSpeech() bool {
	return r.kind == outSay || r.kind == outPlay || r.kind == outSilence
}

// answer replies to a waiting speech request. The reply is the last
// the loop does with r: its Call may take it back at once (Call.speak).
func (r *outReq) answer(err error) {
	if ch := r.reply; ch != nil {
		r.reply = nil
		ch <- err // (room for one: it does not block)
	}
}

// speech is the utterance the agent is speaking.
type speech struct {
	req   *outReq
	start time.Time
	end   time.Time
	// sent counts the audio frames emitted so far (audio mode).
	sent int
	// words are the transcript deltas of a Say in audio mode, each due
	// when its word has been played; said counts those emitted.
	words []wordMark
	said  int
}

// wordMark is a transcript delta and when it is due, from the start of the
// speech.
type wordMark struct {
	at   time.Duration
	text string
}

// wordMarks splits text into deltas (each word with the space before it),
// each due when the audio has played as far into dur as the word's end is
// into the text: the TTS gives no word timings, so time is taken as
// proportional to characters.
func wordMarks(text string, dur time.Duration) []wordMark {
	var marks []wordMark
	from := 0
	for i := 0; i < len(text); {
		for i < len(text) && isSpace(text[i]) {
			i++
		}
		j := i
		for j < len(text) && !isSpace(text[j]) {
			j++
		}
		if j == i {
			break
		}
		at := time.Duration(float64(dur) * float64(j) / float64(len(text)))
		marks = append(marks, wordMark{at: at, text: text[from:j]})
		from, i = j, j
	}
	return marks
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// callState is the handler call in progress.
type callState struct {
	id          int
	ev          Event
	started     bool      // its goroutine runs (after the think time)
	thinkUntil  time.Time // when it starts, while !started
	done        bool
	interrupted bool
	spoke       bool // emitted speech (since its interruption, if any)
	err         error
	stack       []byte
	stop        bool
	view        Call // the handler's view of the call, made at launch (one allocation for both)
}

// handlerConn is the voicetest.Conn of a handler agent. All conversation
// state lives in its loop, which runs under mu; other goroutines talk to
// it through send.
type handlerConn struct {
	fn   Func
	cfg  handlerConfig
	sess voicetest.Session
	caps voicetest.Capabilities

	ctx    context.Context // cancelled at Close
	cancel context.CancelFunc

	mu       sync.Mutex // held while the loop runs
	loop     *agentLoop
	ready    chan struct{} // signalled when the outbox has events for Recv (or TryRecv: Notify); changed under mu
	ended    chan struct{} // closed when no more events will come
	loopDone chan struct{} // closed when the loop has exited
	termErr  error         // what Recv returns after ended; set before ended closes
	closeErr error         // what Close returns; set before loopDone closes
	close    sync.Once

	dataMu sync.Mutex
	data   map[string]any
	ab     *abState // A/B tests, outcomes and variables (handler_ab.go)

	toolSeq   atomic.Int64
	toolNames sync.Map

	spareReply atomic.Pointer[replyChan] // an answered request's channel, for the next (Call.post)
	// queued is len(loop.outbox), stored under mu when it changes: TryRecv
	// reads it without the lock to see that there is nothing to take.
	queued      atomic.Int64
	spareSpeech atomic.Pointer[outReq] // an answered speech request, for the next (Call.speak)
	co          atomic.Pointer[coro]   // the handler calls' coroutine, made by Notify (handler_coro.go)

	// Owned by the runner's sending goroutine.
	userAudio  []int16
	userVoiced bool
	vad        *pcm.VAD // WithVAD's detector, nil for the level threshold
	vadEvents  []pcm.VADEvent
	vadFed     int64 // samples given to vad
	bufStart   int64 // the vad sample at which userAudio starts
	speechFrom int64 // the vad sample at which the buffered speech starts, or -1
	speechTo   int64 // the vad sample at which the buffered speech last ended
}

func newHandlerConn(a *handlerAgent, s voicetest.Session) *handlerConn {
	ctx, cancel := context.WithCancel(context.Background())
	c := &handlerConn{
		fn: a.fn, cfg: a.cfg, sess: s,
		ctx: ctx, cancel: cancel,
		ready:    make(chan struct{}, 1),
		ended:    make(chan struct{}),
		loopDone: make(chan struct{}),
	}
	if len(a.cfg.data) > 0 { // else made by the first Set
		c.data = make(map[string]any, len(a.cfg.data))
		for k, v := range a.cfg.data {
			c.data[k] = v
		}
	}
	c.ab = newABState(a.cfg.ab, s.Name, a.runs.Add(1)-1)
	c.caps = voicetest.Capabilities{
		Adapter:              "handler",
		Text:                 !a.cfg.audio,
		Audio:                a.cfg.audio,
		StreamingTranscripts: true,
		DTMF:                 true,
		NativeInterrupt:      true,
		TurnEnd:              true,
		ToolEvents:           true,
		VirtualTime:          true,
		SessionClock:         true,
	}
	if a.cfg.audio {
		f := voicetest.AudioFormat{Encoding: "pcm16", Rate: s.Rate}
		c.caps.InputFormat, c.caps.OutputFormat = f, f
	}
	clock := s.Clock
	if clock == nil {
		clock = voicetest.SystemClock()
	}
	l := &agentLoop{c: c, clock: clock, start: clock.Now()}
	l.lastInput = l.start
	l.idleSince = l.start
	l.inbox = append(l.inbox, StartEvent{})
	c.loop = l
	c.mu.Lock()
	l.step()
	c.mu.Unlock()
	return c
}

func (c *handlerConn) who() string {
	if c.cfg.name != "" {
		return fmt.Sprintf("handler agent %q", c.cfg.name)
	}
	return "handler agent"
}

// send delivers m to the loop and returns the loop's answer (ErrCallEnded
// once the conversation is over).
func (c *handlerConn) send(m message) error { return c.loop.deliver(m) }

// input sends a runner input and maps the end of the conversation to the
// error Recv reports.
func (c *handlerConn) input(ctx context.Context, m message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.send(m); err != nil {
		return c.closedErr(err)
	}
	return nil
}

func (c *handlerConn) closedErr(err error) error {
	select {
	case <-c.ended:
		return c.termErr
	default:
	}
	if err == ErrCallEnded {
		return &voicetest.TransportClosedError{Adapter: c.caps.Adapter}
	}
	return err
}

// Capabilities reports what the handler agent supports.
func (c *handlerConn) Capabilities() voicetest.Capabilities { return c.caps }

// SendAudio buffers user speech (audio mode); voiced audio while the agent
// speaks is a barge-in.
func (c *handlerConn) SendAudio(ctx context.Context, ch pcm.Chunk) error {
	if !c.cfg.audio {
		return &voicetest.UnsupportedError{Adapter: c.caps.Adapter, Capability: "audio input",
			Alternative: "the agent is in text mode: send text, or build it with handler.AudioMode(tts, stt)"}
	}
	if ch.Rate != c.sess.Rate {
		return fmt.Errorf("adapters: handler agent: SendAudio got %d Hz audio, the session rate is %d Hz (convert it before sending)", ch.Rate, c.sess.Rate)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-c.ended:
		return c.termErr
	default:
	}
	c.userAudio = append(c.userAudio, ch.Samples...)
	if c.vad != nil {
		c.vadEvents = c.vad.Process(c.vadEvents[:0], ch.Samples)
		c.vadFed += int64(len(ch.Samples))
		started := false
		for _, e := range c.vadEvents {
			switch e.Type {
			case pcm.SpeechStart:
				started = true
				if c.speechFrom < 0 {
					c.speechFrom = e.Sample
				}
			case pcm.SpeechEnd:
				c.speechTo = e.Sample
			}
		}
		if c.vad.Speaking() {
			c.userVoiced = true
		}
		if !started {
			// Only the start of speech barges in: the detector's
			// hangover after the user stopped is not new speech.
			return nil
		}
	} else if !isVoiced(ch.Samples) {
		return nil
	}
	c.userVoiced = true
	return c.input(ctx, message{kind: msgVoiced})
}

// EndUtterance transcribes the buffered user speech through the STT and
// delivers it to the handler as a TextEvent with Source "speech". With no
// voiced audio buffered (or in text mode) it does nothing.
func (c *handlerConn) EndUtterance(ctx context.Context) error {
	audio, voiced := c.userAudio, c.userVoiced
	c.userAudio, c.userVoiced = nil, false
	if c.vad != nil {
		// Only the speech the detector found is transcribed, from a
		// little before it began: not the caller's background between
		// turns.
		lead := int64(pcm.SamplesFor(c.sess.Rate, vadLeadIn))
		if c.speechFrom >= 0 {
			to := c.speechTo
			if _, end, ok := c.vad.OpenSpeech(); ok {
				to = end
			}
			to = min(to-c.bufStart+lead, int64(len(audio)))
			from := max(c.speechFrom-c.bufStart-lead, 0)
			if from < to {
				audio = audio[from:to]
			}
		}
		c.bufStart, c.speechFrom = c.vadFed, -1
	}
	if !c.cfg.audio || !voiced {
		return nil
	}
	tr, err := c.cfg.stt.Transcribe(ctx, voicetest.TranscriptionRequest{Audio: pcm.Chunk{Rate: c.sess.Rate, Samples: audio}})
	if err != nil {
		return fmt.Errorf("adapters: %s: transcribing %v of user speech: %w", c.who(), pcm.DurationOf(len(audio), c.sess.Rate), err)
	}
	if tr.Text == "" {
		c.sess.Logf("%s: the STT heard nothing in %v of user audio", c.who(), pcm.DurationOf(len(audio), c.sess.Rate))
		return nil
	}
	return c.input(ctx, message{kind: msgUtterance, text: tr.Text})
}

// SendText delivers a TextEvent with Source "text" (text mode).
func (c *handlerConn) SendText(ctx context.Context, text string) error {
	if c.cfg.audio {
		return &voicetest.UnsupportedError{Adapter: c.caps.Adapter, Capability: "text input",
			Alternative: "the agent is in audio mode: send audio, or build it with handler.TextMode()"}
	}
	return c.input(ctx, message{kind: msgInput, user: true, ev: TextEvent{Text: text, Source: SourceText}})
}

// SendDTMF delivers a DTMFEvent.
func (c *handlerConn) SendDTMF(ctx context.Context, digits string) error {
	if digits == "" {
		return fmt.Errorf("adapters: handler agent: SendDTMF with no digits")
	}
	for _, r := range digits {
		if !(r >= '0' && r <= '9' || r == '*' || r == '#' || r >= 'A' && r <= 'D') {
			return fmt.Errorf("adapters: handler agent: SendDTMF(%q): %q is not a DTMF key (use 0-9, *, #, A-D)", digits, r)
		}
	}
	return c.input(ctx, message{kind: msgInput, user: true, ev: DTMFEvent{Digits: digits}})
}

var _ voicetest.HistoryInjector = (*handlerConn)(nil)

// InjectHistory delivers a HistoryEvent (voicetest.Inject).
func (c *handlerConn) InjectHistory(ctx context.Context, role voicetest.Role, text string) error {
	return c.input(ctx, message{kind: msgInput, ev: HistoryEvent{Role: role, Text: text}})
}

// Interrupt cuts the agent's current response short: interruptible speech
// stops, the rest of the running handler call's interruptible speech is
// skipped (its Say returns ErrInterrupted), the Conn emits AgentInterrupted,
// and the handler gets an InterruptEvent once that call returns. A handler
// call still thinking (not yet speaking) counts as a response in progress.
// Uninterruptible speech (SayOptions.Uninterruptible) ignores it, and with
// nothing in progress it does nothing.
func (c *handlerConn) Interrupt(ctx context.Context) error {
	return c.input(ctx, message{kind: msgInterrupt})
}

// Recv returns the agent's next event. (A runner that called Notify
// takes the events with TryRecv instead: Recv is not called then.)
func (c *handlerConn) Recv(ctx context.Context) (voicetest.AgentEvent, error) {
	for {
		if ev, ok := c.loop.take(); ok {
			return ev, nil
		}
		select {
		case <-c.ready:
		case <-c.ended:
			return voicetest.AgentEvent{}, c.termErr
		case <-ctx.Done():
			return voicetest.AgentEvent{}, ctx.Err()
		}
	}
}

// PromptSends declares that SendText, SendDTMF, SendAudio and Interrupt
// never block and run no user code: they hand the input to the loop,
// which runs under a lock and never waits (the handler's functions run on
// goroutines of their own, or on the coroutine that the runner resumes
// only through Resume: see handler_coro.go). The runner calls them on its own goroutine
// (see internal/inproc). EndUtterance, which calls the STT, and Close,
// which waits for the handler's goroutines, are not among them.
func (c *handlerConn) PromptSends(inproc.Token) {}

// TryRecv returns what Recv would return now, reporting false when Recv
// would wait: the runner takes a handler agent's events on its own
// goroutine (see internal/inproc).
//
// With nothing to take it takes no lock: the loop stores the length of
// its outbox before it signals that it has events (step), so a caller
// woken by that signal sees them.
func (c *handlerConn) TryRecv(inproc.Token) (voicetest.AgentEvent, bool, error) {
	if c.queued.Load() > 0 {
		if ev, ok := c.loop.take(); ok {
			return ev, true, nil
		}
	}
	select {
	case <-c.ended:
		return voicetest.AgentEvent{}, true, c.termErr
	default:
		return voicetest.AgentEvent{}, false, nil
	}
}

// Notify makes the loop signal ch, instead of the channel Recv waits on,
// when TryRecv may have something new to return: the runner, which takes
// the events with TryRecv, passes the channel on which its Clock says
// that the agent is idle (see internal/inproc). A signal already given
// is passed on.
func (c *handlerConn) Notify(_ inproc.Token, ch chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	inproc.PassSignal(c.ready, ch)
	c.ready = ch
	if c.co.Load() == nil {
		c.co.Store(newCoro(c))
	}
}

// Close delivers the StopEvent, cancels the background tasks and waits (up
// to the stop timeout) for every goroutine of the conversation to end.
func (c *handlerConn) Close() error {
	<-c.startClose()
	return c.closeErr
}

// startClose delivers the close to the loop, once, and returns the
// channel closed when Close returns (the loop has exited).
func (c *handlerConn) startClose() <-chan struct{} {
	c.close.Do(func() {
		_ = c.send(message{kind: msgClose})
		c.closeCoro()
	})
	return c.loopDone
}

// StartClose begins Close without waiting for it: it hands the close to
// the loop, under its lock, lets the handler's coroutine, if it has one,
// finish what it still has to do (a Say that Close answered, the
// StopEvent call: bounded as Resume is, by the rescue), and returns the
// channel closed once Close would return. The runner waits on it on its
// own goroutine, within its bound on Close, instead of calling Close on a
// goroutine of its own (see internal/inproc).
func (c *handlerConn) StartClose(inproc.Token) <-chan struct{} { return c.startClose() }

// isVoiced reports whether samples hold more than background silence.
func isVoiced(s []int16) bool {
	if len(s) == 0 {
		return false
	}
	var sum int64
	for _, v := range s {
		sum += int64(v) * int64(v)
	}
	return sum > int64(voicedRMS*voicedRMS)*int64(len(s))
}
