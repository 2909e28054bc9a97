package wire

import (
	"sync"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
)

func TestStats(t *testing.T) {
	var nilStats *Stats
	nilStats.FrameIn(3)
	nilStats.MarkEchoed(time.Second)
	if got := nilStats.Snapshot("x"); got != (voicetest.WireStats{Adapter: "x"}) {
		t.Errorf("nil Stats snapshot %+v", got)
	}
	var s Stats
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				s.FrameIn(10)
				s.FrameOut(20)
			}
		})
	}
	wg.Wait()
	s.MarkReceived()
	s.MarkReceived()
	s.MarkEchoed(300 * time.Millisecond)
	s.MarkEchoed(100 * time.Millisecond)
	s.MarkSent()
	s.Clear()
	s.Cancel()
	s.Dropped(3)
	got := s.Snapshot("twilio")
	want := voicetest.WireStats{Adapter: "twilio", FramesIn: 400, FramesOut: 400, BytesIn: 4000, BytesOut: 8000,
		MarksReceived: 2, MarksEchoed: 2, MarksSent: 1, Clears: 1, Cancels: 1, DroppedFrames: 3,
		MarkDelay: voicetest.Percentiles{N: 2, Mean: 200 * time.Millisecond, P50: 200 * time.Millisecond, P90: 300 * time.Millisecond,
			P95: 300 * time.Millisecond, P99: 300 * time.Millisecond, Max: 300 * time.Millisecond}}
	if got != want {
		t.Errorf("snapshot %+v\nwant %+v", got, want)
	}
	// The delays kept are bounded: the latest MaxMarkDelays.
	for i := range MaxMarkDelays + 10 {
		s.MarkEchoed(time.Duration(i) * time.Millisecond)
	}
	got = s.Snapshot("twilio")
	if got.MarksEchoed != MaxMarkDelays+12 || got.MarkDelay.N != MaxMarkDelays || got.MarkDelay.Max != time.Duration(MaxMarkDelays+9)*time.Millisecond {
		t.Errorf("after many echoes: %d echoed, delays over %d, max %v", got.MarksEchoed, got.MarkDelay.N, got.MarkDelay.Max)
	}
}
