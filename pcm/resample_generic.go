//go:build !amd64 || purego

package pcm

// dot returns the inner product of h and x[:len(h)].
func dot(h, x []float32) float32 { return dotGo(h, x) }

// widen sets dst[i] = float32(src[i]) for every i < len(src).
func widen(dst []float32, src []int16) { widenGo(dst, src) }

// bestKernel returns the kernel a new Resampler uses: the portable one.
func bestKernel() polyKernel { return kernGo }

// polyRun computes len(dst) outputs of the exact bank; see polyRunGo.
func polyRun(_ polyKernel, dst []int16, coef, x []float32, xo, ph, k, l, mi, mr int) {
	polyRunGo(dst, coef, x, xo, ph, k, l, mi, mr)
}
