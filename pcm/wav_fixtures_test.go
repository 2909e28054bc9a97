package pcm

import (
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// updateWAV rewrites the WAV fixtures with the installed ffmpeg and sox.
var updateWAV = flag.Bool("update-wav", false, "regenerate pcm/testdata/wav_* with ffmpeg and sox")

// The fixtures and the commands that made them are listed in
// testdata/wav_g711_README.md.

// wavFixtureFrames is the length of every WAV fixture, in frames.
const wavFixtureFrames = 480

// wavSource returns the deterministic signal the WAV fixtures were made
// from: channels interleaved, each wavFixtureFrames long. Each channel starts
// with the extreme values and then carries full-range pseudo-random noise
// (integer arithmetic only, so it is the same on every platform).
func wavSource(channels int) []int16 {
	out := make([]int16, 0, channels*wavFixtureFrames)
	state := make([]uint32, channels)
	for ch := range state {
		state[ch] = uint32(12345 + 1000*ch)
	}
	extremes := []int16{-32768, 32767, 0, -1, 1, -256, 255, 128, -129}
	for i := range wavFixtureFrames {
		for ch := range channels {
			if i < len(extremes) {
				// Rotate so that the channels differ even here.
				out = append(out, extremes[(i+ch)%len(extremes)])
				continue
			}
			state[ch] = state[ch]*1664525 + 1013904223
			out = append(out, int16(state[ch]>>16))
		}
	}
	return out
}

// wavFixture is a WAV file made from wavSource by ffmpeg or sox.
type wavFixture struct {
	name     string // file name under testdata
	rate     int
	channels int
	// tool and args make the file from the raw source; IN and OUT stand
	// for the input and output paths, RATE and CH for rate and channels.
	tool string
	args []string
	// quantise maps a source sample to what the file holds, at 16-bit
	// scale (identity for lossless formats).
	quantise func(int16) float64
}

func lossless(v int16) float64 { return float64(v) }

var ffmpegIn = []string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-f", "s16le", "-ar", "RATE", "-ac", "CH", "-i", "IN"}
var soxIn = []string{"-D", "-t", "raw", "-r", "RATE", "-e", "signed", "-b", "16", "-c", "CH", "-L", "IN"}

func cat(a []string, b ...string) []string { return append(append([]string(nil), a...), b...) }

var wavFixtures = []wavFixture{
	{"wav_8k_stereo_u8.wav", 8000, 2, "ffmpeg", cat(ffmpegIn, "-c:a", "pcm_u8", "-fflags", "+bitexact", "OUT"),
		func(v int16) float64 { return float64(v >> 8 << 8) }},
	{"wav_44k1_stereo_s24.wav", 44100, 2, "ffmpeg", cat(ffmpegIn, "-c:a", "pcm_s24le", "-fflags", "+bitexact", "OUT"), lossless},
	{"wav_48k_mono_s32.wav", 48000, 1, "ffmpeg", cat(ffmpegIn, "-c:a", "pcm_s32le", "-fflags", "+bitexact", "OUT"), lossless},
	{"wav_16k_stereo_f32.wav", 16000, 2, "ffmpeg", cat(ffmpegIn, "-c:a", "pcm_f32le", "-fflags", "+bitexact", "OUT"), lossless},
	{"wav_22k05_3ch_s16.wav", 22050, 3, "ffmpeg", cat(ffmpegIn, "-c:a", "pcm_s16le", "-fflags", "+bitexact", "OUT"), lossless},
	// Without -fflags +bitexact ffmpeg adds a LIST/INFO chunk naming itself.
	{"wav_24k_mono_s16_list.wav", 24000, 1, "ffmpeg", cat(ffmpegIn, "-c:a", "pcm_s16le", "OUT"), lossless},
	{"wav_8k_mono_mulaw.wav", 8000, 1, "ffmpeg", cat(ffmpegIn, "-c:a", "pcm_mulaw", "-fflags", "+bitexact", "OUT"),
		func(v int16) float64 { return float64(MulawToLinear(LinearToMulaw(v))) }},
	{"wav_8k_stereo_alaw.wav", 8000, 2, "ffmpeg", cat(ffmpegIn, "-c:a", "pcm_alaw", "-fflags", "+bitexact", "OUT"),
		func(v int16) float64 { return float64(AlawToLinear(LinearToAlaw(v))) }},
	// sox writes WAVE_FORMAT_EXTENSIBLE and a fact chunk for these.
	{"wav_sox_44k1_mono_s24.wav", 44100, 1, "sox", cat(soxIn, "-e", "signed", "-b", "24", "OUT"), lossless},
	{"wav_sox_48k_stereo_f32.wav", 48000, 2, "sox", cat(soxIn, "-e", "floating-point", "-b", "32", "OUT"), lossless},
	{"wav_sox_8k_mono_f64.wav", 8000, 1, "sox", cat(soxIn, "-e", "floating-point", "-b", "64", "OUT"), lossless},
}

// wide reports whether fx holds samples wider than 16 bits (24- or 32-bit
// integer, or float), whose means round ties to even.
func (fx wavFixture) wide() bool {
	for _, w := range []string{"_s24", "_s32", "_f32", "_f64"} {
		if strings.Contains(fx.name, w) {
			return true
		}
	}
	return false
}

// roundMean rounds a mean as ReadWAV does for fx: ties to even for wide
// samples, up for 16-bit and narrower ones.
func (fx wavFixture) roundMean(m float64) float64 {
	if fx.wide() {
		return math.RoundToEven(m)
	}
	return math.Floor(m + 0.5)
}

// expected returns the mono samples ReadWAV must produce for fx: the mean
// of the channels of each frame, rounded by roundMean.
func (fx wavFixture) expected() []int16 {
	src := wavSource(fx.channels)
	out := make([]int16, wavFixtureFrames)
	for i := range out {
		sum := 0.0
		for ch := range fx.channels {
			sum += fx.quantise(src[i*fx.channels+ch])
		}
		out[i] = int16(fx.roundMean(sum / float64(fx.channels)))
	}
	return out
}

// subst replaces IN, OUT, RATE and CH in args with in, out and fx's rate
// and channels.
func (fx wavFixture) subst(args []string, in, out string) []string {
	res := make([]string, len(args))
	for i, a := range args {
		switch a {
		case "IN":
			a = in
		case "OUT":
			a = out
		case "RATE":
			a = strconv.Itoa(fx.rate)
		case "CH":
			a = strconv.Itoa(fx.channels)
		}
		res[i] = a
	}
	return res
}

// makeWAVFixtures makes every fixture with its tool, under dir (same name),
// and returns, by fixture name, why one could not be made (its tool is not
// installed). The ffmpeg fixtures come from the package's shared ffmpeg run
// (ffmpeg_farm_test.go), each output from its own input (the options of
// ffmpegIn before -i, then the fixture's after it): starting ffmpeg costs far
// more than writing 480 frames.
func makeWAVFixtures(t *testing.T, farm ffmpegFarm, dir string) map[string]string {
	t.Helper()
	missing := map[string]string{}
	src := t.TempDir()
	input := func(fx wavFixture) string {
		in := filepath.Join(src, fmt.Sprintf("source-%d.s16le", fx.channels))
		if err := os.WriteFile(in, EncodePCM16(nil, wavSource(fx.channels)), 0o644); err != nil {
			t.Fatal(err)
		}
		return in
	}
	iIn := slices.Index(ffmpegIn, "-i")
	for _, fx := range wavFixtures {
		tool, err := exec.LookPath(fx.tool)
		if err != nil {
			missing[fx.name] = fmt.Sprintf("%s not installed (Debian package %s)", fx.tool, fx.tool)
			continue
		}
		out := filepath.Join(dir, fx.name)
		if fx.tool == "ffmpeg" {
			if !slices.Equal(fx.args[:iIn+2], ffmpegIn) {
				t.Fatalf("%s: its ffmpeg arguments do not start with ffmpegIn: %v", fx.name, fx.args)
			}
			farm.outFile(t, "fixture-"+fx.name, dir, fx.name)
			continue
		}
		args := fx.subst(fx.args, input(fx), out)
		if b, err := exec.CommandContext(t.Context(), tool, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", fx.tool, args, err, b)
		}
	}
	return missing
}

func checkSamples(t *testing.T, what string, got Chunk, wantRate int, want []int16) {
	t.Helper()
	if got.Rate != wantRate {
		t.Errorf("%s: rate %d, want %d", what, got.Rate, wantRate)
	}
	if d := firstSampleDiff(want, got.Samples); d != "" {
		t.Errorf("%s: samples differ from the expected ones: %s", what, d)
	}
}

func TestReadWAVFixtures(t *testing.T) {
	for _, fx := range wavFixtures {
		t.Run(fx.name, func(t *testing.T) {
			c, err := ReadWAVFile(filepath.Join("testdata", fx.name))
			if err != nil {
				t.Fatal(err)
			}
			checkSamples(t, fx.name, c, fx.rate, fx.expected())
		})
	}
}

// testWAVFixturesRegenerate (TestFFmpeg/WAVFixturesRegenerate) remakes every fixture with the installed tools
// and checks that ReadWAV decodes it as it decodes the committed one; with
// -update-wav it rewrites the committed fixtures.
func testWAVFixturesRegenerate(t *testing.T, farm ffmpegFarm) {
	if !*updateWAV { // -update-wav writes testdata, which other tests read
		t.Parallel()
	}
	dir := t.TempDir()
	missing := makeWAVFixtures(t, farm, dir)
	for _, fx := range wavFixtures {
		t.Run(fx.name, func(t *testing.T) {
			if why := missing[fx.name]; why != "" {
				t.Skip(why)
			}
			out := filepath.Join(dir, fx.name)
			if *updateWAV {
				b := readFileT(t, out)
				if err := os.WriteFile(filepath.Join("testdata", fx.name), b, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("wrote testdata/%s (%d bytes)", fx.name, len(b))
			}
			c, err := ReadWAVFile(out)
			if err != nil {
				t.Fatalf("reading the freshly made %s: %v", fx.name, err)
			}
			checkSamples(t, "fresh "+fx.name, c, fx.rate, fx.expected())
		})
	}
}

// testReadWAVMatchesFFmpegDecode (TestFFmpeg/ReadWAVMatchesFFmpegDecode) has ffmpeg decode each fixture to 64-bit
// float, mixes the channels exactly, and checks that ReadWAV gives exactly
// that, rounded as roundMean says. (ffmpeg's own conversions of these files
// to 16 bits are checked in ref_fixtures_test.go.) One ffmpeg run decodes
// every fixture, each input to its own output: starting ffmpeg costs far
// more than decoding 480 frames.
func testReadWAVMatchesFFmpegDecode(t *testing.T, farm ffmpegFarm) {
	t.Parallel()
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skip("ffmpeg not installed (Debian package ffmpeg)")
	}
	// The package's shared ffmpeg run (ffmpeg_farm_test.go) decodes every
	// fixture; with -update-wav, which rewrites them, a run of this test's
	// own decodes them once they are written.
	decoded := func(t *testing.T, fx wavFixture) []byte { return farm.out(t, "decoded-"+fx.name+".f64le") }
	if *updateWAV {
		dir := t.TempDir()
		args := []string{"-nostdin", "-hide_banner", "-loglevel", "error"}
		for _, fx := range wavFixtures {
			args = append(args, "-i", filepath.Join("testdata", fx.name))
		}
		for i, fx := range wavFixtures {
			args = append(args, "-map", strconv.Itoa(i)+":a", "-f", "f64le", "-c:a", "pcm_f64le", filepath.Join(dir, fx.name+".f64le"))
		}
		if out, err := exec.CommandContext(t.Context(), ffmpeg, args...).CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg decoding the fixtures: %v\n%s", err, out)
		}
		decoded = func(t *testing.T, fx wavFixture) []byte { return readFileT(t, filepath.Join(dir, fx.name+".f64le")) }
	}
	for _, fx := range wavFixtures {
		t.Run(fx.name, func(t *testing.T) {
			path := filepath.Join("testdata", fx.name)
			raw := decoded(t, fx)
			if len(raw) != 8*fx.channels*wavFixtureFrames {
				t.Fatalf("ffmpeg decoded %d bytes, want %d", len(raw), 8*fx.channels*wavFixtureFrames)
			}
			got, err := ReadWAVFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for i := range wavFixtureFrames {
				sum := 0.0
				for ch := range fx.channels {
					off := 8 * (i*fx.channels + ch)
					sum += math.Float64frombits(leUint64(raw[off:]))
				}
				want := min(max(fx.roundMean(sum/float64(fx.channels)*32768), -32768), 32767)
				if float64(got.Samples[i]) != want {
					t.Fatalf("frame %d: ReadWAV %d, ffmpeg %v", i, got.Samples[i], sum/float64(fx.channels)*32768)
				}
			}
		})
	}
}

func leUint64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// TestWAVFixturesAreSmall keeps the committed fixtures small.
func TestWAVFixturesAreSmall(t *testing.T) {
	for _, fx := range wavFixtures {
		fi, err := os.Stat(filepath.Join("testdata", fx.name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 32<<10 {
			t.Errorf("%s is %d bytes; keep fixtures under 32 KiB", fx.name, fi.Size())
		}
	}
}
