package pcm

import (
	"math"
	"math/cmplx"
	"slices"
	"sync"
	"testing"
	"time"
)

// peakFreq returns the frequency of the strongest spectral peak of s
// between lo and hi Hz: a Hann-windowed FFT zero-padded to 2× and a
// parabolic fit over the peak bin. On the tests' signals (1–4 s at 16 kHz)
// it lands within 0.012 Hz of an 8× padding (4× the FFT's work), against
// tolerances of 1 Hz and more.
func peakFreq(s []int16, rate int, lo, hi float64) float64 {
	n := nextPow2(len(s)) * 2
	buf := make([]complex128, n)
	for i, v := range s {
		w := 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(len(s)))
		buf[i] = complex(float64(v)*w, 0)
	}
	fft(buf)
	best, bi := -1.0, 0
	for i := 1; i < n/2-1; i++ {
		f := float64(i) * float64(rate) / float64(n)
		if f < lo || f > hi {
			continue
		}
		if a := cmplx.Abs(buf[i]); a > best {
			best, bi = a, i
		}
	}
	a, b, c := cmplx.Abs(buf[bi-1]), cmplx.Abs(buf[bi]), cmplx.Abs(buf[bi+1])
	d := 0.5 * (a - c) / (a - 2*b + c)
	return (float64(bi) + d) * float64(rate) / float64(n)
}

// toneChunk is d of a sine at freq with amplitude amp.
func toneChunk(rate int, freq, amp float64, d time.Duration) Chunk {
	return Chunk{Rate: rate, Samples: tone(rate, freq, amp, 0, SamplesFor(rate, d))}
}

func dbRatio(a, b float64) float64 { return 20 * math.Log10(a/b) }

// TestEffectLibraryContract checks every effect of the library: at
// three rates it keeps the rate and (all but tempo) the length, changes
// the audio, leaves its input alone, and gives the same output for the
// same seed, also from two goroutines at once.
func TestEffectLibraryContract(t *testing.T) {
	t.Parallel()
	lib := EffectLibrary()
	if len(lib) < 20 {
		t.Fatalf("EffectLibrary has %d effects, want at least 20", len(lib))
	}
	seen := map[string]bool{}
	for _, info := range lib {
		if seen[info.Name] || info.Name == "" || info.Description == "" || info.Func == "" || info.New == nil {
			t.Errorf("library entry %+v: names must be unique and every field set", info.Name)
		}
		seen[info.Name] = true
		switch info.Group {
		case "background", "phone", "room", "voice", "level":
		default:
			t.Errorf("%s: group %q is not one of background, phone, room, voice, level", info.Name, info.Group)
		}
	}
	// Three seconds of speech at a TTS engine's loud level, so that sparse
	// effects (dropouts) and level-dependent ones (clipping) have something
	// to change; made once per rate and length (not once per effect), and
	// each effect gets a copy of its own.
	rates := []int{Rate8k, Rate16k, Rate24k}
	type input struct {
		rate int
		d    time.Duration
	}
	inputs := map[input]Chunk{}
	for _, rate := range rates {
		for _, d := range []time.Duration{3 * time.Second, 12 * time.Second} {
			inputs[input{rate, d}] = Normalize(-14)(speechLike(rate, d, uint64(rate)))
		}
	}
	for _, info := range lib {
		t.Run(info.Name, func(t *testing.T) {
			t.Parallel()
			for _, rate := range rates {
				d := 3 * time.Second
				if info.Name == "dropouts" {
					d = 12 * time.Second // sparse: about four in that time
				}
				in := inputs[input{rate, d}].Clone()
				keep := in.Clone()
				// Two applications for the same seed, from two goroutines
				// at once: they must agree (deterministic for the seed, no
				// state shared between applications), and the first must
				// keep the rate and length. (A scene's application renders
				// ~8 s of audio: 4 s of calibration per steady layer, 1 s
				// of pre-roll, the 3 s.)
				var wg sync.WaitGroup
				results := make([]Chunk, 2)
				for i := range results {
					wg.Go(func() { results[i] = info.New(7)(in) })
				}
				wg.Wait()
				first := results[0]
				if first.Rate != rate {
					t.Errorf("at %d Hz: output at %d Hz", rate, first.Rate)
				}
				if info.Name != "tempo" && first.Len() != in.Len() {
					t.Errorf("at %d Hz: %d samples out, %d in", rate, first.Len(), in.Len())
				}
				if !slicesEqual(in.Samples, keep.Samples) {
					t.Errorf("at %d Hz: modified its input", rate)
				}
				if slicesEqual(first.Samples, in.Samples) {
					t.Errorf("at %d Hz: changed nothing", rate)
				}
				for i, r := range results[1:] {
					if !slicesEqual(r.Samples, first.Samples) {
						t.Errorf("at %d Hz: application %d differs from the first (not deterministic for its seed)", rate, i+1)
					}
				}
			}
			if empty := info.New(1)(Chunk{Rate: Rate16k}); empty.Rate != Rate16k || empty.Len() != 0 {
				t.Errorf("empty chunk: %d samples at %d Hz, want 0 at 16000", empty.Len(), empty.Rate)
			}
		})
	}
}

// TestSeededEffectsVary checks that the effects that draw random numbers
// give different output for different seeds. Three seconds of speech show
// it for all but dropouts, which draws its random numbers from the first
// sample on (a scene's noise, babble's talkers, reverb's and distance's
// impulse responses) or over 150 packets (packet loss at 5 %, jitter,
// cell-phone's codec); dropouts, about 20 a minute, get 10 s.
func TestSeededEffectsVary(t *testing.T) {
	t.Parallel()
	short, long := speechLike(Rate16k, 3*time.Second, 3), speechLike(Rate16k, 10*time.Second, 3)
	for _, name := range []string{"cafe", "street", "office", "airport", "wind", "babble", "packet-loss", "jitter", "dropouts", "reverb", "distance", "cell-phone"} {
		in := short
		if name == "dropouts" {
			in = long
		}
		var info EffectInfo
		for _, i := range EffectLibrary() {
			if i.Name == name {
				info = i
			}
		}
		if info.New == nil {
			t.Fatalf("no effect %q in the library", name)
		}
		if a, b := info.New(1)(in), info.New(2)(in); slicesEqual(a.Samples, b.Samples) {
			t.Errorf("%s: seeds 1 and 2 give the same output", name)
		}
	}
}

// TestSceneStreamLevel checks that every scene streams at the level
// asked for (its steady layers; events may add up to 2 dB), and that
// Scene.Effect adds it at the SNR asked for.
func TestSceneStreamLevel(t *testing.T) {
	t.Parallel()
	in := speechLike(Rate16k, 3*time.Second, 9) // made once: every scene adds to it
	for _, s := range Scenes() {
		// 20 s at −40 dBFS: the slow swells of street and wind need the
		// length. The same stream at −30 is the same sound 10 dB louder,
		// sample for sample (each sample rounded once), so its first 2 s
		// show that the level asked for is the level streamed.
		const level, louder = -40.0, -30.0
		c := s.Stream(Rate16k, level, 3).Read(SamplesFor(Rate16k, 20*time.Second))
		got := DBFS(RMS(c))
		t.Logf("%s at %g dBFS: %.2f dBFS", s.Name(), level, got)
		if got < level-1.5 || got > level+2 {
			t.Errorf("%s streamed at %.2f dBFS, want %g (−1.5, +2)", s.Name(), got, level)
		}
		loud := s.Stream(Rate16k, louder, 3).Read(SamplesFor(Rate16k, 2*time.Second))
		ratio := math.Pow(10, (louder-level)/20)
		for i, v := range loud.Samples {
			// Both rounded from the same value: |v − ratio·c| ≤ 0.5 + ratio·0.5.
			if d := math.Abs(float64(v) - ratio*float64(c.Samples[i])); d > 0.5+ratio*0.5+1e-9 {
				t.Errorf("%s at %g dBFS: sample %d is %d, want %.1f (%g dB above the stream at %g dBFS)", s.Name(), louder, i, v, ratio*float64(c.Samples[i]), louder-level, level)
				break
			}
		}
		if got := DBFS(RMS(loud)) - DBFS(RMS(Chunk{Rate: Rate16k, Samples: c.Samples[:len(loud.Samples)]})); math.Abs(got-(louder-level)) > 0.01 {
			t.Errorf("%s at %g dBFS: %.3f dB above the stream at %g dBFS, want %g", s.Name(), louder, got, level, louder-level)
		}
		if got := measuredSNR(in, s.Effect(12, 4)(in)); math.Abs(got-12) > 0.5 {
			t.Errorf("%s as an Effect at 12 dB: SNR %.2f dB", s.Name(), got)
		}
	}
	if (Scene{}).Stream(Rate16k, -30, 1).Read(100).Samples[50] != 0 || Peak((Scene{}).Stream(Rate16k, -30, 1).Read(1000)) != 0 {
		t.Error("the zero Scene streamed sound; want silence")
	}
}

// TestSceneStreamContinuity checks that a stream read in pieces of any
// size is the stream read at once, and that seeds matter.
func TestSceneStreamContinuity(t *testing.T) {
	t.Parallel()
	for _, s := range Scenes() {
		whole := s.Stream(Rate8k, -30, 5).Read(Rate8k * 3)
		st := s.Stream(Rate8k, -30, 5)
		var parts []int16
		for _, n := range []int{1, 159, 160, 4000, 7000, 12680} {
			parts = append(parts, st.Read(n).Samples...)
		}
		if !slicesEqual(parts, whole.Samples) {
			t.Errorf("%s: the stream read in pieces differs from the stream read at once", s.Name())
		}
		if st.Position() != 3*time.Second {
			t.Errorf("%s: Position %v after 3 s", s.Name(), st.Position())
		}
		if other := s.Stream(Rate8k, -30, 6).Read(Rate8k * 3); slicesEqual(other.Samples, whole.Samples) {
			t.Errorf("%s: seeds 5 and 6 stream the same sound", s.Name())
		}
	}
}

// bandEnergies measures a scene's spectrum: mean band powers in dB.
func sceneSpectrum(t *testing.T, s Scene, rate int, d time.Duration) (Chunk, []float64) {
	t.Helper()
	c := s.Stream(rate, -30, 11).Read(SamplesFor(rate, d))
	return c, powerSpectrum(c.Samples, 4096)
}

// windowLevels returns the RMS level in dB of consecutive windows of w.
func windowLevels(c Chunk, w time.Duration) []float64 {
	var out []float64
	for _, f := range c.Frames(w) {
		if f.Len() == SamplesFor(c.Rate, w) {
			out = append(out, DBFS(max(RMS(f), 1e-3)))
		}
	}
	return out
}

func stddev(x []float64) float64 {
	var m, s float64
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return math.Sqrt(s / float64(len(x)))
}

// TestSceneSignatures checks what makes each scene sound like itself.
func TestSceneSignatures(t *testing.T) {
	t.Parallel()
	const rate, n = Rate16k, 4096
	band := func(spec []float64, lo, hi float64) float64 { return bandPowerDB(spec, n, rate, lo, hi) }

	t.Run("car is a low drone", func(t *testing.T) {
		c, spec := sceneSpectrum(t, Car(), rate, 10*time.Second)
		low, mid := band(spec, 20, 300), band(spec, 1000, 4000)
		if low-mid < 20 {
			t.Errorf("car: below 300 Hz only %.1f dB above 1–4 kHz, want ≥ 20", low-mid)
		}
		// The engine: a peak near 30 Hz and its harmonics.
		if f := peakFreq(c.Samples[:rate*4], rate, 20, 45); f < 25 || f > 40 {
			t.Errorf("car: strongest component 20–45 Hz at %.1f Hz, want the engine near 30 Hz", f)
		}
	})
	t.Run("wind buffets in gusts", func(t *testing.T) {
		c, spec := sceneSpectrum(t, Wind(), rate, 20*time.Second)
		if d := band(spec, 20, 250) - band(spec, 2000, 6000); d < 15 {
			t.Errorf("wind: below 250 Hz only %.1f dB above 2–6 kHz, want ≥ 15", d)
		}
		if sd := stddev(windowLevels(c, 250*time.Millisecond)); sd < 2.5 {
			t.Errorf("wind: level of 250 ms windows varies by %.1f dB (std), want ≥ 2.5 (gusts)", sd)
		}
	})
	t.Run("street rumbles and swells", func(t *testing.T) {
		c, spec := sceneSpectrum(t, Street(), rate, 20*time.Second)
		if d := band(spec, 20, 500) - band(spec, 2000, 4000); d < 10 {
			t.Errorf("street: below 500 Hz only %.1f dB above 2–4 kHz, want ≥ 10", d)
		}
		if sd := stddev(windowLevels(c, 500*time.Millisecond)); sd < 1.5 {
			t.Errorf("street: level of 500 ms windows varies by %.1f dB, want ≥ 1.5 (cars passing)", sd)
		}
	})
	t.Run("cafe is talk and clinks", func(t *testing.T) {
		c, spec := sceneSpectrum(t, Cafe(), rate, 30*time.Second)
		if d := band(spec, 300, 1000) - band(spec, 4000, 8000); d < 20 {
			t.Errorf("cafe: 300–1000 Hz only %.1f dB above 4–8 kHz, want ≥ 20 (speech)", d)
		}
		// Clinks: short bursts in 2–6 kHz far above that band's median.
		hp := fromFloat(rate, filterCascade(toFloat(c.Samples), highPass(8, 2500, rate)))
		lv := windowLevels(hp, 20*time.Millisecond)
		sorted := slices.Clone(lv)
		slices.Sort(sorted)
		med, top := sorted[len(sorted)/2], sorted[len(sorted)-1]
		if top-med < 15 {
			t.Errorf("cafe: loudest 20 ms above 2.5 kHz is %.1f dB over the median, want ≥ 15 (clinks)", top-med)
		}
	})
	t.Run("office has typing", func(t *testing.T) {
		c, _ := sceneSpectrum(t, Office(), rate, 30*time.Second)
		hp := filterCascade(toFloat(c.Samples), highPass(8, 2000, rate))
		// Clicks make the high band impulsive: a kurtosis far above a
		// Gaussian's 3.
		var m2, m4 float64
		for _, v := range hp {
			m2 += v * v
			m4 += v * v * v * v
		}
		m2 /= float64(len(hp))
		m4 /= float64(len(hp))
		if k := m4 / (m2 * m2); k < 10 {
			t.Errorf("office: kurtosis above 2 kHz %.1f, want ≥ 10 (key clicks)", k)
		}
	})
	t.Run("airport reverberates", func(t *testing.T) {
		// A large hall smooths the crowd's level: 20 ms windows vary less
		// than the same crowd dry.
		air := Airport().Stream(rate, -30, 2).Read(rate * 10)
		dry := Scene{name: "dry", layers: []sceneLayer{{kind: layerBabble, voices: 12, hi: 4000}}}.Stream(rate, -30, 2).Read(rate * 10)
		a, d := stddev(windowLevels(air, 20*time.Millisecond)), stddev(windowLevels(dry, 20*time.Millisecond))
		t.Logf("airport: 20 ms level std %.2f dB, dry crowd %.2f dB", a, d)
		if a > 0.8*d {
			t.Errorf("airport: level std %.2f dB, dry crowd %.2f: want the hall ≥ 20%% smoother", a, d)
		}
	})
	t.Run("tv plays chords on a beat", func(t *testing.T) {
		bed := Scene{name: "music", layers: []sceneLayer{{kind: layerMusic}}}.Stream(rate, -30, 1).Read(rate * 2)
		if f := peakFreq(bed.Samples, rate, 240, 280); math.Abs(f-261.6) > 2 {
			t.Errorf("tv music bed: first chord's peak near middle C at %.1f Hz, want 261.6 ± 2", f)
		}
		// The beat: level every half second.
		c, _ := sceneSpectrum(t, TVRoom(), rate, 8*time.Second)
		lv := windowLevels(c, 50*time.Millisecond)
		var onBeat, offBeat float64
		for i, v := range lv {
			if i%10 < 2 {
				onBeat += v / float64(len(lv)/5)
			} else if i%10 >= 6 {
				offBeat += v / float64(len(lv)*2/5)
			}
		}
		if onBeat-offBeat < 3 {
			t.Errorf("tv: level on the beat %.1f dB above the level off it, want ≥ 3", onBeat-offBeat)
		}
	})
}

// TestSynthTalkers checks the synthetic talkers sound like speech: energy
// in the speech band, syllable-rate level changes, pauses, −20 dBFS.
func TestSynthTalkers(t *testing.T) {
	t.Parallel()
	ts := SynthTalkers(4, 8*time.Second, Rate16k, 3)
	if len(ts) != 4 {
		t.Fatalf("%d talkers, want 4", len(ts))
	}
	for i, c := range ts {
		if c.Rate != Rate16k || c.Duration() != 8*time.Second {
			t.Fatalf("talker %d: %v at %d Hz", i, c.Duration(), c.Rate)
		}
		active := DBFS(ActiveRMS(c)) // once: it reads all 8 s
		if math.Abs(active+20) > 0.5 {
			t.Errorf("talker %d: active level %.2f dBFS, want −20", i, active)
		}
		spec := powerSpectrum(c.Samples, 2048)
		if d := bandPowerDB(spec, 2048, Rate16k, 100, 3000) - bandPowerDB(spec, 2048, Rate16k, 5000, 8000); d < 15 {
			t.Errorf("talker %d: 100–3000 Hz only %.1f dB above 5–8 kHz, want ≥ 15", i, d)
		}
		lv := windowLevels(c, 10*time.Millisecond)
		quiet := 0
		for _, v := range lv {
			if v < active-35 {
				quiet++
			}
		}
		if frac := float64(quiet) / float64(len(lv)); frac < 0.08 || frac > 0.6 {
			t.Errorf("talker %d: %.0f%% of 10 ms frames are pauses, want 8–60%%", i, 100*frac)
		}
		if sd := stddev(windowLevels(c, 50*time.Millisecond)); sd < 6 {
			t.Errorf("talker %d: 50 ms levels vary by %.1f dB, want ≥ 6 (syllables)", i, sd)
		}
	}
	if slicesEqual(ts[0].Samples, ts[1].Samples) {
		t.Error("talkers 0 and 1 are the same")
	}
	if again := SynthTalkers(4, 8*time.Second, Rate16k, 3); !slicesEqual(again[2].Samples, ts[2].Samples) {
		t.Error("SynthTalkers is not deterministic for its seed")
	}
	if SynthTalkers(0, time.Second, Rate16k, 1) != nil || SynthTalkers(1, 0, Rate16k, 1) != nil {
		t.Error("SynthTalkers of no talkers or no time gave talkers")
	}
	// Engine-spoken talkers replace the synthetic ones in a scene.
	in := speechLike(Rate16k, 2*time.Second, 4)
	rec := Cafe().WithTalkers(speechLike(Rate8k, 3*time.Second, 5))
	if a, b := rec.Effect(10, 1)(in), Cafe().Effect(10, 1)(in); slicesEqual(a.Samples, b.Samples) {
		t.Error("Cafe().WithTalkers(...) sounds the same as Cafe()")
	}
}

// TestG711Effect: narrowband G.711 keeps a 1 kHz tone at about 38 dB SNR
// and removes everything above 4 kHz.
func TestG711Effect(t *testing.T) {
	t.Parallel()
	for _, law := range []Law{MuLaw, ALaw} {
		// 1013 Hz: not a divisor of 8 kHz, so the quantisation error is
		// spread, as on speech, not folded onto a few harmonics.
		in := toneChunk(Rate24k, 1013, 10000, time.Second)
		out := G711(law)(in)
		fit := fitTone(t, out.Samples, Rate24k, 1013, Rate24k/20)
		t.Logf("%v: 1 kHz amplitude %.0f (10000 in), SNR %.1f dB", law, fit.amp, fit.snrDB)
		if math.Abs(dbRatio(fit.amp, 10000)) > 0.5 || fit.snrDB < 30 || fit.snrDB > 45 {
			t.Errorf("%v: 1 kHz tone at %.2f dB, SNR %.1f dB; want 0 ± 0.5 dB and 30–45 dB", law, dbRatio(fit.amp, 10000), fit.snrDB)
		}
		hi := G711(law)(toneChunk(Rate24k, 6000, 10000, time.Second))
		if g := dbRatio(rmsOf(hi.Samples[Rate24k/10:]), 10000/math.Sqrt2); g > -40 {
			t.Errorf("%v: a 6 kHz tone comes through at %.1f dB, want ≤ −40 (narrowband)", law, g)
		}
	}
	if ALaw.String() != "A-law" || MuLaw.String() != "µ-law" {
		t.Error("Law.String")
	}
}

// TestLowBitrateCodec: fewer bits, more noise; band-limited.
func TestLowBitrateCodec(t *testing.T) {
	t.Parallel()
	in := speechLike(Rate8k, 4*time.Second, 8)
	ref := TelephoneBand()(in) // the codec's band, without its coding noise
	prev := -100.0
	for _, kbps := range []int{16, 24, 32, 40} {
		out := LowBitrateCodec(kbps)(in)
		snr := measuredSNR(ref, out)
		t.Logf("%d kbps: SNR %.1f dB", kbps, snr)
		if snr <= prev+2 {
			t.Errorf("%d kbps: SNR %.1f dB, not 2 dB better than the lower rate's %.1f", kbps, snr, prev)
		}
		prev = snr
		if kbps == 16 && (snr < 4 || snr > 16) {
			t.Errorf("16 kbps: SNR %.1f dB, want 4–16 (audibly degraded, still speech)", snr)
		}
		if kbps == 32 && snr < 15 {
			t.Errorf("32 kbps: SNR %.1f dB, want ≥ 15", snr)
		}
	}
	hi := LowBitrateCodec(32)(toneChunk(Rate24k, 5000, 10000, time.Second))
	if g := dbRatio(rmsOf(hi.Samples[Rate24k/10:]), 10000/math.Sqrt2); g > -30 {
		t.Errorf("a 5 kHz tone comes through the codec at %.1f dB, want ≤ −30", g)
	}
}

// lostFrames returns which frames of n samples differ from the input.
func lostFrames(in, out Chunk, n int) []bool {
	var lost []bool
	for s := 0; s+n <= in.Len(); s += n {
		// Compare the second half: the first 5 ms after a loss is merged.
		lost = append(lost, !slicesEqual(in.Samples[s+n/2:s+n], out.Samples[s+n/2:s+n]))
	}
	return lost
}

// TestJitter: a deep jitter buffer loses nothing, none loses about half,
// losses come in bursts, and they are concealed rather than silent.
func TestJitter(t *testing.T) {
	t.Parallel()
	in := toneChunk(Rate8k, 440, 8000, 60*time.Second)
	n := Rate8k / 50
	count := func(l []bool) (lost, bursts int) {
		for i, x := range l {
			if x {
				lost++
				if i == 0 || !l[i-1] {
					bursts++
				}
			}
		}
		return
	}
	deep := lostFrames(in, Jitter(10*time.Millisecond, 45*time.Millisecond, 0, 1)(in), n)
	if l, _ := count(deep); l > 3 {
		t.Errorf("buffer 4.5× the jitter: %d of %d packets late, want almost none", l, len(deep))
	}
	none := Jitter(10*time.Millisecond, 0, 0, 1)(in)
	l, b := count(lostFrames(in, none, n))
	frac := float64(l) / float64(len(deep))
	t.Logf("no buffer: %d of %d packets late (%.0f%%) in %d bursts (mean %.1f packets)", l, len(deep), 100*frac, b, float64(l)/float64(b))
	if frac < 0.35 || frac > 0.65 {
		t.Errorf("no jitter buffer: %.0f%% of packets late, want about half", 100*frac)
	}
	if float64(l)/float64(b) < 2 {
		t.Errorf("late packets come in bursts of %.1f on average, want ≥ 2 (correlated delay)", float64(l)/float64(b))
	}
	// The first late packet after a good one is concealed at full level.
	lost := lostFrames(in, none, n)
	for i := 1; i < len(lost); i++ {
		if lost[i] && !lost[i-1] {
			if r := rmsOf(none.Samples[i*n : (i+1)*n]); r < 0.7*rmsOf(in.Samples[i*n:(i+1)*n]) {
				t.Errorf("packet %d: concealed at RMS %.0f, want near the input's", i, r)
			}
			break
		}
	}
}

// zeroRuns returns the lengths of runs of exact zeros at least minRun
// long.
func zeroRuns(s []int16, minRun int) []int {
	var out []int
	run := 0
	for _, v := range append(slices.Clone(s), 1) {
		if v == 0 {
			run++
			continue
		}
		if run >= minRun {
			out = append(out, run)
		}
		run = 0
	}
	return out
}

// TestDropouts counts the silences cut into a steady tone.
func TestDropouts(t *testing.T) {
	t.Parallel()
	in := toneChunk(Rate8k, 440, 8000, 10*time.Minute)
	in.Samples = slices.Clone(in.Samples)
	for i := range in.Samples {
		if in.Samples[i] == 0 {
			in.Samples[i] = 1 // no zeros of the tone's own
		}
	}
	out := Dropouts(6, 100*time.Millisecond, 300*time.Millisecond, 3)(in)
	runs := zeroRuns(out.Samples, SamplesFor(Rate8k, 50*time.Millisecond))
	t.Logf("%d dropouts in 10 minutes at 6 a minute", len(runs))
	if len(runs) < 40 || len(runs) > 80 {
		t.Errorf("%d dropouts in 10 min, want about 60", len(runs))
	}
	for _, r := range runs {
		d := DurationOf(r, Rate8k)
		if d < 99*time.Millisecond || d > 301*time.Millisecond+2*dropoutFade {
			t.Errorf("a dropout of %v, want 100–300 ms", d)
		}
	}
}

// TestReverbDecay measures the reverberation time of Reverb's response
// to a click by Schroeder backward integration (T20 × 3).
func TestReverbDecay(t *testing.T) {
	t.Parallel()
	for _, rt := range []time.Duration{300 * time.Millisecond, 800 * time.Millisecond} {
		in := Chunk{Rate: Rate16k, Samples: make([]int16, Rate16k*2)}
		in.Samples[100] = 20000
		out := Reverb(rt, 1, 4)(in)
		e := make([]float64, len(out.Samples))
		var acc float64
		for i := len(out.Samples) - 1; i >= 0; i-- {
			v := float64(out.Samples[i])
			acc += v * v
			e[i] = acc
		}
		at := func(db float64) int {
			for i, v := range e {
				if 10*math.Log10(v/e[0]) <= db {
					return i
				}
			}
			return len(e)
		}
		t20 := DurationOf(at(-25)-at(-5), Rate16k) * 3
		t.Logf("rt60 %v: measured %v", rt, t20)
		if math.Abs(float64(t20-rt)) > 0.25*float64(rt) {
			t.Errorf("Reverb(%v): measured RT60 %v, want within 25%%", rt, t20)
		}
	}
	// The level is kept, dry or wet.
	in := speechLike(Rate16k, 3*time.Second, 2)
	for _, wet := range []float64{0.3, 1} {
		if d := dbRatio(RMS(Reverb(500*time.Millisecond, wet, 1)(in)), RMS(in)); math.Abs(d) > 2 {
			t.Errorf("Reverb wet %g: level changed by %.1f dB, want within ±2", wet, d)
		}
	}
	if got := Reverb(0, 0.5, 1)(in); !slicesEqual(got.Samples, in.Samples) {
		t.Error("Reverb(0) changed the audio")
	}
}

// TestEcho: an impulse comes back at each delay, quieter each time.
func TestEcho(t *testing.T) {
	t.Parallel()
	in := Chunk{Rate: Rate8k, Samples: make([]int16, Rate8k)}
	in.Samples[0] = 10000
	out := Echo(100*time.Millisecond, 6, 3)(in)
	d := SamplesFor(Rate8k, 100*time.Millisecond)
	for k, want := range []int16{10000, 5012, 2512, 1259, 0} {
		if got := out.Samples[k*d]; math.Abs(float64(got-want)) > 1 {
			t.Errorf("echo %d at %v: %d, want %d", k, DurationOf(k*d, Rate8k), got, want)
		}
	}
	var others int
	for i, v := range out.Samples {
		if i%d != 0 && v != 0 {
			others++
		}
	}
	if others != 0 {
		t.Errorf("%d samples off the echo times are not zero", others)
	}
}

// TestOverdrive: a loud sine gains a third harmonic; a quiet one is
// amplified almost linearly.
func TestOverdrive(t *testing.T) {
	t.Parallel()
	loud := Overdrive(12)(toneChunk(Rate16k, 300, 16000, time.Second))
	h1, h3 := fitTone(t, loud.Samples, Rate16k, 300, 0), fitTone(t, loud.Samples, Rate16k, 900, 0)
	t.Logf("loud sine: fundamental %.0f, third harmonic %.0f (%.1f dB)", h1.amp, h3.amp, dbRatio(h3.amp, h1.amp))
	if dbRatio(h3.amp, h1.amp) < -20 {
		t.Errorf("third harmonic %.1f dB below the fundamental, want ≥ −20 (soft clipping)", dbRatio(h3.amp, h1.amp))
	}
	if Peak(loud) > 32767 || Peak(loud) < 30000 {
		t.Errorf("peak %d, want near but not over full scale", Peak(loud))
	}
	quiet := Overdrive(12)(toneChunk(Rate16k, 300, 100, time.Second))
	g := math.Pow(10, 12.0/20) / math.Tanh(math.Pow(10, 12.0/20))
	if q := fitTone(t, quiet.Samples, Rate16k, 300, 0).amp; math.Abs(q/100-g) > 0.05*g {
		t.Errorf("quiet sine amplified ×%.2f, want ×%.2f (linear region)", q/100, g)
	}
}

// TestVolumeRamp: the start at the first level, the end at the second.
func TestVolumeRamp(t *testing.T) {
	t.Parallel()
	in := toneChunk(Rate16k, 500, 10000, 4*time.Second)
	out := VolumeRamp(0, -20)(in)
	first, last := out.Slice(0, 100*time.Millisecond), out.Slice(3900*time.Millisecond, 4*time.Second)
	if d := dbRatio(RMS(first), RMS(in)); math.Abs(d+0.25) > 0.5 {
		t.Errorf("first 100 ms at %.2f dB, want about 0", d)
	}
	if d := dbRatio(RMS(last), RMS(in)); math.Abs(d+19.75) > 0.5 {
		t.Errorf("last 100 ms at %.2f dB, want about −20", d)
	}
	if d := dbRatio(RMS(out.Slice(1950*time.Millisecond, 2050*time.Millisecond)), RMS(in)); math.Abs(d+10) > 0.5 {
		t.Errorf("middle at %.2f dB, want −10 (linear in dB)", d)
	}
}

// TestDistance: a metre away the voice is 26 dB quieter and duller.
func TestDistance(t *testing.T) {
	t.Parallel()
	sp := speechLike(Rate24k, 3*time.Second, 1)
	if near := Distance(0.05, 1)(sp); !slicesEqual(near.Samples, sp.Samples) {
		t.Error("Distance(5 cm) changed the audio")
	}
	if d := dbRatio(RMS(Distance(1, 1)(sp)), RMS(sp)); math.Abs(d+26) > 2.5 {
		t.Errorf("Distance(1 m): speech level %.1f dB, want −26 ± 2.5", d)
	}
	in := WhiteNoise(-40, 1)(sp) // broadband: noise 40 dB over the speech
	far := Distance(1, 1)(in)
	si, sf := powerSpectrum(in.Samples, 2048), powerSpectrum(far.Samples, 2048)
	loss := func(lo, hi float64) float64 {
		return bandPowerDB(si, 2048, Rate24k, lo, hi) - bandPowerDB(sf, 2048, Rate24k, lo, hi)
	}
	if l, h := loss(200, 1000), loss(6000, 10000); h-l < 6 {
		t.Errorf("Distance(1 m): highs lose %.1f dB, lows %.1f dB; want the highs ≥ 6 dB more", h, l)
	}
}

// TestMuffled: a steep low-pass at the cutoff.
func TestMuffled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ f, lo, hi float64 }{{200, -0.3, 0.1}, {800, -3.5, -2.5}, {1600, -30, -22}, {4000, -200, -50}} {
		in := toneChunk(Rate16k, tc.f, 10000, time.Second)
		g := dbRatio(rmsOf(Muffled(800)(in).Samples[Rate16k/5:]), 10000/math.Sqrt2)
		if g < tc.lo || g > tc.hi {
			t.Errorf("Muffled(800): %g Hz at %.2f dB, want %g to %g", tc.f, g, tc.lo, tc.hi)
		}
	}
}

// TestHum: a 50 Hz tone at the SNR asked for.
func TestHum(t *testing.T) {
	t.Parallel()
	in := speechLike(Rate16k, 3*time.Second, 4)
	out := Hum(60, 20)(in)
	if got := measuredSNR(in, out); math.Abs(got-20) > 0.3 {
		t.Errorf("Hum SNR %.2f dB, want 20", got)
	}
	noise := Chunk{Rate: Rate16k, Samples: added(in, out)}
	if f := peakFreq(noise.Samples, Rate16k, 20, 400); math.Abs(f-60) > 1 {
		t.Errorf("hum's strongest component at %.1f Hz, want 60", f)
	}
	if f := peakFreq(noise.Samples, Rate16k, 90, 150); math.Abs(f-120) > 1 {
		t.Errorf("hum's second harmonic at %.1f Hz, want 120", f)
	}
}

// TestTempo: speech faster or slower at the same pitch.
func TestTempo(t *testing.T) {
	t.Parallel()
	in := toneChunk(Rate16k, 200, 8000, 2*time.Second)
	for _, f := range []float64{0.5, 0.8, 1.25, 2} {
		out := Tempo(f)(in)
		want := time.Duration(float64(2*time.Second) / f)
		if d := out.Duration() - want; d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("Tempo(%g): %v long, want %v", f, out.Duration(), want)
		}
		mid := out.Samples[out.Len()/4 : 3*out.Len()/4]
		p := peakFreq(mid, Rate16k, 100, 400)
		if math.Abs(p-200) > 2 {
			t.Errorf("Tempo(%g): pitch %.1f Hz, want 200 (unchanged)", f, p)
		}
		if fit := fitTone(t, mid, Rate16k, p, 0); fit.snrDB < 20 {
			t.Errorf("Tempo(%g): the stretched tone is %.1f dB above its distortion, want ≥ 20 (no phasing)", f, fit.snrDB)
		}
	}
	sp := speechLike(Rate16k, 3*time.Second, 2)
	if d := dbRatio(ActiveRMS(Tempo(1.3)(sp)), ActiveRMS(sp)); math.Abs(d) > 1.5 {
		t.Errorf("Tempo(1.3) on speech changed its level by %.1f dB", d)
	}
	if got := Tempo(1)(sp); !slicesEqual(got.Samples, sp.Samples) {
		t.Error("Tempo(1) changed the audio")
	}
}

// TestPitch: the pitch moves by the semitones, the length stays.
func TestPitch(t *testing.T) {
	t.Parallel()
	in := toneChunk(Rate16k, 200, 8000, 2*time.Second)
	for _, st := range []float64{-5, 3, 7} {
		out := Pitch(st)(in)
		if out.Len() != in.Len() {
			t.Errorf("Pitch(%g): %d samples, want %d", st, out.Len(), in.Len())
		}
		want := 200 * math.Pow(2, st/12)
		mid := out.Samples[out.Len()/4 : 3*out.Len()/4]
		if p := peakFreq(mid, Rate16k, 100, 400); math.Abs(p-want) > 0.01*want {
			t.Errorf("Pitch(%g): %.1f Hz, want %.1f", st, p, want)
		}
	}
}

// TestRobotic: ring modulation moves a tone to two sidebands.
func TestRobotic(t *testing.T) {
	t.Parallel()
	in := toneChunk(Rate16k, 1000, 8000, time.Second)
	out := Robotic(50)(in)
	lo, hi, c := fitTone(t, out.Samples, Rate16k, 950, 0), fitTone(t, out.Samples, Rate16k, 1050, 0), fitTone(t, out.Samples, Rate16k, 1000, 0)
	t.Logf("sidebands %.0f and %.0f, carrier-frequency residue %.0f", lo.amp, hi.amp, c.amp)
	if math.Abs(dbRatio(lo.amp, 8000/math.Sqrt2)) > 0.5 || math.Abs(dbRatio(hi.amp, 8000/math.Sqrt2)) > 0.5 {
		t.Errorf("sidebands at %.0f and %.0f, want %.0f each", lo.amp, hi.amp, 8000/math.Sqrt2)
	}
	if c.amp > 50 {
		t.Errorf("%.0f of the original 1 kHz tone left, want none", c.amp)
	}
}

// TestPresets: each preset, as an Effect, keeps the length, band-limits
// a phone call, and fills the pauses with its scene.
func TestPresets(t *testing.T) {
	t.Parallel()
	in := speechLike(Rate24k, 3*time.Second, 6)
	names := map[string]bool{}
	for _, p := range Presets(1) {
		if names[p.Name] || p.Name == "" || p.Description == "" {
			t.Errorf("preset %q: names must be unique and described", p.Name)
		}
		names[p.Name] = true
		out := p.Effect(3)(in)
		if out.Len() != in.Len() || out.Rate != in.Rate {
			t.Errorf("%s: %d samples at %d Hz", p.Name, out.Len(), out.Rate)
		}
		spec := powerSpectrum(out.Samples, 2048)
		if d := bandPowerDB(spec, 2048, Rate24k, 300, 3000) - bandPowerDB(spec, 2048, Rate24k, 6000, 11000); d < 30 {
			t.Errorf("%s: 6–11 kHz only %.1f dB below the speech band, want ≥ 30 (a phone line)", p.Name, d)
		}
		// The pauses of speechLike are digital silence; with a scene
		// they are not.
		if p.Scene.Name() != "" {
			var pause []int16
			for i, v := range in.Samples {
				if v == 0 && i > 0 && in.Samples[i-1] == 0 {
					pause = append(pause, out.Samples[i])
				}
			}
			if rmsOf(pause) < 10 {
				t.Errorf("%s: the pauses are silent (RMS %.1f), want the scene in them", p.Name, rmsOf(pause))
			}
		}
	}
	if !names["noisy-cafe-cell-phone"] {
		t.Error("no noisy-cafe-cell-phone preset")
	}
}

// TestLineLossesFollowTheAudio: two different utterances through one
// Jitter or Dropouts lose different stretches; the same one, the same.
func TestLineLossesFollowTheAudio(t *testing.T) {
	t.Parallel()
	a, b := toneChunk(Rate8k, 440, 8000, 30*time.Second), toneChunk(Rate8k, 445, 8000, 30*time.Second)
	for name, e := range map[string]Effect{
		"jitter":   Jitter(20*time.Millisecond, 10*time.Millisecond, 0, 1),
		"dropouts": Dropouts(30, 100*time.Millisecond, 200*time.Millisecond, 1),
	} {
		la, lb := lostFrames(a, e(a), 160), lostFrames(b, e(b), 160)
		if slices.Equal(la, lb) {
			t.Errorf("%s: two utterances lost the same packets", name)
		}
		if again := lostFrames(a, e(a), 160); !slices.Equal(la, again) {
			t.Errorf("%s: the same utterance lost different packets", name)
		}
	}
}
