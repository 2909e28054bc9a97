package pcm

import (
	"math"
	"time"
)

// This file holds the voice effects: tempo without a change of pitch,
// pitch without a change of tempo, and a robotic voice.

// WSOLA settings: the analysis frame, and how far from its nominal place
// a frame may be taken to line its waveform up with the previous one.
const (
	wsolaFrame     = 30 * time.Millisecond
	wsolaTolerance = 8 * time.Millisecond
)

// Tempo limits.
const (
	minTempo = 0.25
	maxTempo = 4
)

// Tempo returns an Effect that speeds speech up (factor > 1) or slows it
// down (factor < 1) without changing its pitch, as a fast or slow talker
// would: waveform-similarity overlap-add (WSOLA) with 30 ms Hann frames
// at 50 % overlap, each taken within ±8 ms of its nominal place where it
// best continues the previous frame. Unlike the other effects it changes
// the length: the output lasts the input's duration divided by factor
// (to the sample). The rate is kept. factor is clamped to [0.25, 4]; 1
// and NaN return a copy.
func Tempo(factor float64) Effect {
	return func(c Chunk) Chunk {
		if math.IsNaN(factor) || factor == 1 || c.Rate <= 0 || len(c.Samples) == 0 {
			return c.Clone()
		}
		f := min(max(factor, minTempo), maxTempo)
		n := int(math.Round(float64(len(c.Samples)) / f))
		return fromFloat(c.Rate, wsola(toFloat(c.Samples), c.Rate, n))
	}
}

// wsola time-stretches x (at rate) to n samples without changing its
// pitch.
func wsola(x []float64, rate, n int) []float64 {
	out := make([]float64, n)
	if n == 0 || len(x) == 0 {
		return out
	}
	N := max(SamplesFor(rate, wsolaFrame)&^1, 4)
	hs := N / 2
	tol := SamplesFor(rate, wsolaTolerance)
	ha := float64(len(x)) / float64(n) * float64(hs) // analysis hop
	win := make([]float64, N)
	for i := range win {
		// Periodic Hann: overlapped at N/2 the windows sum to 1.
		win[i] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(N))
	}
	at := func(i int) float64 {
		if i < 0 || i >= len(x) {
			return 0
		}
		return x[i]
	}
	prev := 0
	for k := 0; k*hs < n+hs; k++ {
		pos := 0
		if k > 0 {
			nominal := int(math.Round(float64(k) * ha))
			// The natural continuation of the previous frame.
			want := prev + hs
			best, bestScore := nominal, math.Inf(-1)
			for cand := nominal - tol; cand <= nominal+tol; cand++ {
				if cand < 0 {
					continue
				}
				var score float64
				if a, b := cand-hs, want-hs; a >= 0 && b >= 0 && a+N <= len(x) && b+N <= len(x) {
					// Both frames inside x: the same sum without the bounds
					// checks of at.
					xa, xb := x[a:a+N], x[b:b+N]
					for i := 0; i < N; i += 2 {
						score += xa[i] * xb[i]
					}
				} else {
					for i := 0; i < N; i += 2 {
						score += at(cand-hs+i) * at(want-hs+i)
					}
				}
				if score > bestScore {
					best, bestScore = cand, score
				}
			}
			pos = best
		}
		base := k*hs - hs // frame k's centre region starts at k·hs
		for i := range N {
			j := base + i
			if j >= 0 && j < n {
				out[j] += win[i] * at(pos-hs+i)
			}
		}
		prev = pos
	}
	return out
}

// Pitch returns an Effect that shifts the voice's pitch by semitones (12
// an octave up, −12 an octave down) without changing its tempo or
// length: Tempo's WSOLA stretches it by the pitch ratio, and resampling
// squeezes it back to the original length, which moves every frequency by
// the ratio. So a 200 Hz voice shifted by +3 semitones comes out at
// 238 Hz, and its formants move with it (a chipmunk or a giant, not a
// different talker). semitones is clamped to ±24; 0 and NaN return a
// copy.
func Pitch(semitones float64) Effect {
	return func(c Chunk) Chunk {
		if math.IsNaN(semitones) || semitones == 0 || c.Rate <= 0 || len(c.Samples) == 0 {
			return c.Clone()
		}
		ratio := math.Pow(2, min(max(semitones, -24), 24)/12)
		stretched := wsola(toFloat(c.Samples), c.Rate, int(math.Round(float64(len(c.Samples))*ratio)))
		// Played at rate·ratio, the stretched audio lasts as long as the
		// input and every frequency is ratio times higher.
		from := int(math.Round(float64(c.Rate) * ratio))
		r, err := Resample(fromFloat(from, stretched), c.Rate)
		if err != nil {
			return c.Clone()
		}
		out := make([]int16, len(c.Samples))
		copy(out, r.Samples)
		return Chunk{Rate: c.Rate, Samples: out}
	}
}

// Robotic returns an Effect that makes the voice sound like a robot or a
// bad voice changer: ring modulation, the input multiplied by a sine at
// carrierHz (30 to 100 Hz is the classic range), which replaces every
// frequency f of the voice by f − carrierHz and f + carrierHz and gives
// speech a metallic, buzzing sound at about its level. carrierHz ≤ 0
// means 50 Hz.
func Robotic(carrierHz float64) Effect {
	if !(carrierHz > 0) {
		carrierHz = 50
	}
	return func(c Chunk) Chunk {
		out := make([]int16, len(c.Samples))
		if c.Rate <= 0 {
			return Chunk{Rate: c.Rate, Samples: out}
		}
		w := 2 * math.Pi * carrierHz / float64(c.Rate)
		for i, s := range c.Samples {
			// √2 keeps the power: the mean of sin² is ½.
			out[i] = roundClamp(math.Sqrt2 * float64(s) * math.Sin(w*float64(i)))
		}
		return Chunk{Rate: c.Rate, Samples: out}
	}
}
