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

// MulawSample returns the G.711 µ-law code of one sample.
func MulawSample(s int16) byte { return mulawTables.encode[encodeIndex(s)] }

// MulawValue returns the linear value of one G.711 µ-law code.
func MulawValue(code byte) int16 { return mulawTables.decode[code] }

// AlawSample returns the G.711 A-law code of one sample.
func AlawSample(s int16) byte { return alawTables.encode[encodeIndex(s)] }

// AlawValue returns the linear value of one G.711 A-law code.
func AlawValue(code byte) int16 { return alawTables.decode[code] }

// MulawToChunk decodes G.711 µ-law bytes, as telephony carries them, into
// a new 8 kHz Chunk.
func MulawToChunk(b []byte) Chunk {
	return Chunk{Rate: Rate8k, Samples: DecodeMulaw(make([]int16, 0, len(b)), b)}
}

// AlawToChunk decodes G.711 A-law bytes into a new 8 kHz Chunk.
func AlawToChunk(b []byte) Chunk {
	return Chunk{Rate: Rate8k, Samples: DecodeAlaw(make([]int16, 0, len(b)), b)}
}

// ChunkToMulaw encodes c as G.711 µ-law bytes for telephony. G.711 is
// defined at 8 kHz, so c must be at 8 kHz: other rates are an error (a rate
// that is not positive is ErrBadRate).
func ChunkToMulaw(c Chunk) ([]byte, error) {
	if err := checkG711Rate(c, "µ-law"); err != nil {
		return nil, err
	}
	return EncodeMulaw(make([]byte, 0, len(c.Samples)), c.Samples), nil
}

// ChunkToAlaw encodes c as G.711 A-law bytes for telephony. Like
// ChunkToMulaw, it needs c at 8 kHz.
func ChunkToAlaw(c Chunk) ([]byte, error) {
	if err := checkG711Rate(c, "A-law"); err != nil {
		return nil, err
	}
	return EncodeAlaw(make([]byte, 0, len(c.Samples)), c.Samples), nil
}

// checkG711Rate reports whether c can be G.711-encoded as it is.
//
// TODO(lead): once pcm/resample.go lands, resample instead of failing:
// c, err = Resample(c, Rate8k) in ChunkToMulaw and ChunkToAlaw, and drop the
// rate error here.
func checkG711Rate(c Chunk, law string) error {
	if err := c.Validate(); err != nil {
		return fmt.Errorf("pcm: encoding %s: %w", law, err)
	}
	if c.Rate != Rate8k {
		return fmt.Errorf("pcm: encoding %s: G.711 audio is 8000 Hz but the chunk is %d Hz; resample it to 8000 Hz first", law, c.Rate)
	}
	return nil
}
