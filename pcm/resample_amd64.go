//go:build amd64 && !purego

package pcm

// dot returns the inner product of h and x[:len(h)], using SSE (part of the
// amd64 baseline, so no CPU feature check is needed). It panics like a
// slice expression if x is shorter than h.
func dot(h, x []float32) float32 {
	_ = x[:len(h)]
	return dotSSE(h, x)
}

// dotSSE is implemented in resample_amd64.s; it requires len(x) >= len(h).
//
//go:noescape
func dotSSE(h, x []float32) float32

// polyBatch sets out[j] to the inner product of coef[cOff[j]:][:k] and
// x[xOff[j]:][:k] for every j, in one call to amortise its cost. k must be
// a positive multiple of 4 and every range must lie inside its slice;
// produce guarantees both.
func polyBatch(out, coef, x []float32, cOff, xOff []int32, k int) {
	_, _ = cOff[:len(out)], xOff[:len(out)]
	polyBatchSSE(out, coef, x, cOff, xOff, k)
}

// polyBatchSSE is implemented in resample_amd64.s.
//
//go:noescape
func polyBatchSSE(out, coef, x []float32, cOff, xOff []int32, k int)
