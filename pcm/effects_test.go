package pcm

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// speechLike synthesises d of a speech-like signal at rate: voiced
// "syllables" (150–350 ms, pitch 90–240 Hz, harmonics under a falling
// spectral envelope with two formant bumps, a Hann amplitude envelope)
// separated by pauses of 60–250 ms of digital silence.
func speechLike(rate int, d time.Duration, seed uint64) Chunk {
	rng := rand.New(rand.NewPCG(seed, 7))
	n := SamplesFor(rate, d)
	out := make([]int16, n)
	pos := SamplesFor(rate, time.Duration(rng.IntN(200))*time.Millisecond)
	for pos < n {
		syl := SamplesFor(rate, time.Duration(150+rng.IntN(200))*time.Millisecond)
		f0 := 90 + rng.Float64()*150
		f1, f2 := 300+rng.Float64()*600, 900+rng.Float64()*1500
		amp := 3000 + rng.Float64()*5000
		var weights []float64
		for h := 1; float64(h)*f0 < min(4000, float64(rate)/2); h++ {
			f := float64(h) * f0
			weights = append(weights, 1/math.Sqrt(float64(h))+2*math.Exp(-sq((f-f1)/150))+math.Exp(-sq((f-f2)/200)))
		}
		for i := 0; i < syl && pos+i < n; i++ {
			tt := float64(i) / float64(rate)
			env := 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(syl))
			var v float64
			for h, w := range weights {
				v += w * math.Sin(2*math.Pi*float64(h+1)*f0*tt+float64(h+1))
			}
			out[pos+i] = roundClamp(amp * env * v / 4)
		}
		pos += syl + SamplesFor(rate, time.Duration(60+rng.IntN(190))*time.Millisecond)
	}
	return Chunk{Rate: rate, Samples: out}
}

func sq(x float64) float64 { return x * x }

// added returns out − in per sample, as the noise an effect added.
func added(in, out Chunk) []int16 {
	d := make([]int16, len(in.Samples))
	for i := range d {
		d[i] = clamp16(int32(out.Samples[i]) - int32(in.Samples[i]))
	}
	return d
}

func measuredSNR(in, out Chunk) float64 {
	return 20 * math.Log10(ActiveRMS(in)/rmsOf(added(in, out)))
}

func testTalkers() []Chunk {
	return []Chunk{speechLike(Rate16k, 3*time.Second, 11), speechLike(Rate16k, 2*time.Second, 12), speechLike(Rate22k05, 4*time.Second, 13)}
}

func allEffects() map[string]Effect {
	return map[string]Effect{
		"white":     WhiteNoise(10, 1),
		"pink":      PinkNoise(10, 1),
		"brown":     BrownNoise(10, 1),
		"babble":    Babble(testTalkers(), 5, 1),
		"telephone": TelephoneBand(),
		"clip":      Clip(-12),
		"loss":      PacketLoss(0.2, 20*time.Millisecond, 1),
		"gain":      Gain(-3),
		"normalize": Normalize(-26),
		"chain":     Chain(TelephoneBand(), WhiteNoise(20, 2), PacketLoss(0.05, 0, 3)),
	}
}

// TestEffectsContract checks every effect keeps the rate and length, leaves
// its input alone, is deterministic, and gives the same result when many
// goroutines apply it at once.
func TestEffectsContract(t *testing.T) {
	t.Parallel()
	// The input at each rate, made once (not once per effect); each effect
	// gets a copy of its own.
	rates := []int{Rate8k, Rate16k, Rate24k, Rate44k1}
	inputs := map[int]Chunk{}
	for _, rate := range rates {
		inputs[rate] = speechLike(rate, 1500*time.Millisecond, uint64(rate))
	}
	for name, e := range allEffects() {
		for _, rate := range rates {
			in := inputs[rate].Clone()
			keep := in.Clone()
			first := e(in)
			if first.Rate != rate || first.Len() != in.Len() {
				t.Errorf("%s at %d Hz: got %d samples at %d Hz, want %d at %d", name, rate, first.Len(), first.Rate, in.Len(), rate)
			}
			if !slicesEqual(in.Samples, keep.Samples) {
				t.Errorf("%s at %d Hz modified its input", name, rate)
			}
			if name != "normalize" && name != "gain" && slicesEqual(first.Samples, in.Samples) {
				t.Errorf("%s at %d Hz changed nothing", name, rate)
			}
			var wg sync.WaitGroup
			results := make([]Chunk, 4)
			for i := range results {
				wg.Go(func() { results[i] = e(in) })
			}
			wg.Wait()
			for i, r := range results {
				if !slicesEqual(r.Samples, first.Samples) {
					t.Errorf("%s at %d Hz: concurrent application %d differs from the first", name, rate, i)
				}
			}
		}
		empty := e(Chunk{Rate: Rate16k})
		if empty.Rate != Rate16k || empty.Len() != 0 {
			t.Errorf("%s of an empty chunk: %d samples at %d Hz, want 0 at 16000", name, empty.Len(), empty.Rate)
		}
	}
}

func TestNoiseSeeds(t *testing.T) {
	t.Parallel()
	in := speechLike(Rate16k, time.Second, 5)
	for name, mk := range map[string]func(float64, uint64) Effect{"white": WhiteNoise, "pink": PinkNoise, "brown": BrownNoise} {
		a, b := mk(10, 1)(in), mk(10, 2)(in)
		if slicesEqual(a.Samples, b.Samples) {
			t.Errorf("%s: seeds 1 and 2 give the same noise", name)
		}
	}
}

// TestNoiseSNR checks the SNR actually added, against the input's active
// level, is within ±0.5 dB of the target.
func TestNoiseSNR(t *testing.T) {
	t.Parallel()
	in := speechLike(Rate16k, 2*time.Second, 21)
	talkers := testTalkers()
	mks := map[string]func(float64, uint64) Effect{
		"white": WhiteNoise, "pink": PinkNoise, "brown": BrownNoise,
		"babble": func(snr float64, seed uint64) Effect { return Babble(talkers, snr, seed) },
	}
	for name, mk := range mks {
		for _, target := range []float64{0, 5, 10, 20, 30} {
			for seed := range uint64(2) {
				got := measuredSNR(in, mk(target, seed)(in))
				if seed == 0 {
					t.Logf("%s noise, target %g dB: measured %.3f dB", name, target, got)
				}
				if math.Abs(got-target) > 0.5 {
					t.Errorf("%s noise seed %d: SNR %.2f dB, want %g ± 0.5", name, seed, got, target)
				}
			}
		}
	}
}

// TestNoiseSpectralSlope fits the slope of each noise's spectrum in dB per
// octave between 125 Hz and 4 kHz.
func TestNoiseSpectralSlope(t *testing.T) {
	t.Parallel()
	// A quiet tone to measure against; at −20 dB SNR the noise dominates
	// and is recovered exactly as out − in.
	in := Chunk{Rate: Rate24k, Samples: tone(Rate24k, 1000, 300, 0, 8*Rate24k)}
	cases := []struct {
		name  string
		e     Effect
		slope float64
	}{
		{"white", WhiteNoise(-20, 9), 0},
		{"pink", PinkNoise(-20, 9), -3},
		{"brown", BrownNoise(-20, 9), -6},
	}
	const fftN = 4096
	for _, tc := range cases {
		noise := added(in, tc.e(in))
		spec := powerSpectrum(noise, fftN)
		// Least-squares line through (octave number, band power in dB).
		var sx, sy, sxx, sxy, n float64
		var levels []string
		for oct, f := 0, 125.0; f <= 4000; oct, f = oct+1, f*2 {
			p := bandPowerDB(spec, fftN, Rate24k, f/math.Sqrt2, f*math.Sqrt2)
			levels = append(levels, fmt.Sprintf("%g Hz %.1f", f, p))
			x := float64(oct)
			sx, sy, sxx, sxy, n = sx+x, sy+p, sxx+x*x, sxy+x*p, n+1
		}
		slope := (n*sxy - sx*sy) / (n*sxx - sx*sx)
		t.Logf("%s: slope %.2f dB/octave (%v)", tc.name, slope, levels)
		if math.Abs(slope-tc.slope) > 0.6 {
			t.Errorf("%s noise: spectral slope %.2f dB/octave, want %g ± 0.6", tc.name, slope, tc.slope)
		}
	}
}

// TestBabbleWithEngine builds babble from flite speech when flite and sox
// are installed; TestNoiseSNR covers babble without them.
func TestBabbleWithEngine(t *testing.T) {
	t.Parallel()
	flite, err := exec.LookPath("flite")
	if err != nil {
		t.Skip("flite not installed (Debian package flite); skipping babble from real speech")
	}
	sox, err := exec.LookPath("sox")
	if err != nil {
		t.Skip("sox not installed (Debian package sox); skipping babble from real speech")
	}
	var talkers []Chunk
	for _, text := range []string{
		"I would like to check the status of my order, it was supposed to arrive on Tuesday.",
		"Can you hear me? The line is really bad, I'm calling from the train station.",
	} {
		wav := t.TempDir() + "/talker.wav"
		if out, err := exec.Command(flite, "-t", text, "-o", wav).CombinedOutput(); err != nil {
			t.Fatalf("flite: %v: %s", err, out)
		}
		var raw, stderr bytes.Buffer
		cmd := exec.Command(sox, wav, "-t", "raw", "-e", "signed-integer", "-b", "16", "-c", "1", "-L", "-")
		cmd.Stdout, cmd.Stderr = &raw, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("sox: %v: %s", err, stderr.String())
		}
		c, err := FromBytes(Rate16k, raw.Bytes()) // flite speaks at 16 kHz
		if err != nil {
			t.Fatal(err)
		}
		talkers = append(talkers, c)
	}
	in := speechLike(Rate24k, 3*time.Second, 31)
	out := Babble(talkers, 10, 4)(in)
	got := measuredSNR(in, out)
	t.Logf("babble from flite speech at 10 dB SNR: measured %.3f dB", got)
	if math.Abs(got-10) > 0.5 {
		t.Errorf("babble SNR %.2f dB, want 10 ± 0.5", got)
	}
	// Babble is speech, so most of its energy lies under 4 kHz.
	spec := powerSpectrum(added(in, out), 2048)
	low, high := bandPowerDB(spec, 2048, Rate24k, 100, 4000), bandPowerDB(spec, 2048, Rate24k, 6000, 11000)
	if low-high < 10 {
		t.Errorf("babble spectrum: 100–4000 Hz only %.1f dB above 6–11 kHz, want ≥ 10 (speech-like)", low-high)
	}
}

func TestTelephoneBand(t *testing.T) {
	t.Parallel()
	cases := []struct {
		rate     int
		freq     float64
		min, max float64 // dB
	}{
		{Rate24k, 100, math.Inf(-1), -40},
		{Rate24k, 200, math.Inf(-1), -20},
		{Rate24k, 1000, -0.1, 0.1},
		{Rate24k, 2500, -0.1, 0.1},
		{Rate24k, 4500, math.Inf(-1), -15},
		{Rate24k, 6000, math.Inf(-1), -35},
		{Rate8k, 100, math.Inf(-1), -40},
		{Rate8k, 1000, -0.1, 0.1},
		{Rate16k, 6000, math.Inf(-1), -35},
	}
	const amp = 10000.0
	for _, tc := range cases {
		in := Chunk{Rate: tc.rate, Samples: tone(tc.rate, tc.freq, amp, 0, tc.rate)}
		out := TelephoneBand()(in)
		skip := tc.rate / 5 // 200 ms for the filter to settle
		g := 20 * math.Log10(max(rmsOf(out.Samples[skip:]), 1e-9)/(amp/math.Sqrt2))
		t.Logf("telephone band at %d Hz: %g Hz tone %.2f dB", tc.rate, tc.freq, g)
		if g < tc.min || g > tc.max {
			t.Errorf("telephone band at %d Hz: %g Hz tone %.2f dB, want between %g and %g", tc.rate, tc.freq, g, tc.min, tc.max)
		}
	}
	low := TelephoneBand()(Chunk{Rate: 500, Samples: []int16{1, 2, 3}})
	if low.Rate != 500 || Peak(low) != 0 || low.Len() != 3 {
		t.Errorf("telephone band at 500 Hz (no band): %v, want 3 silent samples", low.Samples)
	}
}

func TestClip(t *testing.T) {
	t.Parallel()
	in := Chunk{Rate: Rate8k, Samples: []int16{0, 1000, -1000, 5000, -5000, 32767, -32768}}
	got := Clip(-20)(in) // ±3277
	if want := []int16{0, 1000, -1000, 3277, -3277, 3277, -3277}; !slicesEqual(got.Samples, want) {
		t.Errorf("Clip(−20 dBFS) = %v, want %v", got.Samples, want)
	}
	if got := Clip(0)(in); !slicesEqual(got.Samples, in.Samples) {
		t.Errorf("Clip(0 dBFS) = %v, want unchanged", got.Samples)
	}
	if got := Clip(-200)(in); Peak(got) != 0 {
		t.Errorf("Clip(−200 dBFS) = %v, want silence", got.Samples)
	}
}

// TestPacketLossRate drops 20 ms frames at 10 % and checks the count of lost
// frames against the binomial distribution, that the same seed repeats, and
// that concealed frames are not silence.
func TestPacketLossRate(t *testing.T) {
	t.Parallel()
	const frames, rate = 3000, 0.1
	n := Rate8k / 50
	in := Chunk{Rate: Rate8k, Samples: make([]int16, frames*n)}
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range in.Samples {
		// A tone plus noise: every frame is distinct, and concealment of
		// a steady sound should keep its level.
		in.Samples[i] = int16(8000*math.Sin(2*math.Pi*440*float64(i)/Rate8k)) + int16(rng.IntN(200)-100)
	}
	out := PacketLoss(rate, 20*time.Millisecond, 42)(in)
	lost, single, quiet := 0, 0, 0
	for f := range frames {
		// The first 5 ms of a frame after a loss is cross-faded, so
		// compare the second half.
		a, b := in.Samples[f*n+n/2:(f+1)*n], out.Samples[f*n+n/2:(f+1)*n]
		if slicesEqual(a, b) {
			continue
		}
		lost++
		prevOK := f > 0 && slicesEqual(in.Samples[(f-1)*n+n/2:f*n], out.Samples[(f-1)*n+n/2:f*n])
		if prevOK {
			single++
			if rmsOf(out.Samples[f*n:(f+1)*n]) < 0.7*rmsOf(in.Samples[f*n:(f+1)*n]) {
				quiet++
			}
		}
	}
	mean, sd := frames*rate, math.Sqrt(frames*rate*(1-rate))
	t.Logf("lost %d of %d frames (expected %.0f ± %.1f); %d first-in-burst frames, %d concealed below 70 %% level", lost, frames, mean, sd, single, quiet)
	if math.Abs(float64(lost)-mean) > 4*sd {
		t.Errorf("lost %d frames of %d at rate %g, want %.0f ± %.0f", lost, frames, rate, mean, 4*sd)
	}
	if single == 0 || quiet > 0 {
		t.Errorf("%d of %d concealed frames after a received one are below 70 %% of the level; want none (concealment, not silence)", quiet, single)
	}
	again := PacketLoss(rate, 20*time.Millisecond, 42)(in)
	if !slicesEqual(again.Samples, out.Samples) {
		t.Error("PacketLoss with the same seed gave different output")
	}
	other := PacketLoss(rate, 20*time.Millisecond, 43)(in)
	if slicesEqual(other.Samples, out.Samples) {
		t.Error("PacketLoss with another seed gave the same output")
	}
}

// TestPacketLossLongBurst loses everything after the first frame: the
// concealment holds, fades, and is silent after 60 ms.
func TestPacketLossLongBurst(t *testing.T) {
	t.Parallel()
	in := Chunk{Rate: Rate8k, Samples: tone(Rate8k, 300, 10000, 0, Rate8k)}
	// Rate 1 loses every frame, including the first, so there is nothing
	// to conceal with: silence throughout.
	if got := PacketLoss(1, 20*time.Millisecond, 1)(in); Peak(got) != 0 {
		t.Errorf("PacketLoss(1) peak %d, want silence (nothing received to conceal with)", Peak(got))
	}
	// Find a seed where frame 0 survives and frames 1–5 are lost at 50 %.
	var out Chunk
	found := false
	for seed := range uint64(500) {
		out = PacketLoss(0.5, 20*time.Millisecond, seed)(in)
		n := 160
		ok := slicesEqual(out.Samples[:n], in.Samples[:n])
		for f := 1; f <= 5 && ok; f++ {
			ok = !slicesEqual(out.Samples[f*n+n/2:(f+1)*n], in.Samples[f*n+n/2:(f+1)*n])
		}
		if ok {
			found = true
			break
		}
	}
	if !found {
		t.Fatal("no seed under 500 loses frames 1–5 and keeps frame 0")
	}
	ms := func(a, b int) []int16 { return out.Samples[a*8 : b*8] }
	// The burst starts at 20 ms: full level to 30 ms, fading to 80 ms,
	// then silent until the burst ends at 120 ms.
	hold, fading, silent := rmsOf(ms(20, 30)), rmsOf(ms(50, 60)), rmsOf(ms(80, 120))
	t.Logf("burst: 20–30 ms RMS %.0f, 50–60 ms %.0f, 80–120 ms %.0f (input %.0f)", hold, fading, silent, rmsOf(in.Samples))
	if hold < 0.9*rmsOf(in.Samples) || fading <= 0 || fading >= hold || silent != 0 {
		t.Errorf("burst concealment: hold %.0f, fading %.0f, after 60 ms %.0f; want full level, then lower, then 0", hold, fading, silent)
	}
}

func ExampleWhiteNoise() {
	speech := Chunk{Rate: Rate16k, Samples: tone(Rate16k, 440, 8000, 0, Rate16k)}
	noisy := WhiteNoise(20, 1)(speech)
	// What was added: noisy − speech.
	noise := noisy.Clone()
	MixInto(noise.Samples, speech.Samples, -1)
	fmt.Printf("%d samples at %d Hz\n", noisy.Len(), noisy.Rate)
	fmt.Printf("SNR %.1f dB\n", DBFS(ActiveRMS(speech))-DBFS(RMS(noise)))
	// Effects compose; each keeps the rate and length.
	phone := Chain(TelephoneBand(), PinkNoise(15, 2), PacketLoss(0.05, 20*time.Millisecond, 3))(speech)
	fmt.Printf("%d samples at %d Hz\n", phone.Len(), phone.Rate)
	// Output:
	// 16000 samples at 16000 Hz
	// SNR 20.0 dB
	// 16000 samples at 16000 Hz
}

func TestBabbleEdgeCases(t *testing.T) {
	t.Parallel()
	in := speechLike(Rate16k, time.Second, 41)
	if got := Babble(nil, 10, 1)(in); !slicesEqual(got.Samples, in.Samples) {
		t.Error("Babble with no talkers changed the audio; want an unchanged copy")
	}
	bad := []Chunk{{Rate: 0, Samples: []int16{1, 2, 3}}, {Rate: Rate16k}}
	if got := Babble(bad, 10, 1)(in); !slicesEqual(got.Samples, in.Samples) {
		t.Error("Babble with only unusable talkers changed the audio; want an unchanged copy")
	}
	// Same-rate and other-rate talkers, one shorter than an excerpt: the
	// talkers must come out untouched.
	talkers := []Chunk{speechLike(Rate16k, 300*time.Millisecond, 42), speechLike(Rate8k, 3*time.Second, 43), bad[0]}
	keep := []Chunk{talkers[0].Clone(), talkers[1].Clone()}
	out := Babble(talkers, 0, 7)(in)
	for i := range keep {
		if !slicesEqual(talkers[i].Samples, keep[i].Samples) {
			t.Errorf("Babble modified talker %d", i)
		}
	}
	if got := measuredSNR(in, out); math.Abs(got) > 0.5 {
		t.Errorf("Babble at 0 dB with short talkers: SNR %.2f dB, want 0 ± 0.5", got)
	}
	if silent := (Chunk{Rate: Rate16k, Samples: make([]int16, 100)}); Peak(Babble(talkers, 0, 1)(silent)) != 0 {
		t.Error("Babble added noise to silence; want silence (no level to measure the SNR against)")
	}
}
