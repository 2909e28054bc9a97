package pcm

import (
	"math"
	"math/bits"
)

// This file holds a radix-2 FFT and an FFT convolution, for effects that
// filter with long impulse responses (Reverb).

// fftRadix2 transforms x in place (forward when inverse is false); len(x)
// must be a power of two. The inverse is not scaled by 1/n.
func fftRadix2(x []complex128, inverse bool) {
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
	hf := make([]complex128, n)
	for i, v := range h {
		hf[i] = complex(v, 0)
	}
	fftRadix2(hf, false)
	buf := make([]complex128, n)
	for start := 0; start < len(x); start += block {
		clear(buf)
		end := min(start+block, len(x))
		for i := start; i < end; i++ {
			buf[i-start] = complex(x[i], 0)
		}
		fftRadix2(buf, false)
		for i := range buf {
			buf[i] *= hf[i]
		}
		fftRadix2(buf, true)
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
