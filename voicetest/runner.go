package voicetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"sync/atomic"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
)

// recvItem is one result of Conn.Recv with the time it returned.
type recvItem struct {
	ev  AgentEvent
	at  time.Duration
	err error
	// said is how many user utterances the runner had begun to send
	// when Recv returned it (see runner.said).
	said int64

	gate *recvGate // released when the runner takes the item (bounds.go)
	size int64
}

// piece is agent audio placed on the conversation's time axis.
type piece struct {
	at time.Duration
	c  pcm.Chunk
}

// agentSpeech is the agent segment being recorded.
type agentSpeech struct {
	turn        int
	start       time.Duration
	pieces      []piece
	sent        []pcm.Chunk   // the agent's frames as they came, unclipped
	audio       time.Duration // total audio received
	latency     time.Duration
	interrupted bool
}

// errDeadline is pump's report that the deadline passed.
var errDeadline = errors.New("deadline")

// runner holds one run of a scenario. All of its fields are used by the
// goroutine that runs the script; the receiver goroutine only sends on
// events.
type runner struct {
	cfg    Config
	conn   Conn
	caps   Capabilities
	clock  *vclock // the conversation's time; virtual only when shared with the agent
	bubble bool    // the run is inside a synctest bubble
	start  time.Time
	logf   func(format string, args ...any)
	events <-chan recvItem
	took   int64         // events taken from events (not errors), for clock.quiet
	listen *atomic.Int64 // see receive
	said   *atomic.Int64 // user utterances begun, for receive to stamp
	timer  *time.Timer
	stray  *strays      // callees left running at their bound (callee.go)
	sender *audioSender // calls SendAudio (sender.go)
	view   *State       // the copy of st callees read (snapshot)

	st   State
	segs []Segment

	// outcome
	ended      string // why the conversation ended before the script did
	endReason  string // ended, with when, for the steps it skips
	stopped    string // why the script stopped (Succeed), with where
	step       string // the step running, as "step N Name()"
	skipped    []string
	skipReason string
	decided    bool
	success    bool
	reason     string
	verdict    *Judgment
	criteria   []CriterionResult

	// metrics
	latencies  []time.Duration
	ttfb       time.Duration
	haveTTFB   bool
	interrupts []time.Duration

	// stream state
	hungUp       bool
	hangUpAt     time.Duration
	hangUpReason string
	hangUpTurn   int
	hangUpStep   string // the step during which the agent hung up
	streamClosed bool
	closeErr     error

	// agent turn state
	seg          *agentSpeech
	playEnd      time.Duration
	lastAgentAt  time.Duration
	turnEnds     int
	deferred     []recvItem
	deferLoad    deferredLoad    // what deferred holds (bounds.go)
	side         sideLoad        // side events kept and not (bounds.go)
	turnText     strings.Builder // deltas of the utterance being spoken
	committed    []string        // final texts of the turn's utterances
	hasText      bool
	textAt       time.Duration
	turnAudio    time.Duration
	turnEvents   int // events received since the last agent turn was recorded
	greeted      bool
	agentTurns   int
	userEnd      time.Duration
	userSpeaking bool // say is sending an utterance
	awaitLatency bool

	// interrupt state
	interrupting  bool
	interruptAt   time.Duration
	interruptStop time.Duration
	gotInterrupt  bool

	// transcriptions of agent turns still running, in turn order
	stt []*sttJob
}

func (r *runner) now() time.Duration {
	if r.clock == nil {
		return time.Since(r.start)
	}
	return r.clock.Now().Sub(r.start)
}

func (r *runner) realTime() bool { return r.cfg.Pacing == PaceRealTime }

func (r *runner) adapter() string {
	if r.caps.Adapter == "" {
		return "agent"
	}
	return r.caps.Adapter
}

func (r *runner) addEvent(e Event) { r.st.timeline = append(r.st.timeline, e) }

func (r *runner) addItem(e Event) { r.st.items = append(r.st.items, e) }

func (r *runner) decide(success bool, reason string) {
	r.decided = true
	r.success = success
	r.reason = reason
}

// receive runs Conn.Recv in a loop and forwards what it returns, with the
// time it returned, until ctx is done, the agent hangs up or Recv fails.
// listen holds 1 + the offset at which it last called Recv while it waits
// in Recv, and 0 from Recv's return until the event is in out (while the
// queue is full, the agent goes unheard).
func receive(ctx context.Context, conn Conn, clock Clock, start time.Time, listen, said *atomic.Int64, out chan<- recvItem, done chan<- struct{}) {
	defer close(done)
	defer close(out)
	gate := newRecvGate()
	for {
		listen.Store(int64(clock.Now().Sub(start)) + 1)
		ev, err := conn.Recv(ctx)
		it := recvItem{ev: ev, at: clock.Now().Sub(start), err: err, said: said.Load(), gate: gate, size: ev.Size()}
		listen.Store(0)
		if err != nil && ctx.Err() != nil || !gate.acquire(ctx, it.size) {
			return
		}
		select {
		case out <- it:
		case <-ctx.Done():
			return
		}
		if err != nil || ev.Kind == AgentHangUp {
			return
		}
	}
}

// pump handles agent events until stop reports true (nil) or the offset
// returned by deadline passes (errDeadline). stop and deadline are asked
// again after every event. Events already received are handled even when
// the deadline has passed on entry: a runner that is late everywhere (a
// line slower than real time, an overloaded machine) must still see the
// agent's events as they come, not only once it catches up.
//
// On a virtual clock shared with the agent, while the agent is idle and
// every event it sent has been taken, the time jumps to the deadline or to
// the agent's next timer, whichever comes first; otherwise pump waits for
// events, for the agent to go idle, or, in real time, for the deadline or
// the agent's next timer (work that outlasts them lets the time run as the
// real clock does).
func (r *runner) pump(ctx context.Context, stop func() bool, deadline func() time.Duration) error {
	virtual := r.clock != nil && r.clock.isVirtual()
	var idle <-chan struct{}
	if virtual {
		idle = r.clock.idleC
	}
	// No wait goes past the scenario's bound.
	limit := r.cfg.Timeouts.MaxDuration
	wait := deadline
	deadline = func() time.Duration { return min(wait(), limit) }
	for {
		if stop() {
			return nil
		}
		if r.now() >= limit {
			if err := r.poll(); err != nil {
				return err
			}
			if stop() {
				return nil
			}
			return r.overtime()
		}
		d := deadline() - r.now()
		if d <= 0 {
			if err := r.poll(); err != nil {
				return err
			}
			if stop() {
				return nil
			}
			if deadline() > r.now() {
				continue // the events moved the deadline (agent activity)
			}
			return errDeadline
		}
		if virtual {
			to := r.start.Add(deadline())
			if r.quiet() {
				r.clock.jump(to)
				continue
			}
			if next, ok := r.clock.next(); ok && next.Before(to) {
				d = max(next.Sub(r.clock.Now()), 0)
			}
		}
		if r.timer == nil {
			r.timer = time.NewTimer(d)
		} else {
			r.timer.Reset(d)
		}
		select {
		case it, ok := <-r.events:
			r.timer.Stop()
			if !ok {
				r.events = nil
				r.streamClosed = true
				continue
			}
			if err := r.take(it); err != nil {
				return err
			}
		case <-idle: // the agent went idle: time may jump
			r.timer.Stop()
		case <-r.timer.C:
			if virtual {
				// The agent worked for longer than the wait, in real
				// time: so much time has passed.
				r.clock.jump(r.clock.Now().Add(d))
			}
		case <-ctx.Done():
			r.timer.Stop()
			return ctx.Err()
		}
	}
}

// overtime is the error of a scenario that went on past
// Timeouts.MaxDuration.
func (r *runner) overtime() error {
	return &TimeoutError{Phase: PhaseScenario, Timeout: r.cfg.Timeouts.MaxDuration, Turn: r.st.turn,
		Hint: "the conversation went on for longer than Config.Timeouts.MaxDuration, the bound on every scenario (an agent that never stops talking, never ends its turn or never hangs up ends here); raise Config.Timeouts.MaxDuration if the conversation really lasts that long"}
}

// quiet reports whether nothing can happen until the virtual clock moves:
// the agent is idle, and every event it sent has been handled.
func (r *runner) quiet() bool {
	if r.events == nil {
		return true // the agent's stream is over
	}
	return len(r.events) == 0 && r.clock.quiet(r.took)
}

// waitUntil handles agent events until the offset t.
func (r *runner) waitUntil(ctx context.Context, t time.Duration) error {
	err := r.pump(ctx, func() bool { return false }, func() time.Duration { return t })
	if err == errDeadline {
		return nil
	}
	return err
}

// poll handles the agent events already waiting, without blocking. It
// handles at most those queued when it is called (and notices a closed
// stream), so an agent that sends events as fast as they are handled cannot
// keep it, and the runner's memory, growing forever.
func (r *runner) poll() error {
	for budget := len(r.events) + 1; budget > 0 && r.events != nil; budget-- {
		select {
		case it, ok := <-r.events:
			if !ok {
				r.events = nil
				r.streamClosed = true
				return nil
			}
			if err := r.take(it); err != nil {
				return err
			}
		default:
			return nil
		}
	}
	return nil
}

// actsOnTurn reports whether ev is the agent acting on its turn: speech
// (audio, a transcript with words or speech time), a tool call or result,
// the end of its turn or of its speech, a hang-up. Only these keep a turn
// open (Timeouts.TailSilence, FirstChunk between events, ExpectHangUp's
// wait): log lines, data and the agent's transcripts of the user do not,
// so that a peer that logs every 200 ms cannot hold a turn open forever.
func actsOnTurn(ev AgentEvent) bool {
	switch ev.Kind {
	case AgentLog, AgentData, UserTranscript:
		return false
	case AgentAudio:
		return !ev.Audio.IsEmpty()
	case AgentTranscript:
		return ev.Speech > 0 || strings.TrimSpace(ev.Text) != ""
	}
	return true
}

// maxTurnEvents bounds the events an agent may send between two recorded
// agent turns, so that an agent flooding the runner with events (logs,
// data, transcript deltas) fails the scenario instead of growing its memory
// without bound.
const maxTurnEvents = 100_000

// take counts and handles one event received from the agent.
func (r *runner) take(it recvItem) error {
	it.gate.release(it.size)
	if it.err == nil {
		r.took++
	}
	r.turnEvents++
	if r.turnEvents > maxTurnEvents && it.err == nil {
		return fmt.Errorf("the %s adapter sent more than %d events in one agent turn (the last a %s at %s, turn %d): it floods the runner; fix the agent or the adapter", r.adapter(), maxTurnEvents, it.ev.Kind, fmtOffset(it.at), r.st.turn)
	}
	return r.handle(it)
}

// handle records one agent event.
func (r *runner) handle(it recvItem) error {
	if it.err != nil {
		r.streamClosed = true
		if errors.Is(it.err, ErrTransportClosed) {
			if r.hungUp {
				return nil
			}
			r.closeErr = it.err
			return fmt.Errorf("the %s connection closed without a hang-up at %s (turn %d): %w", r.adapter(), fmtOffset(it.at), r.st.turn, it.err)
		}
		r.closeErr = it.err
		return fmt.Errorf("receiving from the %s adapter at %s (turn %d): %w", r.adapter(), fmtOffset(it.at), r.st.turn, it.err)
	}
	if r.turnEnds > 0 && it.ev.Kind != AgentHangUp {
		// The agent ended its turn; what follows is its next turn's, and
		// is handled once this one is recorded. A hang-up ends everything
		// at once.
		return r.deferItem(it)
	}
	ev, at := it.ev, it.at
	if actsOnTurn(ev) {
		r.lastAgentAt = max(r.lastAgentAt, at)
	}
	turn := r.st.turn
	r.note(ev, at)
	switch ev.Kind {
	case AgentAudio:
		if err := ev.Audio.Validate(); err != nil {
			return fmt.Errorf("the %s adapter sent agent audio with no valid sample rate at %s: %w (adapters must send audio at Session.Rate, %d Hz)", r.adapter(), fmtOffset(at), err, r.cfg.Rate)
		}
		if ev.Audio.Rate != r.cfg.Rate {
			return fmt.Errorf("the %s adapter sent agent audio at %d Hz at %s, but the session rate is %d Hz: adapters must convert audio to Session.Rate", r.adapter(), ev.Audio.Rate, fmtOffset(at), r.cfg.Rate)
		}
		if ev.Audio.IsEmpty() {
			return nil
		}
		if r.turnAudio >= r.cfg.Timeouts.MaxTurnAudio {
			// The turn is cut at MaxTurnAudio when it is drained; keeping
			// more (audio that arrived while the user spoke) would let an
			// agent that floods audio grow memory without bound.
			return nil
		}
		r.speak(at, ev.Audio, ev.Audio.Duration())
	case AgentTranscript:
		if ev.Speech < 0 {
			return fmt.Errorf("the %s adapter sent an agent transcript with negative speech time %v at %s", r.adapter(), ev.Speech, fmtOffset(at))
		}
		if !r.hasText {
			r.textAt = at
		}
		r.hasText = true
		if ev.Final {
			// The final text of an utterance replaces its deltas; a turn
			// may hold several utterances.
			r.committed = append(r.committed, strings.TrimSpace(ev.Text))
			r.turnText.Reset()
		} else {
			r.turnText.WriteString(ev.Text)
		}
		if ev.Speech > 0 && r.turnAudio < r.cfg.Timeouts.MaxTurnAudio {
			// Text-only speech counts towards MaxTurnAudio as audio
			// does; past it, its time is not kept (its text is).
			r.speak(at, pcm.Chunk{}, ev.Speech)
		}
	case UserTranscript:
		if r.keepSide(ev) {
			r.addEvent(Event{At: at, Type: EventUserTranscript, Turn: turn, Role: RoleUser, Text: ev.Text})
		}
	case AgentToolCall, AgentToolResult:
		if ev.Tool == nil {
			return fmt.Errorf("the %s adapter sent a %s event with no Tool at %s", r.adapter(), ev.Kind, fmtOffset(at))
		}
		if !r.keepSide(ev) {
			return nil
		}
		typ := EventToolCall
		if ev.Kind == AgentToolResult {
			typ = EventToolResult
		}
		tc := *ev.Tool
		e := Event{At: at, Type: typ, Turn: turn, Role: RoleAgent, Text: tc.Name, Tool: &tc}
		r.addEvent(e)
		r.addItem(e)
	case AgentData:
		if !r.keepSide(ev) {
			return nil
		}
		e := Event{At: at, Type: EventData, Turn: turn, Role: RoleAgent, Text: ev.Text, Data: ev.Data}
		r.addEvent(e)
		r.addItem(e)
	case AgentTurnEnd:
		if r.seg == nil && !r.hasText && (it.said < r.said.Load() || r.userSpeaking || at < r.userEnd) {
			// A turn end without a word that came before the user's
			// latest utterance was over cannot answer it: the agent's
			// silence is not a turn (an agent that did not greet, an
			// adapter that marks the start of a session). Counting it
			// would end the next AgentTurn at once and record every
			// reply in the turn after its question.
			r.agentLogf("voicetest: ignored the %s agent's turn end at %s (turn %d): it said nothing, before the user's utterance was over", r.adapter(), fmtOffset(at), turn)
			return nil
		}
		r.turnEnds++
	case AgentInterrupted:
		e := Event{At: at, Type: EventAgentInterrupted, Turn: turn, Role: RoleAgent}
		if r.interrupting && !r.gotInterrupt {
			r.gotInterrupt = true
			r.interruptStop = at
			e.Latency = at - r.interruptAt
		}
		r.addEvent(e)
		r.clip(at)
	case AgentHangUp:
		r.hungUp = true
		r.hangUpAt = at
		r.hangUpReason, r.hangUpTurn, r.hangUpStep = ev.Text, turn, r.step
		r.addEvent(Event{At: at, Type: EventAgentHangUp, Turn: turn, Role: RoleAgent, Text: ev.Text})
	case AgentLog:
		if r.keepSide(ev) {
			r.addEvent(Event{At: at, Type: EventAgentLog, Turn: turn, Role: RoleAgent, Text: ev.Text})
		}
		r.agentLogf("agent log at %s: %s", fmtOffset(at), ev.Text)
	case AgentTimings:
		return r.noteTimings(ev, at)
	case AgentHandoff:
		return r.handoff(ev, at)
	default:
		return fmt.Errorf("the %s adapter sent an event of unknown kind %d at %s: adapters must send only the EventKinds voicetest defines", r.adapter(), ev.Kind, fmtOffset(at))
	}
	return nil
}

// speak places dur of agent speech (audio c, or none for a text-only
// agent) that arrived at at: it plays after what is already queued.
func (r *runner) speak(at time.Duration, c pcm.Chunk, dur time.Duration) {
	playAt := max(at, r.playEnd)
	if !r.haveTTFB {
		r.haveTTFB = true
		r.ttfb = at
	}
	if r.seg == nil {
		// A new stretch of agent speech. Latency is measured only for one
		// that starts after the user stopped: speech that began earlier
		// (late audio, a greeting talked over) is not a response to it.
		r.seg = &agentSpeech{turn: r.st.turn, start: playAt}
		e := Event{At: playAt, Type: EventAgentStartSpeaking, Turn: r.st.turn, Role: RoleAgent}
		if r.awaitLatency && at >= r.userEnd {
			r.awaitLatency = false
			r.seg.latency = at - r.userEnd
			e.Latency = r.seg.latency
			r.latencies = append(r.latencies, r.seg.latency)
		}
		r.addEvent(e)
	}
	if !c.IsEmpty() {
		r.seg.pieces = append(r.seg.pieces, piece{at: playAt, c: c})
		r.seg.sent = append(r.seg.sent, c)
		r.seg.audio += dur
	}
	r.turnAudio += dur
	r.playEnd = playAt + dur
}

// clip stops the agent's playback at t: audio queued to play after t is
// discarded (a native cancel, or the agent reporting it stopped).
func (r *runner) clip(t time.Duration) {
	if r.playEnd <= t {
		return
	}
	r.playEnd = max(t, r.lastAudioStart())
	if r.seg == nil {
		return
	}
	for i := range r.seg.pieces {
		p := &r.seg.pieces[i]
		if end := p.at + p.c.Duration(); end > r.playEnd {
			p.c = p.c.Slice(0, max(r.playEnd-p.at, 0))
		}
	}
}

func (r *runner) lastAudioStart() time.Duration {
	if r.seg == nil {
		return 0
	}
	return r.seg.start
}

// closeSpeech ends the agent's current segment (if any) and records its
// message, transcribing it when needed.
func (r *runner) closeSpeech(ctx context.Context) error {
	text, hasText, textAt := r.agentText(), r.hasText, r.textAt
	r.turnText.Reset()
	r.committed = r.committed[:0]
	r.hasText = false
	seg := r.seg
	r.seg = nil
	r.turnAudio = 0
	r.turnEvents = 0
	if seg == nil {
		if !hasText || strings.TrimSpace(text) == "" {
			return nil
		}
		// Text with no speech: a transcript-only message.
		m := Message{Turn: r.st.turn, Role: RoleAgent, Text: strings.TrimSpace(text), Start: textAt, End: textAt}
		r.st.transcript = append(r.st.transcript, m)
		r.addItem(Event{At: textAt, Type: EventMessage, Turn: m.Turn, Role: RoleAgent, Text: m.Text})
		return nil
	}
	end := r.playEnd
	audio := r.segmentAudio(seg, end)
	m := Message{Turn: seg.turn, Role: RoleAgent, Text: strings.TrimSpace(text), Start: seg.start, End: end,
		Interrupted: seg.interrupted, Latency: seg.latency}
	if !hasText && seg.audio > 0 {
		if r.cfg.AgentSTT != nil {
			// Transcribed beside the conversation: the user answers as
			// soon as the agent stops, not once an STT engine has read
			// the turn; settle fills the text in before anything reads it.
			r.transcribe(ctx, seg.turn, canonicalAgentAudio(r.cfg.Rate, seg.sent), len(r.st.transcript), len(r.st.items), len(r.segs))
		} else {
			m.AudioOnly = true
		}
	} else if r.hears(hasText, seg) {
		r.transcribe(ctx, seg.turn, audio, len(r.st.transcript), len(r.st.items), len(r.segs))
		r.stt[len(r.stt)-1].heard = true
	}
	r.st.transcript = append(r.st.transcript, m)
	r.addItem(Event{At: seg.start, Type: EventMessage, Turn: m.Turn, Role: RoleAgent, Text: m.Text})
	stop := Event{At: end, Type: EventAgentStopSpeaking, Turn: seg.turn, Role: RoleAgent}
	r.addEvent(stop)
	r.segs = append(r.segs, Segment{Role: RoleAgent, Turn: seg.turn, Start: seg.start, End: end,
		Text: m.Text, AudioOnly: m.AudioOnly, Audio: audio, Interrupted: seg.interrupted})
	return nil
}

// sttJob is the transcription of one agent turn's audio, running beside
// the conversation. Its text goes to the message, item and segment at the
// indices it holds (those slices only grow while a run lasts).
type sttJob struct {
	turn           int
	msg, item, seg int
	done           chan struct{} // closed when text and err are set
	text           string
	err            error
	// heard marks the transcription of a message whose text the agent
	// sent: it goes to Message.Heard (Config.MeasureAgentWER).
	heard bool
}

// transcribe starts transcribing an agent turn's audio with
// Config.AgentSTT. A run's transcriptions go one at a time, in turn order,
// so an engine sees no more concurrency from one scenario than before.
func (r *runner) transcribe(ctx context.Context, turn int, audio pcm.Chunk, msg, item, seg int) {
	j := &sttJob{turn: turn, msg: msg, item: item, seg: seg, done: make(chan struct{})}
	var prev chan struct{}
	if n := len(r.stt); n > 0 {
		prev = r.stt[n-1].done
	}
	r.stt = append(r.stt, j)
	stt, req, stray := r.cfg.AgentSTT, TranscriptionRequest{Audio: audio, Language: r.cfg.Language}, r.stray
	c := r.engine("Config.AgentSTT", PhaseTranscribe)
	c.turn = turn
	go func() {
		defer close(j.done)
		if prev != nil {
			select {
			case <-prev:
			case <-ctx.Done():
				j.err = ctx.Err()
				return
			}
		}
		var tr Transcription
		// A panicking engine fails the scenario (call recovers it), not
		// the whole test binary from a goroutine no test owns.
		err := call(ctx, c, stray, func(ctx context.Context) (err error) {
			tr, err = stt.Transcribe(ctx, req)
			return err
		})
		if err != nil {
			j.err = fmt.Errorf("transcribing the agent's turn %d (%v of audio, its edge silence trimmed) with Config.AgentSTT: %w", turn, audio.Duration().Round(time.Millisecond), err)
			return
		}
		j.text = strings.TrimSpace(tr.Text)
	}()
}

// settle waits for the transcriptions still running and writes their text
// into the transcript, the conversation items and the recording. Anything
// that reads the conversation (a User, a Judge, a Check, the Result) runs
// after it. A failed transcription is returned; the jobs after it are
// left for waitSTT.
func (r *runner) settle(ctx context.Context) error {
	for len(r.stt) > 0 {
		j := r.stt[0]
		select {
		case <-j.done:
		case <-ctx.Done():
			return fmt.Errorf("voicetest: the scenario's context ended while it waited for Config.AgentSTT (phase %q, turn %d): %w", PhaseTranscribe, j.turn, context.Cause(ctx))
		}
		r.stt = r.stt[1:]
		if j.err != nil {
			return j.err
		}
		if j.heard {
			r.setHeard(j.msg, j.text)
			continue
		}
		r.st.transcript[j.msg].Text = j.text
		r.st.transcript[j.msg].NothingHeard = j.text == ""
		r.st.items[j.item].Text = j.text
		r.segs[j.seg].Text = j.text
	}
	return nil
}

// waitSTT waits for every transcription goroutine to end (the run's
// context is cancelled first, so they end soon): none outlives the run.
func (r *runner) waitSTT() {
	for _, j := range r.stt {
		<-j.done
	}
	r.stt = nil
}

// segmentAudio lays the segment's pieces on one buffer from its start to
// end, with silence in the gaps.
func (r *runner) segmentAudio(seg *agentSpeech, end time.Duration) pcm.Chunk {
	if seg.audio == 0 {
		return pcm.Chunk{}
	}
	n := pcm.SamplesFor(r.cfg.Rate, end-seg.start)
	out := make([]int16, n)
	for _, p := range seg.pieces {
		off := pcm.SamplesFor(r.cfg.Rate, p.at-seg.start)
		if off >= n {
			continue
		}
		copy(out[off:], p.c.Samples)
	}
	return pcm.Chunk{Rate: r.cfg.Rate, Samples: out}
}

// turnOver reports whether the agent's current turn is over by its
// protocol marker (and, on real-time pacing, its audio has played).
func (r *runner) turnOver() bool {
	if r.turnEnds > 0 {
		return !r.realTime() || r.now() >= r.playEnd
	}
	return false
}

// quietDeadline returns when the current agent turn ends if nothing more
// arrives.
func (r *runner) quietDeadline(since time.Duration) time.Duration {
	if r.turnEnds > 0 {
		return r.playEnd
	}
	last := max(r.lastAgentAt, since, r.listeningSince())
	if r.realTime() {
		last = max(last, r.playEnd)
	}
	if r.caps.TurnEnd {
		return last + r.cfg.Timeouts.FirstChunk
	}
	return last + r.cfg.Timeouts.TailSilence
}

// listeningSince returns now while the receive goroutine holds an event
// not yet taken, else 0: the agent cannot be called quiet for a time in
// which nobody was listening to it (a runner slower than a flooding agent,
// with the event queue full). While receive waits in Recv, everything the
// agent sent before has been queued, and pump takes what is queued before
// it calls a turn over; so what ends a turn is the time of the agent's
// last act on it (lastAgentAt), not of its last event of any kind.
func (r *runner) listeningSince() time.Duration {
	if r.listen == nil || r.listen.Load() > 0 {
		return 0
	}
	return r.now()
}

// agentTurn drains one agent turn. With o.greeting it waits
// Timeouts.Greeting, and no greeting (or a silent one) is no error.
func (r *runner) agentTurn(ctx context.Context, o turnOptions) error {
	if r.hungUp {
		return r.closeAndEnd(ctx)
	}
	begin := r.now()
	wait := r.cfg.Timeouts.FirstChunk
	if o.greeting {
		wait = r.cfg.Timeouts.Greeting
	}
	started := func() bool { return r.seg != nil || r.turnEnds > 0 || r.hungUp || r.streamClosed }
	err := r.pump(ctx, started, func() time.Duration { return begin + wait })
	switch {
	case err == errDeadline && o.greeting:
		return nil
	case err == errDeadline:
		return &TimeoutError{Phase: PhaseFirstChunk, Timeout: wait, Turn: r.st.turn,
			Hint: fmt.Sprintf("the %s agent sent no audio; check that it answers, or raise Config.Timeouts.FirstChunk", r.adapter())}
	case err != nil:
		return err
	}
	r.agentTurns++
	maxHit := false
	over := func() bool {
		if r.hungUp || r.streamClosed {
			return true
		}
		if r.turnAudio >= r.cfg.Timeouts.MaxTurnAudio {
			maxHit = true
			return true
		}
		return r.turnOver()
	}
	err = r.pump(ctx, over, func() time.Duration { return r.quietDeadline(begin) })
	if err == errDeadline && r.caps.TurnEnd && r.turnEnds == 0 {
		return &TimeoutError{Phase: PhaseTurn, Timeout: r.cfg.Timeouts.FirstChunk, Turn: r.st.turn,
			Hint: fmt.Sprintf("the %s adapter marks turn ends, but the agent neither spoke, called a tool nor ended its turn for that long (log lines and data do not count); raise Config.Timeouts.FirstChunk if the agent pauses longer", r.adapter())}
	}
	if err != nil && err != errDeadline {
		return err
	}
	ended := r.now()
	r.turnEnds = 0
	if maxHit {
		r.addEvent(Event{At: r.now(), Type: EventMaxTurnAudio, Turn: r.st.turn, Role: RoleAgent,
			Text: fmt.Sprintf("stopped draining after %v of agent audio", r.cfg.Timeouts.MaxTurnAudio)})
	}
	said := len(r.st.transcript)
	if err := r.closeSpeech(ctx); err != nil {
		return err
	}
	silent := len(r.st.transcript) == said
	if err := r.replay(); err != nil {
		return err
	}
	if maxHit && r.cfg.Timeouts.FailOnMaxTurnAudio {
		return &TimeoutError{Phase: PhaseTurn, Timeout: r.cfg.Timeouts.MaxTurnAudio, Turn: r.st.turn,
			Hint: "the agent's turn reached Config.Timeouts.MaxTurnAudio and FailOnMaxTurnAudio is set"}
	}
	if r.streamClosed && !r.hungUp && r.closeErr == nil {
		return &TransportClosedError{Adapter: r.adapter()}
	}
	if r.hungUp {
		r.end("the agent hung up")
		return nil
	}
	if silent && !o.allowSilence && !o.greeting {
		return fmt.Errorf("%w: the %s agent ended its turn at %s (turn %d) without a word, so there is no reply to record; if the agent may stay silent here, use AgentTurn(voicetest.AllowSilence())",
			ErrSilentTurn, r.adapter(), fmtOffset(ended), r.st.turn)
	}
	return nil
}

// expectHangUp runs an ExpectHangUp step: the agent has hung up, or does
// within Timeouts.FirstChunk of its last event; its last words are
// recorded as its turn.
func (r *runner) expectHangUp(ctx context.Context) error {
	if !r.hungUp && !r.streamClosed {
		begin := r.now()
		err := r.pump(ctx, func() bool { return r.hungUp || r.streamClosed },
			func() time.Duration { return max(begin, r.lastAgentAt) + r.cfg.Timeouts.FirstChunk })
		if err == errDeadline {
			if ferr := r.flush(ctx); ferr != nil {
				return ferr
			}
			return &TimeoutError{Phase: PhaseHangUp, Timeout: r.cfg.Timeouts.FirstChunk, Turn: r.st.turn,
				Hint: fmt.Sprintf("the %s agent is still on the line: ExpectHangUp waits Config.Timeouts.FirstChunk after the agent's last act (speech, a tool call, a turn end) for it to hang up", r.adapter())}
		}
		if err != nil {
			return err
		}
	}
	if err := r.flush(ctx); err != nil {
		return err
	}
	if !r.hungUp {
		return &TransportClosedError{Adapter: r.adapter()}
	}
	r.end("the agent hung up")
	return nil
}

// end marks the conversation over: the remaining steps that need the
// line are not run (or, after the agent's hang-up, fail).
func (r *runner) end(why string) {
	if r.ended == "" {
		r.ended = why
		r.endReason = fmt.Sprintf("%s at %s", why, fmtOffset(r.now()))
		if r.step != "" {
			r.endReason += " (" + r.step + ")"
		}
	}
}

func (r *runner) askUser(ctx context.Context) (Utterance, error) {
	if r.cfg.User == nil {
		return Utterance{}, errors.New("Config.User is nil: UserTurn and Proceed ask the User for the next utterance; set Config.User (e.g. a personas.Scripted) or use UserSays")
	}
	if err := r.settle(ctx); err != nil {
		return Utterance{}, err
	}
	var u Utterance
	st := r.snapshot()
	err := r.call(ctx, r.engine("Config.User", PhaseUser), func(ctx context.Context) (err error) {
		u, err = r.cfg.User.NextUtterance(ctx, st)
		return err
	})
	if err != nil {
		return Utterance{}, fmt.Errorf("asking Config.User for turn %d: %w", r.st.turn+1, err)
	}
	return u, nil
}

// userTurn says u. interrupt marks a barge-in, which does not wait for the
// agent.
func (r *runner) userTurn(ctx context.Context, u Utterance, interrupt bool) error {
	if r.hungUp {
		r.end("the agent hung up")
		return nil
	}
	if u.Done {
		r.addEvent(Event{At: r.now(), Type: EventUserHangUp, Turn: r.st.turn, Role: RoleUser, Text: "the user has nothing more to say"})
		r.end("the user hung up")
		return nil
	}
	if u.Wait > 0 {
		w := min(u.Wait, r.cfg.Timeouts.FirstChunk)
		if err := r.waitUntil(ctx, r.now()+w); err != nil {
			return err
		}
	}
	if strings.TrimSpace(u.Text) != "" || !u.Audio.IsEmpty() {
		if err := r.say(ctx, u); err != nil {
			return err
		}
	}
	if r.hungUp {
		r.end("the agent hung up")
		return nil
	}
	if u.HangUp {
		r.addEvent(Event{At: r.now(), Type: EventUserHangUp, Turn: r.st.turn, Role: RoleUser})
		r.end("the user hung up")
	}
	return nil
}

// say sends one user utterance and records it.
func (r *runner) say(ctx context.Context, u Utterance) error {
	r.userSpeaking = true
	defer func() { r.userSpeaking = false }()
	if r.said != nil {
		r.said.Add(1)
	}
	r.st.turn++
	turn := r.st.turn
	var start, end time.Duration
	var audio pcm.Chunk
	switch {
	case r.caps.Audio:
		var err error
		audio, err = r.userAudio(ctx, u)
		if err != nil {
			return err
		}
		start = r.now()
		r.addEvent(Event{At: start, Type: EventUserStartSpeaking, Turn: turn, Role: RoleUser})
		sent, err := r.sendAudio(ctx, audio)
		if err != nil {
			return err
		}
		// An agent that hung up heard only what was sent.
		audio = audio.Slice(0, sent)
		// The user stopped speaking when the last frame went out; latency
		// counts from there, not from when the adapter's end-of-utterance
		// message (a commit, a mark) has been written, which a fast agent
		// may answer before.
		end = r.now()
		if err := r.call(ctx, r.line("EndUtterance"), r.conn.EndUtterance); err != nil && !r.hungUpAfter(ctx, err) {
			return r.sendErr("ending the user's utterance", err)
		}
	case r.caps.Text:
		if strings.TrimSpace(u.Text) == "" {
			return &UnsupportedError{Adapter: r.adapter(), Capability: "audio input",
				Alternative: "the agent takes only text, so the utterance needs Text (a transcript of its audio)"}
		}
		words := len(strings.Fields(u.Text))
		dur := time.Duration(words) * time.Minute / time.Duration(r.cfg.WordsPerMinute)
		start = r.now()
		r.addEvent(Event{At: start, Type: EventUserStartSpeaking, Turn: turn, Role: RoleUser})
		if r.realTime() {
			if err := r.waitUntil(ctx, start+dur); err != nil {
				return err
			}
		}
		end = r.now()
		if !r.hungUp {
			send := func(ctx context.Context) error { return r.conn.SendText(ctx, u.Text) }
			if err := r.call(ctx, r.line("SendText"), send); err != nil && !r.hungUpAfter(ctx, err) {
				return r.sendErr("sending the user's text", err)
			}
		}
	default:
		return &UnsupportedError{Adapter: r.adapter(), Capability: "user input",
			Alternative: "the adapter declares neither Audio nor Text input; fix its Capabilities"}
	}
	if r.hungUp && r.hangUpAt >= start && r.hangUpAt < end {
		end = r.hangUpAt // the user was heard until the agent hung up
	}
	r.addEvent(Event{At: end, Type: EventUserStopSpeaking, Turn: turn, Role: RoleUser})
	r.userEnd = end
	r.awaitLatency = true
	m := Message{Turn: turn, Role: RoleUser, Text: strings.TrimSpace(u.Text), Start: start, End: end}
	r.st.transcript = append(r.st.transcript, m)
	r.segs = append(r.segs, Segment{Role: RoleUser, Turn: turn, Start: start, End: end, Text: m.Text, Audio: audio})
	return nil
}

// settleWait bounds how long a failed send waits for the agent's hang-up
// to arrive through Recv.
const settleWait = time.Second

// hungUpAfter reports whether a send that failed with err failed because
// the agent hung up: the hang-up event may still be on its way through
// Recv, so it waits (at most settleWait) for the receive stream to say.
func (r *runner) hungUpAfter(ctx context.Context, err error) bool {
	if r.hungUp {
		return true
	}
	if !errors.Is(err, ErrTransportClosed) {
		return false
	}
	until := r.now() + settleWait
	_ = r.pump(ctx, func() bool { return r.hungUp || r.streamClosed }, func() time.Duration { return until })
	return r.hungUp
}

func (r *runner) sendErr(what string, err error) error {
	if errors.Is(err, ErrTransportClosed) {
		return fmt.Errorf("%s: the %s connection closed without a hang-up (turn %d): %w", what, r.adapter(), r.st.turn, err)
	}
	return fmt.Errorf("%s to the %s adapter (turn %d): %w", what, r.adapter(), r.st.turn, err)
}

// userAudio returns the audio of u: its own, or its Text through
// Config.UserVoice, with the utterance's and the Config's effects.
func (r *runner) userAudio(ctx context.Context, u Utterance) (pcm.Chunk, error) {
	c := u.Audio
	if c.IsEmpty() {
		if r.cfg.UserVoice == nil {
			return pcm.Chunk{}, fmt.Errorf("the %s agent takes audio, so the user's text %s must be spoken: set Config.UserVoice to a TTS engine (or give the utterance Audio)", r.adapter(), quote(u.Text))
		}
		voice := u.Voice
		if voice == "" {
			voice = r.cfg.Voice
		}
		err := r.call(ctx, r.engine("Config.UserVoice", PhaseSynthesize), func(ctx context.Context) (err error) {
			c, err = r.cfg.UserVoice.Synthesize(ctx, SpeechRequest{Text: u.Text, Voice: voice, Speed: u.Speed, Rate: r.cfg.Rate})
			return err
		})
		if err != nil {
			return pcm.Chunk{}, fmt.Errorf("synthesising the user's text %s with Config.UserVoice: %w", quote(u.Text), err)
		}
		if c.IsEmpty() {
			return pcm.Chunk{}, fmt.Errorf("Config.UserVoice returned no audio for %s", quote(u.Text))
		}
	}
	if err := c.Validate(); err != nil {
		return pcm.Chunk{}, fmt.Errorf("user audio for %s: %w", quote(u.Text), err)
	}
	if c.Rate != r.cfg.Rate {
		var err error
		if c, err = pcm.Resample(c, r.cfg.Rate); err != nil {
			return pcm.Chunk{}, fmt.Errorf("user audio for %s at %d Hz: %w", quote(u.Text), c.Rate, err)
		}
	}
	for _, fx := range []struct {
		name string
		f    pcm.Effect
	}{{"the utterance's Effects", u.Effects}, {"Config.Effects", r.cfg.Effects}} {
		if fx.f == nil {
			continue
		}
		in, out := c, pcm.Chunk{}
		err := r.call(ctx, r.engine(fx.name, PhaseEffects), func(context.Context) error {
			out = fx.f(in)
			return nil
		})
		if err != nil {
			return pcm.Chunk{}, fmt.Errorf("applying %s to the user's audio for %s: %w", fx.name, quote(u.Text), err)
		}
		c = out
	}
	if c.Rate != r.cfg.Rate {
		return pcm.Chunk{}, fmt.Errorf("user audio effects changed the sample rate to %d Hz; effects must keep the rate (%d Hz)", c.Rate, r.cfg.Rate)
	}
	return c, nil
}

// sendAudio sends c in 20 ms frames, paced as configured, handling agent
// events between frames. It returns how much was sent: all of c, unless
// the agent hung up.
func (r *runner) sendAudio(ctx context.Context, c pcm.Chunk) (time.Duration, error) {
	// An adapter that stops accepting audio must not hang the scenario:
	// the utterance must be sent within its length and FirstChunk.
	sctx, send, cancel := r.utterance(ctx, c.Duration())
	defer cancel()
	start := r.now()
	var sent time.Duration
	for _, f := range c.Frames(FrameDuration) {
		if r.realTime() {
			if err := r.waitUntil(ctx, start+sent); err != nil {
				return sent, err
			}
		} else if err := r.poll(); err != nil {
			return sent, err
		}
		if r.hungUp {
			return sent, nil
		}
		if err := r.sendFrame(ctx, sctx, send, f); err != nil {
			if r.hungUpAfter(ctx, err) {
				return sent, nil
			}
			var te *TimeoutError
			if errors.As(err, &te) && te.Phase == PhaseSend && te.Turn == send.turn && te.Callee == send.who() {
				te.Hint = fmt.Sprintf("the %s adapter stopped accepting audio after %v of %v", r.adapter(), sent, c.Duration())
				return sent, te
			}
			return sent, r.sendErr("sending user audio", err)
		}
		sent += f.Duration()
	}
	if r.realTime() {
		return sent, r.waitUntil(ctx, start+sent)
	}
	return sent, r.poll()
}

func (r *runner) silence(ctx context.Context, d time.Duration) error {
	if r.hungUp {
		r.end("the agent hung up")
		return nil
	}
	at := r.now()
	r.addEvent(Event{At: at, Type: EventSilence, Turn: r.st.turn, Role: RoleUser, Duration: d})
	if r.caps.Audio {
		_, err := r.sendAudio(ctx, pcm.Silence(r.cfg.Rate, d))
		return err
	}
	return r.waitUntil(ctx, at+d)
}

func (r *runner) sleep(ctx context.Context, d time.Duration) error {
	if r.hungUp {
		r.end("the agent hung up")
		return nil
	}
	at := r.now()
	r.addEvent(Event{At: at, Type: EventSleep, Turn: r.st.turn, Role: RoleUser, Duration: d})
	return r.waitUntil(ctx, at+d)
}

func (r *runner) dtmf(ctx context.Context, digits string) error {
	if r.hungUp {
		r.end("the agent hung up")
		return nil
	}
	at := r.now()
	switch {
	case r.caps.DTMF:
		r.addEvent(Event{At: at, Type: EventDTMF, Turn: r.st.turn, Role: RoleUser, Text: digits})
		send := func(ctx context.Context) error { return r.conn.SendDTMF(ctx, digits) }
		if err := r.call(ctx, r.line("SendDTMF"), send); err != nil && !r.hungUpAfter(ctx, err) {
			return r.sendErr("sending DTMF", err)
		}
		return nil
	case r.caps.Audio:
		tones, err := dtmfTones(digits, r.cfg.Rate)
		if err != nil {
			return fmt.Errorf("generating in-band DTMF tones: %w", err)
		}
		r.addEvent(Event{At: at, Type: EventDTMF, Turn: r.st.turn, Role: RoleUser, Text: digits, Duration: tones.Duration()})
		if _, err := r.sendAudio(ctx, tones); err != nil {
			return err
		}
		r.segs = append(r.segs, Segment{Role: RoleUser, Turn: r.st.turn, Start: at, End: r.now(), Text: "DTMF " + digits, Audio: tones})
		return nil
	}
	return &UnsupportedError{Adapter: r.adapter(), Capability: "DTMF",
		Alternative: "the agent takes only text and has no DTMF events; send the digits as text with UserSays"}
}

// interrupt runs an Interrupt step: it barges in with u.
func (r *runner) interrupt(ctx context.Context, u Utterance, when InterruptWhen) error {
	content := u.Text
	if r.hungUp {
		r.end("the agent hung up")
		return nil
	}
	begin := r.now()
	speaking := func() bool {
		return r.hungUp || r.streamClosed || (r.seg != nil && r.seg.start <= r.now())
	}
	err := r.pump(ctx, speaking, func() time.Duration {
		if r.seg != nil { // queued behind audio still playing
			return max(begin+r.cfg.Timeouts.WaitForSpeech, r.seg.start)
		}
		return begin + r.cfg.Timeouts.WaitForSpeech
	})
	if err == errDeadline {
		return &TimeoutError{Phase: PhaseWaitSpeech, Timeout: r.cfg.Timeouts.WaitForSpeech, Turn: r.st.turn,
			Hint: "the agent did not start speaking, so there was nothing to interrupt; raise Config.Timeouts.WaitForSpeech or add an AgentTurn before"}
	}
	if err != nil {
		return err
	}
	if r.hungUp {
		return r.agentTurn(ctx, turnOptions{})
	}
	if r.streamClosed {
		return &TransportClosedError{Adapter: r.adapter()}
	}
	r.agentTurns++
	segStart := r.seg.start
	var cond func() bool
	var deadline func() time.Duration
	finished := false
	switch when.kind {
	case whenSpeechStarts:
		cond = func() bool { return true }
		deadline = func() time.Duration { return r.now() + time.Hour }
	case whenAfter:
		cond = func() bool { return r.now() >= segStart+when.after }
		deadline = func() time.Duration { return segStart + when.after }
	case whenWords:
		cond = func() bool {
			if r.spokenWords() >= when.words {
				return true
			}
			if r.turnEnds > 0 && r.now() >= r.playEnd {
				finished = true
				return true
			}
			return false
		}
		deadline = func() time.Duration {
			d := r.quietDeadline(begin)
			if r.estimatesWords() || r.countsHeard() {
				// Words are counted as the audio plays: the turn is not
				// over before what has arrived has played, whatever the
				// pacing (PaceFast does not wait for playback otherwise).
				d = max(d, r.playEnd)
			}
			if r.estimatesWords() {
				// The estimate grows with playback: wake when it reaches n.
				need := r.seg.start + time.Duration(when.words)*time.Minute/time.Duration(r.cfg.WordsPerMinute)
				d = min(d, max(need, r.now()+time.Millisecond))
			} else if r.countsHeard() {
				// So does the estimate of words heard, until the audio
				// received so far runs out.
				if need, ok := r.heardAt(when.words); ok {
					d = min(d, max(need, r.now()+time.Millisecond))
				}
			}
			return d
		}
	}
	err = r.pump(ctx, func() bool { return r.hungUp || cond() }, deadline)
	switch {
	case err == errDeadline && when.kind == whenWords:
		finished = true
	case err == errDeadline:
	case err != nil:
		return err
	}
	if r.hungUp {
		return r.closeAndEnd(ctx)
	}
	if finished {
		return r.finishedEarly(when)
	}
	at := r.now()
	r.interrupting, r.gotInterrupt, r.interruptAt = true, false, at
	defer func() { r.interrupting = false }()
	r.addEvent(Event{At: at, Type: EventUserInterrupt, Turn: r.st.turn, Role: RoleUser, Text: content})
	if r.seg != nil {
		r.seg.interrupted = true
	}
	if r.caps.NativeInterrupt {
		if err := r.call(ctx, r.line("Interrupt"), r.conn.Interrupt); err != nil && !r.hungUpAfter(ctx, err) {
			return r.sendErr("interrupting the agent", err)
		}
		r.clip(at)
	}
	if err := r.say(ctx, u); err != nil {
		return err
	}
	// The interrupted reply is over: close it, whatever came of it.
	// The agent stopped when it said so (AgentInterrupted), else when its
	// audio ran out.
	stop := r.playEnd
	if r.gotInterrupt {
		stop = r.interruptStop
		r.clip(stop)
	}
	stop = max(stop, at)
	resp := stop - at
	r.interrupts = append(r.interrupts, resp)
	r.turnEnds = 0
	if r.seg != nil {
		r.seg.interrupted = true
		if err := r.closeSpeech(ctx); err != nil {
			return err
		}
		// closeSpeech recorded agent_stop_speaking; without an
		// agent_interrupted event (which carries it) give it the response
		// time.
		for i := len(r.st.timeline) - 1; i >= 0 && !r.gotInterrupt; i-- {
			if r.st.timeline[i].Type == EventAgentStopSpeaking {
				r.st.timeline[i].Latency = resp
				break
			}
		}
		// The reply to the barge-in is measured from the user's end.
		r.awaitLatency = true
	} else if r.hasText {
		if err := r.closeSpeech(ctx); err != nil {
			return err
		}
	}
	if err := r.replay(); err != nil {
		return err
	}
	if r.hungUp {
		r.end("the agent hung up")
	}
	return nil
}

// replay handles the events deferred while a finished turn was recorded.
func (r *runner) replay() error {
	for len(r.deferred) > 0 && r.turnEnds == 0 {
		it := r.deferred[0]
		r.deferred = r.deferred[1:]
		r.undefer(it)
		if err := r.handle(it); err != nil {
			return err
		}
	}
	return nil
}

// flush records what the agent said that no step drained: speech still
// open when the script ended, and events already received.
func (r *runner) flush(ctx context.Context) error {
	if err := r.poll(); err != nil {
		return err
	}
	for {
		if err := r.closeSpeech(ctx); err != nil {
			return err
		}
		if len(r.deferred) == 0 {
			return nil
		}
		r.turnEnds = 0
		if err := r.replay(); err != nil {
			return err
		}
	}
}

func (r *runner) closeAndEnd(ctx context.Context) error {
	if err := r.flush(ctx); err != nil {
		return err
	}
	r.end("the agent hung up")
	return nil
}

// unrecorded reports whether the agent said something that no step has
// recorded yet: speech open, or deferred to the next turn.
func (r *runner) unrecorded() bool {
	if r.seg != nil || (r.hasText && strings.TrimSpace(r.agentText()) != "") {
		return true
	}
	for _, it := range r.deferred {
		switch it.ev.Kind {
		case AgentAudio:
			if !it.ev.Audio.IsEmpty() {
				return true
			}
		case AgentTranscript:
			if strings.TrimSpace(it.ev.Text) != "" {
				return true
			}
		}
	}
	return false
}

// estimatesWords reports whether spokenWords estimates from speech time:
// for audio without a transcript, and for a text-only agent, whose text
// arrives before it is "said".
func (r *runner) estimatesWords() bool {
	return r.seg != nil && (!r.hasText || r.seg.audio == 0)
}

// agentText returns the text of the agent's current turn so far.
func (r *runner) agentText() string {
	parts := append([]string(nil), r.committed...)
	if p := strings.TrimSpace(r.turnText.String()); p != "" {
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

// spokenWords returns how many words of its current turn the agent has
// said: counted in its transcript, estimated from its speech time, or, for
// a transcript that runs ahead of the audio, estimated from the share of
// the turn's audio played (heardWords).
func (r *runner) spokenWords() int {
	if r.seg == nil {
		return 0
	}
	if !r.estimatesWords() {
		if r.countsHeard() {
			return r.heardWords()
		}
		return r.textWords()
	}
	played := min(r.now(), r.playEnd) - r.seg.start
	return int(played * time.Duration(r.cfg.WordsPerMinute) / time.Minute)
}

// judge asks Config.Judge and records the criteria it answered.
func (r *runner) judge(ctx context.Context, req JudgeRequest, step string) (Judgment, error) {
	if r.cfg.Judge == nil {
		return Judgment{}, fmt.Errorf("%s needs Config.Judge; set it (e.g. judges.Criteria(...)) or remove the step", step)
	}
	if err := r.settle(ctx); err != nil {
		return Judgment{}, err
	}
	req.State = r.snapshot()
	req.Turn = r.st.turn
	req.MaxTurns = r.cfg.MaxTurns
	var v Judgment
	err := r.call(ctx, r.engine("Config.Judge", PhaseJudge), func(ctx context.Context) (err error) {
		v, err = r.cfg.Judge.Evaluate(ctx, req)
		return err
	})
	if err != nil {
		return Judgment{}, fmt.Errorf("asking Config.Judge (turn %d): %w", r.st.turn, err)
	}
	// Every criterion asked must be answered; a missing answer is
	// inconclusive, never a silent pass.
	for _, c := range req.Criteria {
		found := false
		for _, got := range v.Criteria {
			if got.Criterion == c {
				found = true
				break
			}
		}
		if !found {
			v.Criteria = append(v.Criteria, CriterionResult{Criterion: c, Status: StatusInconclusive, Reasoning: "the judge gave no answer for this criterion"})
		}
	}
	return v, nil
}

func (r *runner) record(v Judgment) {
	r.criteria = append(r.criteria, v.Criteria...)
}

func (r *runner) checkpoint(ctx context.Context, criteria []string) error {
	v, err := r.judge(ctx, JudgeRequest{Criteria: criteria}, "Checkpoint")
	if err != nil {
		return err
	}
	r.record(v)
	st := v.Status()
	r.addEvent(Event{At: r.now(), Type: EventJudgeCheckpoint, Turn: r.st.turn, Text: string(st) + ": " + summarize(v)})
	if st == StatusFail {
		return fmt.Errorf("%w: checkpoint: %s", ErrFailed, failures(v))
	}
	return nil
}

func (r *runner) finalVerdict(ctx context.Context) error {
	if r.verdict != nil {
		// Proceed's judge decided already: its verdict stands.
		r.logf("voicetest: %s: the judge already gave its final verdict (%s); it stands", r.step, r.verdict.Status())
		return nil
	}
	v, err := r.judge(ctx, JudgeRequest{Final: true}, "Verdict")
	if err != nil {
		return err
	}
	r.setVerdict(v)
	return nil
}

func (r *runner) setVerdict(v Judgment) {
	v.Decided = true
	r.record(v)
	r.verdict = &v
	st := v.Status()
	r.addEvent(Event{At: r.now(), Type: EventVerdict, Turn: r.st.turn, Text: string(st) + ": " + summarize(v)})
	r.decide(st == StatusPass, v.Reasoning)
	r.end("the judge gave its verdict")
}

func summarize(v Judgment) string {
	var parts []string
	for _, c := range v.Criteria {
		parts = append(parts, fmt.Sprintf("%s=%s", quote(c.Criterion), c.Status))
	}
	return strings.Join(parts, ", ")
}

func failures(v Judgment) string {
	var parts []string
	for _, c := range v.Criteria {
		if c.Status == StatusFail {
			s := fmt.Sprintf("criterion %q failed", c.Criterion)
			if c.Reasoning != "" {
				s += ": " + c.Reasoning
			}
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "; ")
}

func (r *runner) proceed(ctx context.Context, n int) error {
	if r.cfg.User == nil {
		return errors.New("Config.User is nil: Proceed asks the User for each utterance; set Config.User")
	}
	if !r.greeted && r.st.turn == 0 && r.agentTurns == 0 {
		r.greeted = true
		if err := r.agentTurn(ctx, turnOptions{greeting: true}); err != nil {
			return err
		}
	}
	for i := 0; n == 0 || i < n; i++ {
		if r.ended != "" || r.st.turn >= r.cfg.MaxTurns {
			break
		}
		u, err := r.askUser(ctx)
		if err != nil {
			return err
		}
		if err := r.userTurn(ctx, u, false); err != nil {
			return err
		}
		if r.ended != "" {
			break
		}
		barged, err := r.userInterrupts(ctx)
		if err != nil {
			return err
		}
		if r.ended != "" {
			break
		}
		if barged && r.hungUp {
			r.end("the agent hung up")
			break
		}
		if err := r.agentTurn(ctx, turnOptions{}); err != nil {
			return err
		}
		if r.ended != "" || r.cfg.Judge == nil {
			continue
		}
		final := r.st.turn >= r.cfg.MaxTurns
		v, err := r.judge(ctx, JudgeRequest{Final: final}, "Proceed")
		if err != nil {
			return err
		}
		if v.Decided || final {
			r.setVerdict(v)
			return nil
		}
	}
	return nil
}

// userInterrupts lets a User that implements Interrupter barge in on the
// agent's coming reply: when it decides to, its next utterance is said as
// Interrupt(text, After(d)) would say it. It reports whether the user
// barged in; the agent's reply to the barge-in is then still to come.
func (r *runner) userInterrupts(ctx context.Context) (bool, error) {
	ir, ok := r.cfg.User.(Interrupter)
	if !ok || r.hungUp || r.st.turn >= r.cfg.MaxTurns {
		return false, nil
	}
	if err := r.settle(ctx); err != nil {
		return false, err
	}
	var yes bool
	var after time.Duration
	st := r.snapshot()
	err := r.call(ctx, r.engine("Config.User's InterruptDecision", PhaseUser), func(context.Context) error {
		yes, after = ir.InterruptDecision(st)
		return nil
	})
	if err != nil {
		return false, err
	}
	if !yes {
		return false, nil
	}
	u, err := r.askUser(ctx)
	if err != nil {
		return false, fmt.Errorf("asking the interrupting Config.User for its barge-in: %w", err)
	}
	if u.Done {
		return false, r.userTurn(ctx, u, true)
	}
	if strings.TrimSpace(u.Text) == "" && u.Audio.IsEmpty() {
		// Nothing to say over the agent: let it answer.
		if u.HangUp {
			return false, r.userTurn(ctx, u, true)
		}
		return false, nil
	}
	if err := r.interrupt(ctx, u, After(max(after, 0))); err != nil {
		return true, fmt.Errorf("the user's barge-in %s after %v: %w", quote(u.Text), max(after, 0), err)
	}
	if u.HangUp && r.ended == "" {
		r.addEvent(Event{At: r.now(), Type: EventUserHangUp, Turn: r.st.turn, Role: RoleUser})
		r.end("the user hung up")
	}
	return true, nil
}

// finishedEarly is the error of an AfterWords barge-in whose turn ended
// before the agent said the words it waits for.
func (r *runner) finishedEarly(when InterruptWhen) error {
	said := r.spokenWords()
	if r.countsHeard() {
		// The turn is over, so every word of its text was said.
		said = r.textWords()
		played, total := r.playedAudio(r.now())
		rate := scale(int64(said), int64(time.Minute), int64(max(total, 1)))
		if said >= when.words && total > 0 && rate > int64(r.cfg.WordsPerMinute) {
			// The estimate of words heard lagged: the agent speaks
			// faster than Config.WordsPerMinute.
			return fmt.Errorf("the agent finished its turn of %d words (%v of audio) before voicetest reckoned %d of them heard: the %s adapter's transcript runs ahead of its audio, so the words heard are estimated from the audio played at no more than Config.WordsPerMinute (%d), and this agent spoke about %d words a minute; set Config.WordsPerMinute to the agent's rate, or use After(d)",
				said, total, when.words, r.adapter(), r.cfg.WordsPerMinute, rate)
		}
		if said >= when.words {
			return fmt.Errorf("the agent's turn of %d words ended after %v of its %v of audio had played, before %d of them were heard (the %s adapter's transcript runs ahead of its audio, so words count as their audio plays); interrupt a longer answer or use After(d)",
				said, played, total, when.words, r.adapter())
		}
	}
	return fmt.Errorf("the agent finished its turn after %d words, before the %d that %v waits for; lower the count or interrupt a longer answer", said, when.words, when)
}

// textWords returns the number of words in the agent's text of its
// current turn so far.
func (r *runner) textWords() int { return len(strings.Fields(r.agentText())) }

// countsHeard reports whether spokenWords estimates the words heard from
// a transcript that runs ahead of the audio (Capabilities.TranscriptAhead):
// the agent sent both text and audio in its current turn.
func (r *runner) countsHeard() bool {
	return r.caps.TranscriptAhead && r.seg != nil && r.hasText && r.seg.audio > 0
}

// playedAudio returns how much of the current segment's audio has played
// by t, and how much there is.
func (r *runner) playedAudio(t time.Duration) (played, total time.Duration) {
	for _, p := range r.seg.pieces {
		d := p.c.Duration()
		total += d
		played += min(max(t-p.at, 0), d)
	}
	return played, total
}

// wordSpan returns the length of audio that words of text are taken to
// fill, given the audio received so far: that audio, once the agent has
// marked the end of its turn (all its text and audio are in); until then
// more may come, so at least the words' length at Config.WordsPerMinute.
func (r *runner) wordSpan(words int, received time.Duration) time.Duration {
	if r.turnEnds > 0 {
		return received
	}
	return max(received, time.Duration(scale(int64(words), int64(time.Minute), int64(r.cfg.WordsPerMinute))))
}

// heardWords estimates how many words of a transcript that runs ahead of
// the audio the agent has said by now: the text's words spread evenly over
// wordSpan, of which the audio played so far has been heard. A word counts
// once its whole share has played, as the speech-time estimate counts it.
func (r *runner) heardWords() int {
	words := r.textWords()
	played, total := r.playedAudio(r.now())
	span := r.wordSpan(words, total)
	if span <= 0 {
		return 0
	}
	return int(scale(int64(words), int64(min(played, span)), int64(span)))
}

// heardAt returns when heardWords reaches n if no more events arrive, and
// false when it cannot without more text or audio.
func (r *runner) heardAt(n int) (time.Duration, bool) {
	words := r.textWords()
	if words < n {
		return 0, false
	}
	_, total := r.playedAudio(r.now())
	span := r.wordSpan(words, total)
	if span <= 0 {
		return 0, false
	}
	// words × played / span ≥ n  ⇔  played ≥ ⌈n × span / words⌉.
	need := time.Duration(scaleUp(int64(n), int64(span), int64(words)))
	var cum time.Duration
	for _, p := range r.seg.pieces {
		d := p.c.Duration()
		if cum+d >= need {
			return p.at + need - cum, true
		}
		cum += d
	}
	return 0, false
}

// scale returns a × b / c, rounded down, for non-negative a and b and a
// positive c, without overflowing in the product; a result beyond
// math.MaxInt64 saturates.
func scale(a, b, c int64) int64 {
	q, _ := mulDiv(a, b, c)
	return q
}

// scaleUp is scale rounded up.
func scaleUp(a, b, c int64) int64 {
	q, rem := mulDiv(a, b, c)
	if rem != 0 && q < math.MaxInt64 {
		q++
	}
	return q
}

// mulDiv returns a × b / c and its remainder (see scale).
func mulDiv(a, b, c int64) (q, rem int64) {
	if a <= 0 || b <= 0 || c <= 0 {
		return 0, 0
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return math.MaxInt64, 0
	}
	uq, ur := bits.Div64(hi, lo, uint64(c))
	if uq > math.MaxInt64 {
		return math.MaxInt64, 0
	}
	return int64(uq), int64(ur)
}
