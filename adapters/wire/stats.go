package wire

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
)

// MaxMarkDelays bounds the mark echo delays a Stats keeps for their
// percentiles: the latest ones (the counts keep counting past it).
const MaxMarkDelays = 4096

// Stats counts what crosses one Conn's wire, for voicetest.WireStats: the
// Conn counts every frame itself, and the protocol adapters count what
// only they can tell (marks, clears, cancels, audio they drop). A
// protocol adapter's Conn implements voicetest.WireStatsReporter by
// returning Snapshot. Its methods are safe for concurrent use; a nil
// *Stats ignores them.
type Stats struct {
	framesIn, framesOut, bytesIn, bytesOut atomic.Int64
	marksReceived, marksEchoed, marksSent  atomic.Int64
	clears, cancels, dropped               atomic.Int64
	mu                                     sync.Mutex
	delays                                 []time.Duration // the latest MaxMarkDelays
	next                                   int             // where the next delay goes once delays is full
}

// FrameIn counts a frame of n bytes received from the agent.
func (s *Stats) FrameIn(n int) {
	if s != nil {
		s.framesIn.Add(1)
		s.bytesIn.Add(int64(n))
	}
}

// FrameOut counts a frame of n bytes sent to the agent.
func (s *Stats) FrameOut(n int) {
	if s != nil {
		s.framesOut.Add(1)
		s.bytesOut.Add(int64(n))
	}
}

// MarkReceived counts a playback mark the agent sent (Twilio "mark").
func (s *Stats) MarkReceived() {
	if s != nil {
		s.marksReceived.Add(1)
	}
}

// MarkEchoed counts the echo of an agent's mark, delay after it arrived.
func (s *Stats) MarkEchoed(delay time.Duration) {
	if s == nil {
		return
	}
	s.marksEchoed.Add(1)
	s.mu.Lock()
	if len(s.delays) < MaxMarkDelays {
		s.delays = append(s.delays, delay)
	} else {
		s.delays[s.next] = delay
		s.next = (s.next + 1) % MaxMarkDelays
	}
	s.mu.Unlock()
}

// MarkSent counts a mark the caller sent of its own.
func (s *Stats) MarkSent() {
	if s != nil {
		s.marksSent.Add(1)
	}
}

// Clear counts the agent telling the caller to drop its queued audio.
func (s *Stats) Clear() {
	if s != nil {
		s.clears.Add(1)
	}
}

// Cancel counts the caller cancelling the agent's response.
func (s *Stats) Cancel() {
	if s != nil {
		s.cancels.Add(1)
	}
}

// Dropped counts n frames of the agent's that were not passed on.
func (s *Stats) Dropped(n int) {
	if s != nil {
		s.dropped.Add(int64(n))
	}
}

// Snapshot returns the counts so far, named after adapter.
func (s *Stats) Snapshot(adapter string) voicetest.WireStats {
	if s == nil {
		return voicetest.WireStats{Adapter: adapter}
	}
	s.mu.Lock()
	delays := voicetest.SummarizeDurations(s.delays)
	s.mu.Unlock()
	return voicetest.WireStats{
		Adapter:  adapter,
		FramesIn: s.framesIn.Load(), FramesOut: s.framesOut.Load(),
		BytesIn: s.bytesIn.Load(), BytesOut: s.bytesOut.Load(),
		MarksReceived: s.marksReceived.Load(), MarksEchoed: s.marksEchoed.Load(), MarkDelay: delays,
		MarksSent: s.marksSent.Load(),
		Clears:    s.clears.Load(), Cancels: s.cancels.Load(), DroppedFrames: s.dropped.Load(),
	}
}
