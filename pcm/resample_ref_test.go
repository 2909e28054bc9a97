package pcm

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// toneSegment is the length of each tone in the tones_* fixtures.
const toneSegment = 150 * time.Millisecond

// segmentAmp fits a tone of freq to segment k of s (at rate), away from
// its edges, and returns its amplitude.
func segmentAmp(t *testing.T, s []int16, rate, k int, freq float64) float64 {
	t.Helper()
	n := SamplesFor(rate, toneSegment)
	seg := s[k*n : (k+1)*n]
	return fitTone(t, seg, rate, freq, SamplesFor(rate, 50*time.Millisecond)).amp
}

// TestResamplePassBandMatchesSox resamples tone segments at fractions of
// the output's Nyquist frequency and compares the gain of each with sox's
// rate -v on the same input: within 0.1 dB of unity and of sox up to 0.9 of
// the lower Nyquist frequency (the pass band), and the tones above it
// (1.05 and 1.25) gone, down by at least 90 dB, where sox leaves them too.
// Before the wider pass band, 7 kHz at 24 → 16 kHz lost 2.33 dB.
func TestResamplePassBandMatchesSox(t *testing.T) {
	cases := []struct {
		in, sox  string
		from, to int
		first    int // first segment
		freqs    []float64
	}{
		{"tones_24k.s16", "tones_24k.sox16k.s16", 24000, 16000, 0, []float64{4000, 6400, 7000, 7200, 8400, 10000}},
		{"tones_24k.s16", "tones_24k.sox8k.s16", 24000, 8000, 6, []float64{2000, 3200, 3500, 3600, 4200, 5000}},
		{"tones_8k.s16", "tones_8k.sox24k.s16", 8000, 24000, 0, []float64{2000, 3200, 3500, 3600}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%dto%d", tc.from, tc.to), func(t *testing.T) {
			in := refS16(t, tc.in)
			ours, err := Resample(Chunk{Rate: tc.from, Samples: in}, tc.to)
			if err != nil {
				t.Fatal(err)
			}
			sox := refS16(t, tc.sox)
			if len(sox) != ours.Len() {
				t.Fatalf("%d samples, sox %d", ours.Len(), len(sox))
			}
			nyq := float64(min(tc.from, tc.to)) / 2
			for i, f := range tc.freqs {
				k := tc.first + i
				ref := segmentAmp(t, in, tc.from, k, f)
				if f <= nyq {
					g := 20 * math.Log10(segmentAmp(t, ours.Samples, tc.to, k, f)/ref)
					gs := 20 * math.Log10(segmentAmp(t, sox, tc.to, k, f)/ref)
					t.Logf("%5.0f Hz (%.3f of Nyquist): gain %+.4f dB, sox %+.4f dB", f, f/nyq, g, gs)
					if math.Abs(g) > 0.1 || math.Abs(g-gs) > 0.1 {
						t.Errorf("%.0f Hz (%.3f of Nyquist): gain %+.4f dB, sox %+.4f dB; want within 0.1 dB of 0 and of sox", f, f/nyq, g, gs)
					}
					continue
				}
				// Above Nyquist: what is left is an alias (down) or an
				// image (up) at 2·nyq − f.
				alias := 2*nyq - f
				g := 20 * math.Log10(segmentAmp(t, ours.Samples, tc.to, k, alias)/ref)
				gs := 20 * math.Log10(segmentAmp(t, sox, tc.to, k, alias)/ref)
				t.Logf("%5.0f Hz (%.3f of Nyquist): alias at %.0f Hz %.1f dB, sox %.1f dB", f, f/nyq, alias, g, gs)
				if g > -90 {
					t.Errorf("%.0f Hz (%.3f of Nyquist): alias at %.0f Hz only %.1f dB down (sox %.1f dB), want ≤ −90 dB", f, f/nyq, alias, g, gs)
				}
			}
			if tc.from < tc.to {
				// Images of the pass-band tones, at 2·nyq − f.
				for i, f := range tc.freqs {
					ref := segmentAmp(t, in, tc.from, tc.first+i, f)
					img := 2*nyq - f
					g := 20 * math.Log10(segmentAmp(t, ours.Samples, tc.to, tc.first+i, img)/ref)
					if g > -90 {
						t.Errorf("%.0f Hz: image at %.0f Hz only %.1f dB down, want ≤ −90 dB", f, img, g)
					}
				}
			}
		})
	}
}
