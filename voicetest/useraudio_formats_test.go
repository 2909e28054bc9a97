package voicetest_test

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// TestUserAudioCompressedFormats plays FLAC, MP3 and Ogg Vorbis recordings
// with UserAudio: through ffmpeg, at the scenario's rate. FLAC is lossless,
// so its user segment is exactly the one the WAV file gives.
func TestUserAudioCompressedFormats(t *testing.T) {
	t.Parallel() // ffmpeg processes and synctest bubbles; no process-wide state
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skip("ffmpeg not installed (Debian package ffmpeg)")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "hello.wav")
	if err := pcm.WriteWAVFile(src, fixtures.WordTones("hello there", pcm.Rate16k)); err != nil {
		t.Fatal(err)
	}
	userSegment := func(t *testing.T, path string) pcm.Chunk {
		t.Helper()
		res, err := runVirtual(t, voicetest.Config{
			Agent:  fixtures.EchoAgent(),
			Script: []voicetest.Step{voicetest.UserAudio(path), voicetest.AgentTurn()},
		})
		if err != nil {
			t.Fatal(err)
		}
		u := res.Recording.Segments[0]
		if u.Role != voicetest.RoleUser || u.Audio().Rate != pcm.DefaultRate {
			t.Fatalf("first segment: %v at %d Hz, want the user's at %d Hz", u.Role, u.Audio().Rate, pcm.DefaultRate)
		}
		return u.Audio()
	}
	want := userSegment(t, src)
	formats := []struct{ name, codec string }{{"hello.flac", "flac"}, {"hello.mp3", "libmp3lame"}, {"hello.ogg", "libvorbis"}}
	// One ffmpeg run encodes the three files: starting ffmpeg costs about
	// 0.3 s of CPU (it loads some 200 libraries), encoding them far less.
	args := []string{"-nostdin", "-loglevel", "error", "-y", "-i", src}
	for _, f := range formats {
		args = append(args, "-map", "0:a", "-c:a", f.codec, filepath.Join(dir, f.name))
	}
	if out, err := exec.CommandContext(t.Context(), ffmpeg, args...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg cannot encode the files: %v: %s", err, out)
	}
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			path := filepath.Join(dir, f.name)
			got := userSegment(t, path)
			if f.codec == "flac" {
				if !slices.Equal(got.Samples, want.Samples) {
					t.Errorf("FLAC user audio differs from the WAV's (%d samples, want %d)", got.Len(), want.Len())
				}
				return
			}
			// Lossy codecs pad (MP3 by a frame or so) and change the
			// waveform; the length and the level stay close.
			if d := got.Duration() - want.Duration(); d < 0 || d > 100*time.Millisecond {
				t.Errorf("%s: %v of audio, want %v plus the codec's padding (< 100 ms)", f.name, got.Duration(), want.Duration())
			}
			if d := pcm.DBFS(pcm.RMS(got)) - pcm.DBFS(pcm.RMS(want)); math.Abs(d) > 1.5 {
				t.Errorf("%s: level %+.2f dB from the WAV's, want within 1.5 dB", f.name, d)
			}
		})
	}
}

// TestUserAudioWithoutFFmpeg: a compressed file on a machine without
// ffmpeg fails the step with an error that names the Debian package.
func TestUserAudioWithoutFFmpeg(t *testing.T) {
	path := filepath.Join(t.TempDir(), "call.mp3")
	if err := os.WriteFile(path, []byte("ID3 and what an MP3 file holds"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	_, err := runVirtual(t, voicetest.Config{
		Agent:  fixtures.EchoAgent(),
		Script: []voicetest.Step{voicetest.UserAudio(path)},
	})
	if !errors.Is(err, pcm.ErrNoFFmpeg) || !strings.Contains(err.Error(), "UserAudio") || !strings.Contains(err.Error(), "Debian package ffmpeg") {
		t.Errorf("err = %v, want UserAudio failing with pcm.ErrNoFFmpeg and the Debian package", err)
	}
}
