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
}

func newRecvGate() *recvGate { return &recvGate{wake: make(chan struct{}, 1)} }

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
func (g *recvGate) release(n int64) {
	if g == nil {
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
