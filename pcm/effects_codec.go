package pcm

import (
	"math"
	"time"
)

// This file holds the phone-line and codec effects: narrowband G.711, a
// low-bitrate ADPCM codec, network jitter with packet loss concealment,
// and signal dropouts. Each keeps its input's rate and length.

// Law names a G.711 companding law.
type Law int

// The G.711 laws.
const (
	// MuLaw is G.711 µ-law, the North American and Japanese telephone
	// codec (Twilio Media Streams carry it).
	MuLaw Law = iota
	// ALaw is G.711 A-law, the European one.
	ALaw
)

// String names the law.
func (l Law) String() string {
	if l == ALaw {
		return "A-law"
	}
	return "µ-law"
}

// atRate8k runs f on c converted to 8 kHz and converts the result back to
// c's rate and length. A chunk that cannot be resampled comes back as a
// copy.
func atRate8k(c Chunk, f func(s []int16) []int16) Chunk {
	if c.Rate <= 0 || len(c.Samples) == 0 {
		return c.Clone()
	}
	nb, err := Resample(c, Rate8k)
	if err != nil {
		return c.Clone()
	}
	nb.Samples = f(nb.Samples)
	back, err := Resample(nb, c.Rate)
	if err != nil {
		return c.Clone()
	}
	out := make([]int16, len(c.Samples))
	copy(out, back.Samples)
	return Chunk{Rate: c.Rate, Samples: out}
}

// G711 returns an Effect that sends the audio through a narrowband G.711
// telephone channel: resampled to 8 kHz (nothing above 4 kHz survives),
// companded to 8-bit codes with law and decoded, and resampled back to
// the input's rate. It is what a caller sounds like on a landline or a
// Twilio call: about 38 dB of signal to quantisation noise on speech.
func G711(law Law) Effect {
	return func(c Chunk) Chunk {
		return atRate8k(c, func(s []int16) []int16 {
			if law == ALaw {
				return DecodeAlaw(s[:0], EncodeAlaw(nil, s))
			}
			return DecodeMulaw(s[:0], EncodeMulaw(nil, s))
		})
	}
}

// LowBitrateCodec returns an Effect that sends the audio through a
// low-bitrate narrowband codec, as a mobile network does: the
// telephone band (TelephoneBand), 8 kHz, and adaptive differential PCM
// (ADPCM, in the manner of ITU-T G.726, not bit-exact) at kbps of 16,
// 24, 32 or 40 kilobits per second: 2 to 5 bits per sample, with a fixed
// first-order predictor and a step size that adapts to the signal
// (Jayant's rule). Fewer bits give more granular noise and a harsher
// sound: about 8 dB SNR at 16 kbps, 20 dB at 32. Other rates are rounded
// to the nearest of those four.
func LowBitrateCodec(kbps int) Effect {
	bitsPer := min(max((kbps+4)/8, 2), 5)
	band := TelephoneBand()
	return func(c Chunk) Chunk {
		return atRate8k(band(c), func(s []int16) []int16 { return adpcm(s, bitsPer) })
	}
}

// Jayant step multipliers by quantiser magnitude index, per bit depth.
var adpcmMultipliers = map[int][]float64{
	2: {0.8, 1.6},
	3: {0.9, 0.9, 1.25, 1.75},
	4: {0.9, 0.9, 0.9, 0.9, 1.2, 1.6, 2.0, 2.4},
	5: {0.85, 0.85, 0.85, 0.85, 0.85, 0.85, 0.85, 0.85, 1.2, 1.4, 1.6, 1.8, 2.0, 2.2, 2.4, 2.6},
}

// adpcm encodes s with bits bits per sample and returns the decoded
// samples (in place). The decoder runs in the encoder's loop, so what is
// returned is exactly what a receiver would hear.
func adpcm(s []int16, bits int) []int16 {
	mult := adpcmMultipliers[bits]
	levels := len(mult) // magnitudes per sign
	const a = 0.9       // predictor coefficient
	step, minStep, maxStep := 16.0, 4.0, 8000.0
	var prev float64
	for i, v := range s {
		pred := a * prev
		e := float64(v) - pred
		// Mid-rise quantiser: magnitude index k covers [k·step, (k+1)·step).
		k := min(int(math.Abs(e)/step), levels-1)
		q := (float64(k) + 0.5) * step
		if e < 0 {
			q = -q
		}
		rec := pred + q
		rec = min(max(rec, -32768), 32767)
		s[i] = roundClamp(rec)
		prev = rec
		step = min(max(step*mult[k], minStep), maxStep)
	}
	return s
}

// Jitter settings: packets follow each other every frame; each packet's
// network delay is a correlated random walk around its mean, with this
// correlation from one packet to the next.
const jitterCorrelation = 0.8

// Jitter returns an Effect for a network path with delay jitter behind
// a fixed jitter buffer, as VoIP and mobile calls have: each 20 ms packet
// (frame ≤ 0 means 20 ms) gets a network delay that varies around its
// mean with standard deviation jitter, correlated from packet to packet
// (so late packets come in bursts, as congestion makes them). The
// receiver waits buffer beyond the mean delay; a packet later than that
// misses its playout time and is concealed as PacketLoss conceals a lost
// one (repeated, then faded out after 60 ms). So with buffer ≥ 3·jitter
// almost nothing is lost, and with buffer 0 about half the packets are.
// The fixed delay itself is not added (the length and alignment are
// kept). Its losses are drawn from the seed and the audio itself, so the
// same audio and seed always give the same output, while two different
// utterances through one Jitter lose different packets, as on a real
// line.
func Jitter(jitter, buffer, frame time.Duration, seed uint64) Effect {
	if frame <= 0 {
		frame = 20 * time.Millisecond
	}
	return func(c Chunk) Chunk {
		if c.Rate <= 0 || jitter <= 0 || len(c.Samples) == 0 {
			return c.Clone()
		}
		rng := newRNG(seed ^ contentHash(c.Samples))
		n := max(SamplesFor(c.Rate, frame), 1)
		frames := (len(c.Samples) + n - 1) / n
		late := make([]bool, frames)
		sd := float64(jitter)
		innov := sd * math.Sqrt(1-jitterCorrelation*jitterCorrelation)
		d := rng.NormFloat64() * sd
		for i := range late {
			late[i] = d > float64(buffer)
			d = jitterCorrelation*d + innov*rng.NormFloat64()
		}
		return concealFrames(c, n, late)
	}
}

// concealFrames returns c with the frames of n samples marked lost
// replaced by packet loss concealment, as PacketLoss does.
func concealFrames(c Chunk, n int, lost []bool) Chunk {
	out := Chunk{Rate: c.Rate, Samples: make([]int16, len(c.Samples))}
	copy(out.Samples, c.Samples)
	hold := SamplesFor(c.Rate, plcHold)
	fadeEnd := max(SamplesFor(c.Rate, plcFadeOut), hold+1)
	merge := min(SamplesFor(c.Rate, plcMerge), n)
	s := out.Samples
	var last []int16
	burst := 0
	conceal := func(d int) float64 {
		if len(last) == 0 || d >= fadeEnd {
			return 0
		}
		m := len(last)
		k := d % (2 * m)
		var v float64
		if k < m {
			v = float64(last[m-1-k])
		} else {
			v = float64(last[k-m])
		}
		if d > hold {
			v *= float64(fadeEnd-d) / float64(fadeEnd-hold)
		}
		return v
	}
	for f, start := 0, 0; start < len(s); f, start = f+1, start+n {
		fr := s[start:min(start+n, len(s))]
		if lost[f] {
			for i := range fr {
				fr[i] = roundClamp(conceal(burst + i))
			}
			burst += len(fr)
			continue
		}
		if burst > 0 {
			for i := 0; i < merge && i < len(fr); i++ {
				w := float64(i+1) / float64(merge+1)
				fr[i] = roundClamp(w*float64(fr[i]) + (1-w)*conceal(burst+i))
			}
			burst = 0
		}
		last = fr
	}
	return out
}

// contentHash is the FNV-1a hash of samples, for effects whose random
// choices follow the audio as well as the seed.
func contentHash(s []int16) uint64 {
	h := uint64(14695981039346656037)
	for _, v := range s {
		h ^= uint64(uint16(v))
		h *= 1099511628211
	}
	return h
}

// dropoutFade is the fade at each edge of a dropout.
const dropoutFade = 5 * time.Millisecond

// Dropouts returns an Effect that cuts the signal out completely now and
// then, as a mobile call does when the radio link fades or hands over
// between cells: dropouts start at random (a Poisson process of
// perMinute a minute on average), each lasting a time drawn uniformly
// from [minLen, maxLen], with 5 ms fades at its edges, and are digital
// silence in between (no concealment: the line is gone). Like Jitter it
// draws them from the seed and the audio, so the same audio and seed give
// the same dropouts and different utterances different ones.
// perMinute ≤ 0 or maxLen ≤ 0 returns a copy; minLen is clamped to
// [0, maxLen].
func Dropouts(perMinute float64, minLen, maxLen time.Duration, seed uint64) Effect {
	minLen = min(max(minLen, 0), maxLen)
	return func(c Chunk) Chunk {
		out := c.Clone()
		if !(perMinute > 0) || maxLen <= 0 || c.Rate <= 0 {
			return out
		}
		rng := newRNG(seed ^ contentHash(c.Samples))
		meanGap := float64(c.Rate) * 60 / perMinute
		fade := max(SamplesFor(c.Rate, dropoutFade), 1)
		pos := int(rng.ExpFloat64() * meanGap)
		for pos < len(out.Samples) {
			l := minLen
			if span := maxLen - minLen; span > 0 {
				l += time.Duration(rng.Int64N(int64(span) + 1))
			}
			n := max(SamplesFor(c.Rate, l), 1)
			for i := max(pos-fade, 0); i < min(pos+n+fade, len(out.Samples)); i++ {
				var w float64
				switch {
				case i < pos:
					w = float64(pos-i) / float64(fade)
				case i >= pos+n:
					w = float64(i-pos-n+1) / float64(fade)
				}
				out.Samples[i] = roundClamp(w * float64(out.Samples[i]))
			}
			pos += n + fade + int(rng.ExpFloat64()*meanGap)
		}
		return out
	}
}
