package pcm

import (
	"math"
	"math/rand/v2"
	"time"
)

// This file holds a formant speech synthesiser that babbles: speech-like
// sound with a talker's pitch, syllables, vowels, consonants and pauses,
// but no words. Background scenes use it for crowd babble, so that no
// recorded sample is needed.

// vowelFormants are the first three formants (Hz) of six English vowels
// (Peterson and Barney's averages for adult talkers).
var vowelFormants = [...][3]float64{
	{270, 2290, 3010}, // i
	{530, 1840, 2480}, // ɛ
	{730, 1090, 2440}, // a
	{570, 840, 2410},  // ɔ
	{300, 870, 2240},  // u
	{500, 1500, 2500}, // ə
}

// resonator is a two-pole resonator (Klatt's), unity gain at DC.
type resonator struct {
	a, b, c float64
	y1, y2  float64
}

func (r *resonator) set(freq, bw float64, rate int) {
	fs := float64(rate)
	freq = min(freq, 0.45*fs)
	r.c = -math.Exp(-2 * math.Pi * bw / fs)
	r.b = 2 * math.Exp(-math.Pi*bw/fs) * math.Cos(2*math.Pi*freq/fs)
	r.a = 1 - r.b - r.c
}

func (r *resonator) step(x float64) float64 {
	y := r.a*x + r.b*r.y1 + r.c*r.y2
	r.y2, r.y1 = r.y1, y
	return y
}

// talkerGen streams one synthetic talker. Its output has roughly unit
// RMS while it speaks.
type talkerGen struct {
	rate  int
	rng   *rand.Rand
	f0    float64 // the talker's mean pitch
	scale float64 // formant scale: smaller vocal tracts, higher formants

	kind   int // segPause, segVowel or segFricative
	left   int // samples left in the segment
	length int // the segment's length
	phase  float64
	pitch  float64
	form   [3]resonator
	fric   [2]resonator
	glott  float64 // one-pole glottal low-pass state
	sylls  int     // syllables left in the phrase
}

const (
	segPause = iota
	segVowel
	segFricative
)

// newTalker returns a talker with a random voice: a man (pitch 95–135
// Hz) or a woman (180–240 Hz, formants 15 % higher).
func newTalker(rate int, rng *rand.Rand) *talkerGen {
	t := &talkerGen{rate: rate, rng: rng, scale: 1}
	if rng.IntN(2) == 0 {
		t.f0 = 95 + 40*rng.Float64()
	} else {
		t.f0, t.scale = 180+60*rng.Float64(), 1.15
	}
	t.kind = segPause
	t.left = rng.IntN(SamplesFor(rate, 600*time.Millisecond) + 1)
	t.length = max(t.left, 1)
	return t
}

// next starts the talker's next segment.
func (t *talkerGen) next() {
	r := t.rng
	ms := func(lo, hi int) int {
		return max(SamplesFor(t.rate, time.Duration(lo+r.IntN(hi-lo+1))*time.Millisecond), 1)
	}
	switch {
	case t.sylls <= 0:
		// A pause between phrases, then a phrase of 3–12 syllables.
		t.kind, t.length = segPause, ms(150, 700)
		t.sylls = 3 + r.IntN(10)
	case t.kind == segVowel && r.IntN(3) == 0:
		// A short gap between words.
		t.kind, t.length = segPause, ms(20, 90)
	case t.kind != segFricative && r.IntN(3) == 0:
		// A fricative (s, sh, f) before the next vowel.
		t.kind, t.length = segFricative, ms(40, 110)
		centre := (2500 + 3500*r.Float64()) * t.scale
		t.fric[0].set(centre, 900, t.rate)
		t.fric[1].set(centre*1.3, 1400, t.rate)
	default:
		t.kind, t.length = segVowel, ms(80, 260)
		v := vowelFormants[r.IntN(len(vowelFormants))]
		bws := [3]float64{80, 110, 160}
		for i := range t.form {
			t.form[i].set(v[i]*t.scale*(0.95+0.1*r.Float64()), bws[i], t.rate)
		}
		// Intonation: each syllable a little off the mean, falling at
		// the end of a phrase.
		t.pitch = t.f0 * (0.85 + 0.3*r.Float64())
		if t.sylls == 1 {
			t.pitch *= 0.85
		}
		t.sylls--
	}
	t.left = t.length
}

// fill adds the talker's next len(dst) samples to dst.
func (t *talkerGen) fill(dst []float64) {
	glottA := math.Exp(-2 * math.Pi * 700 / float64(t.rate))
	for i := range dst {
		if t.left <= 0 {
			t.next()
		}
		pos := t.length - t.left
		t.left--
		// A raised-cosine envelope over the segment, with 15 ms edges.
		edge := max(SamplesFor(t.rate, 15*time.Millisecond), 1)
		env := 1.0
		if pos < edge {
			env = 0.5 - 0.5*math.Cos(math.Pi*float64(pos)/float64(edge))
		} else if rem := t.length - pos; rem < edge {
			env = 0.5 - 0.5*math.Cos(math.Pi*float64(rem)/float64(edge))
		}
		var v float64
		switch t.kind {
		case segVowel:
			// A pulse train at the syllable's pitch, drooping 10 %
			// over the syllable, through a glottal low-pass and the
			// three formant resonators.
			f := t.pitch * (1 - 0.1*float64(pos)/float64(t.length))
			t.phase += f / float64(t.rate)
			var src float64
			if t.phase >= 1 {
				t.phase -= 1
				src = 1
			}
			t.glott = (1-glottA)*src + glottA*t.glott
			x := t.glott * 40
			for k := range t.form {
				x = t.form[k].step(x)
			}
			v = 2.2 * x * env
		case segFricative:
			x := t.rng.NormFloat64()
			v = 0.18 * (t.fric[0].step(x) + 0.6*t.fric[1].step(x)) * env
		}
		dst[i] += v
	}
}

// SynthTalkers returns n synthetic talkers, each d of babble at rate:
// speech-like sound from a formant synthesiser (a pulse train at a man's
// or a woman's pitch, with intonation, through the formants of random
// vowels; noise bands for fricatives; syllables grouped into phrases with
// pauses), with no words in it. Pass them to Babble for crowd noise that
// needs no recording. Each talker's speech is at about −20 dBFS. The same
// seed gives the same talkers; n ≤ 0, d ≤ 0 or rate ≤ 0 give none.
func SynthTalkers(n int, d time.Duration, rate int, seed uint64) []Chunk {
	if n <= 0 || d <= 0 || rate <= 0 {
		return nil
	}
	out := make([]Chunk, n)
	for i := range out {
		rng := rand.New(rand.NewPCG(seed, rngStream+uint64(i)+1))
		buf := make([]float64, SamplesFor(rate, d))
		newTalker(rate, rng).fill(buf)
		g := 0.1 * FullScale / math.Max(activeRMSFloat(buf, rate), 1e-9)
		for j := range buf {
			buf[j] *= g
		}
		out[i] = fromFloat(rate, buf)
	}
	return out
}

// activeRMSFloat is ActiveRMS of float samples.
func activeRMSFloat(x []float64, rate int) float64 {
	n := max(SamplesFor(rate, activeFrame), 1)
	var loudest float64
	ms := func(f []float64) float64 {
		var s float64
		for _, v := range f {
			s += v * v
		}
		return s / float64(max(len(f), 1))
	}
	for i := 0; i < len(x); i += n {
		loudest = max(loudest, ms(x[i:min(i+n, len(x))]))
	}
	if loudest == 0 {
		return 0
	}
	floor := loudest * math.Pow(10, -activeRangeDB/10.0)
	var sum float64
	count := 0
	for i := 0; i < len(x); i += n {
		f := x[i:min(i+n, len(x))]
		if m := ms(f); m >= floor {
			sum += m * float64(len(f))
			count += len(f)
		}
	}
	return math.Sqrt(sum / float64(count))
}
