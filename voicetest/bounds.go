package voicetest

import (
	"context"
	"sync"
	"time"
)

// The runner's bounds on what it holds of the agent's output beyond the
// conversation it records (whose agent audio Timeouts.MaxTurnAudio bounds
// per turn):
//
//   - maxInFlightBytes: events received from Conn.Recv and not yet handled
//     (the runner is busy in a step: a judge, a TTS call, a Check). Past
//     it the runner stops calling Recv until it catches up, and the
//     adapter's own bound takes over (wire.WSOptions.MaxQueueBytes for the
//     WebSocket adapters), which fails the scenario with a *LimitError if
//     the agent keeps sending.
//   - Timeouts.MaxTurnAudio of agent audio, and maxDeferredBytes of other
//     events, received after the agent marked the end of a turn and
//     before that turn was recorded (it still plays, under real-time
//     pacing). Past either the scenario fails with a *LimitError.
const (
	maxInFlightBytes = 16 << 20
	maxDeferredBytes = 16 << 20
)

// recvGate bounds the bytes of events between the receive goroutine and
// the runner (AgentEvent.Size): receive acquires an event's size before it
// hands the event over, and the runner releases it when it takes the event.
type recvGate struct {
	mu   sync.Mutex
	used int64
	wake chan struct{} // capacity 1: something was released
	// local: only the runner's goroutine acquires and releases (fetch, for
	// a queuedConn), so the gate takes no lock and wakes nobody.
	local bool
}

func newRecvGate() *recvGate { return &recvGate{wake: make(chan struct{}, 1)} }

// newLocalGate returns the gate of a queuedConn's events, which only the
// runner's goroutine uses (tryAcquire in fetch, release in take).
func newLocalGate() *recvGate { return &recvGate{local: true} }

// acquire waits until n more bytes fit (an event larger than the bound
// passes alone), or ctx ends (false).
func (g *recvGate) acquire(ctx context.Context, n int64) bool {
	for {
		g.mu.Lock()
		if g.used == 0 || g.used+n <= maxInFlightBytes {
			g.used += n
			g.mu.Unlock()
			return true
		}
		g.mu.Unlock()
		select {
		case <-g.wake:
		case <-ctx.Done():
			return false
		}
	}
}

// release gives n bytes back. A nil gate does nothing.
// tryAcquire takes n bytes when they fit (an event larger than the bound
// passes alone), without waiting, and reports whether it did.
func (g *recvGate) tryAcquire(n int64) bool {
	if !g.local {
		g.mu.Lock()
		defer g.mu.Unlock()
	}
	if g.used == 0 || g.used+n <= maxInFlightBytes {
		g.used += n
		return true
	}
	return false
}

func (g *recvGate) release(n int64) {
	if g == nil {
		return
	}
	if g.local {
		g.used -= n
		return
	}
	g.mu.Lock()
	g.used -= n
	g.mu.Unlock()
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// deferredLoad is what the runner's deferred events hold.
type deferredLoad struct {
	audio time.Duration
	bytes int64 // of events other than audio
}

// deferItem keeps an event that arrived after the agent ended its turn,
// for the next turn, within the bounds: Timeouts.MaxTurnAudio of audio
// (more would be cut from the next turn anyway) and maxDeferredBytes of
// other events.
func (r *runner) deferItem(it recvItem) error {
	l := &r.deferLoad
	if it.ev.Kind == AgentAudio {
		l.audio += it.ev.Audio.Duration()
		if l.audio > r.cfg.Timeouts.MaxTurnAudio {
			return &LimitError{What: "agent audio received after the agent ended its turn, before that turn had played",
				Limit: r.cfg.Timeouts.MaxTurnAudio.Milliseconds(), Unit: "ms of audio",
				Name: "Config.Timeouts.MaxTurnAudio", Setting: "Config.Timeouts.MaxTurnAudio"}
		}
	} else {
		l.bytes += it.ev.Size()
		if l.bytes > maxDeferredBytes {
			return &LimitError{What: "agent events received after the agent ended its turn, before that turn had played",
				Limit: maxDeferredBytes, Unit: "bytes", Name: "the runner's bound on deferred events"}
		}
	}
	r.deferred = append(r.deferred, it)
	return nil
}

// undefer counts out an event taken from the deferred ones.
func (r *runner) undefer(it recvItem) {
	if it.ev.Kind == AgentAudio {
		r.deferLoad.audio -= it.ev.Audio.Duration()
	} else {
		r.deferLoad.bytes -= it.ev.Size()
	}
}

// The runner's bounds on what it keeps of the agent's events other than
// its speech and turn-taking (log lines, data, tool calls and results, its
// transcripts of the user), over a whole scenario: maxTurnEvents bounds
// the events of one turn, not the turns. Past maxSideEvents such events
// (or maxSideBytes of them, AgentEvent.Size), the timeline and the
// conversation items keep no more; past maxAgentLogLines, the agent's
// log lines (and the runner's lines about single agent events) are not
// written to the test's log. What is not kept is counted, logged at the
// end of the run and reported in Result.EventsNotKept and the failure
// report.
const (
	maxSideEvents    = 10_000
	maxSideBytes     = 16 << 20
	maxAgentLogLines = 1_000
)

// sideLoad is what the runner kept, and did not keep, of side events.
type sideLoad struct {
	kept      int
	bytes     int64
	notKept   int
	logged    int
	notLogged int
}

// keepSide reports whether the side event ev fits in the timeline, and
// counts it when it does not.
func (r *runner) keepSide(ev AgentEvent) bool {
	l := &r.side
	if size := ev.Size(); l.kept < maxSideEvents && l.bytes+size <= maxSideBytes {
		l.kept++
		l.bytes += size
		return true
	}
	if l.notKept == 0 {
		r.logf("voicetest: the %s agent sent more than the runner keeps of its log lines, data, tool calls and results and transcripts of the user (%d events or %d MiB per scenario): the timeline holds the first, the rest are counted", r.adapter(), maxSideEvents, maxSideBytes>>20)
	}
	l.notKept++
	return false
}

// agentLogf writes a line about one agent event to the test's log, up to
// maxAgentLogLines of them; the rest are counted.
func (r *runner) agentLogf(format string, args ...any) {
	l := &r.side
	if l.logged < maxAgentLogLines {
		l.logged++
		r.logf(format, args...)
		return
	}
	if l.notLogged == 0 {
		r.logf("voicetest: more than %d lines about the %s agent's events; the rest are not logged, but counted", maxAgentLogLines, r.adapter())
	}
	l.notLogged++
}

// reportSide logs, at the end of a run, what was not kept or logged.
func (r *runner) reportSide() {
	l := r.side
	if l.notKept == 0 && l.notLogged == 0 {
		return
	}
	r.logf("voicetest: %d agent events not kept in the timeline (the runner keeps %d log lines, data, tool calls and results and transcripts of the user, or %d MiB of them, per scenario), %d lines about agent events not logged (%d per scenario)",
		l.notKept, maxSideEvents, maxSideBytes>>20, l.notLogged, maxAgentLogLines)
}
