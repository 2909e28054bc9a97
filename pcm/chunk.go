// Package pcm holds voicetest's audio values and signal processing.
//
// The canonical value is a Chunk: signed 16-bit mono samples with their
// sample rate. On the wire, and in files, samples are little-endian (PCM16 LE).
// Around that value the package provides WAV input and output, resampling
// with an anti-aliasing filter, G.711 µ-law and A-law, mixing at sample
// offsets, gain, silence, concatenation, composable effects (noise at a
// target SNR, babble, telephone band-limit, clipping, packet loss), an energy
// voice activity detector, and DTMF generation and detection.
//
// Invalid input is an error, never silently fixed: an odd number of PCM16
// bytes, or a sample rate that is not positive, is rejected.
//
// Functions that take a destination slice (dst) append to it or reuse its
// capacity, so that a caller that keeps its buffers runs without allocating.
package pcm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Common sample rates, in samples per second.
const (
	Rate8k    = 8000
	Rate16k   = 16000
	Rate22k05 = 22050
	Rate24k   = 24000
	Rate44k1  = 44100
	Rate48k   = 48000
)

// DefaultRate is voicetest's canonical sample rate: 24 kHz, as OpenAI's TTS
// and Realtime audio use.
const DefaultRate = Rate24k

// ErrOddLength reports PCM16 data whose byte count is odd, so the last sample
// is incomplete. The data is rejected rather than truncated.
var ErrOddLength = errors.New("pcm: odd number of bytes in PCM16 data")

// ErrBadRate reports a sample rate that is zero or negative.
var ErrBadRate = errors.New("pcm: sample rate must be positive")

// Chunk is a run of signed 16-bit mono samples at a sample rate.
//
// A Chunk is a small value; copying it shares the Samples backing array.
// The zero Chunk has no rate and is invalid for most operations; use New,
// FromBytes or Silence to build one.
type Chunk struct {
	// Rate is the sample rate in samples per second.
	Rate int
	// Samples are the audio samples, oldest first.
	Samples []int16
}

// New returns a Chunk of samples at rate, or ErrBadRate if rate ≤ 0.
func New(rate int, samples []int16) (Chunk, error) {
	if rate <= 0 {
		return Chunk{}, fmt.Errorf("%w: got %d", ErrBadRate, rate)
	}
	return Chunk{Rate: rate, Samples: samples}, nil
}

// FromBytes decodes PCM16 little-endian mono bytes at rate into a new Chunk.
// An odd byte count is ErrOddLength and a rate ≤ 0 is ErrBadRate.
func FromBytes(rate int, b []byte) (Chunk, error) {
	if rate <= 0 {
		return Chunk{}, fmt.Errorf("%w: got %d", ErrBadRate, rate)
	}
	s, err := DecodePCM16(nil, b)
	if err != nil {
		return Chunk{}, err
	}
	return Chunk{Rate: rate, Samples: s}, nil
}

// DecodePCM16 appends the samples of little-endian PCM16 bytes b to dst and
// returns the extended slice. An odd byte count is ErrOddLength and nothing
// is appended.
func DecodePCM16(dst []int16, b []byte) ([]int16, error) {
	if len(b)%2 != 0 {
		return dst, fmt.Errorf("%w: %d bytes (send whole 2-byte samples)", ErrOddLength, len(b))
	}
	n := len(b) / 2
	dst = grow(dst, n)
	out := dst[len(dst)-n:]
	for i := range out {
		out[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return dst, nil
}

// EncodePCM16 appends samples to dst as little-endian PCM16 bytes and returns
// the extended slice.
func EncodePCM16(dst []byte, samples []int16) []byte {
	n := 2 * len(samples)
	if cap(dst)-len(dst) < n {
		nd := make([]byte, len(dst), len(dst)+n)
		copy(nd, dst)
		dst = nd
	}
	dst = dst[:len(dst)+n]
	out := dst[len(dst)-n:]
	for i, s := range samples {
		binary.LittleEndian.PutUint16(out[2*i:], uint16(s))
	}
	return dst
}

// grow extends s by n elements, reusing capacity when it can.
func grow(s []int16, n int) []int16 {
	if cap(s)-len(s) < n {
		ns := make([]int16, len(s), len(s)+n)
		copy(ns, s)
		s = ns
	}
	return s[:len(s)+n]
}

// Validate reports whether c is usable: its rate must be positive.
func (c Chunk) Validate() error {
	if c.Rate <= 0 {
		return fmt.Errorf("%w: got %d", ErrBadRate, c.Rate)
	}
	return nil
}

// Bytes returns c's samples as little-endian PCM16 bytes.
func (c Chunk) Bytes() []byte { return EncodePCM16(nil, c.Samples) }

// AppendBytes appends c's samples to dst as little-endian PCM16 bytes.
func (c Chunk) AppendBytes(dst []byte) []byte { return EncodePCM16(dst, c.Samples) }

// Len returns the number of samples in c.
func (c Chunk) Len() int { return len(c.Samples) }

// Duration returns how long c plays: Len / Rate, rounded down to the
// nanosecond. A chunk with no valid rate has zero duration.
func (c Chunk) Duration() time.Duration {
	if c.Rate <= 0 {
		return 0
	}
	return DurationOf(len(c.Samples), c.Rate)
}

// IsEmpty reports whether c holds no samples.
func (c Chunk) IsEmpty() bool { return len(c.Samples) == 0 }

// Clone returns a copy of c that shares no memory with it.
func (c Chunk) Clone() Chunk {
	return Chunk{Rate: c.Rate, Samples: append([]int16(nil), c.Samples...)}
}

// Slice returns the part of c between the offsets from and to, clamped to
// c's bounds. It shares c's samples.
func (c Chunk) Slice(from, to time.Duration) Chunk {
	i, j := SamplesFor(c.Rate, from), SamplesFor(c.Rate, to)
	i = min(max(i, 0), len(c.Samples))
	j = min(max(j, i), len(c.Samples))
	return Chunk{Rate: c.Rate, Samples: c.Samples[i:j]}
}

// Frames splits c into consecutive pieces of d each (the last may be
// shorter), sharing c's samples. A d that holds less than one sample yields
// one-sample frames.
func (c Chunk) Frames(d time.Duration) []Chunk {
	n := max(SamplesFor(c.Rate, d), 1)
	out := make([]Chunk, 0, (len(c.Samples)+n-1)/n)
	for i := 0; i < len(c.Samples); i += n {
		out = append(out, Chunk{Rate: c.Rate, Samples: c.Samples[i:min(i+n, len(c.Samples))]})
	}
	return out
}

// SamplesFor returns how many samples at rate last d, rounded to the nearest
// sample.
func SamplesFor(rate int, d time.Duration) int {
	return int((int64(d)*int64(rate) + int64(time.Second)/2) / int64(time.Second))
}

// DurationOf returns how long n samples at rate play.
func DurationOf(n, rate int) time.Duration {
	if rate <= 0 {
		return 0
	}
	return time.Duration(int64(n) * int64(time.Second) / int64(rate))
}

// Silence returns d of digital silence at rate.
func Silence(rate int, d time.Duration) Chunk {
	return Chunk{Rate: rate, Samples: make([]int16, max(SamplesFor(rate, d), 0))}
}

// Effect transforms audio. Effects compose with Chain; an effect that uses
// randomness takes its seed when it is built, so that applying it to the
// same input always gives the same output.
type Effect func(Chunk) Chunk

// Chain returns an Effect that applies effects in order. Nil effects are
// skipped; Chain() is the identity.
func Chain(effects ...Effect) Effect {
	return func(c Chunk) Chunk {
		for _, e := range effects {
			if e != nil {
				c = e(c)
			}
		}
		return c
	}
}

// clamp16 saturates v to the int16 range.
func clamp16(v int32) int16 {
	if v > 32767 {
		return 32767
	}
	if v < -32768 {
		return -32768
	}
	return int16(v)
}
