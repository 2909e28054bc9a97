package handler_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/handler"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// Issue 14, item 6: voicetest.Run outside a test (a plain main, a
// testing.B) runs an in-process agent on virtual time, as Scenario does
// inside a synctest bubble.

// tenTurnAgent answers "question number N" with a four-word answer after
// 300 ms of think time: a text agent whose speech takes 1.6 s a reply.
func tenTurnAgent() voicetest.Agent {
	return handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
		if te, ok := ev.(handler.TextEvent); ok {
			n := strings.TrimPrefix(te.Text, "question number ")
			return c.Say("Here is answer " + n)
		}
		return nil
	}, handler.WithThinkTime(300*time.Millisecond))
}

// tenTurnConfig is the ten-turn text scenario of the Run benchmark.
func tenTurnConfig(pace voicetest.Pacing) voicetest.Config {
	var steps []voicetest.Step
	for i := range 10 {
		steps = append(steps, voicetest.UserSays(fmt.Sprintf("question number %d", i+1)), voicetest.AgentTurn())
	}
	return voicetest.Config{Agent: tenTurnAgent(), Script: steps, Pacing: pace}
}

// TestRunOutsideABubbleIsVirtual runs the ten-turn scenario with Run on a
// goroutine of the test (no synctest bubble), as a plain program would:
// its times are those of virtual time, exactly, and identical on every
// run. (Wall time is measured by BenchmarkRunTenTurnsText, not asserted.)
func TestRunOutsideABubbleIsVirtual(t *testing.T) {
	think := 300 * time.Millisecond
	for _, tc := range []struct {
		pace      voicetest.Pacing
		duration  time.Duration
		latencies []time.Duration
	}{
		// Each turn: the user's 3 words (1.2 s), 300 ms of think time,
		// the agent's 4 words (1.6 s).
		{voicetest.PaceRealTime, 31 * time.Second, slices.Repeat([]time.Duration{think}, 10)},
		// PaceFast sends the user's text at once and ends a turn at the
		// agent's turn end, which comes once its speech has been said. The
		// first line comes while the agent still thinks about the start
		// (think time applies to every handler call): 600 ms.
		{voicetest.PaceFast, 19300 * time.Millisecond, append([]time.Duration{2 * think}, slices.Repeat([]time.Duration{think}, 9)...)},
	} {
		t.Run(tc.pace.String(), func(t *testing.T) {
			var first string
			for i := range 2 {
				done := make(chan struct{})
				var res *voicetest.Result
				var err error
				go func() { // not the test's goroutine: nothing of testing
					defer close(done)
					res, err = voicetest.Run(context.Background(), tenTurnConfig(tc.pace))
				}()
				<-done
				if err != nil {
					t.Fatal(err)
				}
				if res.Duration != tc.duration || res.Turns != 10 {
					t.Errorf("run %d: duration %v, %d turns; want exactly %v of virtual time, 10 turns", i, res.Duration, res.Turns, tc.duration)
				}
				if !slices.Equal(res.Latency.PerTurn, tc.latencies) {
					t.Errorf("run %d: latencies %v, want %v exactly (the think time)", i, res.Latency.PerTurn, tc.latencies)
				}
				if i == 0 {
					first = res.TimelineText()
				} else if got := res.TimelineText(); got != first {
					t.Errorf("the timeline differs between runs:\n%s\nfirst:\n%s", got, first)
				}
			}
		})
	}
}

// BenchmarkRunTenTurnsText is the wall time of voicetest.Run for the
// ten-turn text scenario (31 s of conversation) outside a synctest
// bubble.
func BenchmarkRunTenTurnsText(b *testing.B) {
	for _, pace := range []voicetest.Pacing{voicetest.PaceRealTime, voicetest.PaceFast} {
		b.Run(pace.String(), func(b *testing.B) {
			warmUp(b)
			b.ReportAllocs()
			ru := getRusage()
			for b.Loop() {
				res, err := voicetest.Run(context.Background(), tenTurnConfig(pace))
				if err != nil || res.Turns != 10 {
					b.Fatalf("%v, %d turns", err, res.Turns)
				}
			}
			reportRusage(b, ru)
		})
	}
}

// BenchmarkScenarioTenTurnsText is the same scenario through
// voicetest.Scenario inside a testing.B, which cannot make a synctest
// bubble: it too runs on the virtual Clock.
func BenchmarkScenarioTenTurnsText(b *testing.B) {
	warmUp(b)
	b.ReportAllocs()
	ru := getRusage()
	for b.Loop() {
		res := voicetest.Scenario(b, tenTurnConfig(voicetest.PaceRealTime))
		if res.Duration != 31*time.Second {
			b.Fatalf("duration %v, want 31s of virtual time", res.Duration)
		}
	}
	reportRusage(b, ru)
}

// warmUp runs the ten-turn scenario before a benchmark measures it: at
// least 20 times, and until the garbage collector has finished two
// cycles since (at most 2000 runs). The first runs of a process pay for
// what it does once (the heap growing to its working size, the first
// goroutines' stacks, the first collections and the scavenger returning
// what the start-up left), which would otherwise be charged to the
// benchmark that happens to run first: RunTenTurnsText/real_time took
// 216 µs against fast's 126 µs on the quiet machine of session 5, and
// still 218.7 against 127.7 cpu-µs in session 6 after 20 warm-up runs
// (fewer than one collection's worth: about 40 KB a run against the
// runtime's 4 MB minimum heap), while the two cost the same alone.
func warmUp(b *testing.B) {
	b.Helper()
	cycles := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(cycles)
	from := cycles[0].Value.Uint64()
	for i := 0; i < 2000; i++ {
		if res, err := voicetest.Run(context.Background(), tenTurnConfig(voicetest.PaceRealTime)); err != nil || res.Turns != 10 {
			b.Fatalf("warm-up: %v", err)
		}
		if i >= 20 {
			if metrics.Read(cycles); cycles[0].Value.Uint64() >= from+2 {
				return
			}
		}
	}
}

// BenchmarkScale100ParallelText runs 100 of the ten-turn text scenarios
// at once with voicetest.Run (one goroutine each, no synctest bubble), as
// BenchmarkScale100Parallel in voicetest does for audio scenarios. One op
// is the batch of 100. It reports the wall time per scenario, the bytes
// allocated per scenario, the most heap in use per scenario while the
// 100 run (sampled every 50 µs with runtime/metrics), and the heap still
// live per scenario while all 100 results are held (runtime.MemStats
// around each batch).
func BenchmarkScale100ParallelText(b *testing.B) {
	const n = 100
	var ms runtime.MemStats
	var wall time.Duration
	var alloc, live, peak uint64
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		alloc0, live0 := ms.TotalAlloc, ms.HeapAlloc
		b.StartTimer()
		start := time.Now()
		results := make([]*voicetest.Result, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		stop, sampled := make(chan struct{}), make(chan uint64)
		go func() { // the peak of the heap while the batch runs
			h0, most := heap(), uint64(0)
			tick := time.NewTicker(50 * time.Microsecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					most = max(most, heap())
					sampled <- most - min(h0, most)
					return
				case <-tick.C:
					most = max(most, heap())
				}
			}
		}()
		for i := range n {
			wg.Go(func() {
				results[i], errs[i] = voicetest.Run(context.Background(), tenTurnConfig(voicetest.PaceRealTime))
			})
		}
		wg.Wait()
		wall += time.Since(start)
		b.StopTimer()
		close(stop)
		peak += <-sampled
		for i, err := range errs {
			if err != nil || results[i].Turns != 10 || results[i].Duration != 31*time.Second {
				b.Fatalf("scenario %d: %v", i, err)
			}
		}
		runtime.ReadMemStats(&ms)
		alloc += ms.TotalAlloc - alloc0
		runtime.GC()
		runtime.ReadMemStats(&ms)
		live += ms.HeapAlloc - min(live0, ms.HeapAlloc)
		runtime.KeepAlive(results)
		b.StartTimer()
	}
	ops := float64(b.N) * n
	b.ReportMetric(float64(wall.Microseconds())/ops, "wall-µs/scenario")
	b.ReportMetric(float64(alloc)/ops/1024, "alloc-KiB/scenario")
	b.ReportMetric(float64(live)/ops/1024, "live-KiB/scenario")
	b.ReportMetric(float64(peak)/ops/1024, "peak-KiB/scenario")
}

// An audio-mode agent under Run: its speech is paced in 20 ms frames on
// the virtual clock, and the conversation has the timeline it has inside
// a synctest bubble, to the nanosecond.
func TestRunAudioModeMatchesTheBubble(t *testing.T) {
	cfg := func() voicetest.Config {
		return voicetest.Config{
			Agent:     handler.New(echoHandler(true), handler.AudioMode(fixtures.FakeTTS(), fixtures.FakeSTT()), handler.WithThinkTime(250*time.Millisecond)),
			UserVoice: fixtures.FakeTTS(),
			Script: []voicetest.Step{
				voicetest.AgentTurn(),
				voicetest.UserSays("A table for two."),
				voicetest.AgentTurn(),
				voicetest.Silence(2 * time.Second),
				voicetest.UserSays("At seven."),
				voicetest.AgentTurn(),
			},
		}
	}
	var bubbled *voicetest.Result
	synctest.Test(t, func(t *testing.T) {
		var err error
		bubbled, err = voicetest.Run(t.Context(), cfg())
		if err != nil {
			t.Fatal(err)
		}
	})
	res, err := voicetest.Run(context.Background(), cfg())
	if err != nil {
		t.Fatal(err)
	}
	if res.Duration != bubbled.Duration || res.TimelineText() != bubbled.TimelineText() || res.TranscriptText() != bubbled.TranscriptText() {
		t.Errorf("Run outside a bubble: %v\n%s\n%s\ninside one: %v\n%s\n%s", res.Duration, res.TranscriptText(), res.TimelineText(),
			bubbled.Duration, bubbled.TranscriptText(), bubbled.TimelineText())
	}
	if !slices.Equal(res.Latency.PerTurn, []time.Duration{250 * time.Millisecond, 250 * time.Millisecond}) {
		t.Errorf("latencies %v, want the think time", res.Latency.PerTurn)
	}
}

// A background task that waits on something of its own (here a channel
// the test closes) is work the clock cannot see through: while it lasts
// the conversation runs on the real clock, and Run still finishes.
func TestRunWithATaskThatBlocksOnItsOwn(t *testing.T) {
	release := make(chan struct{})
	agent := handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
		switch ev.(type) {
		case handler.StartEvent:
			return c.Go("waiter", func(ctx context.Context, c *handler.Call) error {
				select {
				case <-release:
				case <-ctx.Done():
				}
				return nil
			})
		case handler.TextEvent:
			return c.Say("Yes.")
		}
		return nil
	})
	time.AfterFunc(50*time.Millisecond, func() { close(release) })
	res, err := voicetest.Run(context.Background(), voicetest.Config{
		Agent:  agent,
		Script: []voicetest.Step{voicetest.UserSays("Hello?"), voicetest.AgentTurn(), voicetest.Sleep(time.Minute)},
	})
	if err != nil || res.State.LastAgentText() != "Yes." {
		t.Fatalf("err %v, last agent text %q", err, res.State.LastAgentText())
	}
	// After the task ended the agent went idle: the minute of Sleep was
	// skipped, not waited.
	if res.Duration < time.Minute {
		t.Errorf("duration %v, want the minute of sleep in it", res.Duration)
	}
}

// A task that waits for the end of the call keeps the agent busy from
// start to end: the conversation runs on the real clock (its speech plays
// in real time) and still completes.
func TestRunWithATaskForTheWholeCall(t *testing.T) {
	agent := handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
		switch ev.(type) {
		case handler.StartEvent:
			return c.Go("watch", func(ctx context.Context, c *handler.Call) error {
				<-ctx.Done()
				return nil
			})
		case handler.TextEvent:
			return c.Say("Yes.")
		}
		return nil
	}, handler.WithWordsPerMinute(6000)) // 10 ms a word: a short real-time wait
	res, err := voicetest.Run(context.Background(), voicetest.Config{
		Agent: agent, Pacing: voicetest.PaceFast,
		Script: []voicetest.Step{voicetest.UserSays("Hello?"), voicetest.AgentTurn(), voicetest.UserSays("Sure?"), voicetest.AgentTurn()},
	})
	if err != nil || res.TranscriptText() != "user: Hello?\nagent: Yes.\nuser: Sure?\nagent: Yes.\n" {
		t.Fatalf("err %v, transcript:\n%s", err, res.TranscriptText())
	}
	for _, m := range res.Transcript {
		if m.Role == voicetest.RoleAgent && m.End-m.Start < 10*time.Millisecond {
			t.Errorf("agent message %+v: its 10ms of speech must have played", m)
		}
	}
}
