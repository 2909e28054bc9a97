package pcm

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
	"time"
)

// fftRadix2Strided is fftRadix2 as it was before it read its twiddles
// from a table and walked each block in order: a math.Sincos per twiddle
// per call, and for each twiddle a pass over the whole array. It is the
// oracle for fftRadix2.
func fftRadix2Strided(x []complex128, inverse bool) {
	n := len(x)
	if n <= 1 {
		return
	}
	shift := 64 - uint(bits.TrailingZeros(uint(n)))
	for i := range n {
		j := int(bits.Reverse64(uint64(i)) >> shift)
		if i < j {
			x[i], x[j] = x[j], x[i]
		}
	}
	sign := -1.0
	if inverse {
		sign = 1
	}
	for size := 2; size <= n; size <<= 1 {
		half := size / 2
		step := sign * 2 * math.Pi / float64(size)
		for k := range half {
			s, c := math.Sincos(step * float64(k))
			w := complex(c, s)
			for start := k; start < n; start += size {
				a, b := x[start], x[start+half]*w
				x[start], x[start+half] = a+b, a-b
			}
		}
	}
}

// sameBits reports whether a and b hold the same float64 values bit for
// bit (signed zeros included).
func sameBits(a, b []complex128) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(real(a[i])) != math.Float64bits(real(b[i])) || math.Float64bits(imag(a[i])) != math.Float64bits(imag(b[i])) {
			return false
		}
	}
	return true
}

// TestFFTMatchesStrided checks fftRadix2, forward and inverse, against the
// strided loop it replaced, bit for bit, at every size from 1 to 2¹³ on
// random data (the order of a stage's butterflies is all that changed:
// each is the same operations on the same values), and convolve on two of
// the room impulse responses Reverb uses.
func TestFFTMatchesStrided(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(21, 5))
	for n := 1; n <= 1<<13; n <<= 1 {
		tw := fftTwiddles(n)
		for _, inverse := range []bool{false, true} {
			x := make([]complex128, n)
			for i := range x {
				x[i] = complex(rng.NormFloat64()*1e4, rng.NormFloat64())
			}
			if n > 2 {
				x[1] = 0 // an exact zero, whose sign the twiddles decide
			}
			want := append([]complex128(nil), x...)
			fftRadix2Strided(want, inverse)
			fftRadix2(x, inverse, tw)
			if !sameBits(x, want) {
				t.Errorf("n %d, inverse %v: fftRadix2 differs from the strided loop", n, inverse)
			}
		}
	}
	// convolve as it was, on the strided FFT, against convolve.
	convolveStrided := func(x, h []float64) []float64 {
		out := make([]float64, len(x))
		block := max(nextPow2(len(h)), 1024)
		n := 2 * block
		hf := make([]complex128, n)
		for i, v := range h {
			hf[i] = complex(v, 0)
		}
		fftRadix2Strided(hf, false)
		buf := make([]complex128, n)
		for start := 0; start < len(x); start += block {
			clear(buf)
			for i := start; i < min(start+block, len(x)); i++ {
				buf[i-start] = complex(x[i], 0)
			}
			fftRadix2Strided(buf, false)
			for i := range buf {
				buf[i] *= hf[i]
			}
			fftRadix2Strided(buf, true)
			for i := range buf {
				if start+i < len(out) {
					out[start+i] += real(buf[i]) * (1 / float64(n))
				}
			}
		}
		return out
	}
	x := toFloat(speechLike(Rate8k, 2*time.Second, 8).Samples)
	for _, rt := range []time.Duration{100 * time.Millisecond, 800 * time.Millisecond} {
		h := reverbIR(Rate8k, rt, 3)
		got, want := convolve(x, h), convolveStrided(x, h)
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Errorf("reverb %v: convolve differs from the strided FFT's at sample %d: %g, want %g", rt, i, got[i], want[i])
				break
			}
		}
	}
}
