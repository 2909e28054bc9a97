package pcm

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Helpers shared by the VAD and DTMF tests, and the fixture regeneration
// test. Fixtures are raw s16le mono; testdata/dtmf_vad_fixtures.sh makes
// them.

// vdLoad reads testdata/name, raw PCM16 LE mono, as a Chunk at rate.
func vdLoad(t testing.TB, name string, rate int) Chunk {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("read fixture: %v (regenerate with testdata/dtmf_vad_fixtures.sh)", err)
	}
	c, err := FromBytes(rate, b)
	if err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return c
}

// vdPower returns the mean-square power of s, 0 for no samples.
func vdPower(s []int16) float64 {
	if len(s) == 0 {
		return 0
	}
	var e float64
	for _, v := range s {
		e += float64(v) * float64(v)
	}
	return e / float64(len(s))
}

// vdWhiteNoise returns a copy of c plus white Gaussian noise whose power is
// snrDB below refPower (a mean-square power), from a PRNG seeded with seed.
func vdWhiteNoise(c Chunk, refPower, snrDB float64, seed uint64) Chunk {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	sigma := math.Sqrt(refPower / math.Pow(10, snrDB/10))
	out := make([]int16, len(c.Samples))
	for i, v := range c.Samples {
		out[i] = clamp16(int32(math.Round(float64(v) + sigma*rng.NormFloat64())))
	}
	return Chunk{Rate: c.Rate, Samples: out}
}

// vdPinkNoise is vdWhiteNoise with pink (1/f) noise, made by Paul Kellet's
// economy filter over white noise and scaled to the requested power.
func vdPinkNoise(c Chunk, refPower, snrDB float64, seed uint64) Chunk {
	rng := rand.New(rand.NewPCG(seed, 0x91c))
	pink := make([]float64, len(c.Samples))
	var b0, b1, b2, e float64
	for i := range pink {
		w := rng.NormFloat64()
		b0 = 0.99765*b0 + w*0.0990460
		b1 = 0.96300*b1 + w*0.2965164
		b2 = 0.57000*b2 + w*1.0526913
		pink[i] = b0 + b1 + b2 + w*0.1848
		e += pink[i] * pink[i]
	}
	scale := 0.0
	if e > 0 {
		scale = math.Sqrt(refPower / math.Pow(10, snrDB/10) / (e / float64(len(pink))))
	}
	out := make([]int16, len(c.Samples))
	for i, v := range c.Samples {
		out[i] = clamp16(int32(math.Round(float64(v) + scale*pink[i])))
	}
	return Chunk{Rate: c.Rate, Samples: out}
}

// vdConcat joins chunks of one rate into a new chunk.
func vdConcat(rate int, parts ...Chunk) Chunk {
	var s []int16
	for _, p := range parts {
		s = append(s, p.Samples...)
	}
	return Chunk{Rate: rate, Samples: s}
}

// TestFixturesRegenerate reruns testdata/dtmf_vad_fixtures.sh when sox,
// ffmpeg and flite are installed and checks that it reproduces the committed
// fixtures, so the documented commands stay the true source of the files.
func TestFixturesRegenerate(t *testing.T) {
	t.Parallel()
	for _, tool := range []struct{ bin, pkg string }{{"sox", "sox"}, {"ffmpeg", "ffmpeg"}, {"flite", "flite"}} {
		if _, err := exec.LookPath(tool.bin); err != nil {
			t.Skipf("%s not installed (Debian package %s); committed fixtures are used as they are", tool.bin, tool.pkg)
		}
	}
	dir := t.TempDir()
	script, err := filepath.Abs(filepath.Join("testdata", "dtmf_vad_fixtures.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "sh", script, dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	for _, name := range []string{"dtmf_sox8k.s16", "dtmf_sox8k_mulaw.s16", "vad_speech16k.s16"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(got, want) {
			continue
		}
		// Another tool version may round differently; the fixture is still
		// valid if the audio is the same to within a few LSB.
		if len(got) != len(want) {
			t.Errorf("%s: regenerated %d bytes, committed %d; run testdata/dtmf_vad_fixtures.sh in testdata and review", name, len(got), len(want))
			continue
		}
		g, _ := DecodePCM16(nil, got)
		w, _ := DecodePCM16(nil, want)
		worst := 0
		for i := range g {
			worst = max(worst, vdAbs(int(g[i])-int(w[i])))
		}
		if worst > 4 {
			t.Errorf("%s: regenerated audio differs by up to %d LSB; run testdata/dtmf_vad_fixtures.sh in testdata and review", name, worst)
		}
	}
}

func vdAbs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
