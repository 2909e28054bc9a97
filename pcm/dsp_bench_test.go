package pcm

import (
	"runtime"
	"testing"
	"time"
)

// reportSamples reports samples per second, of wall time and of the
// benchmark thread's CPU time (see startCPU), for n samples per iteration.
func reportSamples(b *testing.B, cpu *cpuClock, n int) {
	b.Helper()
	b.ReportMetric(float64(b.N)*float64(n)/b.Elapsed().Seconds()/1e6, "Msamples/s")
	cpu.report(b, float64(b.N)*float64(n), "Msamples/cpu-s")
}

// cpuClock measures the CPU time of one benchmark's loop on its own OS
// thread; see threadCPU.
type cpuClock struct {
	start time.Duration
	ok    bool
}

// startCPU locks the goroutine to its thread (until the benchmark ends)
// and starts measuring.
func startCPU(b *testing.B) *cpuClock {
	b.Helper()
	runtime.LockOSThread()
	b.Cleanup(runtime.UnlockOSThread)
	c := &cpuClock{}
	c.start, c.ok = threadCPU()
	return c
}

// report adds metric unit: count per CPU-second, in millions.
func (c *cpuClock) report(b *testing.B, count float64, unit string) {
	b.Helper()
	end, ok := threadCPU()
	if !c.ok || !ok || end <= c.start {
		return
	}
	b.ReportMetric(count/(end-c.start).Seconds()/1e6, unit)
}

func BenchmarkMixInto(b *testing.B) {
	src := tone(Rate24k, 440, 8000, 0, Rate24k)
	dst := tone(Rate24k, 300, 8000, 0, Rate24k)
	for _, g := range []struct {
		name string
		gain float64
	}{{"unity", 1}, {"gain0.5", 0.5}} {
		b.Run(g.name, func(b *testing.B) {
			b.SetBytes(int64(2 * len(src)))
			b.ReportAllocs()
			cpu := startCPU(b)
			for b.Loop() {
				MixInto(dst, src, g.gain)
			}
			reportSamples(b, cpu, len(src))
		})
	}
}

// BenchmarkMix is the allocating Chunk form: a 1 s user turn over 1 s of
// agent audio, half overlapping.
func BenchmarkMix(b *testing.B) {
	agent := Chunk{Rate: Rate24k, Samples: tone(Rate24k, 300, 8000, 0, Rate24k)}
	user := Chunk{Rate: Rate24k, Samples: tone(Rate24k, 440, 8000, 0, Rate24k)}
	b.SetBytes(int64(2 * len(user.Samples)))
	b.ReportAllocs()
	cpu := startCPU(b)
	for b.Loop() {
		if _, err := Mix(agent, user, 500*time.Millisecond); err != nil {
			b.Fatal(err)
		}
	}
	reportSamples(b, cpu, len(user.Samples))
}

// BenchmarkEffects applies each effect to 1 s of speech-like audio at 24 kHz.
func BenchmarkEffects(b *testing.B) {
	in := speechLike(Rate24k, time.Second, 1)
	talkers := testTalkers()
	effects := []struct {
		name string
		e    Effect
	}{
		{"Gain", Gain(-6)},
		{"Normalize", Normalize(-26)},
		{"WhiteNoise", WhiteNoise(10, 1)},
		{"PinkNoise", PinkNoise(10, 1)},
		{"BrownNoise", BrownNoise(10, 1)},
		{"Babble", Babble(talkers, 10, 1)},
		{"TelephoneBand", TelephoneBand()},
		{"Clip", Clip(-12)},
		{"PacketLoss", PacketLoss(0.1, 20*time.Millisecond, 1)},
	}
	for _, e := range effects {
		b.Run(e.name, func(b *testing.B) {
			b.SetBytes(int64(2 * len(in.Samples)))
			b.ReportAllocs()
			cpu := startCPU(b)
			for b.Loop() {
				e.e(in)
			}
			reportSamples(b, cpu, len(in.Samples))
		})
	}
}

func BenchmarkActiveRMS(b *testing.B) {
	in := speechLike(Rate24k, time.Second, 1)
	b.SetBytes(int64(2 * len(in.Samples)))
	b.ReportAllocs()
	cpu := startCPU(b)
	for b.Loop() {
		ActiveRMS(in)
	}
	reportSamples(b, cpu, len(in.Samples))
}
