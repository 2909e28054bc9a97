package speech

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"net/textproto"
	"net/url"
	"strings"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/internal/keepalive"
	"github.com/voicetest-go/voicetest/voicetest/internal/openaihttp"
)

// DefaultBaseURL is OpenAI's API, used when neither WithBaseURL nor
// OPENAI_BASE_URL names another endpoint.
const DefaultBaseURL = "https://api.openai.com/v1/"

// OpenAIRate is the sample rate of OpenAI's "pcm" speech format.
const OpenAIRate = pcm.Rate24k

// maxSpeechBytes bounds a speech answer: 4096 characters of speech at
// 24 kHz are far below it.
const maxSpeechBytes = 64 << 20

// replayKey is the placeholder bearer key sent when none is configured
// (to a local server, which ignores it); the cache never stores keys.
const replayKey = "voicetest-no-key"

// userAgent is the User-Agent of the OpenAI engines' requests.
const userAgent = "voicetest-speech/1 (Go)"

// APIError is an error status answered by an OpenAI-compatible endpoint,
// with the error object of its body (OpenAI's {"error": {"message",
// "type", "param", "code"}}) when it sent one: its StatusCode, its
// Message, Type, Param and Code, and the request's Method and URL. The
// OpenAI engines' errors wrap it: use errors.As to read the status. It is
// the same type as llm.APIError.
type APIError = openaihttp.APIError

// openaiConn is what both OpenAI engines share: one endpoint of the
// server (audio/speech or audio/transcriptions), sent to with
// voicetest/internal/openaihttp (OpenAI's retries, error objects and
// bounds, as openai-go applied them).
type openaiConn struct {
	ep       *openaihttp.Endpoint
	model    string
	provider string
	voice    string
	baseURL  string
	keySet   bool
	cache    *cache.Cache
	phrases  []string // WithPhrases
}

// endpointOf says which endpoint of the server an engine posts to, and
// how.
type endpointOf struct {
	path, contentType, accept string
	maxBody                   int64
}

func newOpenAIConn(cfg config, modelEnv, defaultModel string, at endpointOf) (*openaiConn, error) {
	baseURL := orDefault(cfg.baseURL, cfg.getenv(EnvBaseURL))
	key := orDefault(cfg.apiKey, cfg.getenv(EnvAPIKey))
	model := orDefault(cfg.model, orDefault(cfg.getenv(modelEnv), defaultModel))
	endpoint := orDefault(baseURL, DefaultBaseURL)
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("speech: base URL %q is not an http(s) URL; set OPENAI_BASE_URL or WithBaseURL to e.g. \"http://localhost:8000/v1/\"", endpoint)
	}
	h := cfg.httpClient
	if h == nil {
		h = keepalive.NewClient()
	}
	retries := openaihttp.DefaultMaxRetries
	switch {
	case cfg.maxRetries >= 0:
		retries = cfg.maxRetries
	case cfg.cache != nil && cfg.cache.Mode() == cache.Replay:
		retries = 0
	}
	ep, err := openaihttp.New(h, openaihttp.Config{
		Base: endpoint, Path: at.path, Key: orDefault(key, replayKey),
		UserAgent: userAgent, ContentType: at.contentType, Accept: at.accept,
		MaxRetries: retries, MaxBody: at.maxBody,
	})
	if err != nil {
		return nil, fmt.Errorf("speech: base URL %q: %w", endpoint, err)
	}
	return &openaiConn{
		ep:       ep,
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
// server), asking for 24 kHz PCM. It sends the request itself, with the
// retries and error handling openai-go applied (openai-go is only its
// tests' oracle). Build it with NewOpenAITTS.
type OpenAITTS struct{ c *openaiConn }

var _ voicetest.TTS = (*OpenAITTS)(nil)

// NewOpenAITTS returns the OpenAI TTS engine. The model comes from
// WithModel, VOICETEST_TTS_MODEL or DefaultTTSModel; the endpoint and key
// from WithBaseURL/WithAPIKey or OPENAI_BASE_URL/OPENAI_API_KEY; the voice
// from WithVoice, else "nova". No key is needed while the cache replays.
func NewOpenAITTS(opts ...Option) (*OpenAITTS, error) {
	cfg := newConfig(opts)
	c, err := newOpenAIConn(cfg, EnvTTSModel, DefaultTTSModel,
		endpointOf{path: "audio/speech", contentType: "application/json", accept: "application/octet-stream", maxBody: cmp.Or(cfg.maxSpeechBytes, maxSpeechBytes)})
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
		body, err := encodeSpeechRequest(speechRequest{
			Model: o.c.model, Input: req.Text, Voice: voice, Instructions: req.Instructions,
			ResponseFormat: "pcm", Speed: speedParam(speed),
		})
		if err != nil {
			return cache.Audio{}, err
		}
		data, hdr, err := o.c.ep.Post(ctx, body, "")
		var tooLarge *openaihttp.TooLargeError
		if errors.As(err, &tooLarge) {
			return cache.Audio{}, fmt.Errorf("the speech answer is larger than %d bytes (%w)", tooLarge.Limit, err)
		}
		if err != nil {
			return cache.Audio{}, err
		}
		if ct := hdr.Get("Content-Type"); strings.HasPrefix(ct, "application/json") || strings.HasPrefix(ct, "text/") {
			return cache.Audio{}, fmt.Errorf("the endpoint answered %s instead of PCM audio", ct)
		}
		if len(data) == 0 || len(data)%2 != 0 {
			return cache.Audio{}, fmt.Errorf("the endpoint answered %d bytes, which is not 16-bit PCM audio", len(data))
		}
		return cache.Audio{Rate: OpenAIRate, PCM: data}, nil
	})
}

// OpenAISTT transcribes through OpenAI's /v1/audio/transcriptions (or any
// compatible server), uploading WAV. It sends the request itself, as
// OpenAITTS does. Build it with NewOpenAISTT.
type OpenAISTT struct{ c *openaiConn }

var _ voicetest.STT = (*OpenAISTT)(nil)

// NewOpenAISTT returns the OpenAI STT engine. The model comes from
// WithModel, VOICETEST_STT_MODEL or DefaultSTTModel; the endpoint and key
// as for NewOpenAITTS.
func NewOpenAISTT(opts ...Option) (*OpenAISTT, error) {
	c, err := newOpenAIConn(newConfig(opts), EnvSTTModel, DefaultSTTModel,
		endpointOf{path: "audio/transcriptions", contentType: "multipart/form-data", accept: "application/json"})
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
		body, contentType, err := transcriptionForm(o.c.model, wav, lang, prompt)
		if err != nil {
			return sttAnswer{}, err
		}
		data, hdr, err := o.c.ep.Post(ctx, body, contentType)
		if err != nil {
			return sttAnswer{}, err
		}
		text, err := decodeTranscription(hdr.Get("Content-Type"), data)
		if err != nil {
			return sttAnswer{}, err
		}
		return sttAnswer{Text: strings.TrimSpace(text), Language: lang}, nil
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

// speechRequest is the body of POST audio/speech
// (platform.openai.com/docs/api-reference/audio/createSpeech), as far as
// the engine uses it.
type speechRequest struct {
	Model          string   `json:"model"`
	Input          string   `json:"input"`
	Voice          string   `json:"voice"`
	Instructions   string   `json:"instructions,omitempty"`
	ResponseFormat string   `json:"response_format"`
	Speed          *float64 `json:"speed,omitempty"`
}

// encodeSpeechRequest returns r's JSON, with no HTML escaping (the API
// reads the text as it is; openai-go sent "<" as it is too).
func encodeSpeechRequest(r speechRequest) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("encode the speech request: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// speedParam returns the speed sent: none for 1, the API's default.
func speedParam(speed float64) *float64 {
	if speed == 1 {
		return nil
	}
	return &speed
}

// transcriptionForm returns the multipart body of POST
// audio/transcriptions
// (platform.openai.com/docs/api-reference/audio/createTranscription) and
// its content type: the WAV file as "audio.wav", the model, the language
// and prompt when set, response_format json and temperature 0.
func transcriptionForm(model string, wav []byte, lang, prompt string) ([]byte, string, error) {
	var buf bytes.Buffer
	buf.Grow(len(wav) + 1024)
	w := multipart.NewWriter(&buf)
	file := textproto.MIMEHeader{
		"Content-Disposition": {`form-data; name="file"; filename="audio.wav"`},
		"Content-Type":        {"audio/wav"},
	}
	part, err := w.CreatePart(file)
	if err == nil {
		_, err = part.Write(wav)
	}
	fields := [...][2]string{{"model", model}, {"language", lang}, {"prompt", prompt}, {"response_format", "json"}, {"temperature", "0"}}
	for _, f := range fields {
		if err == nil && f[1] != "" {
			err = w.WriteField(f[0], f[1])
		}
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		return nil, "", fmt.Errorf("encode the transcription request: %w", err)
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}

// decodeTranscription returns the text of a transcription answered with
// content type ct (JSON: {"text": ...}; a text of another type reads as
// empty, as openai-go's decoding did).
func decodeTranscription(ct string, body []byte) (string, error) {
	mt, _, _ := mime.ParseMediaType(ct)
	if !strings.Contains(mt, "application/json") && !strings.HasSuffix(mt, "+json") {
		return "", fmt.Errorf("the endpoint answered content type %q, not the JSON transcription asked for (%.200q)", ct, body)
	}
	var v struct {
		Text openaihttp.LenientString `json:"text"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return "", fmt.Errorf("the endpoint's transcription is not the JSON expected (%.200q): %w", body, err)
	}
	return string(v.Text), nil
}
