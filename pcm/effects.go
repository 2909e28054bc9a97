package pcm

import (
	"math"
	"math/rand/v2"
	"time"
)

// Every Effect in this file keeps its input's rate and length, returns new
// samples without modifying its input, and is safe for concurrent use.
// Effects that use randomness take a seed and build their random source
// from it on every application, so the same input and seed always give the
// same output.
//
// Noise levels are set as a signal-to-noise ratio: the input's active level
// (ActiveRMS, which leaves out pauses) over the RMS of the noise added,
// across the whole chunk. The output saturates at the int16 limits, so a
// very low SNR on loud audio clips and then measures slightly differently.

// rngStream is the second PCG word; the first is the caller's seed.
const rngStream = 0x766f696365746573 // "voicetes"

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, rngStream)) }

// WhiteNoise returns an Effect that adds Gaussian white noise (flat
// spectrum) at snrDB below the input's active level: the SNR is ActiveRMS
// of the input over the RMS of the noise added. The same input and seed
// always give the same output. Silent input has no level to measure
// against and comes back unchanged, as does a NaN or +Inf snrDB. It keeps
// the rate and length, does not modify its input, and is safe for
// concurrent use.
func WhiteNoise(snrDB float64, seed uint64) Effect {
	return noiseEffect(snrDB, seed, func(rng *rand.Rand, noise []float64, _ int) {
		for i := range noise {
			noise[i] = rng.NormFloat64()
		}
	})
}

// PinkNoise returns an Effect that adds pink noise (power falling 3 dB per
// octave, equal energy per octave) at snrDB below the input's active level,
// like WhiteNoise. The spectrum is shaped by a cascade of first-order
// pole–zero sections two octaves apart from 10 Hz to the Nyquist frequency,
// within about ±0.5 dB of the ideal 1/f slope over that range.
func PinkNoise(snrDB float64, seed uint64) Effect {
	return noiseEffect(snrDB, seed, func(rng *rand.Rand, noise []float64, rate int) {
		type section struct{ a, b, x1, y1 float64 }
		var secs []section
		nyq := float64(rate) / 2
		for p := 10.0; p < nyq; p *= 4 {
			// Pole at p Hz, zero an octave above: −6 dB/octave for one
			// octave then flat, averaging −3 dB/octave.
			secs = append(secs, section{
				a: math.Exp(-2 * math.Pi * p / float64(rate)),
				b: math.Exp(-2 * math.Pi * 2 * p / float64(rate)),
			})
		}
		for i := range noise {
			v := rng.NormFloat64()
			for k := range secs {
				s := &secs[k]
				y := v - s.b*s.x1 + s.a*s.y1
				s.x1, s.y1 = v, y
				v = y
			}
			noise[i] = v
		}
	})
}

// BrownNoise returns an Effect that adds brown (red) noise, power falling
// 6 dB per octave, at snrDB below the input's active level, like
// WhiteNoise. It is white noise through a leaky integrator whose corner is
// at 10 Hz, so it has no unbounded drift.
func BrownNoise(snrDB float64, seed uint64) Effect {
	return noiseEffect(snrDB, seed, func(rng *rand.Rand, noise []float64, rate int) {
		a := math.Exp(-2 * math.Pi * 10 / float64(rate))
		var y float64
		for i := range noise {
			y = a*y + rng.NormFloat64()
			noise[i] = y
		}
		removeMean(noise)
	})
}

func removeMean(s []float64) {
	if len(s) == 0 {
		return
	}
	var m float64
	for _, v := range s {
		m += v
	}
	m /= float64(len(s))
	for i := range s {
		s[i] -= m
	}
}

// noiseEffect builds an Effect that fills a buffer with fill's noise and
// adds it at snrDB below the input's active level.
func noiseEffect(snrDB float64, seed uint64, fill func(rng *rand.Rand, noise []float64, rate int)) Effect {
	return func(c Chunk) Chunk {
		level := ActiveRMS(c)
		if level == 0 || math.IsNaN(snrDB) || math.IsInf(snrDB, 1) {
			return c.Clone()
		}
		noise := make([]float64, len(c.Samples))
		fill(newRNG(seed), noise, c.Rate)
		return addScaled(c, noise, level, snrDB)
	}
}

// addScaled returns c plus noise scaled so its RMS is snrDB below level.
func addScaled(c Chunk, noise []float64, level, snrDB float64) Chunk {
	var ss float64
	for _, v := range noise {
		ss += v * v
	}
	if ss == 0 {
		return c.Clone()
	}
	g := level / math.Pow(10, snrDB/20) / math.Sqrt(ss/float64(len(noise)))
	out := make([]int16, len(c.Samples))
	for i, s := range c.Samples {
		out[i] = roundClamp(float64(s) + g*noise[i])
	}
	return Chunk{Rate: c.Rate, Samples: out}
}

// Babble settings: how many excerpts play at once, how long each is, and
// the fade at each end of an excerpt.
const (
	babbleVoices     = 6
	babbleMinExcerpt = 800 * time.Millisecond
	babbleMaxExcerpt = 2500 * time.Millisecond
	babbleFade       = 10 * time.Millisecond
)

// Babble returns an Effect that adds crowd babble made from talkers, speech
// recordings at any rate, at snrDB below the input's active level (the
// babble's level is its RMS over the chunk). Six overlapping streams each
// play random excerpts (0.8–2.5 s, from random talkers at random
// positions, cross-faded over 10 ms at each join; each stream starts
// part-way into its first excerpt) back to back; excerpts are resampled to
// the input's rate. The talkers are not modified and may be
// shared. Talkers that are empty or have an invalid rate are ignored; with
// none left, or silent input, or a NaN or +Inf snrDB, the input comes back
// unchanged. Like WhiteNoise it is deterministic for a seed, keeps the rate
// and length, and does not modify its input.
func Babble(talkers []Chunk, snrDB float64, seed uint64) Effect {
	usable := make([]Chunk, 0, len(talkers))
	for _, t := range talkers {
		if t.Rate > 0 && len(t.Samples) > 0 {
			usable = append(usable, t)
		}
	}
	return func(c Chunk) Chunk {
		level := ActiveRMS(c)
		if level == 0 || len(usable) == 0 || math.IsNaN(snrDB) || math.IsInf(snrDB, 1) {
			return c.Clone()
		}
		rng := newRNG(seed)
		noise := make([]float64, len(c.Samples))
		resamplers := make(map[int]*Resampler) // per talker rate, this call only
		var scratch []int16                    // resampled excerpts, reused
		fade := max(SamplesFor(c.Rate, babbleFade), 1)
		lo, hi := SamplesFor(c.Rate, babbleMinExcerpt), SamplesFor(c.Rate, babbleMaxExcerpt)
		for range babbleVoices {
			for pos, first := 0, true; pos < len(noise); first = false {
				want := lo + rng.IntN(hi-lo+1)
				if first {
					// Start part-way into an excerpt, so that the
					// streams' joins do not line up.
					want = 1 + rng.IntN(want)
				}
				want = min(want, len(noise)-pos)
				ex := excerpt(rng, usable[rng.IntN(len(usable))], c.Rate, want, resamplers, scratch[:0])
				scratch = ex[:0]
				if len(ex) == 0 {
					pos += want // this talker cannot be used at this rate
					continue
				}
				ex = ex[:min(len(ex), len(noise)-pos)]
				last := pos+len(ex) == len(noise)
				// Fade each join; the chunk's own start and end need none.
				for i, v := range ex {
					w := 1.0
					if i < fade && !first {
						w = float64(i) / float64(fade)
					}
					if d := len(ex) - 1 - i; d < fade && !last {
						w = min(w, float64(d)/float64(fade))
					}
					noise[pos+i] += w * float64(v)
				}
				pos += len(ex)
			}
		}
		return addScaled(c, noise, level, snrDB)
	}
}

// excerpt returns about n samples at rate from a random place in t (all of
// t if it is shorter), or nil if t cannot be resampled to rate. It keeps
// the resamplers it builds in rs, by t's rate, and resamples into dst's
// capacity (never into t's samples).
func excerpt(rng *rand.Rand, t Chunk, rate, n int, rs map[int]*Resampler, dst []int16) []int16 {
	m := min(int(int64(n)*int64(t.Rate)/int64(rate))+1, len(t.Samples))
	start := rng.IntN(len(t.Samples) - m + 1)
	piece := t.Samples[start : start+m]
	if t.Rate == rate {
		return append(dst, piece...)
	}
	r, ok := rs[t.Rate]
	if !ok {
		var err error
		if r, err = NewResampler(t.Rate, rate); err != nil {
			r = nil // remembered, so the failure is not retried
		}
		rs[t.Rate] = r
	}
	if r == nil {
		return nil
	}
	out := r.Process(dst, piece)
	return r.Flush(out) // Flush also resets r for the next excerpt
}

// Telephone band edges and filter orders.
const (
	telLow   = 300.0
	telHigh  = 3400.0
	telOrder = 8
)

// TelephoneBand returns an Effect that band-limits audio to the telephone
// band, 300–3400 Hz: an 8th-order Butterworth high-pass at 300 Hz and an
// 8th-order Butterworth low-pass at 3400 Hz (−3 dB at each edge; −76 dB at
// 100 Hz, about −40 dB at 6 kHz). The low-pass is left out when 3400 Hz is
// not below the Nyquist frequency (rates up to 6800 Hz); audio whose
// Nyquist frequency is at or below 300 Hz has no telephone band and becomes
// silence. It keeps the rate and length and does not modify its input.
func TelephoneBand() Effect {
	return func(c Chunk) Chunk {
		out := Chunk{Rate: c.Rate, Samples: make([]int16, len(c.Samples))}
		if c.Rate <= 0 || float64(c.Rate)/2 <= telLow {
			return out
		}
		secs := butterworth(telOrder, telLow, c.Rate, true)
		if telHigh < float64(c.Rate)/2 {
			secs = append(secs, butterworth(telOrder, telHigh, c.Rate, false)...)
		}
		state := make([]biquadState, len(secs))
		for i, s := range c.Samples {
			v := float64(s)
			for k := range secs {
				v = secs[k].step(&state[k], v)
			}
			out.Samples[i] = roundClamp(v)
		}
		return out
	}
}

// Clip returns an Effect that hard-clips audio at levelDBFS: samples beyond
// ±FullScale·10^(levelDBFS/20) are cut to that value, as an overdriven
// microphone or codec does. Levels at or above 0 dBFS change nothing; a
// level so low that it rounds to 0 gives silence. A NaN level returns a
// copy. It keeps the rate and length and does not modify its input.
func Clip(levelDBFS float64) Effect {
	limit := int32(32768)
	if !math.IsNaN(levelDBFS) && levelDBFS < 0 {
		limit = int32(math.Round(FullScale * math.Pow(10, levelDBFS/20)))
	}
	return func(c Chunk) Chunk {
		out := Chunk{Rate: c.Rate, Samples: make([]int16, len(c.Samples))}
		for i, s := range c.Samples {
			out.Samples[i] = clamp16(min(max(int32(s), -limit), limit))
		}
		return out
	}
}

// Packet loss concealment settings: full-level repetition for the first
// plcHold of a burst, then a linear fade to silence at plcFadeOut; the
// first plcMerge of the next received packet is cross-faded with the
// concealment.
const (
	plcHold    = 10 * time.Millisecond
	plcFadeOut = 60 * time.Millisecond
	plcMerge   = 5 * time.Millisecond
)

// PacketLoss returns an Effect that drops packets of frame length at random,
// each independently with probability rate (0 to 1), and conceals the gaps
// the way a receiver's packet loss concealment does rather than leaving
// silence: a lost stretch replays the last received packet, alternately
// backwards and forwards so the waveform stays continuous, at full level
// for 10 ms and then fading linearly to silence at 60 ms. So only bursts
// longer than 60 ms contain silence. The first 5 ms of the packet after a
// gap is cross-faded from the concealment. A loss before any packet has
// been received is silent.
//
// frame ≤ 0 means 20 ms, the usual RTP packet; rate is clamped to [0, 1]
// and NaN means 0. It keeps the rate and length and does not modify its
// input.
func PacketLoss(rate float64, frame time.Duration, seed uint64) Effect {
	if math.IsNaN(rate) {
		rate = 0
	}
	rate = min(max(rate, 0), 1)
	if frame <= 0 {
		frame = 20 * time.Millisecond
	}
	return func(c Chunk) Chunk {
		if c.Rate <= 0 || rate == 0 {
			return c.Clone()
		}
		rng := newRNG(seed)
		n := max(SamplesFor(c.Rate, frame), 1)
		lost := make([]bool, (len(c.Samples)+n-1)/n)
		for f := range lost {
			lost[f] = rng.Float64() < rate
		}
		return concealFrames(c, n, lost)
	}
}
