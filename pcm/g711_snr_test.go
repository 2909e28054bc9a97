package pcm

import (
	"math"
	"testing"
)

// g711SNR returns the signal-to-noise ratio, in dB, of a 1 kHz-ish sine at
// level dBFS after a G.711 round trip.
func g711SNR(level float64, enc func([]byte, []int16) []byte, dec func([]int16, []byte) []int16) float64 {
	amp := 32767 * math.Pow(10, level/20)
	src := make([]int16, Rate8k)
	for i := range src {
		src[i] = int16(math.Round(amp * math.Sin(2*math.Pi*1013*float64(i)/Rate8k)))
	}
	back := dec(nil, enc(nil, src))
	var sig, noise float64
	for i, s := range src {
		d := float64(back[i]) - float64(s)
		sig += float64(s) * float64(s)
		noise += d * d
	}
	return 10 * math.Log10(sig/noise)
}

// TestG711SNR checks the codecs' signal-to-noise ratio on a sine across
// levels: G.711's logarithmic steps keep it between 33 and 38 dB from -3
// to -40 dBFS; below that both fall, A-law faster (its lowest segment is
// coarser than µ-law's). The limits are a little under the measured values.
func TestG711SNR(t *testing.T) {
	for _, tc := range []struct {
		level             float64
		minMulaw, minAlaw float64
	}{
		{-3, 36, 36}, {-10, 36, 35}, {-20, 36, 36}, {-30, 33, 35}, {-40, 32, 31}, {-50, 25, 21},
	} {
		mu := g711SNR(tc.level, EncodeMulaw, DecodeMulaw)
		a := g711SNR(tc.level, EncodeAlaw, DecodeAlaw)
		t.Logf("sine at %3.0f dBFS: µ-law SNR %.1f dB, A-law SNR %.1f dB", tc.level, mu, a)
		if mu < tc.minMulaw || a < tc.minAlaw {
			t.Errorf("sine at %.0f dBFS: SNR µ-law %.1f dB (want ≥ %.0f), A-law %.1f dB (want ≥ %.0f)", tc.level, mu, tc.minMulaw, a, tc.minAlaw)
		}
	}
}
