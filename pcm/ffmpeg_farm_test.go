package pcm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The package's tests compare pcm with ffmpeg on files they make: encodings
// of test signals (FLAC, WavPack, MP3, Vorbis, Opus, IMA ADPCM, G.711, WAV
// variants) and ffmpeg's own decodings of them. Starting ffmpeg costs about
// 0.3 s of CPU (it loads some 200 shared libraries), far more than any of
// these conversions, so the conversions of every test are made together,
// once per run of TestFFmpeg (whose subtests are those tests), by two
// ffmpeg runs: the first makes every file from
// the tests' signals and committed files, the second decodes what the first
// encoded. Each output is mapped from its own input (-map N:a), as a run of
// its own would make it. A test takes its files with the farm's out. What the
// tests check (ReadAudioFile: one ffmpeg per call) is not batched.

// ffmpegSource is an input the tests make: written into the conversions'
// directory under name before the first run.
type ffmpegSource struct {
	name  string
	write func(path string) error
}

// ffmpegJob is one conversion: in (a source's name, a first-stage output's
// name, or the path of a committed file, which holds a slash) with inOpts
// before -i, to out with outOpts.
type ffmpegJob struct {
	stage   int // 1, or 2 for a job whose input is a first-stage output
	inOpts  []string
	in      string
	outOpts []string
	out     string
}

// ffmpegConversions is what the conversions made, by output name, or why
// one could not be made.
type ffmpegConversions struct {
	noFFmpeg error // ffmpeg is not installed
	files    map[string][]byte
	errs     map[string]error
}

// lossyCodecs are the lossy codecs TestFFmpeg/ReadAudioFileLossyMatchesFFmpeg
// reads, the rate each decodes at, and the names of their files.
var lossyCodecs = []struct {
	name, codec string
	rate        int
}{
	{"a.mp3", "libmp3lame", 16000},
	{"a.ogg", "libvorbis", 16000},
	{"a.opus", "libopus", 48000}, // Opus always decodes at 48 kHz
}

// lossyName is the file of a lossy codec's encoding with ch channels.
func lossyName(name string, ch int) string {
	return map[int]string{1: "mono-", 2: "stereo-"}[ch] + name
}

// dtmfG711Config is the keys TestFFmpeg/DTMFG711Live sends through G.711.
var dtmfG711Config = DTMFConfig{Tone: 50 * time.Millisecond, Gap: 50 * time.Millisecond, LevelDBFS: -24, TwistDB: 2}

// ffmpegSources and ffmpegJobs list every test's conversions.
func ffmpegSources() []ffmpegSource {
	bytesSource := func(name string, b func() ([]byte, error)) ffmpegSource {
		return ffmpegSource{name, func(path string) error {
			data, err := b()
			if err != nil {
				return err
			}
			return os.WriteFile(path, data, 0o644)
		}}
	}
	srcs := []ffmpegSource{
		bytesSource("stereo16k.wav", func() ([]byte, error) { return stereoTestWAVBytes(), nil }),
		bytesSource("dtmf-keys.s16le", func() ([]byte, error) {
			c, err := GenerateDTMF(allDTMF, Rate8k, dtmfG711Config)
			return c.Bytes(), err
		}),
		bytesSource("g711-sweep.s16le", func() ([]byte, error) { return EncodePCM16(nil, allSamples()), nil }),
		bytesSource("g711-codes.bin", func() ([]byte, error) { return allCodes(), nil }),
		// TestFFmpeg/WAVReadableByFFmpeg: a file WriteWAVFile wrote.
		{"ours.wav", func(path string) error { return WriteWAVFile(path, testChunk(Rate16k, 4000)) }},
	}
	for _, ch := range []int{1, 2, 3} {
		srcs = append(srcs, bytesSource(wavSourceName(ch), func() ([]byte, error) { return EncodePCM16(nil, wavSource(ch)), nil }))
	}
	return srcs
}

func wavSourceName(channels int) string { return fmt.Sprintf("wav-source-%d.s16le", channels) }

func ffmpegJobs() []ffmpegJob {
	s16 := []string{"-f", "s16le", "-c:a", "pcm_s16le"}
	var jobs []ffmpegJob
	add := func(stage int, inOpts []string, in string, outOpts []string, out string) {
		jobs = append(jobs, ffmpegJob{stage, inOpts, in, outOpts, out})
	}
	// TestFFmpeg/ReadAudioFileLossless.
	add(1, nil, "stereo16k.wav", []string{"-c:a", "flac"}, "lossless-s16.flac")
	add(1, nil, "stereo16k.wav", []string{"-c:a", "wavpack"}, "lossless-s16.wv")
	add(1, nil, refPath("s24_stereo.wav"), []string{"-c:a", "flac"}, "lossless-s24.flac")
	// TestFFmpeg/ReadAudioFileLossyMatchesFFmpeg: each file, then ffmpeg's own
	// 16-bit conversion of it.
	for _, c := range lossyCodecs {
		for _, ch := range []int{1, 2} {
			name := "lossy-" + lossyName(c.name, ch)
			add(1, nil, "stereo16k.wav", []string{"-ac", strconv.Itoa(ch), "-c:a", c.codec}, name)
			add(2, nil, name, s16, name+".s16")
		}
	}
	// TestFFmpeg/ReadAudioFileWAVFallback: IMA ADPCM, and ffmpeg's decoding of it.
	add(1, nil, "stereo16k.wav", []string{"-ac", "1", "-c:a", "adpcm_ima_wav"}, "adpcm.wav")
	add(2, nil, "adpcm.wav", s16, "adpcm.wav.s16")
	// TestFFmpeg/DTMFG711Live: the keys encoded with each law, then decoded.
	for _, law := range []string{"mulaw", "alaw"} {
		add(1, []string{"-f", "s16le", "-ar", "8000", "-ac", "1"}, "dtmf-keys.s16le", []string{"-f", law}, "dtmf-"+law)
		add(2, []string{"-f", law, "-ar", "8000", "-ac", "1"}, "dtmf-"+law, []string{"-f", "s16le"}, "dtmf-"+law+".s16le")
	}
	// TestFFmpeg/G711FFmpegNow: the sweep encoded with each law, the codes
	// decoded as each law.
	for _, law := range g711Laws {
		add(1, []string{"-f", "s16le", "-ar", "8000", "-ac", "1"}, "g711-sweep.s16le", []string{"-f", law.ffmpegFmt}, "g711-"+law.name+".enc")
		add(1, []string{"-f", law.ffmpegFmt, "-ar", "8000", "-ac", "1"}, "g711-codes.bin", []string{"-f", "s16le"}, "g711-"+law.name+".dec")
	}
	// TestFFmpeg/WAVFixturesRegenerate: the ffmpeg fixtures, from ffmpegIn's
	// options and each fixture's own.
	iIn := slices.Index(ffmpegIn, "-i")
	for _, fx := range wavFixtures {
		if fx.tool == "ffmpeg" && slices.Equal(fx.args[:iIn+2], ffmpegIn) {
			add(1, fx.subst(ffmpegIn[slices.Index(ffmpegIn, "-f"):iIn], "", ""), wavSourceName(fx.channels),
				fx.subst(fx.args[iIn+2:len(fx.args)-1], "", ""), "fixture-"+fx.name)
		}
	}
	// TestFFmpeg/ReadWAVMatchesFFmpegDecode: each committed fixture to 64-bit float.
	for _, fx := range wavFixtures {
		add(1, nil, filepath.Join("testdata", fx.name), []string{"-f", "f64le", "-c:a", "pcm_f64le"}, "decoded-"+fx.name+".f64le")
	}
	// TestFFmpeg/WAVReadableByFFmpeg.
	add(1, nil, "ours.wav", s16, "ours.wav.s16")
	return jobs
}

// TestFFmpeg runs the tests that need ffmpeg's conversions (each a
// subtest named after the test it was: ReadAudioFileLossless, …) with one
// farm of them: a local of this test, made on the first subtest's first
// use and shared by the subtests, which run in parallel with each other
// (see each one's own t.Parallel). Run one with
// -run 'TestFFmpeg/DTMFG711Live'.
//
// TestFFmpeg itself is sequential: its subtests, among the package's
// longest (ReadAudioFile starts an ffmpeg per call), then run first, with
// the test slots to themselves, before the package's parallel tests. As a
// parallel test's subtests they would queue for slots behind every other
// parallel test, and the longest work of the package would start last.
// The price: while the farm's ffmpeg runs (about 0.9 s at load 5), both
// slots wait on it (BENCHMARKS.md, Issue 21, state6).
// With -update-g711 or -update-wav, which rewrite testdata that other
// tests read, the writing subtests (G711FFmpegNow, WAVFixturesRegenerate)
// are sequential too, so they finish before any test reads it.
func TestFFmpeg(t *testing.T) {
	ctx := t.Context() // cancelled once every subtest is done
	farm := ffmpegFarm(sync.OnceValue(func() *ffmpegConversions { return makeFFmpegConversions(ctx) }))
	for _, test := range []struct {
		name string
		run  func(*testing.T, ffmpegFarm)
	}{
		{"ReadAudioFileLossless", testReadAudioFileLossless},
		{"ReadAudioFileLossyMatchesFFmpeg", testReadAudioFileLossyMatchesFFmpeg},
		{"ReadAudioFileWAVFallback", testReadAudioFileWAVFallback},
		{"DTMFG711Live", testDTMFG711Live},
		{"G711FFmpegNow", testG711FFmpegNow},
		{"WAVFixturesRegenerate", testWAVFixturesRegenerate},
		{"ReadWAVMatchesFFmpegDecode", testReadWAVMatchesFFmpegDecode},
		{"WAVReadableByFFmpeg", testWAVReadableByFFmpeg},
	} {
		t.Run(test.name, func(t *testing.T) { test.run(t, farm) })
	}
}

// ffmpegFarm returns the conversions, made on its first call (TestFFmpeg's
// sync.OnceValue).
type ffmpegFarm func() *ffmpegConversions

// makeFFmpegConversions runs every job: one ffmpeg run per stage, or, if
// a stage's run fails, one per job of it.
func makeFFmpegConversions(ctx context.Context) *ffmpegConversions {
	farm := &ffmpegConversions{files: map[string][]byte{}, errs: map[string]error{}}
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		farm.noFFmpeg = err
		return farm
	}
	// Bounded: a hung ffmpeg fails its tests with the phase named.
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "pcm-ffmpeg-")
	if err != nil {
		farm.noFFmpeg = fmt.Errorf("making the conversions' directory: %w", err)
		return farm
	}
	defer os.RemoveAll(dir)
	srcErr := map[string]error{}
	for _, s := range ffmpegSources() {
		if err := s.write(filepath.Join(dir, s.name)); err != nil {
			srcErr[s.name] = fmt.Errorf("writing the input %s: %w", s.name, err)
		}
	}
	jobs := ffmpegJobs()
	for stage := 1; stage <= 2; stage++ {
		var ready []ffmpegJob
		for _, j := range jobs {
			if j.stage != stage {
				continue
			}
			if err := srcErr[j.in]; err != nil {
				farm.errs[j.out] = err
				continue
			}
			if err := farm.errs[j.in]; err != nil {
				farm.errs[j.out] = fmt.Errorf("its input %s was not made: %w", j.in, err)
				continue
			}
			ready = append(ready, j)
		}
		if len(ready) == 0 {
			continue
		}
		// One run for the stage; if it fails, each job alone, to find
		// the one that cannot be made (a codec this ffmpeg lacks).
		if runFFmpegJobs(ctx, ffmpeg, dir, ready) != nil {
			for _, j := range ready {
				if err := runFFmpegJobs(ctx, ffmpeg, dir, []ffmpegJob{j}); err != nil {
					farm.errs[j.out] = err
				}
			}
		}
		for _, j := range ready {
			if farm.errs[j.out] != nil {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, j.out))
			if err != nil {
				farm.errs[j.out] = err
				continue
			}
			farm.files[j.out] = b
		}
	}
	return farm
}

// runFFmpegJobs runs one ffmpeg that makes every job's output in dir.
func runFFmpegJobs(ctx context.Context, ffmpeg, dir string, jobs []ffmpegJob) error {
	args := []string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y"}
	index := map[string]int{} // an input's options and path -> its index
	var outArgs []string
	for _, j := range jobs {
		in := j.in
		if !strings.ContainsRune(in, filepath.Separator) {
			in = filepath.Join(dir, in)
		}
		key := strings.Join(append(slices.Clone(j.inOpts), in), "\x00")
		i, ok := index[key]
		if !ok {
			i = len(index)
			index[key] = i
			args = append(append(args, j.inOpts...), "-i", in)
		}
		outArgs = append(append(append(outArgs, "-map", strconv.Itoa(i)+":a"), j.outOpts...), filepath.Join(dir, j.out))
	}
	args = append(args, outArgs...)
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, ffmpeg, args...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("ffmpeg conversions for the tests: timeout: %w", ctx.Err())
		}
		msg := stderr.String()
		if len(msg) > 4096 {
			msg = msg[:4096]
		}
		return fmt.Errorf("ffmpeg %v: %w: %s", args, err, msg)
	}
	return nil
}

// errNoFFmpegForTests marks a conversion not made for want of ffmpeg.
var errNoFFmpegForTests = errors.New("ffmpeg not installed (Debian package ffmpeg)")

// outErr returns the conversion named out, or why it was not made
// (errNoFFmpegForTests when ffmpeg is not installed).
func (f ffmpegFarm) outErr(out string) ([]byte, error) {
	farm := f()
	if farm.noFFmpeg != nil {
		return nil, fmt.Errorf("%w: %v", errNoFFmpegForTests, farm.noFFmpeg)
	}
	if err := farm.errs[out]; err != nil {
		return nil, err
	}
	b, ok := farm.files[out]
	if !ok {
		return nil, fmt.Errorf("no conversion makes %s", out)
	}
	return b, nil
}

// out returns the conversion named out; it skips the test when ffmpeg is
// not installed and fails it when the conversion could not be made.
func (f ffmpegFarm) out(t *testing.T, out string) []byte {
	t.Helper()
	b, err := f.outErr(out)
	if errors.Is(err, errNoFFmpegForTests) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// outFile writes the conversion named out into dir under name and returns
// its path; it skips or fails as out does.
func (f ffmpegFarm) outFile(t *testing.T, out, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, f.out(t, out), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
