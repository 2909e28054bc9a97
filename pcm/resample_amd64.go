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
