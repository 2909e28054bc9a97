package pcm

import (
	"math"
	"math/bits"
	"math/cmplx"
)

// This file holds a radix-2 FFT and an FFT convolution, for effects that
// filter with long impulse responses (Reverb).

// fftRadix2 transforms x in place (forward when inverse is false); len(x)
// must be a power of two and tw must be fftTwiddles(len(x)). The inverse
// is not scaled by 1/n.
func fftRadix2(x []complex128, inverse bool, tw []complex128) {
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
	for size := 2; size <= n; size <<= 1 {
		half := size / 2
		w := tw[half-1 : size-1]
		// Block by block, each block's butterflies in order: the data
		// and the twiddles are read in sequence (an FFT of a long
		// impulse response is larger than the caches).
		for start := 0; start < n; start += size {
			lo, hi := x[start:start+half], x[start+half:start+size]
			if inverse {
				for k, wk := range w {
					a, b := lo[k], hi[k]*cmplx.Conj(wk)
					lo[k], hi[k] = a+b, a-b
				}
				continue
			}
			for k, wk := range w {
				a, b := lo[k], hi[k]*wk
				lo[k], hi[k] = a+b, a-b
			}
		}
	}
}

// fftTwiddles returns the twiddle factors of a forward radix-2 FFT of
// size n, stage by stage: the stage of size s (s = 2, 4, …, n) has
// e^(−2πik/s) for k < s/2 at index s/2−1+k, computed as
// math.Sincos(−2π/s·k). The inverse uses their conjugates: math.Sincos is
// odd in its argument, so those are e^(+2πik/s) as math.Sincos(2π/s·k)
// gives them, bit for bit.
func fftTwiddles(n int) []complex128 {
	tw := make([]complex128, max(n-1, 0))
	for size := 2; size <= n; size <<= 1 {
		half := size / 2
		step := -2 * math.Pi / float64(size)
		for k := range half {
			s, c := math.Sincos(step * float64(k))
			tw[half-1+k] = complex(c, s)
		}
	}
	return tw
}

// nextPow2 returns the smallest power of two ≥ n (1 for n ≤ 1).
func nextPow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}

// convolve returns the first len(x) samples of x convolved with h, by
// overlap-add FFT convolution in blocks, so that memory stays bounded by
// the impulse response, not the signal.
func convolve(x, h []float64) []float64 {
	out := make([]float64, len(x))
	if len(x) == 0 || len(h) == 0 {
		return out
	}
	block := max(nextPow2(len(h)), 1024)
	n := 2 * block
	if len(h) > block {
		n = nextPow2(block + len(h))
	}
	tw := fftTwiddles(n)
	hf := make([]complex128, n)
	for i, v := range h {
		hf[i] = complex(v, 0)
	}
	fftRadix2(hf, false, tw)
	buf := make([]complex128, n)
	for start := 0; start < len(x); start += block {
		clear(buf)
		end := min(start+block, len(x))
		for i := start; i < end; i++ {
			buf[i-start] = complex(x[i], 0)
		}
		fftRadix2(buf, false, tw)
		for i := range buf {
			buf[i] *= hf[i]
		}
		fftRadix2(buf, true, tw)
		scale := 1 / float64(n)
		for i := range buf {
			j := start + i
			if j >= len(out) {
				break
			}
			out[j] += real(buf[i]) * scale
		}
	}
	return out
}

// toFloat returns c's samples as float64.
func toFloat(s []int16) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		out[i] = float64(v)
	}
	return out
}

// fromFloat returns a Chunk at rate of v rounded and saturated.
func fromFloat(rate int, v []float64) Chunk {
	out := make([]int16, len(v))
	for i, x := range v {
		out[i] = roundClamp(x)
	}
	return Chunk{Rate: rate, Samples: out}
}

// filterCascade runs x through the biquad sections in order and returns
// the result in a new slice.
func filterCascade(x []float64, secs []biquad) []float64 {
	out := make([]float64, len(x))
	state := make([]biquadState, len(secs))
	for i, v := range x {
		for k := range secs {
			v = secs[k].step(&state[k], v)
		}
		out[i] = v
	}
	return out
}

// lowPass returns the sections of an order-n Butterworth low-pass at
// freq Hz, or nil when freq is at or above the Nyquist frequency (nothing
// to remove).
func lowPass(n int, freq float64, rate int) []biquad {
	if rate <= 0 || freq >= 0.49*float64(rate) {
		return nil
	}
	return butterworth(n, freq, rate, false)
}

// highPass returns the sections of an order-n Butterworth high-pass at
// freq Hz, or nil when freq is not positive.
func highPass(n int, freq float64, rate int) []biquad {
	if rate <= 0 || freq <= 0 || freq >= 0.49*float64(rate) {
		return nil
	}
	return butterworth(n, freq, rate, true)
}
