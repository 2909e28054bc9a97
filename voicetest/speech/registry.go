package speech

import (
	"fmt"
	"strings"

	"github.com/voicetest-go/voicetest/voicetest"
)

// Environment variables that choose the default engines by name.
const (
	// EnvTTS names the default TTS engine, e.g. VOICETEST_TTS=flite/slt.
	EnvTTS = "VOICETEST_TTS"
	// EnvSTT names the default STT engine, e.g. VOICETEST_STT=pocketsphinx.
	EnvSTT = "VOICETEST_STT"
)

// TTSNames and STTNames list the engine names TTSByName and STTByName
// know; a name may add "/voice" (TTS) or "/model" (OpenAI STT).
var (
	TTSNames = []string{"flite", "flite/<voice>", "espeak", "espeak/<voice>", "openai", "openai/<voice>"}
	STTNames = []string{"pocketsphinx", "openai", "openai/<model>"}
)

// TTSByName returns the TTS engine a name picks:
//
//   - "flite" or "flite/<voice>" ("flite/slt", "flite/kal16");
//   - "espeak" or "espeak/<voice>" ("espeak/en-us", "espeak/en-gb+f3");
//     "espeak-ng" is accepted for "espeak";
//   - "openai" or "openai/<voice>" ("openai/nova"), with the model from
//     WithModel or VOICETEST_TTS_MODEL.
//
// The voice in the name overrides WithVoice. An unknown name is an error
// listing the known ones.
func TTSByName(name string, opts ...Option) (voicetest.TTS, error) {
	engine, voice, _ := strings.Cut(strings.TrimSpace(name), "/")
	if voice != "" {
		opts = append(opts, WithVoice(voice))
	}
	switch strings.ToLower(engine) {
	case "flite":
		return Flite(opts...), nil
	case "espeak", "espeak-ng":
		return Espeak(opts...), nil
	case "openai":
		return NewOpenAITTS(opts...)
	}
	return nil, fmt.Errorf("speech: unknown TTS engine %q; known: %s", name, strings.Join(TTSNames, ", "))
}

// STTByName returns the STT engine a name picks: "pocketsphinx", or
// "openai" or "openai/<model>" ("openai/whisper-1"). An unknown name is an
// error listing the known ones.
func STTByName(name string, opts ...Option) (voicetest.STT, error) {
	engine, model, _ := strings.Cut(strings.TrimSpace(name), "/")
	switch strings.ToLower(engine) {
	case "pocketsphinx":
		if model != "" {
			return nil, fmt.Errorf("speech: STT engine %q: pocketsphinx takes no model in its name; use WithModelDir", name)
		}
		return Pocketsphinx(opts...), nil
	case "openai":
		if model != "" {
			opts = append(opts, WithModel(model))
		}
		return NewOpenAISTT(opts...)
	}
	return nil, fmt.Errorf("speech: unknown STT engine %q; known: %s", name, strings.Join(STTNames, ", "))
}

// DefaultTTS returns the TTS engine to use when a test names none:
// the engine VOICETEST_TTS names; else flite/slt when flite is installed;
// else OpenAI when OPENAI_API_KEY or OPENAI_BASE_URL is set (or WithAPIKey
// or WithBaseURL given); else espeak when installed; else flite/slt, so
// that a cache recorded with flite replays on a machine with no engine.
func DefaultTTS(opts ...Option) (voicetest.TTS, error) {
	cfg := newConfig(opts)
	if name := cfg.getenv(EnvTTS); name != "" {
		return TTSByName(name, opts...)
	}
	switch {
	case installed(cfg, fliteEngine):
		return TTSByName("flite/"+DefaultFliteVoice, opts...)
	case openAIConfigured(cfg):
		return TTSByName("openai", opts...)
	case installed(cfg, espeakEngine):
		return TTSByName("espeak", opts...)
	}
	return TTSByName("flite/"+DefaultFliteVoice, opts...)
}

// DefaultSTT returns the STT engine to use when a test names none: the
// engine VOICETEST_STT names; else pocketsphinx when it is installed; else
// OpenAI when a key or base URL is set; else pocketsphinx, so that a cache
// recorded with it replays on a machine with no engine.
func DefaultSTT(opts ...Option) (voicetest.STT, error) {
	cfg := newConfig(opts)
	if name := cfg.getenv(EnvSTT); name != "" {
		return STTByName(name, opts...)
	}
	if !installed(cfg, pocketsphinxEngine) && openAIConfigured(cfg) {
		return STTByName("openai", opts...)
	}
	return STTByName("pocketsphinx", opts...)
}

func installed(cfg config, e localEngine) bool {
	// WithProgram names one engine's program; it does not say where the
	// other engines are.
	cfg.program = ""
	_, err := e.resolve(cfg)
	return err == nil
}

func openAIConfigured(cfg config) bool {
	return cfg.apiKey != "" || cfg.baseURL != "" || cfg.getenv(EnvAPIKey) != "" || cfg.getenv(EnvBaseURL) != ""
}
