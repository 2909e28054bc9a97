package speech

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakePath pretends exactly the named programs are installed.
func fakePath(programs ...string) func(string) (string, error) {
	return func(name string) (string, error) {
		for _, p := range programs {
			if p == name {
				return "/usr/bin/" + name, nil
			}
		}
		return "", exec.ErrNotFound
	}
}

func TestTTSByName(t *testing.T) {
	env := withEnv(noEnv, nil)
	for _, tc := range []struct {
		name, engine, voice string
	}{
		{"flite", "flite", "slt"},
		{"flite/kal16", "flite", "kal16"},
		{"espeak", "espeak", "en-us"},
		{"espeak-ng/en-gb", "espeak", "en-gb"},
		{"openai/nova", "openai", "nova"},
		{"openai", "openai", "nova"},
		{" OpenAI/shimmer ", "openai", "shimmer"},
	} {
		tts, err := TTSByName(tc.name, env)
		require.NoError(t, err, tc.name)
		switch e := tts.(type) {
		case *FliteTTS:
			assert.Equal(t, "flite", tc.engine, tc.name)
			assert.Equal(t, tc.voice, e.voice, tc.name)
		case *EspeakTTS:
			assert.Equal(t, "espeak", tc.engine, tc.name)
			assert.Equal(t, tc.voice, e.voice, tc.name)
		case *OpenAITTS:
			assert.Equal(t, "openai", tc.engine, tc.name)
			assert.Equal(t, tc.voice, e.c.voice, tc.name)
		default:
			t.Fatalf("%s: unexpected engine %T", tc.name, tts)
		}
	}
	_, err := TTSByName("festival/kal", env)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown TTS engine "festival/kal"; known: flite, flite/<voice>, espeak`)
}

func TestSTTByName(t *testing.T) {
	env := withEnv(noEnv, nil)
	stt, err := STTByName("pocketsphinx", env)
	require.NoError(t, err)
	assert.IsType(t, &PocketsphinxSTT{}, stt)
	stt, err = STTByName("openai/whisper-1", env)
	require.NoError(t, err)
	assert.Equal(t, "whisper-1", stt.(*OpenAISTT).Model())
	_, err = STTByName("pocketsphinx/en-gb", env)
	require.ErrorContains(t, err, "WithModelDir")
	_, err = STTByName("vosk", env)
	require.ErrorContains(t, err, "known: pocketsphinx, openai, openai/<model>")
}

func TestDefaults(t *testing.T) {
	keyEnv := func(k string) string {
		if k == EnvAPIKey {
			return "sk-test"
		}
		return ""
	}
	for _, tc := range []struct {
		name      string
		getenv    func(string) string
		installed []string
		tts, stt  any
	}{
		{"local engines installed", keyEnv, []string{"flite", "espeak-ng", "pocketsphinx_continuous"}, &FliteTTS{}, &PocketsphinxSTT{}},
		{"nothing installed, key set", keyEnv, nil, &OpenAITTS{}, &OpenAISTT{}},
		{"only espeak, no key", noEnv, []string{"espeak-ng"}, &EspeakTTS{}, &PocketsphinxSTT{}},
		{"nothing at all: replay local", noEnv, nil, &FliteTTS{}, &PocketsphinxSTT{}},
		{"named by environment", func(k string) string {
			return map[string]string{EnvTTS: "espeak/en-gb", EnvSTT: "openai"}[k]
		}, []string{"flite", "pocketsphinx_continuous"}, &EspeakTTS{}, &OpenAISTT{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := withEnv(tc.getenv, fakePath(tc.installed...))
			tts, err := DefaultTTS(opt)
			require.NoError(t, err)
			assert.IsType(t, tc.tts, tts)
			stt, err := DefaultSTT(opt)
			require.NoError(t, err)
			assert.IsType(t, tc.stt, stt)
		})
	}
	tts, err := DefaultTTS(withEnv(noEnv, fakePath()), WithBaseURL("http://127.0.0.1:1/v1/"))
	require.NoError(t, err)
	assert.IsType(t, &OpenAITTS{}, tts, "a base URL alone selects OpenAI")
	_, err = DefaultTTS(withEnv(func(k string) string { return map[string]string{EnvTTS: "nope"}[k] }, nil))
	require.ErrorContains(t, err, "unknown TTS engine")
}

func TestForTestHelpers(t *testing.T) {
	tts := TTSForTest(t, "flite/kal")
	f, ok := tts.(*FliteTTS)
	require.True(t, ok, "got %T", tts)
	assert.Equal(t, "kal", f.voice)
	require.NotNil(t, f.cfg.cache, "the test's cache is attached")
	stt := STTForTest(t, "pocketsphinx")
	p, ok := stt.(*PocketsphinxSTT)
	require.True(t, ok, "got %T", stt)
	require.NotNil(t, p.cfg.cache)
	assert.NotNil(t, TTSForTest(t, ""))
	assert.NotNil(t, STTForTest(t, ""))
}
