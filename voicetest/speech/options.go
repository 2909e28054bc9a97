package speech

import (
	"net/http"
	"os"

	"github.com/voicetest-go/voicetest/voicetest/cache"
)

// Environment variables the OpenAI engines read when no option overrides
// them.
const (
	// EnvAPIKey holds the bearer key of the OpenAI-compatible endpoint.
	EnvAPIKey = "OPENAI_API_KEY"
	// EnvBaseURL holds the endpoint's base URL.
	EnvBaseURL = "OPENAI_BASE_URL"
	// EnvTTSModel holds the default OpenAI TTS model.
	EnvTTSModel = "VOICETEST_TTS_MODEL"
	// EnvSTTModel holds the default OpenAI STT model.
	EnvSTTModel = "VOICETEST_STT_MODEL"
)

// Default models of the OpenAI engines.
const (
	DefaultTTSModel = "gpt-4o-mini-tts"
	DefaultSTTModel = "gpt-4o-transcribe"
	// DefaultOpenAIVoice is the OpenAI voice used when neither the engine
	// name nor the request names one.
	DefaultOpenAIVoice = "nova"
)

// Option configures an engine. Options that do not apply to an engine are
// ignored by it (a base URL means nothing to flite).
type Option func(*config)

type config struct {
	cache                            *cache.Cache
	baseURL, apiKey, model, provider string
	voice                            string
	httpClient                       *http.Client
	maxRetries                       int
	program                          string
	modelDir                         string
	phrases                          []string
	strictWideband                   bool
	maxSpeechBytes                   int64 // 0: maxSpeechBytes
	getenv                           func(string) string
	lookPath                         func(string) (string, error)
}

func newConfig(opts []Option) config {
	cfg := config{maxRetries: -1, getenv: os.Getenv, lookPath: lookPath}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// WithCache sends every call of the engine through c, so that a committed
// cache replays it with no engine installed and no key. Without a cache the
// engine runs on every call, as in cache mode off.
func WithCache(c *cache.Cache) Option { return func(cfg *config) { cfg.cache = c } }

// WithVoice sets the engine's default voice ("slt", "en-us", "nova"); a
// SpeechRequest.Voice still overrides it per request.
func WithVoice(v string) Option { return func(c *config) { c.voice = v } }

// WithBaseURL sets the OpenAI-compatible endpoint (overriding
// OPENAI_BASE_URL).
func WithBaseURL(u string) Option { return func(c *config) { c.baseURL = u } }

// WithAPIKey sets the bearer key (overriding OPENAI_API_KEY). It is sent to
// the endpoint only and never enters a cache key or file.
func WithAPIKey(key string) Option { return func(c *config) { c.apiKey = key } }

// WithModel sets the OpenAI model (overriding VOICETEST_TTS_MODEL or
// VOICETEST_STT_MODEL).
func WithModel(m string) Option { return func(c *config) { c.model = m } }

// WithProvider names the provider in cache keys (default "openai"); give
// each distinct OpenAI-compatible server its own name.
func WithProvider(name string) Option { return func(c *config) { c.provider = name } }

// WithHTTPClient sets the HTTP client of the OpenAI engines. Without it
// each engine keeps its connections alive between calls, also inside a
// testing/synctest bubble such as voicetest.Scenario's, whose virtual
// clock keeps running while a connection is idle (the client voicetest/llm
// uses too; see voicetest/internal/keepalive). A client given here is used
// as is.
func WithHTTPClient(h *http.Client) Option { return func(c *config) { c.httpClient = h } }

// WithMaxRetries sets how often a failed OpenAI call is retried (default 2,
// as openai-go's, after a connection error or a 408, 409, 429 or 5xx
// answer). In cache mode replay retries are always off.
func WithMaxRetries(n int) Option { return func(c *config) { c.maxRetries = max(n, 0) } }

// WithProgram sets the path of a local engine's program instead of looking
// its usual name up in PATH.
func WithProgram(path string) Option { return func(c *config) { c.program = path } }

// WithPhrases gives a recognizer the phrases its speaker is expected to
// say, used for every request whose TranscriptionRequest.Phrases is
// empty: pocketsphinx decodes with a grammar of any sequence of them,
// which makes telephone audio far more recognizable (and can only answer
// those phrases); OpenAI gets them as a prompt. Other engines ignore it.
func WithPhrases(phrases ...string) Option {
	p := append([]string(nil), phrases...)
	return func(c *config) { c.phrases = p }
}

// StrictWideband makes pocketsphinx refuse audio below 16 kHz with
// ErrNarrowband, as it did before it widened telephone audio itself
// (see Pocketsphinx).
func StrictWideband() Option { return func(c *config) { c.strictWideband = true } }

// WithModelDir sets pocketsphinx's acoustic model directory (default
// /usr/share/pocketsphinx/model/en-us, from the pocketsphinx-en-us package).
func WithModelDir(dir string) Option { return func(c *config) { c.modelDir = dir } }

// withMaxSpeechBytes lowers the bound of a speech answer (tests only).
func withMaxSpeechBytes(n int64) Option { return func(c *config) { c.maxSpeechBytes = n } }

// withEnv replaces os.Getenv and exec.LookPath (tests only).
func withEnv(getenv func(string) string, look func(string) (string, error)) Option {
	return func(c *config) {
		if getenv != nil {
			c.getenv = getenv
		}
		if look != nil {
			c.lookPath = look
		}
	}
}
