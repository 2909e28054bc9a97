package speech

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
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

// TestEspeakLeavesNoAudioRuntime: espeak-ng loads the PulseAudio client
// library even when it only writes a WAV file. Run in the user's
// environment, that library made a directory pulse-XXXXXXXXXXXX in TMPDIR
// (a test's temporary directory: left behind) and a link to it in
// ~/.config/pulse when there was no XDG_RUNTIME_DIR, and went to the
// user's sound server in XDG_RUNTIME_DIR when there was one. Engines run
// their programs with PULSE_SERVER naming no server: nothing appears in
// HOME, TMPDIR or the user's XDG_RUNTIME_DIR.
// (Not parallel: it sets the process environment.)
func TestEspeakLeavesNoAudioRuntime(t *testing.T) {
	SkipIfNotInstalled(t, "espeak")
	for _, userRuntime := range []bool{false, true} {
		t.Run(fmt.Sprintf("XDG_RUNTIME_DIR set %v", userRuntime), func(t *testing.T) {
			home, tmp, rt := t.TempDir(), t.TempDir(), t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("TMPDIR", tmp)
			t.Setenv("XDG_RUNTIME_DIR", rt)
			watched := map[string]string{"HOME": home, "TMPDIR": tmp}
			if userRuntime {
				watched["XDG_RUNTIME_DIR"] = rt
			} else {
				require.NoError(t, os.Unsetenv("XDG_RUNTIME_DIR"))
			}
			got, err := Espeak().Synthesize(t.Context(), voicetest.SpeechRequest{Text: "Your table is booked."})
			require.NoError(t, err)
			assert.Greater(t, rms(got), 300.0)
			for name, dir := range watched {
				entries, err := os.ReadDir(dir)
				require.NoError(t, err)
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				assert.Empty(t, names, "espeak-ng left these in %s", name)
			}
		})
	}
}

// TestEspeakReachesNoSoundServer: with PULSE_SERVER naming the user's
// sound server (here a socket the test listens on, closing what it
// accepts), espeak-ng does not connect to it. (Not parallel: it sets the
// process environment.)
func TestEspeakReachesNoSoundServer(t *testing.T) {
	SkipIfNotInstalled(t, "espeak")
	sock := filepath.Join(t.TempDir(), "native")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	accepted := make(chan int)
	go func() {
		n := 0
		for {
			c, err := l.Accept()
			if err != nil {
				accepted <- n
				return
			}
			n++
			c.Close()
		}
	}()
	t.Setenv("PULSE_SERVER", "unix:"+sock)
	_, err = Espeak().Synthesize(t.Context(), voicetest.SpeechRequest{Text: "Your table is booked."})
	l.Close()
	n := <-accepted
	require.NoError(t, err)
	assert.Zero(t, n, "espeak-ng connected to the sound server PULSE_SERVER names")
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
