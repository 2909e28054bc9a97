package pcm

import (
	"math/rand/v2"
	"testing"
)

// TestResamplerQuietMatchesFiltered checks the silence shortcut (outputs
// whose window holds only zeros are written as 0 without filtering): on
// random streams of noise, runs of zeros of every length and lone clicks,
// fed in random frame sizes, a Resampler with the shortcut must give
// exactly the samples of one that filters every output, on the exact bank
// (the telephony pairs) and the interpolated one.
func TestResamplerQuietMatchesFiltered(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(21, 3))
	pairs := [][2]int{{Rate24k, Rate8k}, {Rate24k, Rate16k}, {Rate16k, Rate24k}, {Rate8k, Rate24k}, {Rate48k, Rate16k},
		{Rate44k1, Rate24k}, {Rate16k, Rate16k}, {44100, 44101}, {8000, 7999}}
	for _, p := range pairs {
		quiet, err := NewResampler(p[0], p[1])
		if err != nil {
			t.Fatal(err)
		}
		loud := *quiet
		loud.buf = make([]float32, 0, cap(quiet.buf))
		loud.quiet = false
		loud.Reset()
		skipped := 0
		streams := 40
		if !quiet.exact {
			streams = 6 // the interpolated bank is slow
		}
		for range streams {
			in := quietStream(rng, 4000+rng.IntN(12000))
			var got, want []int16
			for rest := in; len(rest) > 0; {
				n := min(1+rng.IntN(5000), len(rest))
				got = quiet.Process(got, rest[:n])
				want = loud.Process(want, rest[:n])
				rest = rest[n:]
			}
			got, want = quiet.Flush(got), loud.Flush(want)
			if i := firstDiffQuiet(got, want); i >= 0 || len(got) != len(want) {
				t.Fatalf("%d→%d Hz: %d samples with the shortcut, %d filtered; first difference at %d", p[0], p[1], len(got), len(want), i)
			}
			for _, v := range want {
				if v == 0 {
					skipped++
				}
			}
		}
		if skipped == 0 {
			t.Errorf("%d→%d Hz: no silent output in %d streams: the test no longer exercises the shortcut", p[0], p[1], streams)
		}
	}
}

// TestResamplerLoudOutputs checks loudOutputs, the count of outputs whose
// window holds a non-zero sample, against stepping the outputs one by one
// from random stream positions: a count one too high only filters a silent
// window, but one too low would write 0 for an output whose window starts
// on a sample (and whose outer tap is too small to show in most tests).
func TestResamplerLoudOutputs(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 21))
	for _, p := range [][2]int{{Rate24k, Rate8k}, {Rate24k, Rate16k}, {Rate16k, Rate24k}, {Rate8k, Rate24k}, {Rate44k1, Rate24k}, {Rate16k, Rate16k}} {
		r, err := NewResampler(p[0], p[1])
		if err != nil {
			t.Fatal(err)
		}
		for range 2000 {
			r.pi = int64(rng.IntN(100000))
			r.pr = int64(rng.IntN(int(r.l)))
			r.lastLoud = r.pi - int64(r.k) + int64(rng.IntN(3*r.k)) - int64(r.k)
			n := int64(rng.IntN(500))
			want := int64(0)
			pi, pr := r.pi, r.pr
			for j := int64(0); j < n; j++ {
				if pi-int64(r.k-1) <= r.lastLoud { // the window holds lastLoud
					want = j + 1
				}
				pr += r.m
				pi += pr / r.l
				pr %= r.l
			}
			if got := r.loudOutputs(n); got != want {
				t.Fatalf("%d→%d Hz at input %d phase %d, last loud sample %d, %d outputs: loudOutputs %d, want %d",
					p[0], p[1], r.pi, r.pr, r.lastLoud, n, got, want)
			}
		}
	}
}

// quietStream returns n samples of noise segments, runs of zeros of all
// lengths and lone clicks in silence.
func quietStream(rng *rand.Rand, n int) []int16 {
	s := make([]int16, 0, n)
	for len(s) < n {
		switch rng.IntN(4) {
		case 0: // noise, sometimes loud enough to clip
			amp := int32(1 + rng.IntN(40000))
			for range 1 + rng.IntN(2000) {
				s = append(s, int16(max(-32768, min(32767, rng.Int32N(2*amp+1)-amp))))
			}
		case 1, 2: // silence, short or long
			s = append(s, make([]int16, 1+rng.IntN(3000))...)
		case 3: // a click
			s = append(s, int16(rng.IntN(65536)-32768))
		}
	}
	return s[:n]
}

func firstDiffQuiet(a, b []int16) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// TestLastNonZero checks lastNonZero on every position of the last
// non-zero sample in slices of up to 40 samples, and on all-zero ones.
func TestLastNonZero(t *testing.T) {
	for n := range 41 {
		if got := lastNonZero(make([]int16, n)); got != -1 {
			t.Fatalf("%d zeros: lastNonZero %d, want -1", n, got)
		}
		for last := range n {
			s := make([]int16, n)
			for i := range last + 1 {
				s[i] = int16(i%3 - 1) // -1, 0, 1, … then the last
			}
			s[last] = -32768
			if got := lastNonZero(s); got != last {
				t.Fatalf("%d samples, last non-zero at %d: lastNonZero %d", n, last, got)
			}
		}
	}
}
