package personas_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/personas"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

func TestScriptedSaysLinesThenIsDone(t *testing.T) {
	user := personas.Scripted("A table for two.", "At seven, please.")
	agent := textAgent("Hello, Luigi's.", fixtures.Reply{Text: "For two, sure."}, fixtures.Reply{Text: "Seven it is."})
	res := run(t, agent, user, voicetest.Proceed(0))
	require.NoError(t, res.Err)
	assert.Equal(t, []string{
		"agent: Hello, Luigi's.",
		"user: A table for two.",
		"agent: For two, sure.",
		"user: At seven, please.",
		"agent: Seven it is.",
	}, lines(res))
	assert.Equal(t, "the user hung up", res.Ended)
	hangUps := 0
	for _, e := range res.Timeline {
		if e.Type == voicetest.EventUserHangUp {
			hangUps++
			assert.Equal(t, 2, e.Turn)
		}
	}
	assert.Equal(t, 1, hangUps)
}

func TestScriptedReusableAcrossRuns(t *testing.T) {
	user := personas.Scripted("One.", "Two.")
	for i := range 2 {
		res := run(t, textAgent("Hi.", fixtures.Reply{Text: "A."}, fixtures.Reply{Text: "B."}), user, voicetest.Proceed(0))
		require.NoError(t, res.Err, "run %d", i)
		assert.Equal(t, []string{"agent: Hi.", "user: One.", "agent: A.", "user: Two.", "agent: B."}, lines(res), "run %d", i)
	}
}

func TestScriptedParallelConversations(t *testing.T) {
	user := personas.Scripted("One.", "Two.", "Three.")
	var wg sync.WaitGroup
	results := make([][]string, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := voicetest.Run(t.Context(), voicetest.Config{
				Name: "parallel", Agent: textAgent("Hi.", fixtures.Reply{Text: "A."}, fixtures.Reply{Text: "B."}, fixtures.Reply{Text: "C."}),
				User: user, Pacing: voicetest.PaceFast, Script: []voicetest.Step{voicetest.Proceed(0)},
			})
			if err == nil {
				results[i] = lines(res)
			}
		}()
	}
	wg.Wait()
	for i, got := range results {
		assert.Equal(t, []string{"agent: Hi.", "user: One.", "agent: A.", "user: Two.", "agent: B.", "user: Three.", "agent: C."}, got, "conversation %d", i)
	}
}

func TestScriptedBlankLineIsAnError(t *testing.T) {
	user := personas.Scripted("Hello.", "  ")
	st := &voicetest.State{}
	u, err := user.NextUtterance(t.Context(), st)
	require.NoError(t, err)
	assert.Equal(t, "Hello.", u.Text)
	_, err = user.NextUtterance(t.Context(), st)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 2 of 2 is blank")
	assert.Contains(t, err.Error(), "voicetest.Silence")
}

func TestScriptedNoLinesIsDone(t *testing.T) {
	u, err := personas.Scripted().NextUtterance(t.Context(), &voicetest.State{})
	require.NoError(t, err)
	assert.True(t, u.Done)
}

func TestScriptedAsPersona(t *testing.T) {
	st := &voicetest.State{}
	u, err := personas.Scripted("Hi.").As(personas.BadPhoneLine).NextUtterance(t.Context(), st)
	require.NoError(t, err)
	assert.Empty(t, u.Voice, "no engine named: the runner's voice is used")
	require.NotNil(t, u.Effects)

	u, err = personas.Scripted("Hi.").As(personas.Rushed).Engine("flite").NextUtterance(t.Context(), &voicetest.State{})
	require.NoError(t, err)
	assert.Equal(t, "kal", u.Voice)
	assert.Nil(t, u.Effects, "Rushed has no effects")

	bad := personas.Rushed
	bad.Speed = -1
	_, err = personas.Scripted("Hi.").As(bad).NextUtterance(t.Context(), &voicetest.State{})
	require.ErrorContains(t, err, "Speed -1 is out of range")
}

// tone is a test signal: a 440 Hz tone with a rising envelope.
func tone(rate int, d time.Duration) pcm.Chunk {
	n := pcm.SamplesFor(rate, d)
	s := make([]int16, n)
	for i := range s {
		phase := float64(i%(rate/440)) / float64(rate/440)
		v := 1.0 - 4*abs(phase-0.5) // triangle, -1..1
		s[i] = int16(v * 8000 * float64(i+1) / float64(n))
	}
	return pcm.Chunk{Rate: rate, Samples: s}
}

// assertSameAudio compares chunks without printing thousands of samples.
func assertSameAudio(t *testing.T, want, got pcm.Chunk) {
	t.Helper()
	if want.Rate != got.Rate || !slices.Equal(want.Samples, got.Samples) {
		t.Errorf("audio differs: want %d samples at %d Hz, got %d at %d Hz", want.Len(), want.Rate, got.Len(), got.Rate)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestFilesPlaysWAVsThenIsDone(t *testing.T) {
	dir := t.TempDir()
	a, b := tone(16000, 300*time.Millisecond), tone(24000, 200*time.Millisecond)
	pa, pb := filepath.Join(dir, "a.wav"), filepath.Join(dir, "b.WAV")
	require.NoError(t, pcm.WriteWAVFile(pa, a))
	require.NoError(t, pcm.WriteWAVFile(pb, b))

	user := personas.Files(pa, pb).Transcripts("first", "second")
	st := &voicetest.State{}
	u, err := user.NextUtterance(t.Context(), st)
	require.NoError(t, err)
	assertSameAudio(t, a, u.Audio)
	assert.Equal(t, "first", u.Text)
	u, err = user.NextUtterance(t.Context(), st)
	require.NoError(t, err)
	assertSameAudio(t, b, u.Audio)
	assert.Equal(t, "second", u.Text)
	u, err = user.NextUtterance(t.Context(), st)
	require.NoError(t, err)
	assert.True(t, u.Done)
}

func TestFilesThroughRunner(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "hello.wav")
	require.NoError(t, pcm.WriteWAVFile(p, fixtures.WordTones("hello there", 24000)))
	agent := fixtures.Fake(fixtures.FakeConfig{Burst: true, Replies: []fixtures.Reply{{Text: "Hi, how can I help?"}}})
	res := run(t, agent, personas.Files(p).Transcripts("hello there").As(personas.NoisyStreet), voicetest.Proceed(0))
	require.NoError(t, res.Err)
	assert.Equal(t, []string{"user: hello there", "agent: Hi, how can I help?"}, lines(res))
	require.Len(t, res.Recording.Segments, 2)
	user := res.Recording.Segments[0]
	assert.Equal(t, voicetest.RoleUser, user.Role)
	clean := fixtures.WordTones("hello there", 24000)
	assert.Equal(t, clean.Len(), user.Audio().Len(), "effects keep the length")
	assert.NotEqual(t, clean.Samples, user.Audio().Samples, "the street noise was applied")
}

func TestFilesErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.wav")
	require.NoError(t, pcm.WriteWAVFile(p, tone(8000, 100*time.Millisecond)))

	_, err := personas.Files(filepath.Join(dir, "missing.wav")).NextUtterance(t.Context(), &voicetest.State{})
	require.Error(t, err)
	assert.True(t, errors.Is(err, os.ErrNotExist), "%v", err)
	assert.Contains(t, err.Error(), "file 1 of 1")

	_, err = personas.Files(p).Transcripts("a", "b").NextUtterance(t.Context(), &voicetest.State{})
	require.ErrorContains(t, err, "2 transcripts for 1 files")

	trunc := filepath.Join(dir, "trunc.wav")
	require.NoError(t, os.WriteFile(trunc, []byte("RIFF\x24\x00\x00\x00WAVEfmt "), 0o644))
	_, err = personas.Files(trunc).NextUtterance(t.Context(), &voicetest.State{})
	require.Error(t, err)
	assert.True(t, errors.Is(err, pcm.ErrWAVHeaderTruncated), "%v", err)

	empty := filepath.Join(dir, "empty.wav")
	require.NoError(t, pcm.WriteWAVFile(empty, pcm.Chunk{Rate: 8000}))
	_, err = personas.Files(empty).NextUtterance(t.Context(), &voicetest.State{})
	require.ErrorContains(t, err, "no audio")
}

func TestFilesNonWAVWithoutFFmpeg(t *testing.T) {
	dir := t.TempDir()
	mp3 := filepath.Join(dir, "a.mp3")
	require.NoError(t, os.WriteFile(mp3, []byte("ID3 not really"), 0o644))
	t.Setenv("PATH", t.TempDir()) // no ffmpeg on it
	_, err := personas.ReadAudioFile(t.Context(), mp3)
	require.Error(t, err)
	assert.ErrorIs(t, err, personas.ErrNoFFmpeg)
	assert.Contains(t, err.Error(), "Debian package ffmpeg")
	assert.Contains(t, err.Error(), "a.mp3")
}

// needFFmpeg skips the test when ffmpeg is missing.
func needFFmpeg(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skip("ffmpeg not installed (Debian package ffmpeg)")
	}
	return p
}

// TestFilesOtherFormatsThroughFFmpeg: Files plays a file that is not WAV
// (MP3) through ffmpeg and a G.711 WAV file, which pcm reads itself.
// Files hands every path to pcm.ReadAudioFile, whose tests check each
// codec (FLAC, WavPack, Vorbis, Opus, MP3) against ffmpeg's own decoding:
// one ffmpeg-decoded format here shows the persona takes that path (each
// decode is an ffmpeg start, ~0.3 s of CPU).
func TestFilesOtherFormatsThroughFFmpeg(t *testing.T) {
	t.Parallel()
	ffmpeg := needFFmpeg(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src.wav")
	in := tone(16000, time.Second)
	require.NoError(t, pcm.WriteWAVFile(src, in))
	formats := []struct {
		name, codec string
		rate        int
	}{
		{"a.mp3", "libmp3lame", 16000},  // at the file's own rate
		{"alaw.wav", "pcm_alaw", 16000}, // pcm reads G.711 WAV itself
	}
	// One ffmpeg run encodes every file (starting ffmpeg costs about 0.3 s
	// of CPU, encoding a second of audio far less); if it fails, each file
	// is encoded alone to find the codec this ffmpeg lacks.
	encode := func(outs ...int) error {
		args := []string{"-nostdin", "-loglevel", "error", "-y", "-i", src}
		for _, i := range outs {
			args = append(args, "-map", "0:a", "-c:a", formats[i].codec, filepath.Join(dir, formats[i].name))
		}
		if b, err := exec.Command(ffmpeg, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("%w: %s", err, b)
		}
		return nil
	}
	cannot := make([]error, len(formats))
	all := make([]int, len(formats))
	for i := range all {
		all[i] = i
	}
	if encode(all...) != nil {
		for i := range formats {
			cannot[i] = encode(i)
		}
	}
	for i, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel() // each decode is an ffmpeg process of its own
			if cannot[i] != nil {
				t.Skipf("this ffmpeg cannot encode with %s: %v", f.codec, cannot[i])
			}
			out := filepath.Join(dir, f.name)
			u, err := personas.Files(out).NextUtterance(t.Context(), &voicetest.State{})
			require.NoError(t, err)
			assert.Equal(t, f.rate, u.Audio.Rate)
			// Codecs pad (MP3 adds a frame or so); the length is close.
			assert.InDelta(t, time.Second.Seconds(), u.Audio.Duration().Seconds(), 0.1)
			// The level survives coding (within 1.5 dB).
			assert.InDelta(t, pcm.DBFS(pcm.RMS(in)), pcm.DBFS(pcm.RMS(u.Audio)), 1.5)
		})
	}
}

func TestFilesFFmpegRejectsNonAudio(t *testing.T) {
	t.Parallel()
	needFFmpeg(t)
	p := filepath.Join(t.TempDir(), "notes.txt")
	require.NoError(t, os.WriteFile(p, []byte("not audio at all"), 0o644))
	_, err := personas.ReadAudioFile(context.Background(), p)
	require.ErrorContains(t, err, "decoding "+p+" with ffmpeg failed")
}

// TestPersonaInstructions: a persona's TTS instructions reach every line.
func TestPersonaInstructions(t *testing.T) {
	p := personas.Elderly
	p.Instructions = "slow and hesitant, a little hard of hearing"
	u, err := personas.Scripted("Hello, dear.").As(p).NextUtterance(t.Context(), &voicetest.State{})
	require.NoError(t, err)
	assert.Equal(t, p.Instructions, u.Instructions)
	u, err = personas.Scripted("Hello.").As(personas.Rushed).NextUtterance(t.Context(), &voicetest.State{})
	require.NoError(t, err)
	assert.Empty(t, u.Instructions, "Rushed has no instructions")
}
