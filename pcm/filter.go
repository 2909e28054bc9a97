package pcm

import "math"

// This file holds the filter design code shared by the resampler and the
// effects: a Kaiser-windowed sinc low-pass prototype and Butterworth biquad
// sections made with the bilinear transform.

// kaiserBeta returns the Kaiser window shape parameter that gives a
// stop-band attenuation of atten dB (Kaiser's empirical formula).
func kaiserBeta(atten float64) float64 {
	switch {
	case atten > 50:
		return 0.1102 * (atten - 8.7)
	case atten >= 21:
		return 0.5842*math.Pow(atten-21, 0.4) + 0.07886*(atten-21)
	default:
		return 0
	}
}

// besselI0 is the zeroth-order modified Bessel function of the first kind,
// summed as a power series until the terms stop mattering.
func besselI0(x float64) float64 {
	sum, term := 1.0, 1.0
	q := x * x / 4
	for k := 1; k < 500; k++ {
		// float64(…) rounds the product before the sum, so no machine
		// fuses the two into a multiply-add (see sincLowPass.at).
		term = float64(term * (q / float64(k*k)))
		sum += term
		if term < sum*1e-17 {
			break
		}
	}
	return sum
}

// kaiserTaps returns how many taps a Kaiser-windowed low-pass needs for a
// stop-band attenuation of atten dB and a transition band of width
// transition, given as a fraction of the sample rate (Kaiser's formula).
func kaiserTaps(atten, transition float64) int {
	n := (atten - 8) / (2.285 * 2 * math.Pi * transition)
	return int(math.Ceil(n)) + 1
}

// sincLowPass is one tap of a Kaiser-windowed ideal low-pass filter of
// length n (taps 0..n-1, centred on (n-1)/2), with cut-off cutoff as a
// fraction of the sample rate and DC gain 1. Taps outside the window are 0.
type sincLowPass struct {
	n      int
	cutoff float64
	beta   float64
	i0beta float64
}

func newSincLowPass(n int, cutoff, atten float64) sincLowPass {
	beta := kaiserBeta(atten)
	return sincLowPass{n: n, cutoff: cutoff, beta: beta, i0beta: besselI0(beta)}
}

// at returns tap j.
func (f sincLowPass) at(j int) float64 {
	if j < 0 || j >= f.n {
		return 0
	}
	centre := float64(f.n-1) / 2
	x := float64(j) - centre
	var s float64
	if x == 0 {
		s = 2 * f.cutoff
	} else {
		a := 2 * math.Pi * f.cutoff * x
		s = math.Sin(a) / (math.Pi * x)
	}
	if f.n == 1 {
		return s
	}
	r := x / centre
	// float64(r*r) keeps the compiler from fusing 1-r*r into a multiply-add
	// (it does on arm64, and on amd64 with GOAMD64=v3), so that the
	// coefficients, and the audio resampled with them, are the same on
	// every machine.
	w := besselI0(f.beta*math.Sqrt(max(0, 1-float64(r*r)))) / f.i0beta
	return s * w
}

// biquad is one second-order IIR section, normalised so a0 = 1:
// y = b0·x + b1·x₁ + b2·x₂ − a1·y₁ − a2·y₂.
type biquad struct {
	b0, b1, b2, a1, a2 float64
}

// biquadState is the transposed direct form II state of one section.
type biquadState struct{ z1, z2 float64 }

// step filters one sample through section q with state s.
func (q *biquad) step(s *biquadState, x float64) float64 {
	y := q.b0*x + s.z1
	s.z1 = q.b1*x - q.a1*y + s.z2
	s.z2 = q.b2*x - q.a2*y
	return y
}

// butterworth returns the cascade of second-order sections of an order-n
// (n even) Butterworth low-pass (highPass false) or high-pass filter with
// its -3 dB corner at freq Hz, for sample rate rate, using the bilinear
// transform with pre-warping so the corner lands exactly on freq.
func butterworth(n int, freq float64, rate int, highPass bool) []biquad {
	k := math.Tan(math.Pi * freq / float64(rate)) // pre-warped analog corner
	sections := make([]biquad, 0, n/2)
	for i := 0; i < n/2; i++ {
		// Pole pair i of the analog prototype: s² + s/Q + 1.
		q := 1 / (2 * math.Sin(float64(2*i+1)*math.Pi/float64(2*n)))
		kk := k * k
		norm := 1 / (1 + k/q + kk)
		var s biquad
		if highPass {
			s.b0 = norm
			s.b1 = -2 * norm
			s.b2 = norm
		} else {
			s.b0 = kk * norm
			s.b1 = 2 * kk * norm
			s.b2 = kk * norm
		}
		s.a1 = 2 * (kk - 1) * norm
		s.a2 = (1 - k/q + kk) * norm
		sections = append(sections, s)
	}
	return sections
}
