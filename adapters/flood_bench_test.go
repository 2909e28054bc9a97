package adapters_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/wscodec"
	"github.com/voicetest-go/voicetest/internal/peers/floodpeer"
	"github.com/voicetest-go/voicetest/voicetest"
)

// heapSampler records the peak of the Go heap while a benchmark runs: the
// bytes of heap objects (live and not yet swept) and the live heap as of
// the last GC cycle, sampled every 2 ms.
type heapSampler struct {
	stop     chan struct{}
	done     sync.WaitGroup
	base     [2]uint64
	peak     [2]uint64
	mu       sync.Mutex
	samples  []metrics.Sample
	readings int
}

func startHeapSampler() *heapSampler {
	runtime.GC()
	s := &heapSampler{stop: make(chan struct{}), samples: []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}}
	metrics.Read(s.samples)
	s.base = [2]uint64{s.samples[0].Value.Uint64(), s.samples[1].Value.Uint64()}
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			s.read()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *heapSampler) read() {
	s.mu.Lock()
	defer s.mu.Unlock()
	metrics.Read(s.samples)
	for i := range s.peak {
		s.peak[i] = max(s.peak[i], s.samples[i].Value.Uint64())
	}
	s.readings++
}

// Stop ends sampling and returns the peaks above the start, in MiB.
func (s *heapSampler) Stop() (objects, live float64) {
	close(s.stop)
	s.done.Wait()
	s.read()
	mib := func(i int) float64 {
		if s.peak[i] < s.base[i] {
			return 0
		}
		return float64(s.peak[i]-s.base[i]) / (1 << 20)
	}
	return mib(0), mib(1)
}

// BenchmarkFloodScenario runs a scenario against an agent (the generic
// WebSocket adapter, raw PCM16 at 24 kHz) that floods 200 MB of audio as
// fast as loopback carries it, and reports the peak of the heap above its
// start. Two cases:
//
//   - reading: the runner drains the flood (an agent turn, then a pause
//     in which the audio keeps coming); it keeps at most
//     Timeouts.MaxTurnAudio of it a turn.
//   - busy: the runner is busy in user code (a Check) while the flood
//     arrives; the adapter's queue stops at WSOptions.MaxQueueBytes, and
//     the next step that listens (a pause) fails the scenario with a
//     *voicetest.LimitError.
//   - after-turn-end: the agent (the JSON codec, with turn_end) says a
//     five-second greeting, ends its turn, and floods audio while it
//     plays (real-time pacing); the runner keeps at most
//     Timeouts.MaxTurnAudio of it for the next turn, then fails the
//     scenario with a *voicetest.LimitError.
//
// Run it once per count: go test ./adapters -run '^$' -bench FloodScenario -benchtime 1x -count 5
func BenchmarkFloodScenario(b *testing.B) {
	const flood = 200 << 20
	frame := make([]byte, 4000) // 2000 samples: 83 ms at 24 kHz
	jsonAudio := func(d time.Duration) string {
		return fmt.Sprintf(`{"type":"audio","audio":%q,"sample_rate":24000}`, base64.StdEncoding.EncodeToString(make([]byte, 48*d.Milliseconds())))
	}
	for _, tc := range []struct {
		name  string
		steps func(peer *floodpeer.Peer) []voicetest.Step
		fails bool
		json  bool // JSON codec with turn_end, real-time pacing
	}{
		{"reading", func(*floodpeer.Peer) []voicetest.Step {
			return []voicetest.Step{voicetest.AgentTurn(), voicetest.Sleep(8 * time.Second)}
		}, false, false},
		{"busy", func(peer *floodpeer.Peer) []voicetest.Step {
			wait := voicetest.Check(func(*voicetest.State) error {
				select { // user code that takes its time, while the agent floods
				case <-peer.Done():
				case <-time.After(time.Minute):
				}
				return nil
			})
			return []voicetest.Step{voicetest.AgentTurn(), wait, voicetest.Sleep(time.Second)}
		}, true, false},
		{"after-turn-end", func(*floodpeer.Peer) []voicetest.Step {
			return []voicetest.Step{voicetest.AgentTurn()}
		}, true, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var objects, live, sent float64
			for b.Loop() {
				cfg := floodpeer.Config{Frame: frame, Binary: true, Bytes: flood}
				codec, pacing := wscodec.RawPCM(24000), voicetest.PaceFast
				if tc.json {
					// Five seconds of greeting and its turn end, then audio
					// messages while the greeting still plays.
					cfg = floodpeer.Config{Greeting: []string{jsonAudio(5 * time.Second), `{"type":"turn_end"}`}, Frame: []byte(jsonAudio(80 * time.Millisecond)), Bytes: flood}
					codec, pacing = wscodec.JSONBase64(wscodec.JSONOptions{TurnEnd: true, NativeVAD: true}), voicetest.PaceRealTime
				}
				peer := floodpeer.New(b, cfg)
				heap := startHeapSampler()
				_, err := voicetest.Run(b.Context(), voicetest.Config{
					Agent:  wscodec.New(peer.URL, codec),
					Script: tc.steps(peer), Pacing: pacing,
				})
				o, l := heap.Stop()
				objects, live = max(objects, o), max(live, l)
				sent = max(sent, float64(peer.Sent())/(1<<20))
				if failed := errors.Is(err, voicetest.ErrLimit); failed != tc.fails || !failed && err != nil {
					b.Fatalf("Run: %v (want a LimitError: %v)", err, tc.fails)
				}
			}
			b.ReportMetric(objects, "peak-heap-MiB")
			b.ReportMetric(live, "peak-live-MiB")
			b.ReportMetric(sent, "flooded-MiB")
		})
	}
}
