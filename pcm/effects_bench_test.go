package pcm

import (
	"testing"
	"time"
)

// BenchmarkEffectLibrary applies each effect of the library, with its
// defaults, to 10 s of speech-like audio at 24 kHz, and reports how many
// seconds of audio it processes per second of CPU (the real-time factor's
// inverse: 100× means 10 s of audio in 0.1 s).
func BenchmarkEffectLibrary(b *testing.B) {
	in := speechLike(Rate24k, 10*time.Second, 1)
	for _, info := range EffectLibrary() {
		b.Run(info.Name, func(b *testing.B) {
			e := info.New(1)
			cpu := startCPU(b)
			b.ReportAllocs()
			for b.Loop() {
				e(in)
			}
			cpu.report(b, float64(b.N)*10e6, "audio-s/cpu-s") // ×1e6 undoes report's millions
		})
	}
}

// BenchmarkSceneStream reads a cafe bed in 20 ms frames, as the runner
// does between turns, at 24 kHz.
func BenchmarkSceneStream(b *testing.B) {
	st := Cafe().Stream(Rate24k, -35, 1)
	n := SamplesFor(Rate24k, 20*time.Millisecond)
	cpu := startCPU(b)
	b.ReportAllocs()
	for b.Loop() {
		st.Read(n)
	}
	cpu.report(b, float64(b.N)*0.02e6, "audio-s/cpu-s")
}
