//go:build amd64 && !purego

package pcm

import (
	"fmt"
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
}

// namedKernel is a kernel and its name for test messages.
type namedKernel struct {
	name string
	kern polyKernel
}

// asmKernels returns the assembly kernels this CPU can run.
func asmKernels(t testing.TB) []namedKernel {
	t.Helper()
	ks := []namedKernel{{"SSE", kernSSE}}
	if cpuHasAVX() {
		ks = append(ks, namedKernel{"AVX", kernAVX})
	} else {
		t.Log("CPU without AVX: only the SSE kernel is checked")
	}
	if cpuHasAVX512() {
		ks = append(ks, namedKernel{"AVX512", kernAVX512})
	} else {
		t.Log("CPU without AVX-512F: the AVX-512 kernel is not checked")
	}
	return ks
}

// TestPolyKernelsMatchPortable runs every assembly kernel and polyRunGo on
// random filters and inputs (loud enough that many outputs saturate) over
// the tap counts of the common conversions and odd ones, and wants
// bit-identical int16 outputs. With k a multiple of 16 and l ≤ 175, the AVX
// kernel computes the first whole runs of 4·l outputs with shared rows
// (polyRunSharedAVX) and the rest four rows at a time.
func TestPolyKernelsMatchPortable(t *testing.T) {
	t.Parallel() // pure computation: no process state, no heap figures
	rng := rand.New(rand.NewPCG(5, 6))
	for _, nk := range asmKernels(t) {
		name, kern := nk.name, nk.kern
		for _, k := range []int{4, 8, 12, 16, 20, 28, 32, 44, 48, 52, 64, 80, 96, 112, 156, 160, 172, 192, 320} {
			for _, st := range [][3]int{{1, 0, 0}, {3, 0, 1}, {2, 0, 1}, {320, 1, 1}, {147, 1, 73}, {2, 3, 0}, {160, 1, 0}, {7, 2, 5},
				{80, 1, 67}, {1, 3, 0}, {2, 1, 1}, {3, 0, 2}} {
				l, mi, mr := st[0], st[1], st[2]
				coef := make([]float32, l*k)
				for i := range coef {
					coef[i] = float32(rng.NormFloat64() * 0.3)
				}
				const n = 700
				x := make([]float32, k+n*(mi+1)+1)
				for i := range x {
					x[i] = float32(rng.IntN(65536) - 32768)
				}
				for trial := range 4 {
					ph, xo := rng.IntN(l), rng.IntN(3)
					want, got := make([]int16, n-trial), make([]int16, n-trial)
					polyRun(kernGo, want, coef, x, xo, ph, k, l, mi, mr)
					polyRun(kern, got, coef, x, xo, ph, k, l, mi, mr)
					if i := firstDiff(got, want); i >= 0 {
						t.Fatalf("%s k=%d l=%d mi=%d mr=%d ph=%d: output %d = %d, portable %d", name, k, l, mi, mr, ph, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestPolyKernelsRounding feeds chosen sums through each kernel (a filter
// row of one 1 and zeros passes x through exactly) and expects round16:
// halves away from zero, saturation at both ends, infinities included.
func TestPolyKernelsRounding(t *testing.T) {
	vals := []float32{0, float32(math.Copysign(0, -1)), 0.49999997, 0.5, -0.5, -0.49999997, 1.5, -1.5, 2.5, -2.5, 1234.4999,
		32766.5, 32766.498, 32766.9, 32767, 32767.5, 32768, 40000, 1e10, float32(math.Inf(1)),
		-32767.5, -32767.498, -32768, -32768.5, -32769, -1e10, float32(math.Inf(-1))}
	const k = 8
	coef := []float32{1, 0, 0, 0, 0, 0, 0, 0}
	// One value per window, the rest zeros (0·Inf would be NaN).
	x := make([]float32, len(vals)*k)
	for i, v := range vals {
		x[i*k] = v
	}
	want := make([]int16, len(vals))
	for i, v := range vals {
		want[i] = round16(v)
	}
	if want[len(vals)-1] != -32768 || want[3] != 1 || want[4] != -1 {
		t.Fatalf("round16 itself changed: %v", want)
	}
	for _, nk := range asmKernels(t) {
		name, kern := nk.name, nk.kern
		got := make([]int16, len(vals))
		polyRun(kern, got, coef, x, 0, 0, k, 1, k, 0)
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: %v rounds to %d, round16 gives %d", name, vals[i], got[i], want[i])
			}
		}
	}
}

// TestResamplerKernelsMatch streams audio through Resamplers forced to each
// kernel and wants the portable kernel's output, sample for sample.
func TestResamplerKernelsMatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	pairs := [][2]int{{Rate24k, Rate8k}, {Rate8k, Rate24k}, {Rate48k, Rate16k}, {Rate44k1, Rate24k}, {Rate16k, Rate24k}, {Rate24k, Rate16k},
		{Rate8k, Rate48k}, {Rate22k05, Rate8k}, {11025, 8000}, {8000, 7999}, {100, 8000}}
	for _, p := range pairs {
		in := pinnedInput(p[0], p[0]/2)
		base, err := NewResampler(p[0], p[1])
		if err != nil {
			t.Fatal(err)
		}
		var want []int16
		for _, nk := range append([]namedKernel{{"Go", kernGo}}, asmKernels(t)...) {
			r := withKernel(base, nk.kern)
			var got []int16
			for rest := in; len(rest) > 0; {
				n := min(rng.IntN(3000)+1, len(rest))
				got = r.Process(got, rest[:n])
				rest = rest[n:]
			}
			got = r.Flush(got)
			if nk.kern == kernGo {
				want = got
				continue
			}
			if i := firstDiff(got, want); i >= 0 || len(got) != len(want) {
				t.Errorf("%d→%d Hz, %s kernel: %d samples, first difference from the portable kernel's %d at %d", p[0], p[1], nk.name, len(got), len(want), i)
			}
		}
	}
}

// TestPolyRunChecksRange makes sure the wrapper refuses a window past the
// end of x instead of letting assembly read out of bounds.
func TestPolyRunChecksRange(t *testing.T) {
	coef, x := make([]float32, 3*8), make([]float32, 20)
	for _, c := range []struct {
		n, xo, ph int
	}{{5, 10, 0}, {1, 13, 0}, {1, -1, 0}, {1, 0, 3}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("polyRun(%d outputs, xo=%d, ph=%d) did not panic", c.n, c.xo, c.ph)
				}
			}()
			polyRun(kernSSE, make([]int16, c.n), coef, x, c.xo, c.ph, 8, 3, 1, 0)
		}()
	}
	// The largest valid window is accepted.
	polyRun(kernSSE, make([]int16, 1), coef, x, 12, 2, 8, 3, 1, 0)
}

// withKernel returns a Resampler like r, sharing its (read-only) filter,
// that runs kernel kern on a stream of its own.
func withKernel(r *Resampler, kern polyKernel) *Resampler {
	c := *r
	c.buf = make([]float32, 0, cap(r.buf))
	c.kern = kern
	c.Reset()
	return &c
}

func firstDiff(a, b []int16) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// BenchmarkResampleKernel is BenchmarkResample with the exact bank's kernel
// forced: the portable Go one, the SSE one (what a CPU without AVX runs),
// and AVX.
func BenchmarkResampleKernel(b *testing.B) {
	for _, p := range [][2]int{{Rate24k, Rate8k}, {Rate8k, Rate24k}, {Rate44k1, Rate24k}, {Rate16k, Rate24k}} {
		for _, nk := range append([]namedKernel{{"Go", kernGo}}, asmKernels(b)...) {
			b.Run(fmt.Sprintf("%dto%d/%s", p[0], p[1], nk.name), func(b *testing.B) {
				r, err := NewResampler(p[0], p[1])
				if err != nil {
					b.Fatal(err)
				}
				r.kern = nk.kern
				benchResampler(b, r)
			})
		}
	}
}

// FuzzResamplerKernels streams arbitrary audio between arbitrary rates
// through Resamplers forced to each kernel and wants the portable kernel's
// output exactly.
func FuzzResamplerKernels(f *testing.F) {
	f.Add(uint16(8000), uint16(24000), uint16(160), []byte{0xff, 0x7f, 0x00, 0x80, 0xff, 0x7f, 0x00, 0x80, 1, 2})
	f.Add(uint16(44100), uint16(24000), uint16(1), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	f.Fuzz(func(t *testing.T, from, to, frame uint16, data []byte) {
		rf, rt := 4000+int(from)%44001, 4000+int(to)%44001
		in := make([]int16, len(data)/2)
		for i := range in {
			in[i] = int16(uint16(data[2*i]) | uint16(data[2*i+1])<<8)
		}
		n := 1 + int(frame)%2000
		base, err := NewResampler(rf, rt)
		if err != nil {
			t.Fatal(err)
		}
		var want []int16
		for _, nk := range append([]namedKernel{{"Go", kernGo}}, asmKernels(t)...) {
			r := withKernel(base, nk.kern)
			var got []int16
			for i := 0; i < len(in); i += n {
				got = r.Process(got, in[i:min(i+n, len(in))])
			}
			got = r.Flush(got)
			if nk.kern == kernGo {
				want = got
				continue
			}
			if i := firstDiff(got, want); i >= 0 || len(got) != len(want) {
				t.Fatalf("%d→%d Hz, frames of %d, %s kernel: %d samples, first difference from the portable kernel's %d at %d", rf, rt, n, nk.name, len(got), len(want), i)
			}
		}
	})
}

// TestWidenMatchesPortable checks the SSE2 int16 → float32 conversion
// against the Go loop for every length up to 40 and the extreme values.
func TestWidenMatchesPortable(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for n := range 41 {
		src := make([]int16, n)
		for i := range src {
			src[i] = int16(rng.Uint32())
		}
		if n > 2 {
			src[0], src[n-1] = -32768, 32767
		}
		got, want := make([]float32, n+1), make([]float32, n+1)
		got[n], want[n] = 7, 7 // past the end: untouched
		widen(got, src)
		widenGo(want, src)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n=%d: dst[%d] = %v, want %v", n, i, got[i], want[i])
			}
		}
	}
}
