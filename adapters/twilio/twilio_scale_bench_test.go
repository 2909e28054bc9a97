package twilio_test

import (
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/twilio"
	"github.com/voicetest-go/voicetest/internal/peers/twiliobot"
	"github.com/voicetest-go/voicetest/voicetest"
)

// BenchmarkTwilio50Concurrent runs 50 scenarios at once, each on its own
// Twilio Media Streams WebSocket to one loopback bot (twiliobot), on the
// real clock: greeting, then three user turns and replies (300 ms of tone
// each way). The runner paces fast and the adapter's line is Fast, so the
// wall time is the bot's and the sockets' work, not audio playback. One op
// is the batch of 50; it reports wall time per scenario, allocation per
// scenario, cores busy, the p95 of the measured reply latency over every
// turn of the batch, and how many scenarios failed (should be 0).
func BenchmarkTwilio50Concurrent(b *testing.B) {
	const n = 50
	bot := twiliobot.New(b, twiliobot.Config{Greeting: 300 * time.Millisecond, ReplyDuration: 300 * time.Millisecond})
	cfg := func() voicetest.Config {
		a := twilio.New(bot.URL)
		a.Pacing = twilio.Fast
		a.EndSilence = 200 * time.Millisecond
		return voicetest.Config{
			Agent: a, UserVoice: adaptertest.ToneTTS{}, Pacing: voicetest.PaceFast,
			Script: []voicetest.Step{
				voicetest.AgentTurn(),
				voicetest.UserSays("one"), voicetest.AgentTurn(),
				voicetest.UserSays("two"), voicetest.AgentTurn(),
				voicetest.UserSays("three"), voicetest.AgentTurn(),
			},
		}
	}
	var ms runtime.MemStats
	var wall, cpu time.Duration
	var alloc uint64
	var latencies []time.Duration
	failed := 0
	b.ReportAllocs()
	for b.Loop() {
		runtime.ReadMemStats(&ms)
		alloc0 := ms.TotalAlloc
		cpu0, t0 := rusage(), time.Now()
		results := make([]*voicetest.Result, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { results[i], _ = voicetest.Run(b.Context(), cfg()) })
		}
		wg.Wait()
		wall += time.Since(t0)
		cpu += rusage() - cpu0
		runtime.ReadMemStats(&ms)
		alloc += ms.TotalAlloc - alloc0
		for _, r := range results {
			if r == nil || !r.Success {
				failed++
				if failed == 1 {
					b.Logf("a scenario failed: %v", r.Err)
				}
				continue
			}
			latencies = append(latencies, r.Latency.PerTurn...)
		}
	}
	lat := voicetest.Latency{PerTurn: latencies}
	lat.Summarize()
	ops := float64(b.N)
	b.ReportMetric(float64(wall.Microseconds())/ops/n, "wall-µs/scenario")
	b.ReportMetric(float64(alloc)/ops/n/(1<<20), "alloc-MB/scenario")
	b.ReportMetric(float64(cpu)/float64(wall), "cores-busy")
	b.ReportMetric(float64(lat.P95.Microseconds())/1000, "latency-p95-ms")
	b.ReportMetric(float64(failed), "failed")
	if failed > 0 {
		b.Errorf("%d of %d scenarios failed", failed, n*b.N)
	}
}

// rusage returns the process's CPU time, user and system.
func rusage() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
