package pcm

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"
)

func TestMix(t *testing.T) {
	t.Parallel()
	agent := Chunk{Rate: 1000, Samples: []int16{100, 200, 300, 400}}
	user := Chunk{Rate: 1000, Samples: []int16{10, 20, 30}}
	tests := []struct {
		name   string
		offset time.Duration
		want   []int16
	}{
		{"start", 0, []int16{110, 220, 330, 400}},
		{"overlap tail and extend", 2 * time.Millisecond, []int16{100, 200, 310, 420, 30}},
		{"past the end leaves a gap", 6 * time.Millisecond, []int16{100, 200, 300, 400, 0, 0, 10, 20, 30}},
		{"rounds to nearest sample", 1400 * time.Microsecond, []int16{100, 210, 320, 430}},
	}
	for _, tc := range tests {
		got, err := Mix(agent, user, tc.offset)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got.Rate != 1000 || !slicesEqual(got.Samples, tc.want) {
			t.Errorf("%s: Mix = %v at %d Hz, want %v", tc.name, got.Samples, got.Rate, tc.want)
		}
	}
	if agent.Samples[0] != 100 || user.Samples[0] != 10 {
		t.Error("Mix modified its inputs")
	}
}

func TestMixSaturates(t *testing.T) {
	t.Parallel()
	a := Chunk{Rate: 8000, Samples: []int16{30000, -30000, 5}}
	b := Chunk{Rate: 8000, Samples: []int16{10000, -10000, -5}}
	got, err := Mix(a, b, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int16{32767, -32768, 0}; !slicesEqual(got.Samples, want) {
		t.Errorf("Mix = %v, want %v (saturated, not wrapped)", got.Samples, want)
	}
}

func TestMixErrors(t *testing.T) {
	t.Parallel()
	a := Chunk{Rate: 8000, Samples: []int16{1}}
	b := Chunk{Rate: 16000, Samples: []int16{1}}
	if _, err := Mix(a, b, 0); !errors.Is(err, ErrRateMismatch) {
		t.Errorf("Mix 16 kHz into 8 kHz: err = %v, want ErrRateMismatch", err)
	}
	if _, err := Mix(a, a, -time.Millisecond); !errors.Is(err, ErrNegativeDuration) {
		t.Errorf("Mix at −1 ms: err = %v, want ErrNegativeDuration", err)
	}
	if _, err := Mix(Chunk{}, a, 0); !errors.Is(err, ErrBadRate) {
		t.Errorf("Mix into zero Chunk: err = %v, want ErrBadRate", err)
	}
}

func TestMixIntoGain(t *testing.T) {
	dst := []int16{100, 100, 100}
	n := MixInto(dst, []int16{10, -11, 20000, 7}, 0.5)
	if n != 3 {
		t.Errorf("MixInto returned %d, want 3 (the shorter length)", n)
	}
	if want := []int16{105, 95, 10100}; !slicesEqual(dst, want) {
		t.Errorf("MixInto(gain 0.5) = %v, want %v", dst, want)
	}
	if n := MixInto(dst, []int16{1}, math.NaN()); n != 0 || dst[0] != 105 {
		t.Errorf("MixInto with NaN gain mixed %d samples, want 0", n)
	}
	allocs := testing.AllocsPerRun(10, func() { MixInto(dst, dst, 0.1) })
	if allocs != 0 {
		t.Errorf("MixInto allocates %v times, want 0", allocs)
	}
}

func TestGain(t *testing.T) {
	t.Parallel()
	in := Chunk{Rate: 8000, Samples: []int16{1000, -1000, 20000, 0}}
	got := Gain(-6.0206)(in) // ×0.5
	if want := []int16{500, -500, 10000, 0}; !slicesEqual(got.Samples, want) {
		t.Errorf("Gain(−6.02 dB) = %v, want %v", got.Samples, want)
	}
	got = Gain(20)(in)
	if want := []int16{10000, -10000, 32767, 0}; !slicesEqual(got.Samples, want) {
		t.Errorf("Gain(+20 dB) = %v, want %v (saturated)", got.Samples, want)
	}
	got = Gain(math.Inf(1))(in)
	if want := []int16{32767, -32768, 32767, 0}; !slicesEqual(got.Samples, want) {
		t.Errorf("Gain(+Inf) = %v, want %v", got.Samples, want)
	}
	if in.Samples[0] != 1000 {
		t.Error("Gain modified its input")
	}
}

func TestConcatAndPad(t *testing.T) {
	t.Parallel()
	a := Chunk{Rate: 1000, Samples: []int16{1, 2}}
	b := Chunk{Rate: 1000}
	c := Chunk{Rate: 1000, Samples: []int16{3}}
	got, err := Concat(a, b, c)
	if err != nil {
		t.Fatal(err)
	}
	if got.Rate != 1000 || !slicesEqual(got.Samples, []int16{1, 2, 3}) {
		t.Errorf("Concat = %v, want [1 2 3]", got.Samples)
	}
	if _, err := Concat(a, Chunk{Rate: 2000}); !errors.Is(err, ErrRateMismatch) {
		t.Errorf("Concat of mixed rates: err = %v, want ErrRateMismatch", err)
	}
	if _, err := Concat(); !errors.Is(err, ErrBadRate) {
		t.Errorf("Concat(): err = %v, want ErrBadRate", err)
	}
	p, err := Pad(a, 2*time.Millisecond, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if !slicesEqual(p.Samples, []int16{0, 0, 1, 2, 0}) {
		t.Errorf("Pad = %v, want [0 0 1 2 0]", p.Samples)
	}
	if _, err := Pad(a, -time.Millisecond, 0); !errors.Is(err, ErrNegativeDuration) {
		t.Errorf("Pad(−1 ms): err = %v, want ErrNegativeDuration", err)
	}
	p, err = PadTo(a, 4*time.Millisecond)
	if err != nil || !slicesEqual(p.Samples, []int16{1, 2, 0, 0}) {
		t.Errorf("PadTo(4 ms) = %v, %v; want [1 2 0 0]", p.Samples, err)
	}
	p, err = PadTo(a, time.Millisecond)
	if err != nil || !slicesEqual(p.Samples, []int16{1, 2}) {
		t.Errorf("PadTo(shorter) = %v, %v; want [1 2] unchanged", p.Samples, err)
	}
}

func TestLevels(t *testing.T) {
	t.Parallel()
	sine := Chunk{Rate: Rate16k, Samples: tone(Rate16k, 1000, 32767, 0, Rate16k)}
	if got := DBFS(RMS(sine)); math.Abs(got-(-3.0103)) > 0.01 {
		t.Errorf("full-scale sine: %.3f dBFS, want −3.01", got)
	}
	if got := Peak(sine); got != 32767 {
		t.Errorf("Peak = %d, want 32767", got)
	}
	if got := Peak(Chunk{Rate: 8000, Samples: []int16{3, -32768}}); got != 32768 {
		t.Errorf("Peak of −32768 = %d, want 32768", got)
	}
	if !math.IsInf(DBFS(RMS(Chunk{Rate: 8000})), -1) {
		t.Error("DBFS of an empty chunk's RMS should be −Inf")
	}
	// Speech-like: 0.5 s of tone, 1.5 s of silence. RMS counts the
	// silence; ActiveRMS does not.
	burst := tone(Rate16k, 300, 10000, 0, Rate16k/2)
	c := Chunk{Rate: Rate16k, Samples: append(burst, make([]int16, 3*Rate16k/2)...)}
	rms, active := RMS(c), ActiveRMS(c)
	t.Logf("tone burst with pauses: RMS %.1f dBFS, active %.1f dBFS", DBFS(rms), DBFS(active))
	if want := 10000 / math.Sqrt2; math.Abs(active-want)/want > 0.005 {
		t.Errorf("ActiveRMS = %.1f, want %.1f (the burst's level)", active, want)
	}
	if math.Abs(20*math.Log10(active/rms)-6.02) > 0.05 {
		t.Errorf("ActiveRMS/RMS = %.2f dB, want 6.02 (active a quarter of the time)", 20*math.Log10(active/rms))
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	c := Chunk{Rate: Rate24k, Samples: tone(Rate24k, 440, 1000, 0, Rate24k)}
	out := Normalize(-20)(c)
	if got := DBFS(ActiveRMS(out)); math.Abs(got+20) > 0.01 {
		t.Errorf("Normalize(−20): level %.3f dBFS, want −20", got)
	}
	silent := Chunk{Rate: Rate24k, Samples: make([]int16, 10)}
	if got := Normalize(-20)(silent); len(got.Samples) != 10 || Peak(got) != 0 {
		t.Errorf("Normalize of silence = %v, want silence", got.Samples)
	}
}

func ExampleMix() {
	agent := Chunk{Rate: 1000, Samples: []int16{100, 200, 300, 400}}
	user := Chunk{Rate: 1000, Samples: []int16{10, 20, 30}}
	// The user barges in 2 ms into the agent's audio.
	both, err := Mix(agent, user, 2*time.Millisecond)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(both.Samples)
	_, err = Mix(agent, Chunk{Rate: 2000, Samples: []int16{1}}, 0)
	fmt.Println(err)
	// Output:
	// [100 200 310 420 30]
	// pcm: sample rates differ: mixing 2000 Hz audio into 1000 Hz audio; Resample it to 1000 Hz first
}

func ExampleDBFS() {
	c := Chunk{Rate: 8000, Samples: []int16{3277, -3277, 3277, -3277}}
	fmt.Printf("RMS %.0f, %.1f dBFS, peak %d\n", RMS(c), DBFS(RMS(c)), Peak(c))
	// Output: RMS 3277, -20.0 dBFS, peak 3277
}
