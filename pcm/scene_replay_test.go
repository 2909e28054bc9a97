package pcm

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// twinSceneGen builds a scene's generator the way newSceneGen did before
// it kept the calibration's samples: each steady layer is measured on an
// identical twin, and the layer itself renders from its start, pre-roll
// included. It is the oracle for replayGen.
func twinSceneGen(s Scene, rate int, seed uint64) *sceneGen {
	g := &sceneGen{}
	var power float64
	for i, l := range s.layers {
		mk := func() layerGen {
			rng := rand.New(rand.NewPCG(seed, rngStream^uint64(i+1)*0x9E3779B97F4A7C15))
			return newLayerGen(l, s.talkers, rate, rng)
		}
		gain := math.Pow(10, l.gainDB/20)
		if l.kind != layerEvents {
			probe := make([]float64, SamplesFor(rate, sceneCalibration))
			mk().fill(probe)
			if r := math.Sqrt(meanSquareFloat(probe)); r > 0 {
				gain /= r
			}
			power += math.Pow(10, l.gainDB/10)
		}
		g.layers = append(g.layers, mk())
		g.gains = append(g.gains, gain)
	}
	g.steady = math.Sqrt(power)
	if g.steady == 0 {
		g.steady = 1
	}
	g.fill(make([]float64, SamplesFor(rate, scenePreRoll)))
	return g
}

// TestSceneCalibrationReplayed checks that a scene's generator, which
// plays the samples it measured its levels on instead of rendering them
// again, gives the very samples of a generator that renders every layer
// afresh: the same gains and level, and the same samples bit for bit,
// read in pieces that end inside the measured samples, on their last one
// and past them.
func TestSceneCalibrationReplayed(t *testing.T) {
	t.Parallel()
	const rate = Rate8k
	scenes := append(Scenes(), Cafe().WithTalkers(speechLike(Rate16k, 2*time.Second, 4)))
	left := SamplesFor(rate, sceneCalibration-scenePreRoll) // measured samples after the pre-roll
	reads := []int{1, left/2 - 1, left / 2, 1, rate, left/2 + 3*rate/2}
	total := 0
	for _, n := range reads {
		total += n
	}
	if total <= left {
		t.Fatalf("the reads end at %d, within the %d measured samples", total, left)
	}
	for i, s := range scenes {
		seed := uint64(10 + i)
		got, want := newSceneGen(s, rate, seed), twinSceneGen(s, rate, seed)
		if got.steady != want.steady || !floatsEqual(got.gains, want.gains) {
			t.Errorf("%s: gains %v, level %v; rendered afresh %v, %v", s.Name(), got.gains, got.steady, want.gains, want.steady)
		}
		at := 0
		for _, n := range reads {
			a, b := make([]float64, n), make([]float64, n)
			got.fill(a)
			want.fill(b)
			if !floatsEqual(a, b) {
				t.Errorf("%s: the %d samples from %d differ from the scene rendered afresh", s.Name(), n, at)
				break
			}
			at += n
		}
	}
}

// floatsEqual reports whether a and b hold the same values bit for bit.
func floatsEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// wsolaAt is wsola as it was before its fast path: every sample read
// through the bounds-checking at. It is the oracle for wsola.
func wsolaAt(x []float64, rate, n int) []float64 {
	out := make([]float64, n)
	if n == 0 || len(x) == 0 {
		return out
	}
	N := max(SamplesFor(rate, wsolaFrame)&^1, 4)
	hs := N / 2
	tol := SamplesFor(rate, wsolaTolerance)
	ha := float64(len(x)) / float64(n) * float64(hs)
	win := make([]float64, N)
	for i := range win {
		win[i] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(N))
	}
	at := func(i int) float64 {
		if i < 0 || i >= len(x) {
			return 0
		}
		return x[i]
	}
	prev := 0
	for k := 0; k*hs < n+hs; k++ {
		pos := 0
		if k > 0 {
			nominal := int(math.Round(float64(k) * ha))
			want := prev + hs
			best, bestScore := nominal, math.Inf(-1)
			for cand := nominal - tol; cand <= nominal+tol; cand++ {
				if cand < 0 {
					continue
				}
				var score float64
				for i := 0; i < N; i += 2 {
					score += at(cand-hs+i) * at(want-hs+i)
				}
				if score > bestScore {
					best, bestScore = cand, score
				}
			}
			pos = best
		}
		base := k*hs - hs
		for i := range N {
			j := base + i
			if j >= 0 && j < n {
				out[j] += win[i] * at(pos-hs+i)
			}
		}
		prev = pos
	}
	return out
}

// TestWSOLAMatchesBoundsCheckedReads checks wsola, which reads frames that
// lie inside its input directly, against wsolaAt, bit for bit: stretched
// and squeezed, at two rates, and inputs shorter than a frame.
func TestWSOLAMatchesBoundsCheckedReads(t *testing.T) {
	t.Parallel()
	for _, rate := range []int{Rate8k, Rate16k} {
		x := toFloat(speechLike(rate, time.Second, 5).Samples)
		for _, in := range [][]float64{x, x[:SamplesFor(rate, 15*time.Millisecond)], x[:3]} {
			for _, ratio := range []float64{0.5, 0.8, 1, 1.25, 2} {
				n := int(math.Round(float64(len(in)) * ratio))
				if got, want := wsola(in, rate, n), wsolaAt(in, rate, n); !floatsEqual(got, want) {
					t.Errorf("%d Hz, %d samples to %d: wsola differs from the bounds-checked reads", rate, len(in), n)
				}
			}
		}
	}
}
