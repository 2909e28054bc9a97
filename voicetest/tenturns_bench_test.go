package voicetest_test

import (
	"flag"
	"runtime"
	"runtime/metrics"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// tenTurnsVoice is the configuration of TestScenarioTenTurnsOnVirtualTime:
// a fixtures.ScriptedAgent (latencies 100 ms … 1 s, replies streamed word
// by word), the user's words spoken by toneTTS and paced in real time
// (20 ms frames), a 2 s Sleep after every turn: 73.5 s of conversation.
// Each call makes a new agent and TTS, as a test does.
func tenTurnsVoice() voicetest.Config {
	return voicetest.Config{
		Agent:     fixtures.ScriptedAgent(tenReplies(func(i int) time.Duration { return time.Duration(100*(i+1)) * time.Millisecond })...),
		UserVoice: &toneTTS{},
		Script:    tenTurns(),
	}
}

// checkTenTurnsVoice fails tb unless res holds the exact virtual figures
// of tenTurnsVoice.
func checkTenTurnsVoice(tb testing.TB, res *voicetest.Result, err error) {
	tb.Helper()
	if err != nil || res.Duration != 73500*time.Millisecond || res.Turns != 10 || !res.Success {
		tb.Fatalf("err %v, duration %v, turns %d; want 73.5s, 10 turns", err, res.Duration, res.Turns)
	}
	if l := res.Latency; len(l.PerTurn) != 10 || l.Mean != 550*time.Millisecond || l.P50 != 550*time.Millisecond || l.P95 != time.Second {
		tb.Fatalf("latency %+v, want mean 550ms, p50 550ms, p95 1s", l)
	}
}

// BenchmarkRunTenTurnsVoice runs the ten-turn voice scenario of
// TestScenarioTenTurnsOnVirtualTime through voicetest.Run outside a
// synctest bubble, as a plain program or a benchmark does: the fixtures
// agents keep the runner's virtual Clock (Capabilities.SessionClock), so
// 73.5 s of conversation cost no wall time beyond the work.
// Besides the wall time (ns/op) it reports the process's CPU time per
// run (cpu-ns/op, GC included), which a shared, busy machine inflates
// less than the wall time.
func BenchmarkRunTenTurnsVoice(b *testing.B) {
	b.ReportAllocs()
	cpu0 := processCPU()
	for b.Loop() {
		res, err := voicetest.Run(b.Context(), tenTurnsVoice())
		checkTenTurnsVoice(b, res, err)
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// TestRunTenTurnsVoiceOutsideABubbleIsVirtual: outside a bubble, Run with
// a fixtures agent runs on the runner's virtual Clock, and records the
// timeline that the bubble records.
func TestRunTenTurnsVoiceOutsideABubbleIsVirtual(t *testing.T) {
	// Exact figures: the real clock would give 73.5 s and more, and
	// latencies off by its jitter.
	res, err := voicetest.Run(t.Context(), tenTurnsVoice())
	checkTenTurnsVoice(t, res, err)
	var inBubble *voicetest.Result
	synctest.Test(t, func(t *testing.T) {
		inBubble, err = voicetest.Run(t.Context(), tenTurnsVoice())
	})
	checkTenTurnsVoice(t, inBubble, err)
	if got, want := res.TimelineText(), inBubble.TimelineText(); got != want {
		t.Errorf("timeline outside a bubble:\n%s\nin a bubble:\n%s", got, want)
	}
	if got, want := res.TranscriptText(), inBubble.TranscriptText(); got != want {
		t.Errorf("transcript outside a bubble:\n%s\nin a bubble:\n%s", got, want)
	}
}

var bubbleRuns = flag.Int("tenturns.bubbleruns", 0,
	"measure this many runs of the ten-turn voice scenario, each in its own synctest bubble (TestScenarioTenTurnsInBubbleCost)")

// TestScenarioTenTurnsInBubbleCost measures what TestScenarioTenTurnsOnVirtualTime
// costs: with -tenturns.bubbleruns=N it runs tenTurnsVoice through
// Scenario, each run in a synctest bubble of its own as that test does
// (golden files off: they are that test's), five times to warm the heap
// up and then N times, and logs the median, fastest and slowest wall time
// per run, the median of the process's CPU time per run (GC included),
// the GC cycles and bytes allocated per run, and the median wall time of
// the runs that no GC cycle ran in and of the others. A single run in a fresh
// process, the figure TestScenarioTenTurnsOnVirtualTime used to log,
// pays for the heap's first growth (page faults, the first GCs): it
// measured the process more than the run. Logged, never asserted.
func TestScenarioTenTurnsInBubbleCost(t *testing.T) {
	n := *bubbleRuns
	if n <= 0 {
		t.Skip("set -tenturns.bubbleruns=N to measure N runs of the ten-turn voice scenario in a bubble")
	}
	run := func() {
		cfg := tenTurnsVoice()
		cfg.Golden.Disable = true
		res := voicetest.Scenario(t, cfg)
		checkTenTurnsVoice(t, res, res.Err)
	}
	for range 5 {
		run()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cycles := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	gcCycles := func() uint64 {
		metrics.Read(cycles)
		return cycles[0].Value.Uint64()
	}
	walls, cpus := make([]time.Duration, n), make([]time.Duration, n)
	var noGC, withGC []time.Duration // wall times of runs without and with a GC cycle
	for i := range n {
		start, cpu, gc := time.Now(), processCPU(), gcCycles()
		run()
		walls[i], cpus[i] = time.Since(start), processCPU()-cpu
		if gcCycles() == gc {
			noGC = append(noGC, walls[i])
		} else {
			withGC = append(withGC, walls[i])
		}
	}
	runtime.ReadMemStats(&after)
	median := func(d []time.Duration) time.Duration {
		if len(d) == 0 {
			return 0
		}
		slices.Sort(d)
		return d[len(d)/2]
	}
	wall, cpu := median(walls), median(cpus) // walls sorted from here on
	t.Logf("ten-turn voice scenario in a bubble, %d warm runs: wall median %v (fastest %v, slowest %v), process CPU median %v; %.2f GC cycles and %d bytes allocated a run; wall median of the %d runs no GC cycle ran in %v, of the %d others %v",
		n, wall, walls[0], walls[n-1], cpu, float64(after.NumGC-before.NumGC)/float64(n), (after.TotalAlloc-before.TotalAlloc)/uint64(n),
		len(noGC), median(noGC), len(withGC), median(withGC))
}
