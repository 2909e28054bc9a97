//go:build amd64 && !purego

package pcm

import (
	"fmt"
	"sync"
)

// The amd64 kernels of the exact bank, besides kernGo.
const (
	// kernSSE uses SSE only, which every amd64 CPU has.
	kernSSE polyKernel = 1 + iota
	// kernAVX uses 256-bit AVX loads, multiplies and adds; it needs
	// cpuHasAVX.
	kernAVX
)

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

// hasAVX reports cpuHasAVX, asked once: CPUID is slow in a virtual machine
// (about 5 µs here, against 18 µs for all of NewResampler(8000, 24000)).
// It is a constant of the machine, not mutable state.
var hasAVX = sync.OnceValue(cpuHasAVX)

// bestKernel returns the fastest kernel this CPU runs: AVX when the CPU
// and the operating system support it, SSE otherwise.
func bestKernel() polyKernel {
	if hasAVX() {
		return kernAVX
	}
	return kernSSE
}

// polyRun computes len(dst) outputs of the exact bank with kernel kern,
// exactly as polyRunGo does. It checks that every filter row and input
// window it will read lies inside coef and x (produce guarantees it; the
// assembly kernels do not check), and panics if not.
func polyRun(kern polyKernel, dst []int16, coef, x []float32, xo, ph, k, l, mi, mr int) {
	n := len(dst)
	if n == 0 {
		return
	}
	// The last output's window starts at xo + ⌊(ph + (n-1)·M)/l⌋, where
	// M = mi·l + mr is the step in 1/l input samples.
	last := xo + (n-1)*mi + (ph+(n-1)*mr)/l
	if k <= 0 || k%4 != 0 || l <= 0 || ph < 0 || ph >= l || mr < 0 || mr >= l || mi < 0 ||
		l*k > len(coef) || xo < 0 || last+k > len(x) {
		panic(fmt.Sprintf("pcm: polyRun out of range: %d outputs, k=%d, phase %d of %d (+%d), window %d..%d+%d of %d, %d coefficients",
			n, k, ph, l, mr, xo, last, k, len(x), len(coef)))
	}
	switch kern {
	case kernAVX:
		polyRunAVX(dst, coef, x, xo, ph, k, l, mi, mr)
	case kernSSE:
		polyRunSSE(dst, coef, x, xo, ph, k, l, mi, mr)
	default:
		polyRunGo(dst, coef, x, xo, ph, k, l, mi, mr)
	}
}

// cpuHasAVX reports whether the CPU supports AVX and the operating system
// saves the YMM registers (CPUID.1:ECX.OSXSAVE and AVX, XCR0 bits 1 and 2).
// It is implemented in resample_amd64.s.
func cpuHasAVX() bool

// polyRunSSE and polyRunAVX are polyRunGo in assembly (resample_amd64.s),
// with the same float32 operations in the same order. They read coef and
// x without bounds checks: call them through polyRun.
//
//go:noescape
func polyRunSSE(dst []int16, coef, x []float32, xo, ph, k, l, mi, mr int)

// polyRunAVX: see polyRunSSE.
//
//go:noescape
func polyRunAVX(dst []int16, coef, x []float32, xo, ph, k, l, mi, mr int)
