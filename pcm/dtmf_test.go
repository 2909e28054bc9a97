package pcm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const allDTMF = "0123456789*#ABCD"

// checkDigits fails t unless got has exactly the keys of want, each starting
// at first + i·pitch and lasting tone, to within tol.
func checkDigits(t *testing.T, got []DTMFDigit, want string, first, pitch, tone, tol time.Duration) {
	t.Helper()
	if s := DTMFString(got); s != want {
		t.Fatalf("detected %q, want %q (%v)", s, want, got)
	}
	for i, d := range got {
		start := first + time.Duration(i)*pitch
		if e := d.Start - start; e < -tol || e > tol {
			t.Errorf("digit %d %c starts at %v, want %v ± %v", i, d.Digit, d.Start, start, tol)
		}
		if e := d.End - (start + tone); e < -tol || e > tol {
			t.Errorf("digit %d %c ends at %v, want %v ± %v", i, d.Digit, d.End, start+tone, tol)
		}
	}
}

// dtmfTol is the timing accuracy promised by DTMFDigit for clean keys:
// under one analysis step (6.4 ms). Measured worst case: 4.5 ms, on sox's
// unramped tones.
const dtmfTol = 5 * time.Millisecond

func TestDTMFRoundTrip(t *testing.T) {
	for _, rate := range []int{Rate8k, Rate16k, Rate24k, Rate44k1, Rate48k} {
		t.Run(fmt.Sprint(rate), func(t *testing.T) {
			cfg := DefaultDTMFConfig()
			c, err := GenerateDTMF(allDTMF, rate, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if want := SamplesFor(rate, 16*cfg.Tone+15*cfg.Gap); c.Len() != want {
				t.Errorf("generated %d samples, want %d", c.Len(), want)
			}
			got, err := DetectDTMF(c, DefaultDTMFDetectConfig())
			if err != nil {
				t.Fatal(err)
			}
			checkDigits(t, got, allDTMF, 0, cfg.Tone+cfg.Gap, cfg.Tone, dtmfTol)
		})
	}
}

func TestGenerateDTMFLevelAndSpectrum(t *testing.T) {
	cfg := DTMFConfig{Tone: 200 * time.Millisecond, LevelDBFS: -12, TwistDB: 3}
	c, err := GenerateDTMF("8", Rate16k, cfg)
	if err != nil {
		t.Fatal(err)
	}
	mid := c.Samples[SamplesFor(c.Rate, 20*time.Millisecond):SamplesFor(c.Rate, 180*time.Millisecond)]
	x := make([]float64, len(mid))
	for i, v := range mid {
		x[i] = float64(v)
	}
	level := func(f float64) float64 { // dBFS of the sine at f, rectangular window
		p := goertzelPower(x, goertzelCoeff(f, c.Rate))
		amp := 2 * math.Sqrt(p) / float64(len(x))
		return 20 * math.Log10(amp/32767)
	}
	// Key 8 is 852 Hz + 1336 Hz.
	if l := level(852); math.Abs(l-(-12)) > 0.2 {
		t.Errorf("852 Hz at %.2f dBFS, want -12", l)
	}
	if l := level(1336); math.Abs(l-(-9)) > 0.2 {
		t.Errorf("1336 Hz at %.2f dBFS, want -9 (twist +3)", l)
	}
	for _, f := range []float64{697, 770, 941, 1209, 1477, 1633} {
		if l := level(f); l > -40 {
			t.Errorf("%v Hz present at %.1f dBFS in key 8", f, l)
		}
	}
}

func TestGenerateDTMFErrors(t *testing.T) {
	def := DefaultDTMFConfig()
	for _, tc := range []struct {
		name   string
		digits string
		rate   int
		cfg    DTMFConfig
		is     error
		says   string
	}{
		{"bad digit", "12X4", Rate8k, def, ErrDTMFDigit, `'X' at byte 2`},
		{"space", "1 2", Rate8k, def, ErrDTMFDigit, `' '`},
		{"unicode", "1٣", Rate8k, def, ErrDTMFDigit, `'٣'`},
		{"empty", "", Rate8k, def, ErrDTMFDigit, "empty"},
		{"zero rate", "1", 0, def, ErrBadRate, "got 0"},
		{"low rate", "1", 6000, def, nil, "at least 8000 Hz"},
		{"no tone", "1", Rate8k, DTMFConfig{Gap: time.Millisecond, LevelDBFS: -10}, nil, "tone duration"},
		{"negative gap", "1", Rate8k, DTMFConfig{Tone: time.Second, Gap: -1, LevelDBFS: -10}, nil, "gap"},
		{"positive level", "1", Rate8k, DTMFConfig{Tone: time.Second, LevelDBFS: 1}, nil, "level"},
		{"NaN level", "1", Rate8k, DTMFConfig{Tone: time.Second, LevelDBFS: math.NaN()}, nil, "level"},
		{"clips", "1", Rate8k, DTMFConfig{Tone: time.Second, LevelDBFS: -3}, nil, "clips"},
		{"twist", "1", Rate8k, DTMFConfig{Tone: time.Second, LevelDBFS: -20, TwistDB: 30}, nil, "twist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := GenerateDTMF(tc.digits, tc.rate, tc.cfg)
			if err == nil {
				t.Fatalf("GenerateDTMF(%q) = %d samples, want an error", tc.digits, c.Len())
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v, want %v", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %q does not say %q", err, tc.says)
			}
		})
	}
}

func TestGenerateDTMFLowercase(t *testing.T) {
	c, err := GenerateDTMF("abcd", Rate8k, DefaultDTMFConfig())
	if err != nil {
		t.Fatal(err)
	}
	got, err := DetectDTMF(c, DefaultDTMFDetectConfig())
	if err != nil {
		t.Fatal(err)
	}
	if s := DTMFString(got); s != "ABCD" {
		t.Errorf("detected %q, want ABCD", s)
	}
}

func TestDTMFTones(t *testing.T) {
	for i, d := range allDTMF {
		lo, hi, err := DTMFTones(d)
		if err != nil {
			t.Fatal(err)
		}
		// Check against the Q.23 table written out independently.
		want := [...][2]float64{{941, 1336}, {697, 1209}, {697, 1336}, {697, 1477}, {770, 1209}, {770, 1336},
			{770, 1477}, {852, 1209}, {852, 1336}, {852, 1477}, {941, 1209}, {941, 1477},
			{697, 1633}, {770, 1633}, {852, 1633}, {941, 1633}}[i]
		if lo != want[0] || hi != want[1] {
			t.Errorf("DTMFTones(%q) = %v, %v; want %v", d, lo, hi, want)
		}
	}
	if _, _, err := DTMFTones('E'); !errors.Is(err, ErrDTMFDigit) {
		t.Errorf("DTMFTones('E') error = %v, want ErrDTMFDigit", err)
	}
}

func TestDTMFDetectConfigErrors(t *testing.T) {
	def := DefaultDTMFDetectConfig()
	if err := def.Validate(); err != nil {
		t.Fatalf("default config invalid: %v", err)
	}
	for name, mod := range map[string]func(*DTMFDetectConfig){
		"MinLevelDBFS":   func(c *DTMFDetectConfig) { c.MinLevelDBFS = 0 },
		"NormalTwistDB":  func(c *DTMFDetectConfig) { c.NormalTwistDB = -1 },
		"ReverseTwistDB": func(c *DTMFDetectConfig) { c.ReverseTwistDB = math.NaN() },
		"MinTone":        func(c *DTMFDetectConfig) { c.MinTone = 5 * time.Millisecond },
	} {
		cfg := def
		mod(&cfg)
		_, err := NewDTMFDetector(Rate8k, cfg)
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("bad %s: error %v, want one naming it", name, err)
		}
		if _, err := DetectDTMF(Chunk{Rate: Rate8k}, cfg); err == nil {
			t.Errorf("DetectDTMF with bad %s: no error", name)
		}
	}
	if _, err := DetectDTMF(Chunk{}, def); !errors.Is(err, ErrBadRate) {
		t.Errorf("DetectDTMF(zero Chunk) error = %v, want ErrBadRate", err)
	}
	if _, err := NewDTMFDetector(4000, def); err == nil || !strings.Contains(err.Error(), "8000") {
		t.Errorf("NewDTMFDetector(4000) error = %v, want one naming the 8000 Hz minimum", err)
	}
}

func TestDTMFSoxFixture(t *testing.T) {
	c := vdLoad(t, "dtmf_sox8k.s16", Rate8k)
	got, err := DetectDTMF(c, DefaultDTMFDetectConfig())
	if err != nil {
		t.Fatal(err)
	}
	checkDigits(t, got, allDTMF, 0, 200*time.Millisecond, 100*time.Millisecond, dtmfTol)
}

// TestDTMFMulawFixture checks keys that went through G.711 µ-law at 8 kHz
// (encoded and decoded by ffmpeg), with the shorter 60 ms tones and gaps.
func TestDTMFMulawFixture(t *testing.T) {
	c := vdLoad(t, "dtmf_sox8k_mulaw.s16", Rate8k)
	got, err := DetectDTMF(c, DefaultDTMFDetectConfig())
	if err != nil {
		t.Fatal(err)
	}
	checkDigits(t, got, allDTMF, 0, 120*time.Millisecond, 60*time.Millisecond, dtmfTol)
}

// testDTMFG711Live (TestFFmpeg/DTMFG711Live) sends generated keys through G.711 µ-law and A-law at
// 8 kHz with ffmpeg (encode, then decode) and detects them.
func testDTMFG711Live(t *testing.T, farm ffmpegFarm) {
	t.Parallel()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg not installed (Debian package ffmpeg); TestDTMFMulawFixture covers µ-law")
	}
	c, err := GenerateDTMF(allDTMF, Rate8k, dtmfG711Config)
	if err != nil {
		t.Fatal(err)
	}
	// The package's shared ffmpeg runs (ffmpeg_farm_test.go) encode the
	// keys with both laws, then decode both.
	for _, law := range []string{"mulaw", "alaw"} {
		enc := farm.out(t, "dtmf-"+law)
		if len(enc) != c.Len() {
			t.Fatalf("%s: %d bytes for %d samples", law, len(enc), c.Len())
		}
		back, err := FromBytes(Rate8k, farm.out(t, "dtmf-"+law+".s16le"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := DetectDTMF(back, DefaultDTMFDetectConfig())
		if err != nil {
			t.Fatal(err)
		}
		t.Run(law, func(t *testing.T) {
			checkDigits(t, got, allDTMF, 0, 100*time.Millisecond, 50*time.Millisecond, dtmfTol)
		})
	}
}

// TestDTMFNoise adds white noise 20 dB below the tones (and, as a margin
// check, 10 dB below) with several seeds.
func TestDTMFNoise(t *testing.T) {
	t.Parallel()
	for _, rate := range []int{Rate8k, Rate16k} {
		for _, snr := range []float64{20, 10} {
			for seed := range uint64(5) {
				t.Run(fmt.Sprintf("%d/%gdB/seed%d", rate, snr, seed), func(t *testing.T) {
					cfg := DefaultDTMFConfig()
					c, err := GenerateDTMF(allDTMF, rate, cfg)
					if err != nil {
						t.Fatal(err)
					}
					tone := c.Samples[:SamplesFor(rate, cfg.Tone)]
					c = vdConcat(rate, Silence(rate, 300*time.Millisecond), c, Silence(rate, 300*time.Millisecond))
					noisy := vdWhiteNoise(c, vdPower(tone), snr, seed)
					got, err := DetectDTMF(noisy, DefaultDTMFDetectConfig())
					if err != nil {
						t.Fatal(err)
					}
					checkDigits(t, got, allDTMF, 300*time.Millisecond, cfg.Tone+cfg.Gap, cfg.Tone, 2*dtmfTol)
				})
			}
		}
	}
}

func TestDTMFNoiseAloneNoDigits(t *testing.T) {
	for _, rate := range []int{Rate8k, Rate16k} {
		silence := Silence(rate, 10*time.Second)
		for i, noisy := range []Chunk{
			vdWhiteNoise(silence, fullScaleSinePower, 10, 1), // −10 dBFS white
			vdPinkNoise(silence, fullScaleSinePower, 10, 2),  // −10 dBFS pink
		} {
			got, err := DetectDTMF(noisy, DefaultDTMFDetectConfig())
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 0 {
				t.Errorf("rate %d noise %d: false digits %v", rate, i, got)
			}
		}
	}
}

// TestDTMFSpeechNoFalseDigits runs the flite speech fixture, louder and
// quieter and with noise, through the detector: a voice must not dial.
func TestDTMFSpeechNoFalseDigits(t *testing.T) {
	speech := vdLoad(t, "vad_speech16k.s16", Rate16k)
	variants := map[string]Chunk{"as is": speech}
	for _, gain := range []float64{-20, -10, 6} {
		g := math.Pow(10, gain/20)
		s := make([]int16, speech.Len())
		for i, v := range speech.Samples {
			s[i] = clamp16(int32(math.Round(float64(v) * g)))
		}
		variants[fmt.Sprintf("%+g dB", gain)] = Chunk{Rate: Rate16k, Samples: s}
	}
	variants["noise 20 dB"] = vdWhiteNoise(speech, vdPower(speech.Samples), 20, 7)
	// Crude 2:1 decimation to 8 kHz (averaging pairs, a weak low-pass) to
	// exercise the 8 kHz filters on speech too.
	dec := make([]int16, speech.Len()/2)
	for i := range dec {
		dec[i] = int16((int32(speech.Samples[2*i]) + int32(speech.Samples[2*i+1])) / 2)
	}
	variants["8 kHz"] = Chunk{Rate: Rate8k, Samples: dec}
	for name, c := range variants {
		got, err := DetectDTMF(c, DefaultDTMFDetectConfig())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 0 {
			t.Errorf("speech %s: false digits %v", name, got)
		}
	}
}

// TestDTMFSingleToneNoDigits checks that a pure tone, or two tones of the
// same group, are not keys.
func TestDTMFSingleToneNoDigits(t *testing.T) {
	rate := Rate8k
	sine := func(amp float64, freqs ...float64) Chunk {
		s := make([]int16, rate)
		for i := range s {
			var v float64
			for _, f := range freqs {
				v += amp * 32767 * math.Sin(2*math.Pi*f*float64(i)/float64(rate))
			}
			s[i] = clamp16(int32(math.Round(v)))
		}
		return Chunk{Rate: rate, Samples: s}
	}
	var cases []Chunk
	for _, f := range append(dtmfLow[:], dtmfHigh[:]...) {
		cases = append(cases, sine(0.5, f))
	}
	cases = append(cases, sine(0.3, 697, 770), sine(0.3, 1209, 1477), sine(0.5, 1000), sine(0.3, 440, 350))
	for i, c := range cases {
		got, err := DetectDTMF(c, DefaultDTMFDetectConfig())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 0 {
			t.Errorf("case %d: false digits %v", i, got)
		}
	}
}

// TestDTMFMinDuration checks Q.24 timing: a 40 ms key is accepted wherever
// it falls against the analysis steps, and a 30 ms key never is.
func TestDTMFMinDuration(t *testing.T) {
	t.Parallel()
	for _, rate := range []int{Rate8k, Rate16k, Rate48k} {
		for _, tc := range []struct {
			tone time.Duration
			want string
		}{{40 * time.Millisecond, "7"}, {30 * time.Millisecond, ""}, {20 * time.Millisecond, ""}} {
			cfg := DefaultDTMFConfig()
			cfg.Tone = tc.tone
			key, err := GenerateDTMF("7", rate, cfg)
			if err != nil {
				t.Fatal(err)
			}
			hop := SamplesFor(rate, dtmfBlock) / 4
			for off := range hop + 1 { // every alignment against the steps
				if rate == Rate48k && off%7 != 0 {
					continue
				}
				c := vdConcat(rate, Chunk{Rate: rate, Samples: make([]int16, 1000+off)}, key, Silence(rate, 50*time.Millisecond))
				got, err := DetectDTMF(c, DefaultDTMFDetectConfig())
				if err != nil {
					t.Fatal(err)
				}
				if s := DTMFString(got); s != tc.want {
					t.Fatalf("rate %d, %v key at offset %d: detected %q, want %q", rate, tc.tone, off, s, tc.want)
				}
			}
		}
	}
}

// TestDTMFLongPressIsOneDigit checks the debounce: a 3 s key, clean or in
// noise, is one digit with the right start and end.
func TestDTMFLongPressIsOneDigit(t *testing.T) {
	cfg := DefaultDTMFConfig()
	cfg.Tone = 3 * time.Second
	key, err := GenerateDTMF("#", Rate8k, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := vdConcat(Rate8k, Silence(Rate8k, 500*time.Millisecond), key, Silence(Rate8k, 500*time.Millisecond))
	for _, in := range []Chunk{c, vdWhiteNoise(c, vdPower(key.Samples), 15, 3)} {
		got, err := DetectDTMF(in, DefaultDTMFDetectConfig())
		if err != nil {
			t.Fatal(err)
		}
		checkDigits(t, got, "#", 500*time.Millisecond, 0, 3*time.Second, 2*dtmfTol)
	}
}

// TestDTMFRepeatedKeyShortGap checks that a key repeated after a 40 ms gap
// (the Q.24 minimum pause) counts twice.
func TestDTMFRepeatedKeyShortGap(t *testing.T) {
	for _, rate := range []int{Rate8k, Rate24k} {
		cfg := DTMFConfig{Tone: 50 * time.Millisecond, Gap: 40 * time.Millisecond, LevelDBFS: -10}
		c, err := GenerateDTMF("5555", rate, cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DetectDTMF(c, DefaultDTMFDetectConfig())
		if err != nil {
			t.Fatal(err)
		}
		checkDigits(t, got, "5555", 0, 90*time.Millisecond, 50*time.Millisecond, dtmfTol)
	}
}

// TestDTMFNoGap checks keys that follow each other with no silence.
func TestDTMFNoGap(t *testing.T) {
	cfg := DTMFConfig{Tone: 60 * time.Millisecond, LevelDBFS: -10}
	c, err := GenerateDTMF("1236", Rate8k, cfg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DetectDTMF(c, DefaultDTMFDetectConfig())
	if err != nil {
		t.Fatal(err)
	}
	checkDigits(t, got, "1236", 0, 60*time.Millisecond, 60*time.Millisecond, 2*dtmfTol)
}

// TestDTMFTalkOffLive synthesises several voices saying several sentences
// and checks that none of it is heard as a key, at 8 and 16 kHz.
func TestDTMFTalkOffLive(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("synthesises speech; skipped with -short")
	}
	for _, tool := range []struct{ bin, pkg string }{{"flite", "flite"}, {"espeak-ng", "espeak-ng"}, {"sox", "sox"}} {
		if _, err := exec.LookPath(tool.bin); err != nil {
			t.Skipf("%s not installed (Debian package %s)", tool.bin, tool.pkg)
		}
	}
	text := "Thank you for calling. Press one for sales, two for support, or hold for an operator. " +
		"Your balance is four hundred and twelve dollars. Goodbye!"
	dir := t.TempDir()
	var wavs []string
	for _, voice := range []string{"slt", "kal", "awb", "rms"} {
		out := filepath.Join(dir, voice+".wav")
		if b, err := exec.CommandContext(t.Context(), "flite", "-voice", voice, "-t", text, "-o", out).CombinedOutput(); err != nil {
			t.Fatalf("flite -voice %s: %v\n%s", voice, err, b)
		}
		wavs = append(wavs, out)
	}
	for _, voice := range []string{"en-us", "en-us+f3"} {
		out := filepath.Join(dir, voice+".wav")
		cmd := exec.CommandContext(t.Context(), "espeak-ng", "-v", voice, "-w", out, text)
		// espeak-ng loads the PulseAudio client even to write a file:
		// given a server that cannot exist, it fails at once and leaves
		// no pulse-XXXXXXXXXXXX in TMPDIR nor a link in ~/.config/pulse
		// (as voicetest/speech runs it).
		cmd.Env = append(os.Environ(), "PULSE_SERVER=unix:/dev/null/voicetest-no-sound-server")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("espeak-ng -v %s: %v\n%s", voice, err, b)
		}
		wavs = append(wavs, out)
	}
	for _, wav := range wavs {
		for _, rate := range []int{Rate8k, Rate16k} {
			raw, err := exec.CommandContext(t.Context(), "sox", wav, "-r", fmt.Sprint(rate), "-c", "1", "-b", "16", "-e", "signed", "-L", "-t", "raw", "-").Output()
			if err != nil {
				t.Fatalf("sox %s: %v", wav, err)
			}
			c, err := FromBytes(rate, raw)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DetectDTMF(c, DefaultDTMFDetectConfig())
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 0 {
				t.Errorf("%s at %d Hz (%v): false digits %v", filepath.Base(wav), rate, c.Duration(), got)
			}
		}
	}
}

func TestDTMFTwist(t *testing.T) {
	for _, tc := range []struct {
		twist float64
		want  string
	}{{0, "9"}, {6, "9"}, {-3, "9"}, {11, ""}, {-7, ""}} {
		cfg := DTMFConfig{Tone: 100 * time.Millisecond, LevelDBFS: -20, TwistDB: tc.twist}
		c, err := GenerateDTMF("9", Rate8k, cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DetectDTMF(c, DefaultDTMFDetectConfig())
		if err != nil {
			t.Fatal(err)
		}
		if s := DTMFString(got); s != tc.want {
			t.Errorf("twist %+g dB: detected %q, want %q", tc.twist, s, tc.want)
		}
	}
}

// TestDTMFLevel checks the MinLevelDBFS threshold.
func TestDTMFLevel(t *testing.T) {
	for _, tc := range []struct {
		level float64
		want  string
	}{{-30, "4"}, {-34, "4"}, {-40, ""}} {
		c, err := GenerateDTMF("4", Rate8k, DTMFConfig{Tone: 100 * time.Millisecond, LevelDBFS: tc.level})
		if err != nil {
			t.Fatal(err)
		}
		got, err := DetectDTMF(c, DefaultDTMFDetectConfig())
		if err != nil {
			t.Fatal(err)
		}
		if s := DTMFString(got); s != tc.want {
			t.Errorf("level %g dBFS: detected %q, want %q", tc.level, s, tc.want)
		}
	}
}

// TestDTMFFrequencyTolerance checks that keys off by 1.5% (what Q.24 asks
// receivers to accept) are detected.
func TestDTMFFrequencyTolerance(t *testing.T) {
	for _, dev := range []float64{-0.015, 0.015} {
		for i := range len(dtmfKeys) {
			lo, hi := dtmfLow[i/4]*(1+dev), dtmfHigh[i%4]*(1+dev)
			n := SamplesFor(Rate8k, 80*time.Millisecond)
			s := make([]int16, n+800)
			for j := range n {
				v := 0.3 * 32767 * (math.Sin(2*math.Pi*lo*float64(j)/8000) + math.Sin(2*math.Pi*hi*float64(j)/8000))
				s[400+j] = int16(math.Round(v))
			}
			got, err := DetectDTMF(Chunk{Rate: Rate8k, Samples: s}, DefaultDTMFDetectConfig())
			if err != nil {
				t.Fatal(err)
			}
			if want := string(dtmfKeys[i]); DTMFString(got) != want {
				t.Errorf("%+.1f%%: %.1f+%.1f Hz detected as %q, want %q", 100*dev, lo, hi, DTMFString(got), want)
			}
		}
	}
}

// TestDTMFStreamingMatchesWhole feeds the detector pieces of random sizes
// and checks it finds what DetectDTMF finds, at the same times, and that
// Flush resets it for a second stream.
func TestDTMFStreamingMatchesWhole(t *testing.T) {
	c, err := GenerateDTMF("159D*", Rate16k, DTMFConfig{Tone: 70 * time.Millisecond, Gap: 55 * time.Millisecond, LevelDBFS: -15})
	if err != nil {
		t.Fatal(err)
	}
	c = vdWhiteNoise(vdConcat(Rate16k, Silence(Rate16k, 123*time.Millisecond), c, Silence(Rate16k, 10*time.Millisecond)), 1e6, 0, 9)
	want, err := DetectDTMF(c, DefaultDTMFDetectConfig())
	if err != nil {
		t.Fatal(err)
	}
	if DTMFString(want) != "159D*" {
		t.Fatalf("DetectDTMF = %v, want 159D*", want)
	}
	d, err := NewDTMFDetector(Rate16k, DefaultDTMFDetectConfig())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 3 {
		var got []DTMFDigit
		for s := c.Samples; len(s) > 0; {
			k := min(len(s), rng.IntN(700))
			got = d.Process(got, s[:k])
			s = s[k:]
		}
		got = d.Flush(got)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("round %d: streaming gave %v, want %v", round, got, want)
		}
	}
}

func ExampleDetectDTMF() {
	audio, err := GenerateDTMF("42#", Rate8k, DefaultDTMFConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	digits, err := DetectDTMF(audio, DefaultDTMFDetectConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(DTMFString(digits))
	for _, d := range digits {
		fmt.Printf("%c from %v to %v\n", d.Digit, d.Start.Round(10*time.Millisecond), d.End.Round(10*time.Millisecond))
	}
	// Output:
	// 42#
	// 4 from 0s to 100ms
	// 2 from 200ms to 300ms
	// # from 400ms to 500ms
}

func ExampleDTMFDetector() {
	det, err := NewDTMFDetector(Rate8k, DefaultDTMFDetectConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	audio, _ := GenerateDTMF("*9", Rate8k, DefaultDTMFConfig())
	var digits []DTMFDigit
	// Feed 20 ms frames, as they would arrive from a call.
	for _, frame := range audio.Frames(20 * time.Millisecond) {
		digits = det.Process(digits[:0], frame.Samples)
		for _, d := range digits {
			fmt.Printf("key %c\n", d.Digit)
		}
	}
	for _, d := range det.Flush(digits[:0]) {
		fmt.Printf("key %c at end of stream\n", d.Digit)
	}
	// Output:
	// key *
	// key 9 at end of stream
}

func BenchmarkDTMFDetector(b *testing.B) {
	for _, rate := range []int{Rate8k, Rate24k} {
		b.Run(fmt.Sprint(rate), func(b *testing.B) {
			c, err := GenerateDTMF(allDTMF, rate, DefaultDTMFConfig())
			if err != nil {
				b.Fatal(err)
			}
			c = vdWhiteNoise(c, 1e6, 0, 1)
			d, err := NewDTMFDetector(rate, DefaultDTMFDetectConfig())
			if err != nil {
				b.Fatal(err)
			}
			frames := c.Frames(20 * time.Millisecond)
			dst := make([]DTMFDigit, 0, 32)
			b.SetBytes(int64(2 * c.Len()))
			b.ReportAllocs()
			b.ResetTimer()
			n := 0
			for b.Loop() {
				dst = dst[:0]
				for _, f := range frames {
					dst = d.Process(dst, f.Samples)
				}
				dst = d.Flush(dst)
				n = len(dst)
			}
			if n != len(allDTMF) {
				b.Fatalf("detected %d digits, want %d", n, len(allDTMF))
			}
			b.ReportMetric(float64(c.Len())*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}
