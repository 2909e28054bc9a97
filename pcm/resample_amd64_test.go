//go:build amd64 && !purego

package pcm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotGoMatchesSSE proves that the portable kernel, used on every other
// architecture, gives bit-identical results to the SSE kernel, so resampled
// audio (and the cache keys made from its hash) is the same everywhere.
func TestDotGoMatchesSSE(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 3, 4, 7, 15, 16, 17, 31, 64, 65, 100, 257, 1024} {
		for trial := range 200 {
			h, x := make([]float32, n), make([]float32, n)
			for i := range h {
				h[i] = float32(rng.NormFloat64())
				x[i] = float32(rng.NormFloat64() * 32768)
			}
			if got, want := dotGo(h, x), dotSSE(h, x); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("n=%d trial %d: dotGo = %v, dotSSE = %v", n, trial, got, want)
			}
		}
	}
	// polyBatch (SSE) against the portable path on offsets.
	coef, x := make([]float32, 512), make([]float32, 512)
	for i := range coef {
		coef[i], x[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64()*1000)
	}
	const k = 48
	cOff, xOff := []int32{0, 16, 100, 400}, []int32{5, 0, 300, 460}
	out := make([]float32, len(cOff))
	polyBatch(out, coef, x, cOff, xOff, k)
	for j := range out {
		want := dotGo(coef[cOff[j]:][:k], x[xOff[j]:][:k])
		if math.Float32bits(out[j]) != math.Float32bits(want) {
			t.Fatalf("polyBatch[%d] = %v, portable = %v", j, out[j], want)
		}
	}
}
