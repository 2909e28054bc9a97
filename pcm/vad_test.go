package pcm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// burst is a tone burst in a synthetic test signal.
type burst struct {
	from, to time.Duration
	freq     float64
	dBFS     float64
}

// bursts renders tone bursts into total of silence at rate.
func bursts(rate int, total time.Duration, bs ...burst) Chunk {
	c := Silence(rate, total)
	for _, b := range bs {
		amp := 32767 * math.Pow(10, b.dBFS/20)
		for i := SamplesFor(rate, b.from); i < SamplesFor(rate, b.to); i++ {
			v := float64(c.Samples[i]) + amp*math.Sin(2*math.Pi*b.freq*float64(i)/float64(rate))
			c.Samples[i] = clamp16(int32(math.Round(v)))
		}
	}
	return c
}

// checkSegments fails t unless got matches want segment for segment, each
// boundary within tol.
func checkSegments(t *testing.T, got, want []Segment, tol time.Duration) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d segments %v, want %d: %v", len(got), got, len(want), want)
	}
	for i := range got {
		if d := got[i].Start - want[i].Start; d < -tol || d > tol {
			t.Errorf("segment %d starts at %v, want %v ± %v", i, got[i].Start, want[i].Start, tol)
		}
		if d := got[i].End - want[i].End; d < -tol || d > tol {
			t.Errorf("segment %d ends at %v, want %v ± %v", i, got[i].End, want[i].End, tol)
		}
	}
}

// ms is shorthand for milliseconds.
func ms(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

// TestVADToneBursts checks segment boundaries on tone bursts at awkward
// times (not on frame boundaries): within one 10 ms frame, with the
// hangover bridging a 200 ms pause but not a 400 ms one, and a 60 ms blip
// dropped as shorter than MinSpeech.
func TestVADToneBursts(t *testing.T) {
	bs := []burst{
		{ms(503.7), ms(1217.1), 440, -20},
		{ms(1417.1), ms(1800.3), 1000, -30}, // 200 ms after the first: same segment
		{ms(2200.9), ms(2900.1), 2500, -12}, // 400 ms after: new segment
		{ms(3500), ms(3560), 1000, -10},     // 60 ms blip: not speech
		{ms(4000.3), ms(4150.2), 300, -35},  // 150 ms: speech
	}
	want := []Segment{{ms(503.7), ms(1800.3)}, {ms(2200.9), ms(2900.1)}, {ms(4000.3), ms(4150.2)}}
	for _, rate := range []int{Rate8k, Rate16k, Rate24k, Rate44k1} {
		t.Run(fmt.Sprint(rate), func(t *testing.T) {
			c := bursts(rate, 5*time.Second, bs...)
			got, err := DetectSpeech(c, DefaultVADConfig())
			if err != nil {
				t.Fatal(err)
			}
			checkSegments(t, got, want, 10*time.Millisecond)
		})
	}
}

// TestVADToneBurstsInNoise repeats the burst test over steady white and
// pink noise 10 dB below the quietest burst that matters.
func TestVADToneBurstsInNoise(t *testing.T) {
	bs := []burst{{ms(1503.7), ms(2217.1), 440, -20}, {ms(3000.9), ms(3700.1), 1000, -20}}
	want := []Segment{{ms(1503.7), ms(2217.1)}, {ms(3000.9), ms(3700.1)}}
	tone := math.Pow(10, -20.0/10) * fullScaleSinePower
	for seed := range uint64(4) {
		c := bursts(Rate16k, 5*time.Second, bs...)
		for name, noisy := range map[string]Chunk{
			"white": vdWhiteNoise(c, tone, 10, seed),
			"pink":  vdPinkNoise(c, tone, 10, seed),
		} {
			t.Run(fmt.Sprintf("%s/seed%d", name, seed), func(t *testing.T) {
				got, err := DetectSpeech(noisy, DefaultVADConfig())
				if err != nil {
					t.Fatal(err)
				}
				// A burst 10 dB over the noise gives frames 10.4 dB over
				// the floor; partial frames at the edges may fall short of
				// the 6 dB threshold, so allow two frames.
				checkSegments(t, got, want, 20*time.Millisecond)
			})
		}
	}
}

func TestVADSilenceAndNoiseOnly(t *testing.T) {
	t.Parallel()
	for _, rate := range []int{Rate8k, Rate16k, Rate48k} {
		silence := Silence(rate, 20*time.Second)
		cases := map[string]Chunk{"digital silence": silence}
		for _, level := range []float64{-70, -45, -30, -15} {
			p := math.Pow(10, level/10) * fullScaleSinePower
			cases[fmt.Sprintf("white %g dBFS", level)] = vdWhiteNoise(silence, p, 0, uint64(-level))
			cases[fmt.Sprintf("pink %g dBFS", level)] = vdPinkNoise(silence, p, 0, uint64(-level))
		}
		// Noise that gets quieter: the floor follows it down at once.
		loud := vdWhiteNoise(Silence(rate, 5*time.Second), 1e6, 0, 1)
		quiet := vdWhiteNoise(Silence(rate, 5*time.Second), 1e4, 0, 2)
		cases["falling noise"] = vdConcat(rate, loud, quiet)
		// 50 Hz hum with harmonics, under the VAD's high-pass.
		hum := Silence(rate, 5*time.Second)
		for i := range hum.Samples {
			x := 2 * math.Pi * 50 * float64(i) / float64(rate)
			hum.Samples[i] = int16(3000*math.Sin(x) + 600*math.Sin(2*x) + 200*math.Sin(3*x))
		}
		cases["mains hum"] = hum
		for name, c := range cases {
			got, err := DetectSpeech(c, DefaultVADConfig())
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 0 {
				t.Errorf("rate %d, %s: found speech %v", rate, name, got)
			}
		}
	}
}

// speechSpan is where the flite fixture's speech is, from its energy
// envelope: the first 20 ms frame above −45 dBFS starts at 240 ms and the
// last above −50 dBFS ends at 2.37 s.
var speechSpan = Segment{Start: ms(240), End: ms(2370)}

// TestVADSpeech checks the flite fixture, clean and with white or pink
// noise at 15 and 10 dB SNR (noise power relative to the speech's power over
// speechSpan), padded with a second of the same noise on each side.
func TestVADSpeech(t *testing.T) {
	speech := vdLoad(t, "vad_speech16k.s16", Rate16k)
	got, err := DetectSpeech(speech, DefaultVADConfig())
	if err != nil {
		t.Fatal(err)
	}
	// Clean: one segment (the pauses between words are shorter than the
	// hangover), on the span to within a frame or two.
	checkSegments(t, got, []Segment{speechSpan}, 20*time.Millisecond)

	ref := vdPower(speech.Slice(speechSpan.Start, speechSpan.End).Samples)
	padded := vdConcat(Rate16k, Silence(Rate16k, time.Second), speech, Silence(Rate16k, time.Second))
	want := Segment{Start: speechSpan.Start + time.Second, End: speechSpan.End + time.Second}
	for _, snr := range []float64{15, 10} {
		for seed := range uint64(3) {
			for name, noisy := range map[string]Chunk{
				"white": vdWhiteNoise(padded, ref, snr, seed),
				"pink":  vdPinkNoise(padded, ref, snr, seed),
			} {
				t.Run(fmt.Sprintf("%s/%gdB/seed%d", name, snr, seed), func(t *testing.T) {
					got, err := DetectSpeech(noisy, DefaultVADConfig())
					if err != nil {
						t.Fatal(err)
					}
					if len(got) != 1 {
						t.Fatalf("got segments %v, want one near %v", got, want)
					}
					t.Logf("start %+v, end %+v", got[0].Start-want.Start, got[0].End-want.End)
					// The quiet onset and the fading last syllable sink into
					// the noise: measured +50 ms at the start and −120 ms at
					// the end at 10 dB. Allow a little more.
					if d := got[0].Start - want.Start; d < -10*time.Millisecond || d > 70*time.Millisecond {
						t.Errorf("starts at %v, want %v (−10/+70 ms)", got[0].Start, want.Start)
					}
					if d := got[0].End - want.End; d < -150*time.Millisecond || d > 20*time.Millisecond {
						t.Errorf("ends at %v, want %v (−150/+20 ms)", got[0].End, want.End)
					}
				})
			}
		}
	}
}

// TestVADLongSpeech checks that speech running much longer than the
// floor window (10.6 s: the fixture's speech five times over, without
// pauses) does not raise the noise floor into the speech: it stays one
// segment.
func TestVADLongSpeech(t *testing.T) {
	speech := vdLoad(t, "vad_speech16k.s16", Rate16k)
	act := speech.Slice(speechSpan.Start, speechSpan.End)
	ref := vdPower(act.Samples)
	long := vdConcat(Rate16k, Silence(Rate16k, time.Second), act, act, act, act, act, Silence(Rate16k, time.Second))
	end := time.Second + 5*act.Duration()
	for name, in := range map[string]Chunk{
		"clean": long,
		"white": vdWhiteNoise(long, ref, 10, 5),
		"pink":  vdPinkNoise(long, ref, 10, 5),
	} {
		got, err := DetectSpeech(in, DefaultVADConfig())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Start < time.Second || got[0].Start > time.Second+70*time.Millisecond ||
			got[0].End > end || got[0].End < end-150*time.Millisecond {
			t.Errorf("%s: segments %v, want one from 1s to %v", name, got, end)
		}
	}
}

// TestVADRisingNoise pins down the documented cost of the minimum-tracking
// floor: noise that jumps 20 dB louder is taken for speech until the floor
// window has passed, and not after.
func TestVADRisingNoise(t *testing.T) {
	cfg := DefaultVADConfig()
	quiet := vdWhiteNoise(Silence(Rate16k, 5*time.Second), 1e4, 0, 1)
	loud := vdPinkNoise(Silence(Rate16k, 10*time.Second), 1e6, 0, 2)
	got, err := DetectSpeech(vdConcat(Rate16k, quiet, loud), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range got {
		if s.Start < 5*time.Second || s.End > 5*time.Second+cfg.FloorWindow+cfg.Frame {
			t.Errorf("segment %v outside [5s, 5s + FloorWindow]", s)
		}
	}
}

// TestVADSpeechFromFirstSample checks speech that starts at the first
// sample, with noise starting with it, so that no quiet lead-in shows the
// noise floor first.
func TestVADSpeechFromFirstSample(t *testing.T) {
	speech := vdLoad(t, "vad_speech16k.s16", Rate16k)
	ref := vdPower(speech.Slice(speechSpan.Start, speechSpan.End).Samples)
	c := speech.Slice(280*time.Millisecond, speech.Duration()) // starts in the first vowel
	for name, in := range map[string]Chunk{
		"clean": c,
		"white": vdWhiteNoise(c, ref, 10, 4),
		"pink":  vdPinkNoise(c, ref, 10, 4),
	} {
		got, err := DetectSpeech(in, DefaultVADConfig())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Start > 20*time.Millisecond {
			t.Errorf("%s: segments %v, want one starting by 20ms", name, got)
		}
	}
}

// TestVADStreaming feeds the VAD pieces of random sizes and checks that it
// reports the same events as DetectSpeech, that events come out MinSpeech
// after speech starts and Hangover after it ends (to within a frame), that
// Speaking follows them, and that Flush resets the VAD for a new stream.
func TestVADStreaming(t *testing.T) {
	cfg := DefaultVADConfig()
	c := bursts(Rate16k, 4*time.Second,
		burst{ms(503.7), ms(1217.1), 440, -20}, burst{ms(2200.9), ms(2900.1), 2500, -12})
	c = vdWhiteNoise(c, 1e4, 0, 3) // −50 dBFS hiss
	want, err := DetectSpeech(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 2 {
		t.Fatalf("DetectSpeech = %v, want 2 segments", want)
	}
	v, err := NewVAD(Rate16k, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 3 {
		var events []VADEvent
		fed := 0
		for s := c.Samples; len(s) > 0; {
			k := min(len(s), 1+rng.IntN(400))
			before := len(events)
			events = v.Process(events, s[:k])
			s = s[k:]
			fed += k
			for _, e := range events[before:] {
				lag := DurationOf(fed, Rate16k) - e.At
				wantLag := cfg.MinSpeech
				if e.Type == SpeechEnd {
					wantLag = cfg.Hangover
				}
				// Reported once the deciding frame is complete: up to one
				// frame, plus the piece that carried it, late.
				if lag < wantLag-cfg.Frame || lag > wantLag+cfg.Frame+DurationOf(k, Rate16k) {
					t.Errorf("round %d: %v reported %v after it, want about %v", round, e, lag, wantLag)
				}
				if v.Speaking() != (e.Type == SpeechStart) {
					t.Errorf("round %d: Speaking() = %v after %v", round, v.Speaking(), e)
				}
				if e.At != DurationOf(int(e.Sample), Rate16k) {
					t.Errorf("event %v: At does not match Sample %d", e, e.Sample)
				}
			}
		}
		events = v.Flush(events)
		if got := SegmentsOf(events); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("round %d: streaming segments %v, want %v", round, got, want)
		}
	}
}

// TestVADFlushEndsOpenSpeech checks that speech running to the end of the
// stream is closed by Flush, including a partial last frame.
func TestVADFlushEndsOpenSpeech(t *testing.T) {
	c := bursts(Rate16k, ms(1004.5), burst{ms(500), ms(1004.5), 700, -20})
	got, err := DetectSpeech(c, DefaultVADConfig())
	if err != nil {
		t.Fatal(err)
	}
	checkSegments(t, got, []Segment{{ms(500), ms(1004.5)}}, 0)
}

func TestVADConfigErrors(t *testing.T) {
	if err := DefaultVADConfig().Validate(); err != nil {
		t.Fatalf("default config invalid: %v", err)
	}
	for name, mod := range map[string]func(*VADConfig){
		"Frame":        func(c *VADConfig) { c.Frame = time.Millisecond },
		"ThresholdDB":  func(c *VADConfig) { c.ThresholdDB = math.NaN() },
		"MinLevelDBFS": func(c *VADConfig) { c.MinLevelDBFS = 3 },
		"MinSpeech":    func(c *VADConfig) { c.MinSpeech = -time.Second },
		"Hangover":     func(c *VADConfig) { c.Hangover = time.Hour },
		"FloorWindow":  func(c *VADConfig) { c.FloorWindow = 0 },
	} {
		cfg := DefaultVADConfig()
		mod(&cfg)
		if _, err := NewVAD(Rate16k, cfg); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("bad %s: NewVAD error %v, want one naming it", name, err)
		}
		if _, err := DetectSpeech(Chunk{Rate: Rate16k}, cfg); err == nil {
			t.Errorf("bad %s: DetectSpeech gave no error", name)
		}
	}
	if _, err := NewVAD(Rate16k, VADConfig{}); err == nil || !strings.Contains(err.Error(), "DefaultVADConfig") {
		t.Errorf("zero VADConfig: error %v, want one pointing at DefaultVADConfig", err)
	}
	if _, err := NewVAD(0, DefaultVADConfig()); !errors.Is(err, ErrBadRate) {
		t.Errorf("NewVAD(rate 0) error = %v, want ErrBadRate", err)
	}
	if _, err := DetectSpeech(Chunk{}, DefaultVADConfig()); !errors.Is(err, ErrBadRate) {
		t.Errorf("DetectSpeech(zero Chunk) error = %v, want ErrBadRate", err)
	}
	if _, err := NewVAD(4000, DefaultVADConfig()); err == nil || !strings.Contains(err.Error(), "8000") {
		t.Errorf("NewVAD(4000 Hz) error = %v, want one naming the 8000 Hz minimum", err)
	}
}

func TestStreamingDoesNotAllocate(t *testing.T) {
	c := bursts(Rate16k, 3*time.Second, burst{ms(500), ms(1500), 440, -20})
	d, err := GenerateDTMF("1234", Rate16k, DefaultDTMFConfig())
	if err != nil {
		t.Fatal(err)
	}
	c = vdConcat(Rate16k, c, d)
	frames := c.Frames(20 * time.Millisecond)
	v, err := NewVAD(Rate16k, DefaultVADConfig())
	if err != nil {
		t.Fatal(err)
	}
	det, err := NewDTMFDetector(Rate16k, DefaultDTMFDetectConfig())
	if err != nil {
		t.Fatal(err)
	}
	events := make([]VADEvent, 0, 8)
	digits := make([]DTMFDigit, 0, 8)
	var nEvents, nDigits int
	allocs := testing.AllocsPerRun(5, func() {
		events, digits = events[:0], digits[:0]
		for _, f := range frames {
			events = v.Process(events, f.Samples)
			digits = det.Process(digits, f.Samples)
		}
		events, digits = v.Flush(events), det.Flush(digits)
		nEvents, nDigits = len(events), len(digits)
	})
	if allocs != 0 {
		t.Errorf("streaming VAD and DTMF allocate %v times per stream, want 0", allocs)
	}
	// Two segments: the tone, and the keys (their 100 ms gaps are within
	// the hangover).
	if nEvents != 4 || nDigits != 4 {
		t.Errorf("got %d events and %d digits, want 4 and 4", nEvents, nDigits)
	}
}

func TestVADEventStrings(t *testing.T) {
	e := VADEvent{Type: SpeechStart, Sample: 16000, At: time.Second}
	if got := e.String(); got != "speech start at 1s" {
		t.Errorf("String() = %q", got)
	}
	if got := VADEventType(9).String(); got != "VADEventType(9)" {
		t.Errorf("String() = %q", got)
	}
}

func ExampleDetectSpeech() {
	// Half a second of silence, 0.8 s of a 440 Hz tone, then silence.
	audio := Silence(Rate16k, 2*time.Second)
	for i := SamplesFor(Rate16k, 500*time.Millisecond); i < SamplesFor(Rate16k, 1300*time.Millisecond); i++ {
		audio.Samples[i] = int16(3000 * math.Sin(2*math.Pi*440*float64(i)/Rate16k))
	}
	segments, err := DetectSpeech(audio, DefaultVADConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range segments {
		fmt.Printf("speech from %v to %v\n", s.Start, s.End)
	}
	// Output:
	// speech from 500ms to 1.3s
}

func ExampleVAD() {
	vad, err := NewVAD(Rate16k, DefaultVADConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	audio := Silence(Rate16k, 2*time.Second)
	for i := SamplesFor(Rate16k, 250*time.Millisecond); i < SamplesFor(Rate16k, time.Second); i++ {
		audio.Samples[i] = int16(3000 * math.Sin(2*math.Pi*440*float64(i)/Rate16k))
	}
	var events []VADEvent
	// Feed 20 ms frames as they arrive; react to each event as it comes.
	for _, frame := range audio.Frames(20 * time.Millisecond) {
		events = vad.Process(events[:0], frame.Samples)
		for _, e := range events {
			fmt.Println(e)
		}
	}
	// Output:
	// speech start at 250ms
	// speech end at 1s
}

func BenchmarkVAD(b *testing.B) {
	for _, rate := range []int{Rate8k, Rate24k} {
		b.Run(fmt.Sprint(rate), func(b *testing.B) {
			speech := vdLoad(b, "vad_speech16k.s16", Rate16k)
			// The benchmark measures cost per sample; reuse the 16 kHz
			// samples at each rate.
			c := vdWhiteNoise(Chunk{Rate: rate, Samples: speech.Samples}, 1e5, 0, 1)
			v, err := NewVAD(rate, DefaultVADConfig())
			if err != nil {
				b.Fatal(err)
			}
			frames := c.Frames(20 * time.Millisecond)
			dst := make([]VADEvent, 0, 16)
			b.SetBytes(int64(2 * c.Len()))
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				dst = dst[:0]
				for _, f := range frames {
					dst = v.Process(dst, f.Samples)
				}
				dst = v.Flush(dst)
				n = len(dst)
			}
			if n == 0 {
				b.Fatal("no speech found")
			}
			b.ReportMetric(float64(c.Len())*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}
