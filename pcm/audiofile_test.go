package pcm

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// needFFmpeg returns the path of ffmpeg, or skips the test.
func needFFmpeg(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skip("ffmpeg not installed (Debian package ffmpeg)")
	}
	return p
}

// stereoTestWAV writes a 16-bit stereo WAV file of half a second of noise
// at 16 kHz, left and right independent (so their means are often ties).
func stereoTestWAV(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, stereoTestWAVBytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// stereoTestWAVBytes is the file stereoTestWAV writes.
func stereoTestWAVBytes() []byte {
	rng := rand.New(rand.NewPCG(9, 9))
	data := make([]int16, 2*8000)
	for i := range data {
		data[i] = int16(rng.IntN(20000) - 10000)
	}
	return buildWAV(ck("fmt ", fmtChunk(wavFormatPCM, 2, 16000, 16)), ck("data", EncodePCM16(nil, data)))
}

// testReadAudioFileLossless (TestFFmpeg/ReadAudioFileLossless): FLAC and WavPack of a 16-bit stereo file, and
// FLAC of the 24-bit stereo reference file, decode through ffmpeg to
// exactly what ReadWAV gives for the WAV files (and, for the 24-bit one, to
// ffmpeg's own -ac 1), and the FLAC files' channels to what ReadWAVChannels
// gives. The package's shared ffmpeg run (ffmpeg_farm_test.go) encodes the
// three.
//
// Each ReadAudioFile call is an ffmpeg run (~0.25 s of CPU). The two
// 16-bit files decode to the same float stream (both codecs are lossless),
// so the Go side reads the same bytes for both: the FLAC file's channels
// and the WavPack file's downmix (exact16's 16-bit mix) each check one
// codec's decoding and one of the two reads. The 24-bit file (float path,
// ties) is read both ways.
func testReadAudioFileLossless(t *testing.T, farm ffmpegFarm) {
	t.Parallel()
	needFFmpeg(t)
	dir := t.TempDir()
	s16 := filepath.Join(dir, "s16.wav")
	stereoTestWAV(t, s16)
	srcs := []string{s16, refPath("s24_stereo.wav")}
	cases := []struct {
		in                int
		name              string
		downmix, channels bool
	}{
		{0, "s16.flac", false, true},
		{0, "s16.wv", true, false},
		{1, "s24.flac", true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := srcs[tc.in]
			path := farm.outFile(t, "lossless-"+tc.name, dir, tc.name)
			if tc.downmix {
				want, err := ReadWAVFile(src)
				if err != nil {
					t.Fatal(err)
				}
				got, err := ReadAudioFile(t.Context(), path)
				if err != nil {
					t.Fatal(err)
				}
				checkSamples(t, "downmix", got, want.Rate, want.Samples)
				if tc.in == 1 {
					if d := firstSampleDiff(refS16(t, "s24_stereo.ffmpeg-ac1.s16"), got.Samples); d != "" {
						t.Errorf("24-bit FLAC differs from ffmpeg -ac 1 of the WAV: %s", d)
					}
				}
			}
			if tc.channels {
				wantCh, err := ReadWAVChannelsFile(src)
				if err != nil {
					t.Fatal(err)
				}
				gotCh, err := ReadAudioFileChannels(t.Context(), path)
				if err != nil {
					t.Fatal(err)
				}
				if len(gotCh) != len(wantCh) {
					t.Fatalf("%d channels, want %d", len(gotCh), len(wantCh))
				}
				for ch := range gotCh {
					checkSamples(t, "channel", gotCh[ch], wantCh[ch].Rate, wantCh[ch].Samples)
				}
			}
		})
	}
}

// testReadAudioFileLossyMatchesFFmpeg (TestFFmpeg/ReadAudioFileLossyMatchesFFmpeg): MP3, Ogg Vorbis and Ogg Opus decode
// to exactly the 16-bit samples ffmpeg's own conversion gives (mono, and
// each channel of stereo and of mono Opus), at the stream's rate. The
// package's shared ffmpeg runs (ffmpeg_farm_test.go) encode every file and
// give ffmpeg's own conversion of each; a codec this ffmpeg cannot encode
// with has its cases skipped.
func testReadAudioFileLossyMatchesFFmpeg(t *testing.T, farm ffmpegFarm) {
	t.Parallel()
	needFFmpeg(t)
	dir := t.TempDir()
	for _, tc := range lossyCodecs {
		for _, ch := range []int{1, 2} {
			name := lossyName(tc.name, ch)
			t.Run(name, func(t *testing.T) {
				enc, err := farm.outErr("lossy-" + name)
				if errors.Is(err, context.DeadlineExceeded) {
					t.Fatal(err)
				}
				if err != nil {
					t.Skipf("this ffmpeg cannot encode with %s: %v", tc.codec, err)
				}
				t.Parallel()
				path := filepath.Join(dir, name)
				if err := os.WriteFile(path, enc, 0o644); err != nil {
					t.Fatal(err)
				}
				ref, err := DecodePCM16(nil, farm.out(t, "lossy-"+name+".s16"))
				if err != nil {
					t.Fatal(err)
				}
				// Each call is an ffmpeg run (~0.3 s of CPU): the channels of
				// every stereo file and of mono Opus (one channel, at 48 kHz),
				// the mono read of every mono file.
				if ch == 2 || tc.codec == "libopus" {
					chans, err := ReadAudioFileChannels(t.Context(), path)
					if err != nil {
						t.Fatal(err)
					}
					if len(chans) != ch {
						t.Fatalf("%d channels, want %d", len(chans), ch)
					}
					want := deinterleave(ref, ch)
					for i := range chans {
						checkSamples(t, "channel", chans[i], tc.rate, want[i])
					}
				}
				if ch == 1 {
					mono, err := ReadAudioFile(t.Context(), path)
					if err != nil {
						t.Fatal(err)
					}
					checkSamples(t, "mono", mono, tc.rate, ref)
				}
			})
		}
	}
}

// testReadAudioFileWAVFallback (TestFFmpeg/ReadAudioFileWAVFallback): a WAV file in an encoding ReadWAV does not
// decode (IMA ADPCM) goes through ffmpeg; one ReadWAV decodes does not. The
// package's shared ffmpeg runs encode the ADPCM file and decode it.
func testReadAudioFileWAVFallback(t *testing.T, farm ffmpegFarm) {
	t.Parallel()
	needFFmpeg(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "s16.wav")
	stereoTestWAV(t, src)
	adpcm := farm.outFile(t, "adpcm.wav", dir, "adpcm.wav")
	if _, err := ReadWAVFile(adpcm); !errors.Is(err, ErrWAVUnsupported) {
		t.Fatalf("ReadWAVFile(ADPCM): %v, want ErrWAVUnsupported", err)
	}
	ref, err := DecodePCM16(nil, farm.out(t, "adpcm.wav.s16"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadAudioFile(t.Context(), adpcm)
	if err != nil {
		t.Fatal(err)
	}
	checkSamples(t, "ADPCM", got, 16000, ref)

	// A truncated WAV is an error of its own, not something for ffmpeg.
	b := readFileT(t, src)
	trunc := filepath.Join(dir, "trunc.wav")
	if err := os.WriteFile(trunc, b[:30], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadAudioFile(t.Context(), trunc); !errors.Is(err, ErrWAVHeaderTruncated) {
		t.Errorf("truncated WAV: %v, want ErrWAVHeaderTruncated", err)
	}
}

// TestReadAudioFileErrors: a missing file, no ffmpeg, and output over the
// bound (TestReadAudioFileFFmpegErrors has ffmpeg's own failures).
func TestReadAudioFileErrors(t *testing.T) {
	dir := t.TempDir()
	mp3 := filepath.Join(dir, "call.mp3")
	if err := os.WriteFile(mp3, []byte("ID3 not really an mp3"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadAudioFile(t.Context(), filepath.Join(dir, "missing.mp3")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want os.ErrNotExist", err)
	}
	t.Run("no ffmpeg", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		_, err := ReadAudioFile(t.Context(), mp3)
		if !errors.Is(err, ErrNoFFmpeg) || !strings.Contains(err.Error(), "Debian package ffmpeg") || !strings.Contains(err.Error(), "call.mp3") {
			t.Errorf("err = %v, want ErrNoFFmpeg naming the file and the Debian package", err)
		}
		// WAV files need no ffmpeg.
		wav := filepath.Join(dir, "a.wav")
		stereoTestWAV(t, wav)
		if _, err := ReadAudioFile(t.Context(), wav); err != nil {
			t.Errorf("WAV without ffmpeg: %v", err)
		}
	})
	t.Run("over the bound", func(t *testing.T) {
		// An "ffmpeg" that writes without end (a real one costs ~0.25 s
		// of CPU to start, for output that only has to be long): the read
		// stops at the bound and the process is killed.
		cat, err := exec.LookPath("cat")
		if err != nil {
			t.Skipf("no cat on PATH: %v", err)
		}
		bin := t.TempDir()
		if err := os.WriteFile(filepath.Join(bin, "ffmpeg"), []byte("#!/bin/sh\nexec "+cat+" /dev/zero\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", bin)
		if _, err := decodeWithFFmpeg(t.Context(), mp3, "a test", 1000); err == nil || !strings.Contains(err.Error(), "more than 1000 bytes") {
			t.Errorf("over the bound: err = %v", err)
		}
	})
}

// TestFFmpegWrapperOrphanHoldsTheOutput: an "ffmpeg" that is a wrapper (a
// script that runs the real one as its child, as timing and sandboxing
// wrappers do). Cancelling kills the wrapper only, and the child keeps the
// output pipe open: the read must end with the context all the same, not
// when the child does.
func TestFFmpegWrapperOrphanHoldsTheOutput(t *testing.T) {
	t.Parallel()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skipf("no sleep on PATH: %v", err)
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	bin := filepath.Join(dir, "ffmpeg")
	script := "#!/bin/sh\n" + sleep + " 600 &\necho $! > " + pidFile + "\nwait\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				if p, err := os.FindProcess(pid); err == nil {
					_ = p.Kill()
				}
			}
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		// runFFmpeg waits ffmpegWaitDelay (1 s) for the pipes; the same
		// code with a tenth of that shows the bound holds.
		_, err := runFFmpegWait(ctx, bin, "call.mp3", 1<<20, ffmpegWaitDelay/10)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want context.DeadlineExceeded", err)
		}
	case <-time.After(time.Minute):
		// Not a speed check: without a bound on the wait, the read ends
		// only when the orphan exits, ten minutes on.
		t.Fatal("still reading ffmpeg's output a minute after the context ended: the wrapper's orphan holds it open")
	}
}

// TestReadAudioFileFFmpegErrors: ffmpeg's failure on a file that is not
// audio, and a cancelled context. It runs in parallel
// (TestReadAudioFileErrors, which sets PATH, is sequential: Go starts
// parallel tests only once every sequential one has finished); an ffmpeg
// start is mostly waiting on the process.
func TestReadAudioFileFFmpegErrors(t *testing.T) {
	t.Parallel()
	needFFmpeg(t)
	mp3 := filepath.Join(t.TempDir(), "call.mp3")
	if err := os.WriteFile(mp3, []byte("ID3 not really an mp3"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadAudioFile(t.Context(), mp3); err == nil || !strings.Contains(err.Error(), "with ffmpeg failed") {
		t.Errorf("not audio: err = %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := ReadAudioFile(ctx, mp3); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v, want context.Canceled", err)
	}
	// The size bound: TestReadAudioFileErrors, with an "ffmpeg" of its own.
}

// ExampleReadAudioFile reads a recorded call, whatever its format, as mono.
func ExampleReadAudioFile() {
	c, err := ReadAudioFile(context.Background(), "testdata/ref/call_8k_stereo_mulaw.wav")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Rate, c.Duration())
	// Output: 8000 2.4s
}
