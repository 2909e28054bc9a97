package pcm

import (
	"encoding/binary"
	"testing"
)

// fuzzG711 checks one companding law on arbitrary bytes, read both as codes
// and as little-endian samples.
func fuzzG711(t *testing.T, b []byte, bounds *[1 << 16]int32, negZero int,
	enc func([]byte, []int16) []byte, dec func([]int16, []byte) []int16,
	encOne func(int16) byte, decOne func(byte) int16) {
	// As codes: decoding then encoding gives the codes back, except that
	// µ-law's negative zero (0x7F) comes back as positive zero (0xFF), as
	// ffmpeg does.
	samples := dec([]int16{-5}, b)
	if len(samples) != 1+len(b) || samples[0] != -5 {
		t.Fatalf("decode did not append %d samples to the prefix: %v", len(b), samples)
	}
	codes := enc([]byte{0xAB}, samples[1:])
	if len(codes) != 1+len(b) || codes[0] != 0xAB {
		t.Fatalf("encode did not append %d codes to the prefix", len(b))
	}
	for i, c := range b {
		want := c
		if int(c) == negZero {
			want = 0xFF
		}
		if codes[1+i] != want {
			t.Fatalf("code 0x%02X → %d → 0x%02X, want 0x%02X", c, samples[1+i], codes[1+i], want)
		}
		if decOne(c) != samples[1+i] {
			t.Fatalf("single-sample decode of 0x%02X = %d, bulk %d", c, decOne(c), samples[1+i])
		}
	}

	// As samples: encoding then decoding stays within the quantisation
	// step of each sample.
	src := make([]int16, len(b)/2)
	for i := range src {
		src[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
	}
	back := dec(nil, enc(nil, src))
	for i, s := range src {
		diff := int32(back[i]) - int32(s)
		if diff < 0 {
			diff = -diff
		}
		if limit := bounds[uint16(s)]; diff > limit {
			t.Fatalf("sample %d → 0x%02X → %d: error %d exceeds %d", s, encOne(s), back[i], diff, limit)
		}
	}
}

func g711Seeds(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0x7F, 0xFF, 0x00, 0x80, 0x55, 0xD5})
	f.Add(allCodes())
	f.Add(EncodePCM16(nil, []int16{-32768, 32767, 0, -1, 1, 8, -8, 4000}))
}

func FuzzMulaw(f *testing.F) {
	g711Seeds(f)
	bounds := g711Bounds(mulawTables)
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzG711(t, b, bounds, 0x7F, EncodeMulaw, DecodeMulaw, LinearToMulaw, MulawToLinear)
	})
}

func FuzzAlaw(f *testing.F) {
	g711Seeds(f)
	bounds := g711Bounds(alawTables)
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzG711(t, b, bounds, -1, EncodeAlaw, DecodeAlaw, LinearToAlaw, AlawToLinear)
	})
}

// g711Bounds returns g711MaxError for every sample, indexed by the sample
// as uint16, so that the fuzz function does not recompute it.
func g711Bounds(tables *g711Tables) *[1 << 16]int32 {
	b := new([1 << 16]int32)
	for _, s := range allSamples() {
		b[uint16(s)] = g711MaxError(&tables.decode, s)
	}
	return b
}
