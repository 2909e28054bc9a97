package pcm

import (
	"math"
	"time"
)

// This file holds the room and device effects: reverberation from a
// synthetic impulse response, echo, soft clipping, volume ramps, distance
// from the microphone, muffling and mains hum. Like the effects of
// effects.go each keeps its input's rate and length, returns new samples,
// and is safe for concurrent use.

// Reverb limits.
const (
	maxReverbTime = 4 * time.Second
	// reverbPreDelay is the gap between the direct sound and the diffuse
	// tail; the early reflections fall inside it.
	reverbPreDelay = 8 * time.Millisecond
)

// Reverb returns an Effect that places the voice in a room: the input
// convolved with a synthetic impulse response (a few early reflections,
// then exponentially decaying Gaussian noise whose level falls 60 dB in
// rt60, darkened by a one-pole low-pass at 5 kHz as air and walls absorb
// the highs), mixed with the dry signal. wet (0 to 1) is the share of
// power in the reverberant part: 0 is dry, 1 all reverberation. The
// response is normalised to unit energy, so the output keeps about the
// input's level. rt60 is clamped to (0, 4 s]; rt60 ≤ 0 or wet ≤ 0 returns
// a copy. The tail past the end of the input is cut (the length is kept).
// The same seed gives the same room.
func Reverb(rt60 time.Duration, wet float64, seed uint64) Effect {
	if math.IsNaN(wet) {
		wet = 0
	}
	wet = min(max(wet, 0), 1)
	rt60 = min(rt60, maxReverbTime)
	return func(c Chunk) Chunk {
		if rt60 <= 0 || wet == 0 || c.Rate <= 0 || len(c.Samples) == 0 {
			return c.Clone()
		}
		h := reverbIR(c.Rate, rt60, seed)
		x := toFloat(c.Samples)
		y := convolve(x, h)
		dry, wg := math.Sqrt(1-wet), math.Sqrt(wet)
		for i := range y {
			y[i] = dry*x[i] + wg*y[i]
		}
		return fromFloat(c.Rate, y)
	}
}

// reverbIR builds Reverb's impulse response at rate: unit energy, with
// no direct sound (the dry path carries it).
func reverbIR(rate int, rt60 time.Duration, seed uint64) []float64 {
	rng := newRNG(seed)
	n := max(SamplesFor(rate, rt60), 2)
	h := make([]float64, n)
	pre := min(SamplesFor(rate, reverbPreDelay), n-1)
	// Early reflections: six taps between 1 ms and the pre-delay.
	for range 6 {
		i := 1 + rng.IntN(max(pre, 1))
		h[i] += (0.4 + 0.4*rng.Float64()) * float64(1-2*rng.IntN(2))
	}
	// The diffuse tail: amplitude falls 60 dB (a factor 1000) over rt60.
	decay := math.Log(1000) / float64(n)
	lp := math.Exp(-2 * math.Pi * 5000 / float64(rate))
	var y float64
	for i := pre; i < n; i++ {
		y = (1-lp)*rng.NormFloat64() + lp*y
		h[i] += 2.5 * y * math.Exp(-decay*float64(i))
	}
	var e float64
	for _, v := range h {
		e += v * v
	}
	g := 1 / math.Sqrt(e)
	for i := range h {
		h[i] *= g
	}
	return h
}

// Echo returns an Effect that adds repeats copies of the input, the k-th
// delayed by k·delay and attenuated by k·decayDB (a positive number of
// dB), as a hands-free phone or a line with an echo path does: an
// impulse comes back as a train of fading impulses. delay ≤ 0 or repeats
// ≤ 0 returns a copy; repeats is capped at 20.
func Echo(delay time.Duration, decayDB float64, repeats int) Effect {
	repeats = min(repeats, 20)
	g := math.Pow(10, -math.Abs(decayDB)/20)
	return func(c Chunk) Chunk {
		d := SamplesFor(c.Rate, delay)
		if d <= 0 || repeats <= 0 || math.IsNaN(decayDB) {
			return c.Clone()
		}
		y := toFloat(c.Samples)
		gain := 1.0
		for k := 1; k <= repeats; k++ {
			gain *= g
			off := k * d
			if off >= len(y) {
				break
			}
			for i := off; i < len(y); i++ {
				y[i] += gain * float64(c.Samples[i-off])
			}
		}
		return fromFloat(c.Rate, y)
	}
}

// Overdrive returns an Effect that soft-clips the audio, as a cheap
// microphone or an overloaded preamp does: the input is amplified by
// driveDB and passed through tanh, scaled so a full-scale input stays
// at full scale. Unlike Clip it rounds the peaks off, adding odd
// harmonics (a sine comes out with a third harmonic) rather than square
// corners. driveDB ≤ 0 or NaN returns a copy.
func Overdrive(driveDB float64) Effect {
	return func(c Chunk) Chunk {
		if !(driveDB > 0) {
			return c.Clone()
		}
		g := math.Pow(10, driveDB/20)
		norm := FullScale / math.Tanh(g)
		out := make([]int16, len(c.Samples))
		for i, s := range c.Samples {
			out[i] = roundClamp(norm * math.Tanh(g*float64(s)/FullScale))
		}
		return Chunk{Rate: c.Rate, Samples: out}
	}
}

// VolumeRamp returns an Effect whose gain moves linearly in decibels from
// fromDB at the first sample to toDB at the last, as a caller walking
// away from the phone (0 to −20) or turning towards it. NaN levels count
// as 0 dB.
func VolumeRamp(fromDB, toDB float64) Effect {
	if math.IsNaN(fromDB) {
		fromDB = 0
	}
	if math.IsNaN(toDB) {
		toDB = 0
	}
	return func(c Chunk) Chunk {
		out := make([]int16, len(c.Samples))
		n := len(c.Samples)
		for i, s := range c.Samples {
			db := fromDB
			if n > 1 {
				db += (toDB - fromDB) * float64(i) / float64(n-1)
			}
			out[i] = roundClamp(float64(s) * math.Pow(10, db/20))
		}
		return Chunk{Rate: c.Rate, Samples: out}
	}
}

// distanceRef is the talker-to-microphone distance at which Distance
// changes nothing: a handset against the cheek.
const distanceRef = 0.05

// Distance returns an Effect that moves the talker meters away from the
// microphone (a speakerphone across the table at 1, the far side of a
// room at 3): the level falls with the inverse-distance law from 5 cm
// (−26 dB at 1 m), the highs fall with distance (a second-order low-pass
// from 12 kHz at 5 cm down to 3 kHz at 4 m), and the room's reverberation
// (Reverb, rt60 400 ms) grows from none to most of the sound. meters at
// or below 0.05 returns a copy. The same seed gives the same room.
func Distance(meters float64, seed uint64) Effect {
	return func(c Chunk) Chunk {
		if !(meters > distanceRef) || c.Rate <= 0 {
			return c.Clone()
		}
		m := min(meters, 20)
		span := math.Log(m/distanceRef) / math.Log(4/distanceRef) // 0 at 5 cm, 1 at 4 m
		cut := 12000 * math.Pow(3000.0/12000, min(span, 1.2))
		wet := min(0.85, 0.9*span)
		out := Reverb(400*time.Millisecond, wet, seed)(c)
		x := filterCascade(toFloat(out.Samples), lowPass(2, cut, c.Rate))
		g := distanceRef / m
		for i := range x {
			x[i] *= g
		}
		return fromFloat(c.Rate, x)
	}
}

// Muffled returns an Effect that muffles the voice, as a hand over the
// microphone, a phone in a pocket or a mask does: a fourth-order
// Butterworth low-pass at cutoffHz (−3 dB there, −24 dB an octave above).
// cutoffHz ≤ 0 means 800 Hz; a cutoff at or above the Nyquist frequency
// returns a copy.
func Muffled(cutoffHz float64) Effect {
	if !(cutoffHz > 0) {
		cutoffHz = 800
	}
	return func(c Chunk) Chunk {
		secs := lowPass(4, cutoffHz, c.Rate)
		if secs == nil {
			return c.Clone()
		}
		return fromFloat(c.Rate, filterCascade(toFloat(c.Samples), secs))
	}
}

// Hum returns an Effect that adds mains hum, as a ground loop or a cheap
// charger does: a tone at freqHz (50 or 60) with its 2nd to 5th
// harmonics at −6, −10, −14 and −18 dB, snrDB below the input's active
// level (as WhiteNoise measures it). Silent input comes back unchanged.
// freqHz ≤ 0 means 50 Hz.
func Hum(freqHz, snrDB float64) Effect {
	if !(freqHz > 0) {
		freqHz = 50
	}
	return func(c Chunk) Chunk {
		level := ActiveRMS(c)
		if level == 0 || math.IsNaN(snrDB) || math.IsInf(snrDB, 1) {
			return c.Clone()
		}
		noise := make([]float64, len(c.Samples))
		amps := []float64{1, 0.5, 0.316, 0.2, 0.126}
		for i := range noise {
			t := float64(i) / float64(c.Rate)
			for h, a := range amps {
				f := freqHz * float64(h+1)
				if f < float64(c.Rate)/2 {
					noise[i] += a * math.Sin(2*math.Pi*f*t)
				}
			}
		}
		return addScaled(c, noise, level, snrDB)
	}
}
