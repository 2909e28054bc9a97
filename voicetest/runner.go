package voicetest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// errDeadline is pump's report that the deadline passed.
var errDeadline = errors.New("deadline")

// runner holds one run of a scenario. All of its fields are used by the
// goroutine that runs the script; the receiver goroutine only sends on
// events.
//
// # How a run goes
//
// Two goroutines share a run. receive (runner_receive.go) calls Conn.Recv
// in a loop and queues each event, stamped with its offset and with how
// many user utterances had begun (said), on events. (A Conn of this module
// whose events wait in process, the handler agent's, is read on the
// runner's virtual Clock by the script goroutine itself: fetch queues its
// events as receive would, stamped the same, since that time moves only
// when the runner jumps it; see queuedConn.) The script goroutine
// runs the steps (run.go, steps.go) and owns every field below. Agent
// events change the runner's state only in handle (runner_events.go), and
// handle runs only while a step waits: in pump, which waits for events,
// deadlines and, on a virtual clock, jumps the time when the agent is idle,
// or in poll, which takes what is already queued. Time passes for the
// runner nowhere else. On virtual time poll first waits (catchUp) until
// the agent has done all it does at this instant and all it sent is
// queued (in a synctest bubble, until every other goroutine of the bubble
// is blocked; on the runner's Clock, until the agent says it is idle), so
// what the runner sees at an instant is the same on every run, whatever
// the scheduler did.
//
// # The turn state machine
//
// A conversation alternates between the user's and the agent's turns; the
// state is what the fields under "agent turn state" hold:
//
//	           UserSays / UserTurn (say)
//	 waiting ───────────────────────────▶ user speaking
//	    ▲                                      │ last frame sent (userEnd),
//	    │                                      │ awaitLatency set
//	    │ closeSpeech, replay                  ▼
//	turn over ◀──── agent speaking ◀──── awaiting the agent
//	  (turnEnds>0,      (seg != nil)        (AgentTurn: FirstChunk,
//	   quiet, or                              or Greeting for the first)
//	   MaxTurnAudio)
//
// The states:
//
//   - Waiting: between steps events queue on events (bounded, bounds.go);
//     runScript polls them before a step that uses the line (a hang-up
//     that has arrived ends the line there), and the next step that waits
//     handles the rest.
//   - User speaking (say, runner_user.go): userSpeaking is set and said
//     counts the utterance; audio goes out in 20 ms frames, and the agent's
//     events are handled between frames, so speech the agent starts over the
//     user (a greeting, late audio) lands in its segment, not the user's.
//     When the last frame is out the user has stopped (userEnd), and the
//     agent's next stretch of speech measures its latency from there.
//   - Awaiting the agent (agentTurn, runner_agent_turn.go): pump until
//     speech starts (seg), a turn end, a hang-up or a closed stream, for at
//     most Timeouts.FirstChunk (Timeouts.Greeting for the greeting, whose
//     absence is no error).
//   - Agent speaking (speak, runner_agent_speech.go): each piece of audio
//     (or a text-only agent's speech time) plays after what is queued
//     (playEnd); the first opens a segment and records
//     agent_start_speaking. The turn is over at the adapter's AgentTurnEnd
//     (turnEnds, once the audio has played on real-time pacing), after
//     Timeouts.TailSilence of quiet since the agent's last act on its turn
//     (Timeouts.FirstChunk when the adapter marks turn ends), or at
//     Timeouts.MaxTurnAudio of audio.
//   - Turn over: closeSpeech records the message, the segment and
//     agent_stop_speaking (an agent STT runs beside the conversation,
//     runner_transcribe.go, and settle fills its text in before anything
//     reads the conversation). Events that arrived after the turn end
//     were deferred to the next turn (deferItem, bounds.go); replay
//     handles them now, and the next turn starts from them.
//
// A turn end that carries no word and came before the user's latest
// utterance was over is not a reply: it is ignored (handle), or, taken
// before the user began, dropped when the user begins (dropSilentTurnEnd). A hang-up
// ends the conversation from any state (end); flush records what the
// agent said that no step drained.
//
// A barge-in (interrupt, runner_bargein.go) leaves the agent speaking
// state early: it waits for the agent to start (Timeouts.WaitForSpeech)
// and for its InterruptWhen (speech starts, After a time, AfterWords, as
// counted in runner_words.go), then sends a native Interrupt if the
// adapter has one, says the user's line, and closes the interrupted
// segment at the time the agent stopped. Proceed (runner_proceed.go)
// runs these steps in a loop for a User, with the judge deciding after
// each turn (runner_judge.go).
type runner struct {
	cfg    Config
	conn   Conn
	caps   Capabilities
	clock  *vclock // the conversation's time; virtual only when shared with the agent
	bubble bool    // the run is inside a synctest bubble
	start  time.Time
	logf   func(format string, args ...any)
	events <-chan *recvItem
	took   int64           // events taken from events (not errors), for clock.quiet
	listen *atomic.Int64   // see receive
	said   *atomic.Int64   // user utterances begun, for receive to stamp
	queued <-chan struct{} // signalled by receive when it has queued an event
	// beforeFetch, set only by tests, runs in pump between its look at
	// the agent (quiet) and its fetch: where another goroutine's Idle may
	// come (TestPumpLooksAgainAfterATakenIdle).
	beforeFetch func()
	direct      *direct // receives from a queuedConn instead of receive
	prompt      bool    // the Conn is a promptConn (send)
	promptEnd   bool    // the Conn is a promptEnder (endUtterance)
	// pump's real-time bound on a wait (armWait): timer signals wake
	// when due, waitDue after realBase (0: not armed)
	timer    *time.Timer
	wake     chan struct{}
	realBase time.Time
	waitDue  time.Duration
	stray    *strays      // callees left running at their bound (callee.go)
	sender   *audioSender // calls SendAudio (sender.go)
	view     *State       // the copy of st callees read (snapshot)

	st   State
	segs []Segment

	// for catchUp: closed when receive has returned; the agent on the
	// virtual Clock outlasted a wait and has not been idle since
	received    <-chan struct{}
	agentAtWork bool

	// outcome
	ended      string // why the conversation ended before the script did
	endReason  string // ended, with when, for the steps it skips
	stopped    string // why the script stopped (Succeed), with where
	stepAt     int    // the step running, 1-based (0: none yet); see stepName
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
	userGone     bool // the user hung up: agent speech from userGoneAt on is not heard
	userGoneAt   time.Duration
	hangUpReason string
	hangUpTurn   int
	hangUpStep   string // the step during which the agent hung up
	streamClosed bool
	closeErr     error

	// agent turn state
	seg          *agentSpeech
	spareSeg     *agentSpeech // a closed segment's struct, for the next (speak)
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

	// bg plays Config.Background (background.go)
	bg *bgPlayer
}

func (r *runner) now() time.Duration {
	c := r.clock
	if c == nil {
		return time.Since(r.start)
	}
	if !c.real.Load() {
		// Virtual: the clock's offset from its base, r.start's.
		return time.Duration(c.offset.Load()) - r.start.Sub(c.base)
	}
	return c.Now().Sub(r.start)
}

// armWait makes sure that pump's wait for at most d of real time from
// now is woken by then, and returns now (real time since r.realBase). A
// timer signals r.wake, the channel pump waits on with the others (on a
// virtual clock, the clock's idle channel, so that the wait has one case
// less). The timer is not stopped when a wait ends otherwise, nor moved
// for a later wait: it is reset only when it would fire too late or may
// have fired, so most waits cost no timer operation; a wake that comes
// too early, or that is no timer's, is one more turn of pump's loop,
// which reads the time (wokeAfter).
func (r *runner) armWait(d time.Duration, virtual bool) time.Duration {
	if r.timer == nil {
		r.realBase = time.Now()
		if virtual {
			r.wake = r.clock.idleC
		} else {
			r.wake = make(chan struct{}, 1)
		}
		wake := r.wake
		r.timer = time.AfterFunc(d, func() {
			select {
			case wake <- struct{}{}:
			default:
			}
		})
		r.waitDue = d
		return 0
	}
	now := time.Since(r.realBase)
	if due := now + d; r.waitDue == 0 || due < r.waitDue || now >= r.waitDue {
		// Not armed, armed too late, or it may have fired and its
		// signal been taken by another wait (catchUp) or another turn.
		r.timer.Reset(d)
		r.waitDue = due
	}
	return now
}

// wokeAfter reports whether at least d of real time has passed since
// waited (armWait's now).
func (r *runner) wokeAfter(waited, d time.Duration) bool {
	now := time.Since(r.realBase)
	if r.waitDue != 0 && now >= r.waitDue {
		r.waitDue = 0 // it fired
	}
	return now-waited >= d
}

// stepName names the step running, as "step N Name()" ("" before the
// first step). It is put together only when needed: steps are frequent.
func (r *runner) stepName() string {
	if r.stepAt == 0 {
		return ""
	}
	return "step " + strconv.Itoa(r.stepAt) + " " + r.cfg.Script[r.stepAt-1].String()
}

func (r *runner) realTime() bool { return r.cfg.Pacing == PaceRealTime }

func (r *runner) adapter() string {
	if r.caps.Adapter == "" {
		return "agent"
	}
	return r.caps.Adapter
}

func (r *runner) addEvent(e Event) { r.st.timeline = append(r.st.timeline, e) }

func (r *runner) addItem(e Event) {
	if r.st.items == nil {
		// Room for about one item a step (the agent's messages), made
		// with the first: a run with none keeps nil items.
		r.st.items = make([]Event, 0, len(r.cfg.Script)+2)
	}
	r.st.items = append(r.st.items, e)
}

func (r *runner) decide(success bool, reason string) {
	r.decided = true
	r.success = success
	r.reason = reason
}

// end marks the conversation over: the remaining steps that need the
// line are not run (or, after the agent's hang-up, fail).
// userHangsUp records the user's hang-up now (text says why, if not
// said) and ends the conversation. From this instant the line is closed
// for the user: speech the agent starts at or after it is not heard
// (handle drops it), however fast the agent answers and whenever its
// answer is read, so a goodbye answered at once reads the same on every
// run.
func (r *runner) userHangsUp(text string) {
	now := r.now()
	r.addEvent(Event{At: now, Type: EventUserHangUp, Turn: r.st.turn, Role: RoleUser, Text: text})
	if !r.userGone {
		r.userGone, r.userGoneAt = true, now
	}
	r.end("the user hung up")
}

func (r *runner) end(why string) {
	if r.ended == "" {
		r.ended = why
		r.endReason = fmt.Sprintf("%s at %s", why, fmtOffset(r.now()))
		if r.stepAt > 0 {
			r.endReason += " (" + r.stepName() + ")"
		}
	}
}
