package speech

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/internal/keepalive"
)

// DefaultBaseURL is OpenAI's API, used when neither WithBaseURL nor
// OPENAI_BASE_URL names another endpoint.
const DefaultBaseURL = "https://api.openai.com/v1/"

// OpenAIRate is the sample rate of OpenAI's "pcm" speech format.
const OpenAIRate = pcm.Rate24k

// maxSpeechBytes bounds a speech answer: 4096 characters of speech at
// 24 kHz are far below it.
const maxSpeechBytes = 64 << 20

// replayKey is the placeholder bearer key used when none is configured:
// openai-go refuses to run without one, local servers ignore it, and the
// cache never stores keys.
const replayKey = "voicetest-no-key"

// openaiConn is what both OpenAI engines share.
type openaiConn struct {
	api      openai.Client
	model    string
	provider string
	voice    string
	baseURL  string
	keySet   bool
	cache    *cache.Cache
	phrases  []string // WithPhrases
}

func newOpenAIConn(cfg config, modelEnv, defaultModel string) (*openaiConn, error) {
	baseURL := orDefault(cfg.baseURL, cfg.getenv(EnvBaseURL))
	key := orDefault(cfg.apiKey, cfg.getenv(EnvAPIKey))
	model := orDefault(cfg.model, orDefault(cfg.getenv(modelEnv), defaultModel))
	// Always pass the base URL: openai-go would otherwise read
	// OPENAI_BASE_URL itself, behind WithBaseURL's back.
	endpoint := orDefault(baseURL, DefaultBaseURL)
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("speech: base URL %q is not an http(s) URL; set OPENAI_BASE_URL or WithBaseURL to e.g. \"http://localhost:8000/v1/\"", endpoint)
	}
	ropts := []option.RequestOption{option.WithBaseURL(endpoint)}
	ropts = append(ropts, option.WithAPIKey(orDefault(key, replayKey)))
	if cfg.httpClient != nil {
		ropts = append(ropts, option.WithHTTPClient(cfg.httpClient))
	} else {
		ropts = append(ropts, option.WithHTTPClient(keepalive.NewClient()))
	}
	switch {
	case cfg.maxRetries >= 0:
		ropts = append(ropts, option.WithMaxRetries(cfg.maxRetries))
	case cfg.cache != nil && cfg.cache.Mode() == cache.Replay:
		ropts = append(ropts, option.WithMaxRetries(0))
	}
	return &openaiConn{
		api:      openai.NewClient(ropts...),
		model:    model,
		provider: orDefault(cfg.provider, "openai"),
		voice:    cfg.voice,
		baseURL:  baseURL,
		keySet:   key != "",
		cache:    cfg.cache,
		phrases:  cfg.phrases,
	}, nil
}

// ready reports whether a call can reach an endpoint.
func (c *openaiConn) ready() error {
	if !c.keySet && c.baseURL == "" {
		return errors.New("OPENAI_API_KEY is not set: set it to call OpenAI, or set OPENAI_BASE_URL (or WithBaseURL) for a local OpenAI-compatible server")
	}
	return nil
}

// OpenAITTS speaks through OpenAI's /v1/audio/speech (or any compatible
// server) with openai-go, asking for 24 kHz PCM. Build it with
// NewOpenAITTS.
type OpenAITTS struct{ c *openaiConn }

var _ voicetest.TTS = (*OpenAITTS)(nil)

// NewOpenAITTS returns the OpenAI TTS engine. The model comes from
// WithModel, VOICETEST_TTS_MODEL or DefaultTTSModel; the endpoint and key
// from WithBaseURL/WithAPIKey or OPENAI_BASE_URL/OPENAI_API_KEY; the voice
// from WithVoice, else "nova". No key is needed while the cache replays.
func NewOpenAITTS(opts ...Option) (*OpenAITTS, error) {
	c, err := newOpenAIConn(newConfig(opts), EnvTTSModel, DefaultTTSModel)
	if err != nil {
		return nil, err
	}
	c.voice = orDefault(c.voice, DefaultOpenAIVoice)
	return &OpenAITTS{c: c}, nil
}

// Model returns the engine's TTS model.
func (o *OpenAITTS) Model() string { return o.c.model }

// Synthesize speaks req with the configured model: Voice, Instructions
// and Speed are sent as the API's voice, instructions and speed.
func (o *OpenAITTS) Synthesize(ctx context.Context, req voicetest.SpeechRequest) (pcm.Chunk, error) {
	speed, err := checkTTS(req)
	if err != nil {
		return pcm.Chunk{}, fmt.Errorf("speech: openai tts: %w", err)
	}
	if n := len([]rune(req.Text)); n > 4096 {
		return pcm.Chunk{}, fmt.Errorf("speech: openai tts: text is %d characters; the API takes at most 4096, so split it", n)
	}
	voice := orDefault(req.Voice, o.c.voice)
	fields := map[string]any{"text": req.Text, "voice": voice, "speed": speed, "format": "pcm"}
	if req.Instructions != "" {
		fields["instructions"] = req.Instructions
	}
	key := cache.Key{Kind: "tts", Provider: o.c.provider, Model: o.c.model, Fields: fields}
	return synthesize(ctx, o.c.cache, key, req.Rate, func(ctx context.Context) (cache.Audio, error) {
		if err := o.c.ready(); err != nil {
			return cache.Audio{}, err
		}
		p := openai.AudioSpeechNewParams{
			Model:          openai.SpeechModel(o.c.model),
			Input:          req.Text,
			Voice:          openai.AudioSpeechNewParamsVoiceUnion{OfString: openai.String(voice)},
			ResponseFormat: openai.AudioSpeechNewParamsResponseFormatPCM,
		}
		if req.Instructions != "" {
			p.Instructions = openai.String(req.Instructions)
		}
		if speed != 1 {
			p.Speed = openai.Float(speed)
		}
		res, err := o.c.api.Audio.Speech.New(ctx, p)
		if err != nil {
			return cache.Audio{}, describeAPIError(err)
		}
		defer res.Body.Close()
		if ct := res.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") || strings.HasPrefix(ct, "text/") {
			return cache.Audio{}, fmt.Errorf("the endpoint answered %s instead of PCM audio", ct)
		}
		data, err := io.ReadAll(io.LimitReader(res.Body, maxSpeechBytes+1))
		if err != nil {
			return cache.Audio{}, fmt.Errorf("read speech: %w", err)
		}
		if len(data) > maxSpeechBytes {
			return cache.Audio{}, fmt.Errorf("the speech answer is larger than %d bytes", maxSpeechBytes)
		}
		if len(data) == 0 || len(data)%2 != 0 {
			return cache.Audio{}, fmt.Errorf("the endpoint answered %d bytes, which is not 16-bit PCM audio", len(data))
		}
		return cache.Audio{Rate: OpenAIRate, PCM: data}, nil
	})
}

// OpenAISTT transcribes through OpenAI's /v1/audio/transcriptions (or any
// compatible server) with openai-go, uploading WAV. Build it with
// NewOpenAISTT.
type OpenAISTT struct{ c *openaiConn }

var _ voicetest.STT = (*OpenAISTT)(nil)

// NewOpenAISTT returns the OpenAI STT engine. The model comes from
// WithModel, VOICETEST_STT_MODEL or DefaultSTTModel; the endpoint and key
// as for NewOpenAITTS.
func NewOpenAISTT(opts ...Option) (*OpenAISTT, error) {
	c, err := newOpenAIConn(newConfig(opts), EnvSTTModel, DefaultSTTModel)
	if err != nil {
		return nil, err
	}
	return &OpenAISTT{c: c}, nil
}

// Model returns the engine's STT model.
func (o *OpenAISTT) Model() string { return o.c.model }

// Transcribe uploads req.Audio as a WAV file at its own rate (8 kHz
// telephone audio included). Language is sent as its ISO-639-1 code
// ("en-US" → "en"). The API has no grammar, so Phrases, when Prompt is
// empty, become the prompt, which biases the model towards their words.
func (o *OpenAISTT) Transcribe(ctx context.Context, req voicetest.TranscriptionRequest) (voicetest.Transcription, error) {
	a := req.Audio
	if err := a.Validate(); err != nil {
		return voicetest.Transcription{}, fmt.Errorf("speech: openai stt: audio: %w", err)
	}
	if a.IsEmpty() {
		return voicetest.Transcription{}, errors.New("speech: openai stt: the audio is empty; send at least some speech")
	}
	lang, err := iso639(req.Language)
	if err != nil {
		return voicetest.Transcription{}, fmt.Errorf("speech: openai stt: %w", err)
	}
	prompt := req.Prompt
	if len(req.Phrases) == 0 {
		req.Phrases = o.c.phrases
	}
	if prompt == "" && len(req.Phrases) > 0 {
		prompt = strings.Join(req.Phrases, " ")
	}
	fields := map[string]any{"audio": cache.AudioDigest(a.Rate, a.Bytes()), "temperature": 0}
	if lang != "" {
		fields["language"] = lang
	}
	if prompt != "" {
		fields["prompt"] = prompt
	}
	key := cache.Key{Kind: "stt", Provider: o.c.provider, Model: o.c.model, Fields: fields}
	produce := func(ctx context.Context) (sttAnswer, error) {
		if err := o.c.ready(); err != nil {
			return sttAnswer{}, err
		}
		wav, err := pcm.EncodeWAV(a)
		if err != nil {
			return sttAnswer{}, err
		}
		p := openai.AudioTranscriptionNewParams{
			Model:          openai.AudioModel(o.c.model),
			File:           openai.File(bytes.NewReader(wav), "audio.wav", "audio/wav"),
			ResponseFormat: openai.AudioResponseFormatJSON,
			Temperature:    openai.Float(0),
		}
		if lang != "" {
			p.Language = openai.String(lang)
		}
		if prompt != "" {
			p.Prompt = openai.String(prompt)
		}
		tr, err := o.c.api.Audio.Transcriptions.New(ctx, p)
		if err != nil {
			return sttAnswer{}, describeAPIError(err)
		}
		return sttAnswer{Text: strings.TrimSpace(tr.Text), Language: lang}, nil
	}
	var ans sttAnswer
	if o.c.cache == nil {
		ans, err = produce(ctx)
	} else {
		ans, err = cache.DoJSON(ctx, o.c.cache, key, produce)
	}
	if err != nil {
		return voicetest.Transcription{}, fmt.Errorf("speech: %s stt (%s): %w", o.c.provider, o.c.model, err)
	}
	return voicetest.Transcription{Text: ans.Text, Language: ans.Language}, nil
}

// iso639 returns the ISO-639-1 code of a BCP 47 tag ("en-US" → "en"), as
// the transcription API requires.
func iso639(tag string) (string, error) {
	if tag == "" {
		return "", nil
	}
	primary, _, _ := strings.Cut(strings.ReplaceAll(tag, "_", "-"), "-")
	primary = strings.ToLower(primary)
	if len(primary) != 2 || strings.IndexFunc(primary, func(r rune) bool { return r < 'a' || r > 'z' }) >= 0 {
		return "", fmt.Errorf("language %q has no two-letter ISO-639-1 code; use a tag such as \"en\" or \"en-US\"", tag)
	}
	return primary, nil
}

// describeAPIError adds the endpoint's own error message to an openai-go
// error, whose Error method shows only the HTTP status.
func describeAPIError(err error) error {
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		return err
	}
	msg := orDefault(apiErr.Message, "(no message)")
	if apiErr.Param != "" {
		msg += " (param " + apiErr.Param + ")"
	}
	if apiErr.Code != "" {
		msg += " (code " + apiErr.Code + ")"
	}
	return fmt.Errorf("%w: %s", err, msg)
}
