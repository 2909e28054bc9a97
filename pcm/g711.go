package pcm

import (
	"fmt"
	"slices"
)

// G.711 companding, µ-law (North America, Japan) and A-law (elsewhere), as
// telephone networks and Twilio Media Streams carry voice: one byte per
// sample at 8 kHz.
//
// Decoding follows ITU-T G.711. Encoding picks, for each sample, the code
// whose decoded value is nearest in the 14-bit domain (the sample shifted
// right by two bits), with the rounding that FFmpeg's pcm_mulaw and pcm_alaw
// encoders use, so that the bytes this package produces are identical to
// FFmpeg's. Both directions are table lookups: 256 entries to decode, 16384
// to encode. The tables are computed once when the package is initialised
// and only read afterwards.

// G.711 code constants.
const (
	// mulawMask is what µ-law XORs into a level index (0 = smallest
	// magnitude, 127 = largest) to give the positive code; its positive
	// zero is 0xFF.
	mulawMask = 0xFF
	// alawMask is A-law's equivalent: A-law inverts the even bits (0x55)
	// and sets the sign bit for positive values.
	alawMask = 0xD5
	// g711Levels is the number of magnitude levels per sign.
	g711Levels = 128
	// g711EncodeSize is the number of entries in an encode table: one per
	// 14-bit value.
	g711EncodeSize = 1 << 14
)

// g711Tables holds the decode and encode tables of one companding law.
type g711Tables struct {
	decode [256]int16
	encode [g711EncodeSize]byte
}

// Read-only after package initialisation.
var (
	mulawTables = newG711Tables(mulawMask, mulawDecodeFormula)
	alawTables  = newG711Tables(alawMask, alawDecodeFormula)
)

// mulawDecodeFormula returns the linear value of µ-law code u per G.711:
// the code is stored inverted; its low nibble is the mantissa, bits 4–6 the
// segment (exponent), bit 7 set (after inversion) means negative. Values
// carry a bias of 33 (132 = 33 << 2) that is removed after scaling.
func mulawDecodeFormula(u byte) int16 {
	u = ^u
	const bias = 0x84
	mantissa := int32(u & 0x0F)
	segment := (u >> 4) & 0x07
	mag := ((mantissa<<3)+bias)<<segment - bias
	if u&0x80 != 0 {
		return int16(-mag)
	}
	return int16(mag)
}

// alawDecodeFormula returns the linear value of A-law code a per G.711:
// even bits are inverted on the line (XOR 0x55); the low nibble is the
// mantissa, bits 4–6 the segment, bit 7 set means positive. Segment 0 is
// linear; higher segments add the implicit leading one (32) before scaling.
func alawDecodeFormula(a byte) int16 {
	a ^= 0x55
	mantissa := int32(a & 0x0F)
	segment := (a >> 4) & 0x07
	var mag int32
	if segment == 0 {
		mag = (2*mantissa + 1) << 3
	} else {
		mag = (2*mantissa + 1 + 32) << (segment + 2)
	}
	if a&0x80 != 0 {
		return int16(mag)
	}
	return int16(-mag)
}

// newG711Tables builds the tables of the law whose positive code for
// magnitude level i is i^mask and whose decoder is dec.
//
// The encoder works on 14-bit values x = sample>>2 (arithmetic shift). For
// a magnitude m = |x|, the level is the number of decision thresholds at or
// below m, where the threshold between levels i and i+1 is the midpoint of
// their decoded values in the 14-bit domain, rounded half up:
// (dec(i) + dec(i+1) + 4) >> 3. Zero is the positive level-0 code, and the
// one value with no positive counterpart, -8192, is treated as -8191.
func newG711Tables(mask byte, dec func(byte) int16) *g711Tables {
	t := new(g711Tables)
	for c := range 256 {
		t.decode[c] = dec(byte(c))
	}
	var thresholds [g711Levels - 1]int32
	for i := range thresholds {
		lo := int32(dec(byte(i) ^ mask))
		hi := int32(dec(byte(i+1) ^ mask))
		thresholds[i] = (lo + hi + 4) >> 3
	}
	level := 0
	for m := range int32(g711EncodeSize / 2) {
		for level < len(thresholds) && thresholds[level] <= m {
			level++
		}
		pos := byte(level) ^ mask
		t.encode[g711EncodeSize/2+m] = pos // x = +m
		if m > 0 {
			t.encode[g711EncodeSize/2-m] = pos ^ 0x80 // x = -m
		}
	}
	t.encode[0] = t.encode[1] // x = -8192 → as -8191
	return t
}

// encodeIndex maps a 16-bit sample to its encode-table index: the 14-bit
// value sample>>2, offset to be non-negative.
func encodeIndex(s int16) uint16 {
	return (uint16(s) ^ 0x8000) >> 2
}

// encodeG711 appends the codes of src to dst using table enc.
func encodeG711(enc *[g711EncodeSize]byte, dst []byte, src []int16) []byte {
	n := len(dst)
	dst = slices.Grow(dst, len(src))[:n+len(src)]
	out := dst[n:]
	out = out[:len(src)]
	// Eight at a time: one bounds check and one loop branch per eight.
	for len(src) >= 8 && len(out) >= 8 {
		s, o := src[:8], out[:8]
		o[0], o[1], o[2], o[3] = enc[encodeIndex(s[0])], enc[encodeIndex(s[1])], enc[encodeIndex(s[2])], enc[encodeIndex(s[3])]
		o[4], o[5], o[6], o[7] = enc[encodeIndex(s[4])], enc[encodeIndex(s[5])], enc[encodeIndex(s[6])], enc[encodeIndex(s[7])]
		src, out = src[8:], out[8:]
	}
	out = out[:len(src)]
	for i, s := range src {
		out[i] = enc[encodeIndex(s)]
	}
	return dst
}

// decodeG711 appends the samples of the codes src to dst using table dec.
func decodeG711(dec *[256]int16, dst []int16, src []byte) []int16 {
	n := len(dst)
	dst = grow(dst, len(src))
	out := dst[n:]
	out = out[:len(src)]
	for len(src) >= 8 && len(out) >= 8 {
		s, o := src[:8], out[:8]
		o[0], o[1], o[2], o[3] = dec[s[0]], dec[s[1]], dec[s[2]], dec[s[3]]
		o[4], o[5], o[6], o[7] = dec[s[4]], dec[s[5]], dec[s[6]], dec[s[7]]
		src, out = src[8:], out[8:]
	}
	out = out[:len(src)]
	for i, b := range src {
		out[i] = dec[b]
	}
	return dst
}

// EncodeMulaw appends the G.711 µ-law codes of the samples src to dst and
// returns the extended slice: one byte per sample. It allocates only when
// dst lacks capacity. The codes equal FFmpeg's pcm_mulaw encoder's.
func EncodeMulaw(dst []byte, src []int16) []byte {
	return encodeG711(&mulawTables.encode, dst, src)
}

// DecodeMulaw appends the samples of the G.711 µ-law codes src to dst and
// returns the extended slice. Every byte is a valid code; 0x7F and 0xFF
// both decode to 0 (µ-law's negative and positive zero). It allocates only
// when dst lacks capacity.
func DecodeMulaw(dst []int16, src []byte) []int16 {
	return decodeG711(&mulawTables.decode, dst, src)
}

// EncodeAlaw appends the G.711 A-law codes of the samples src to dst and
// returns the extended slice: one byte per sample. It allocates only when
// dst lacks capacity. The codes equal FFmpeg's pcm_alaw encoder's.
func EncodeAlaw(dst []byte, src []int16) []byte {
	return encodeG711(&alawTables.encode, dst, src)
}

// DecodeAlaw appends the samples of the G.711 A-law codes src to dst and
// returns the extended slice. Every byte is a valid code. It allocates only
// when dst lacks capacity.
func DecodeAlaw(dst []int16, src []byte) []int16 {
	return decodeG711(&alawTables.decode, dst, src)
}

// LinearToMulaw returns the G.711 µ-law code of one sample.
func LinearToMulaw(s int16) byte { return mulawTables.encode[encodeIndex(s)] }

// MulawToLinear returns the linear value of one G.711 µ-law code.
func MulawToLinear(code byte) int16 { return mulawTables.decode[code] }

// LinearToAlaw returns the G.711 A-law code of one sample.
func LinearToAlaw(s int16) byte { return alawTables.encode[encodeIndex(s)] }

// AlawToLinear returns the linear value of one G.711 A-law code.
func AlawToLinear(code byte) int16 { return alawTables.decode[code] }

// MulawToChunk decodes G.711 µ-law bytes, as telephony carries them, into
// a new 8 kHz Chunk.
func MulawToChunk(b []byte) Chunk {
	return Chunk{Rate: Rate8k, Samples: DecodeMulaw(make([]int16, 0, len(b)), b)}
}

// AlawToChunk decodes G.711 A-law bytes into a new 8 kHz Chunk.
func AlawToChunk(b []byte) Chunk {
	return Chunk{Rate: Rate8k, Samples: DecodeAlaw(make([]int16, 0, len(b)), b)}
}

// ChunkToMulaw encodes c as G.711 µ-law bytes for telephony, resampling it
// to 8 kHz first when it is at another rate. A rate that is not positive is
// ErrBadRate.
func ChunkToMulaw(c Chunk) ([]byte, error) {
	c, err := toG711Rate(c, "µ-law")
	if err != nil {
		return nil, err
	}
	return EncodeMulaw(make([]byte, 0, len(c.Samples)), c.Samples), nil
}

// ChunkToAlaw encodes c as G.711 A-law bytes for telephony, resampling it to
// 8 kHz first like ChunkToMulaw.
func ChunkToAlaw(c Chunk) ([]byte, error) {
	c, err := toG711Rate(c, "A-law")
	if err != nil {
		return nil, err
	}
	return EncodeAlaw(make([]byte, 0, len(c.Samples)), c.Samples), nil
}

// toG711Rate returns c at 8 kHz, the rate G.711 is defined at.
func toG711Rate(c Chunk, law string) (Chunk, error) {
	if err := c.Validate(); err != nil {
		return Chunk{}, fmt.Errorf("pcm: encoding %s: %w", law, err)
	}
	if c.Rate == Rate8k {
		return c, nil
	}
	r, err := Resample(c, Rate8k)
	if err != nil {
		return Chunk{}, fmt.Errorf("pcm: encoding %s: %w", law, err)
	}
	return r, nil
}
