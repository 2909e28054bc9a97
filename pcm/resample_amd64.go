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
	// kernAVX512 is kernAVX with the outputs that share filter rows
	// computed with 512-bit AVX-512F operations (one register holds the
	// sixteen accumulators of an output); it needs cpuHasAVX512.
	kernAVX512
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

// hasAVX and hasAVX512 report cpuHasAVX and cpuHasAVX512, asked once:
// CPUID is slow in a virtual machine (about 5 µs here, against 18 µs for all
// of NewResampler(8000, 24000)). They are constants of the machine, not
// mutable state.
var (
	hasAVX    = sync.OnceValue(cpuHasAVX)
	hasAVX512 = sync.OnceValue(cpuHasAVX512)
)

// bestKernel returns the fastest kernel this CPU runs: AVX-512 or AVX when
// the CPU and the operating system support them, SSE otherwise.
func bestKernel() polyKernel {
	switch {
	case hasAVX512():
		return kernAVX512
	case hasAVX():
		return kernAVX
	}
	return kernSSE
}

// widen sets dst[i] = float32(src[i]) for every i < len(src), eight
// samples at a time with SSE2 (part of the amd64 baseline). It panics like
// a slice expression if dst is shorter than src.
func widen(dst []float32, src []int16) {
	_ = dst[:len(src)]
	widenSSE2(dst, src)
}

// widenSSE2 is implemented in resample_amd64.s; it requires len(dst) >=
// len(src).
//
//go:noescape
func widenSSE2(dst []float32, src []int16)

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
	case kernAVX, kernAVX512:
		// Outputs j and j+l share a filter row, and l outputs step
		// M = mi·l + mr input samples with the phase back where it was.
		// Whole runs of 4·l outputs share rows four by four
		// (polyRunSharedAVX), one more run of 2·l two by two
		// (polyRunPairAVX), and the rest go four different rows at a time.
		if k%16 == 0 {
			m := mi*l + mr
			if quads := n / (4 * l) * (4 * l); quads > 0 {
				if kern == kernAVX512 {
					polyRunSharedAVX512(dst[:quads], coef, x, xo, ph, k, l, mi, mr)
				} else {
					polyRunSharedAVX(dst[:quads], coef, x, xo, ph, k, l, mi, mr)
				}
				dst = dst[quads:]
				xo += quads / l * m
			}
			if len(dst) >= 2*l {
				if kern == kernAVX512 {
					polyRunPairAVX512(dst[:2*l], coef, x, xo, ph, k, l, mi, mr)
				} else {
					polyRunPairAVX(dst[:2*l], coef, x, xo, ph, k, l, mi, mr)
				}
				dst = dst[2*l:]
				xo += 2 * m
			}
			if len(dst) == 0 {
				return
			}
		}
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

// polyRunSharedAVX is polyRunAVX for len(dst) a multiple of 4·l and k a
// multiple of 16: it computes each group of four outputs that share a
// filter row (outputs j, j+l, j+2l, j+3l) with one load of the row
// (resample_amd64.s).
//
//go:noescape
func polyRunSharedAVX(dst []int16, coef, x []float32, xo, ph, k, l, mi, mr int)

// polyRunPairAVX is polyRunSharedAVX for one run of 2·l outputs, whose
// pairs j, j+l share a filter row.
//
//go:noescape
func polyRunPairAVX(dst []int16, coef, x []float32, xo, ph, k, l, mi, mr int)

// polyRunPairAVX512 is polyRunPairAVX with 512-bit operations.
//
//go:noescape
func polyRunPairAVX512(dst []int16, coef, x []float32, xo, ph, k, l, mi, mr int)

// polyRunSharedAVX512 is polyRunSharedAVX with 512-bit operations.
//
//go:noescape
func polyRunSharedAVX512(dst []int16, coef, x []float32, xo, ph, k, l, mi, mr int)

// cpuHasAVX512 reports whether the CPU supports AVX and AVX-512F and the
// operating system saves the YMM and ZMM registers and the opmask
// (CPUID.7.0:EBX.AVX512F, XCR0 bits 1, 2 and 5 to 7). It is implemented in
// resample_amd64.s.
func cpuHasAVX512() bool
