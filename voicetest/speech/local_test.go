package speech

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
)

// rms returns the root mean square of c's samples.
func rms(c pcm.Chunk) float64 {
	var sum float64
	for _, s := range c.Samples {
		sum += float64(s) * float64(s)
	}
	if len(c.Samples) == 0 {
		return 0
	}
	return math.Sqrt(sum / float64(len(c.Samples)))
}

func TestFliteSynthesize(t *testing.T) {
	t.Parallel() // engines run as processes; no process-wide state
	SkipIfNotInstalled(t, "flite")
	f := Flite()
	normal, err := f.Synthesize(t.Context(), voicetest.SpeechRequest{Text: "Good morning, how can I help you?"})
	require.NoError(t, err)
	assert.Equal(t, pcm.Rate16k, normal.Rate, "slt is a 16 kHz voice")
	assert.Greater(t, normal.Duration().Seconds(), 1.0)
	assert.Less(t, normal.Duration().Seconds(), 5.0)
	assert.Greater(t, rms(normal), 300.0, "speech, not silence")

	fast, err := f.Synthesize(t.Context(), voicetest.SpeechRequest{Text: "Good morning, how can I help you?", Speed: 2, Rate: pcm.Rate24k})
	require.NoError(t, err)
	assert.Equal(t, pcm.Rate24k, fast.Rate)
	assert.InDelta(t, normal.Duration().Seconds()/2, fast.Duration().Seconds(), 0.35*normal.Duration().Seconds()/2)

	kal, err := Flite(WithVoice("kal")).Synthesize(t.Context(), voicetest.SpeechRequest{Text: "Hello."})
	require.NoError(t, err)
	assert.Equal(t, pcm.Rate8k, kal.Rate, "kal is an 8 kHz voice")

	// A text that starts like an option is spoken, not parsed.
	dash, err := f.Synthesize(t.Context(), voicetest.SpeechRequest{Text: "-voice kal says hi"})
	require.NoError(t, err)
	assert.Equal(t, pcm.Rate16k, dash.Rate)
}

func TestEspeakSynthesize(t *testing.T) {
	SkipIfNotInstalled(t, "espeak")
	e := Espeak()
	got, err := e.Synthesize(t.Context(), voicetest.SpeechRequest{Text: "Your appointment is confirmed."})
	require.NoError(t, err)
	assert.Equal(t, pcm.Rate22k05, got.Rate)
	assert.Greater(t, rms(got), 300.0)
	slow, err := e.Synthesize(t.Context(), voicetest.SpeechRequest{Text: "Your appointment is confirmed.", Speed: 0.5})
	require.NoError(t, err)
	assert.Greater(t, slow.Duration(), got.Duration()*3/2)

	_, err = e.Synthesize(t.Context(), voicetest.SpeechRequest{Text: "Hi.", Voice: "xx-nonexistent"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "espeak-ng failed")
	assert.Contains(t, err.Error(), "voice does not exist")
}

// TestLocalTTSLeavesNoAudioRuntime runs each local TTS engine as on a
// fresh machine (a new HOME, no XDG_RUNTIME_DIR): nothing may be left in
// TMPDIR or HOME. espeak-ng opens the PulseAudio client library even when
// it writes a file; without a runtime directory of its own, that library
// makes pulse-XXXXXXXXXXXX in TMPDIR and links ~/.config/pulse to it.
func TestLocalTTSLeavesNoAudioRuntime(t *testing.T) {
	for _, tc := range []struct {
		engine string
		tts    voicetest.TTS
	}{{"flite", Flite()}, {"espeak", Espeak()}} {
		t.Run(tc.engine, func(t *testing.T) {
			SkipIfNotInstalled(t, tc.engine)
			home, tmp := t.TempDir(), t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("TMPDIR", tmp)
			t.Setenv("XDG_RUNTIME_DIR", "")
			require.NoError(t, os.Unsetenv("XDG_RUNTIME_DIR"))
			got, err := tc.tts.Synthesize(t.Context(), voicetest.SpeechRequest{Text: "Your table is ready."})
			require.NoError(t, err)
			assert.Greater(t, rms(got), 300.0)
			for name, dir := range map[string]string{"TMPDIR": tmp, "HOME": home} {
				var left []string
				err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
					if err == nil && path != dir {
						left = append(left, strings.TrimPrefix(path, dir+string(filepath.Separator)))
					}
					return err
				})
				require.NoError(t, err)
				assert.Empty(t, left, "%s left these in %s", tc.engine, name)
			}
		})
	}
}

func TestLocalTTSValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		tts  voicetest.TTS
		req  voicetest.SpeechRequest
		want string
	}{
		{"flite voice", Flite(), voicetest.SpeechRequest{Text: "x", Voice: "nova"}, "no voice \"nova\"; use one of slt"},
		{"flite empty", Flite(), voicetest.SpeechRequest{Text: "  "}, "nothing to say"},
		{"flite speed", Flite(), voicetest.SpeechRequest{Text: "x", Speed: 0.1}, "Speed 0.1"},
		{"flite rate", Flite(), voicetest.SpeechRequest{Text: "x", Rate: -1}, "negative"},
		{"espeak voice", Espeak(), voicetest.SpeechRequest{Text: "x", Voice: "--help"}, "not a voice name"},
		{"espeak speed", Espeak(), voicetest.SpeechRequest{Text: "x", Speed: 3}, "80 to 450"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.tts.Synthesize(t.Context(), tc.req)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestMissingEngineNamesDebianPackage(t *testing.T) {
	missing := func(string) (string, error) { return "", exec.ErrNotFound }
	env := withEnv(noEnv, missing)
	for _, tc := range []struct {
		name string
		call func() error
		pkg  string
	}{
		{"flite", func() error {
			_, err := Flite(env).Synthesize(t.Context(), voicetest.SpeechRequest{Text: "hi"})
			return err
		}, "flite"},
		{"espeak", func() error {
			_, err := Espeak(env).Synthesize(t.Context(), voicetest.SpeechRequest{Text: "hi"})
			return err
		}, "espeak-ng"},
		{"pocketsphinx", func() error {
			_, err := Pocketsphinx(env).Transcribe(t.Context(), voicetest.TranscriptionRequest{Audio: pcm.Silence(pcm.Rate16k, 1e8)})
			return err
		}, "pocketsphinx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			require.ErrorIs(t, err, ErrNotInstalled)
			var ni *NotInstalledError
			require.ErrorAs(t, err, &ni)
			assert.Equal(t, tc.pkg, ni.Package)
			assert.Contains(t, err.Error(), "apt-get install "+tc.pkg)
		})
	}

	// A missing model is the pocketsphinx-en-us package.
	if _, err := exec.LookPath("pocketsphinx_continuous"); err == nil {
		_, err := Pocketsphinx(WithModelDir(t.TempDir())).Transcribe(t.Context(), voicetest.TranscriptionRequest{Audio: pcm.Silence(pcm.Rate16k, 1e8)})
		require.ErrorIs(t, err, ErrNotInstalled)
		assert.Contains(t, err.Error(), "apt-get install pocketsphinx-en-us")
	}

	// A replaying cache answers without the engine; a miss is the cache's
	// error, not a missing engine.
	c := openCache(t, t.TempDir(), cache.Replay)
	_, err := Flite(env, WithCache(c)).Synthesize(t.Context(), voicetest.SpeechRequest{Text: "hi"})
	var miss *cache.MissError
	require.ErrorAs(t, err, &miss)
}

func TestPocketsphinxRefusesNarrowbandAndBadInput(t *testing.T) {
	p := Pocketsphinx(WithProgram("/nonexistent/pocketsphinx_continuous"))
	ctx := t.Context()
	_, err := Pocketsphinx(WithProgram("/nonexistent/pocketsphinx_continuous"), StrictWideband()).Transcribe(ctx, voicetest.TranscriptionRequest{Audio: pcm.Silence(pcm.Rate8k, 5e8)})
	require.ErrorIs(t, err, ErrNarrowband)
	assert.Contains(t, err.Error(), "8000 Hz")
	// Without StrictWideband, 8 kHz audio is widened and decoded: here
	// the missing program is the error.
	_, err = p.Transcribe(ctx, voicetest.TranscriptionRequest{Audio: pcm.Silence(pcm.Rate8k, 5e8)})
	require.ErrorIs(t, err, ErrNotInstalled)

	_, err = p.Transcribe(ctx, voicetest.TranscriptionRequest{Audio: pcm.Silence(pcm.Rate16k, 5e8), Language: "fr-FR"})
	require.ErrorContains(t, err, "US English")

	_, err = p.Transcribe(ctx, voicetest.TranscriptionRequest{Audio: pcm.Chunk{Rate: pcm.Rate16k}})
	require.ErrorContains(t, err, "empty")

	_, err = p.Transcribe(ctx, voicetest.TranscriptionRequest{Audio: pcm.Silence(pcm.Rate16k, 5e8), Phrases: []string{" ", "?!"}})
	require.ErrorContains(t, err, "every phrase")
}

func TestPocketsphinxTranscribes(t *testing.T) {
	t.Parallel() // engines run as processes; no process-wide state
	SkipIfNotInstalled(t, "flite")
	SkipIfNotInstalled(t, "pocketsphinx")
	// 24 kHz input (as the runner uses) is resampled to 16 kHz first.
	audio, err := Flite().Synthesize(t.Context(), voicetest.SpeechRequest{Text: "Please cancel my order.", Rate: pcm.Rate24k})
	require.NoError(t, err)
	p := Pocketsphinx()
	tr, err := p.Transcribe(t.Context(), voicetest.TranscriptionRequest{Audio: audio, Language: "en-US",
		Phrases: []string{"Please cancel my order.", "Please confirm my order."}})
	require.NoError(t, err)
	assert.Equal(t, "please cancel my order", tr.Text)
	assert.Equal(t, "en", tr.Language)

	// The grammar accepts a sequence of phrases, across a pause.
	yes, err := Flite().Synthesize(t.Context(), voicetest.SpeechRequest{Text: "Yes, that's correct.", Rate: pcm.Rate24k})
	require.NoError(t, err)
	both := pcm.Chunk{Rate: pcm.Rate24k}
	both.Samples = append(append(append(both.Samples, yes.Samples...), pcm.Silence(pcm.Rate24k, 8e8).Samples...), audio.Samples...)
	tr, err = p.Transcribe(t.Context(), voicetest.TranscriptionRequest{Audio: both,
		Phrases: []string{"Please cancel my order.", "Yes, that's correct.", "No thanks."}})
	require.NoError(t, err)
	assert.Equal(t, "yes that's correct please cancel my order", tr.Text)

	_, err = p.Transcribe(t.Context(), voicetest.TranscriptionRequest{Audio: audio, Phrases: []string{"frobnicate the xyzzyq"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not in the pocketsphinx dictionary")
	assert.Contains(t, err.Error(), "frobnicate")
	assert.Contains(t, err.Error(), "xyzzyq")

	// A failing decoder reports its own error lines.
	_, err = Pocketsphinx(WithModelDir(brokenModelDir(t))).Transcribe(t.Context(), voicetest.TranscriptionRequest{Audio: audio})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pocketsphinx_continuous failed")
}

// brokenModelDir returns a model directory whose files exist but are empty.
func brokenModelDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	hmm, lm, dict := modelFiles(dir)
	require.NoError(t, mkdirAll(hmm))
	for _, f := range []string{lm, dict, filepath.Join(hmm, "mdef")} {
		require.NoError(t, writeFile(f, nil))
	}
	return dir
}

func TestInstalled(t *testing.T) {
	err := Installed("festival")
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "flite, espeak, pocketsphinx"))
	for _, name := range []string{"flite", "espeak", "pocketsphinx"} {
		if err := Installed(name); err != nil {
			assert.True(t, errors.Is(err, ErrNotInstalled), "%s: %v", name, err)
		}
	}
}

func mkdirAll(dir string) error             { return os.MkdirAll(dir, 0o755) }
func writeFile(path string, b []byte) error { return os.WriteFile(path, b, 0o644) }

func TestLocalEnginesStopWithContext(t *testing.T) {
	SkipIfNotInstalled(t, "flite")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := Flite().Synthesize(ctx, voicetest.SpeechRequest{Text: "This is never spoken."})
	require.ErrorIs(t, err, context.Canceled)
}
