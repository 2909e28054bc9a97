package pcm

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrRateMismatch reports chunks with different sample rates passed where
// one rate is needed. Resample one of them first.
var ErrRateMismatch = errors.New("pcm: sample rates differ")

// ErrNegativeDuration reports an offset or padding that is negative.
var ErrNegativeDuration = errors.New("pcm: negative duration")

// FullScale is the level that 0 dBFS refers to, in sample units: the RMS of
// a full-scale square wave. A full-scale sine wave is about −3.01 dBFS.
const FullScale = 32768.0

// activeFrame and activeRange define the active (speech) level used by
// ActiveRMS: 10 ms frames, counted when their power is within 40 dB of the
// loudest frame's.
const (
	activeFrame   = 10 * time.Millisecond
	activeRangeDB = 40
)

// Mix returns a new Chunk holding dst with src added in starting offset
// into dst; the result is extended with silence when src runs past dst's
// end. Sums saturate at the int16 limits rather than wrapping. Neither input
// is modified. The offset is rounded to the nearest sample.
//
// This is how overlapping speech (a user barging in over the agent) is
// rendered. Chunks at different rates are ErrRateMismatch (resample src to
// dst's rate first); a negative offset is ErrNegativeDuration.
func Mix(dst, src Chunk, offset time.Duration) (Chunk, error) {
	if err := dst.Validate(); err != nil {
		return Chunk{}, fmt.Errorf("pcm: mix into invalid chunk: %w", err)
	}
	if err := src.Validate(); err != nil {
		return Chunk{}, fmt.Errorf("pcm: mix invalid chunk: %w", err)
	}
	if dst.Rate != src.Rate {
		return Chunk{}, fmt.Errorf("%w: mixing %d Hz audio into %d Hz audio; Resample it to %d Hz first",
			ErrRateMismatch, src.Rate, dst.Rate, dst.Rate)
	}
	if offset < 0 {
		return Chunk{}, fmt.Errorf("%w: mix offset %v (mix at 0 or later; trim the source instead)", ErrNegativeDuration, offset)
	}
	at := SamplesFor(dst.Rate, offset)
	out := make([]int16, max(len(dst.Samples), at+len(src.Samples)))
	copy(out, dst.Samples)
	MixInto(out[at:], src.Samples, 1)
	return Chunk{Rate: dst.Rate, Samples: out}, nil
}

// MixInto adds gain·src[i] to dst[i], rounding and saturating, for the
// first n = min(len(dst), len(src)) samples, and returns n. It allocates
// nothing. A NaN gain mixes nothing and returns 0.
func MixInto(dst, src []int16, gain float64) int {
	if math.IsNaN(gain) {
		return 0
	}
	n := min(len(dst), len(src))
	dst, src = dst[:n], src[:n]
	if gain == 1 {
		for i, s := range src {
			dst[i] = clamp16(int32(dst[i]) + int32(s))
		}
		return n
	}
	for i, s := range src {
		dst[i] = roundClamp(float64(dst[i]) + gain*float64(s))
	}
	return n
}

// Scale writes gain·src[i] into dst[i], rounding and saturating, for the
// first min(len(dst), len(src)) samples, and returns how many it wrote. dst
// and src may be the same slice. It allocates nothing; a NaN gain copies.
func Scale(dst, src []int16, gain float64) int {
	n := min(len(dst), len(src))
	dst, src = dst[:n], src[:n]
	if math.IsNaN(gain) || gain == 1 {
		return copy(dst, src)
	}
	for i, s := range src {
		dst[i] = roundClamp(gain * float64(s))
	}
	return n
}

// roundClamp rounds v to the nearest int16, saturating; NaN becomes 0.
func roundClamp(v float64) int16 {
	switch {
	case v >= 32767:
		return 32767
	case v <= -32768:
		return -32768
	case v >= 0:
		return int16(v + 0.5)
	case v < 0:
		return int16(v - 0.5)
	default: // NaN
		return 0
	}
}

// Gain returns an Effect that multiplies the audio by db decibels
// (10^(db/20)), rounding and saturating at the int16 limits. It keeps the
// rate and length and does not modify its input. Gain(0) and a NaN db
// return a copy.
func Gain(db float64) Effect {
	g := math.Pow(10, db/20)
	return func(c Chunk) Chunk {
		out := Chunk{Rate: c.Rate, Samples: make([]int16, len(c.Samples))}
		Scale(out.Samples, c.Samples, g)
		return out
	}
}

// Normalize returns an Effect that scales the audio so its active level
// (ActiveRMS) is targetDBFS (see DBFS), saturating at the int16 limits. It
// keeps the rate and length and does not modify its input. Silent audio,
// and a NaN or infinite target, come back as an unchanged copy.
func Normalize(targetDBFS float64) Effect {
	return func(c Chunk) Chunk {
		level := ActiveRMS(c)
		if level == 0 || math.IsNaN(targetDBFS) || math.IsInf(targetDBFS, 0) {
			return c.Clone()
		}
		out := Chunk{Rate: c.Rate, Samples: make([]int16, len(c.Samples))}
		Scale(out.Samples, c.Samples, FullScale*math.Pow(10, targetDBFS/20)/level)
		return out
	}
}

// Concat returns a new Chunk with the chunks' samples one after another.
// All chunks must have the same valid rate (else ErrRateMismatch or
// ErrBadRate), and at least one must be given, since the rate of nothing is
// unknown.
func Concat(chunks ...Chunk) (Chunk, error) {
	if len(chunks) == 0 {
		return Chunk{}, fmt.Errorf("pcm: Concat of no chunks: %w (pass at least one chunk, possibly empty, to set the rate)", ErrBadRate)
	}
	rate, n := chunks[0].Rate, 0
	for i, c := range chunks {
		if err := c.Validate(); err != nil {
			return Chunk{}, fmt.Errorf("pcm: Concat chunk %d: %w", i, err)
		}
		if c.Rate != rate {
			return Chunk{}, fmt.Errorf("%w: Concat chunk %d is %d Hz, chunk 0 is %d Hz; Resample it first", ErrRateMismatch, i, c.Rate, rate)
		}
		n += len(c.Samples)
	}
	out := make([]int16, 0, n)
	for _, c := range chunks {
		out = append(out, c.Samples...)
	}
	return Chunk{Rate: rate, Samples: out}, nil
}

// Pad returns a new Chunk with before of silence, then c, then after of
// silence (each rounded to whole samples). A negative duration is
// ErrNegativeDuration.
func Pad(c Chunk, before, after time.Duration) (Chunk, error) {
	if err := c.Validate(); err != nil {
		return Chunk{}, fmt.Errorf("pcm: pad invalid chunk: %w", err)
	}
	if before < 0 || after < 0 {
		return Chunk{}, fmt.Errorf("%w: Pad(before %v, after %v)", ErrNegativeDuration, before, after)
	}
	b, a := SamplesFor(c.Rate, before), SamplesFor(c.Rate, after)
	out := make([]int16, b+len(c.Samples)+a)
	copy(out[b:], c.Samples)
	return Chunk{Rate: c.Rate, Samples: out}, nil
}

// PadTo returns a new Chunk of c followed by silence up to d long. A c
// already at least d long comes back as a copy, not truncated.
func PadTo(c Chunk, d time.Duration) (Chunk, error) {
	if err := c.Validate(); err != nil {
		return Chunk{}, fmt.Errorf("pcm: pad invalid chunk: %w", err)
	}
	out := make([]int16, max(SamplesFor(c.Rate, d), len(c.Samples)))
	copy(out, c.Samples)
	return Chunk{Rate: c.Rate, Samples: out}, nil
}

// Downmix returns one Chunk whose samples are the mean of channels' samples
// at the same position, rounded to the nearest integer with ties up
// (towards +∞), as ffmpeg and sox mix 16-bit channels: for a stereo
// recording, (left + right) / 2. The channels must be valid, share a rate
// and have the same length; Downmix of one channel is a copy of it.
//
// Downmix(ReadWAVChannels(f)...) equals ReadWAV(f) for a file of 8- or
// 16-bit or G.711 samples. For wider samples ReadWAV mixes before rounding
// to 16 bits, so the two can differ by one at a tie.
func Downmix(channels ...Chunk) (Chunk, error) {
	if len(channels) == 0 {
		return Chunk{}, errors.New("pcm: downmix of no channels")
	}
	first := channels[0]
	for i, c := range channels {
		if err := c.Validate(); err != nil {
			return Chunk{}, fmt.Errorf("pcm: downmix: channel %d: %w", i, err)
		}
		if c.Rate != first.Rate || len(c.Samples) != len(first.Samples) {
			return Chunk{}, fmt.Errorf("pcm: downmix: channel %d is %d samples at %d Hz, channel 0 is %d samples at %d Hz; the channels of one recording must match (resample or pad them first)",
				i, len(c.Samples), c.Rate, len(first.Samples), first.Rate)
		}
	}
	out := make([]int16, len(first.Samples))
	n := int64(len(channels))
	for i := range out {
		var sum int64
		for _, c := range channels {
			sum += int64(c.Samples[i])
		}
		out[i] = int16(roundDiv(sum, n))
	}
	return Chunk{Rate: first.Rate, Samples: out}, nil
}

// RMS returns the root-mean-square level of c in sample units (0 for an
// empty chunk). DBFS converts it to decibels.
func RMS(c Chunk) float64 {
	return math.Sqrt(meanSquare(c.Samples))
}

func meanSquare(s []int16) float64 {
	if len(s) == 0 {
		return 0
	}
	var sum int64 // each square ≤ 2³⁰, so 2³³ samples fit
	for _, v := range s {
		sum += int64(v) * int64(v)
	}
	return float64(sum) / float64(len(s))
}

// Peak returns the largest absolute sample value in c, from 0 to 32768.
func Peak(c Chunk) int {
	p := 0
	for _, v := range c.Samples {
		a := int(v)
		if a < 0 {
			a = -a
		}
		p = max(p, a)
	}
	return p
}

// DBFS converts a level in sample units (an RMS, a peak) to decibels
// relative to FullScale: 32768 is 0 dBFS, 3277 about −20 dBFS, and 0 is
// −Inf.
func DBFS(level float64) float64 {
	return 20 * math.Log10(level/FullScale)
}

// ActiveRMS returns the RMS level of c's active part, in sample units: the
// level of speech without the pauses between words, which is what noise at
// a given SNR is measured against. c is cut into 10 ms frames, and the
// frames whose power is within 40 dB of the loudest frame's count as active
// (a simplification of ITU-T P.56). A steady signal's ActiveRMS equals its
// RMS; silence gives 0.
func ActiveRMS(c Chunk) float64 {
	if c.Rate <= 0 || len(c.Samples) == 0 {
		return 0
	}
	n := max(SamplesFor(c.Rate, activeFrame), 1)
	var loudest float64
	for i := 0; i < len(c.Samples); i += n {
		loudest = max(loudest, meanSquare(c.Samples[i:min(i+n, len(c.Samples))]))
	}
	if loudest == 0 {
		return 0
	}
	floor := loudest * math.Pow(10, -activeRangeDB/10.0)
	var sum float64
	count := 0
	for i := 0; i < len(c.Samples); i += n {
		f := c.Samples[i:min(i+n, len(c.Samples))]
		if ms := meanSquare(f); ms >= floor {
			sum += ms * float64(len(f))
			count += len(f)
		}
	}
	return math.Sqrt(sum / float64(count))
}
