package speech

import (
	"testing"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
)

// TTSForTest returns the TTS engine name picks (DefaultTTS when name is
// empty), with the running test's cache (cache.ForTest), so its calls
// replay from the test package's testdata/voicetest/cache. A bad name or
// configuration fails t.
func TTSForTest(t testing.TB, name string, opts ...Option) voicetest.TTS {
	t.Helper()
	opts = append([]Option{WithCache(cache.ForTest(t))}, opts...)
	var tts voicetest.TTS
	var err error
	if name == "" {
		tts, err = DefaultTTS(opts...)
	} else {
		tts, err = TTSByName(name, opts...)
	}
	if err != nil {
		t.Fatal(err)
	}
	return tts
}

// STTForTest returns the STT engine name picks (DefaultSTT when name is
// empty), with the running test's cache, like TTSForTest.
func STTForTest(t testing.TB, name string, opts ...Option) voicetest.STT {
	t.Helper()
	opts = append([]Option{WithCache(cache.ForTest(t))}, opts...)
	var stt voicetest.STT
	var err error
	if name == "" {
		stt, err = DefaultSTT(opts...)
	} else {
		stt, err = STTByName(name, opts...)
	}
	if err != nil {
		t.Fatal(err)
	}
	return stt
}
