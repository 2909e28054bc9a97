package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/internal/keepalive"
	"github.com/voicetest-go/voicetest/voicetest/internal/openaihttp"
)

// Environment variables the Client reads when no option overrides them.
const (
	// EnvAPIKey holds the bearer key of the endpoint.
	EnvAPIKey = "OPENAI_API_KEY"
	// EnvBaseURL holds the endpoint's base URL, e.g.
	// "http://localhost:11434/v1/" for Ollama.
	EnvBaseURL = "OPENAI_BASE_URL"
	// EnvModel holds the default chat model.
	EnvModel = "VOICETEST_LLM_MODEL"
)

// DefaultModel is the chat model used when neither WithModel nor
// VOICETEST_LLM_MODEL names one.
const DefaultModel = "gpt-4o-mini"

// DefaultBaseURL is OpenAI's API, used when neither WithBaseURL nor
// OPENAI_BASE_URL names another endpoint.
const DefaultBaseURL = "https://api.openai.com/v1/"

// DefaultProvider is the provider name cache keys carry unless WithProvider
// says otherwise.
const DefaultProvider = "openai"

// replayKey is the placeholder bearer key sent when no key is configured
// (to a local server, which ignores it); the cache never stores keys.
const replayKey = "voicetest-no-key"

// Option configures a Client.
type Option func(*config)

type config struct {
	baseURL, apiKey, model, provider string
	modelFromEnv                     bool // the model was not given in code
	cache                            *cache.Cache
	httpClient                       *http.Client
	getenv                           func(string) string
	maxRetries                       int
}

// WithBaseURL sets the endpoint's base URL (overriding OPENAI_BASE_URL), for
// Ollama, vLLM, LM Studio or any OpenAI-compatible server.
func WithBaseURL(u string) Option { return func(c *config) { c.baseURL = u } }

// WithAPIKey sets the bearer key (overriding OPENAI_API_KEY). The key is
// sent to the endpoint only; it never enters a cache key or file.
func WithAPIKey(key string) Option { return func(c *config) { c.apiKey = key } }

// WithModel sets the default model (overriding VOICETEST_LLM_MODEL).
// ChatRequest.Model still overrides it per request.
func WithModel(model string) Option { return func(c *config) { c.model = model } }

// WithProvider names the provider in cache keys (default "openai"). Give
// each distinct endpoint its own name ("ollama", "vllm") so that answers of
// different servers with the same model name never mix.
func WithProvider(name string) Option { return func(c *config) { c.provider = name } }

// WithCache sends every completion through c. Without a cache the Client
// calls the endpoint every time, as in cache mode off.
func WithCache(c *cache.Cache) Option { return func(cfg *config) { cfg.cache = c } }

// WithHTTPClient sets the HTTP client used to reach the endpoint. Without
// it the client keeps connections alive between calls, also inside a
// testing/synctest bubble such as voicetest.Scenario's: its transport runs
// no goroutine of its own while a request is out, and none that waits on
// an idle connection inside a bubble, so the bubble's virtual clock keeps
// running (see voicetest/internal/keepalive). A client given here is
// used as is.
func WithHTTPClient(h *http.Client) Option { return func(c *config) { c.httpClient = h } }

// WithMaxRetries sets how often a failed call is retried (default 2, as
// openai-go's, after a connection error or a 408, 409, 429 or 5xx answer).
// In cache mode replay retries are always off, since no call is made.
func WithMaxRetries(n int) Option { return func(c *config) { c.maxRetries = max(n, 0) } }

// withGetenv replaces os.Getenv (tests only).
func withGetenv(f func(string) string) Option { return func(c *config) { c.getenv = f } }

// Client answers chat completions from an OpenAI-compatible endpoint,
// behind the voicetest cache: it encodes the request, sends it and decodes
// the answer itself (as openai-go would, see wire.go and
// voicetest/internal/openaihttp). It implements voicetest.LLM and is safe
// for concurrent use.
type Client struct {
	ep       *openaihttp.Endpoint
	model    string
	modelEnv bool // the model was chosen by VOICETEST_LLM_MODEL (or its default)
	provider string
	baseURL  string
	keySet   bool
	cache    *cache.Cache
}

var _ voicetest.LLM = (*Client)(nil)

// New returns a Client configured by opts and the environment. It needs no
// key: a Client whose cache replays never calls the endpoint, and local
// servers need none. A call that must reach OpenAI itself without a key
// fails with an error saying to set OPENAI_API_KEY.
func New(opts ...Option) (*Client, error) {
	cfg := config{getenv: os.Getenv, maxRetries: -1}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.baseURL == "" {
		cfg.baseURL = cfg.getenv(EnvBaseURL)
	}
	if cfg.apiKey == "" {
		cfg.apiKey = cfg.getenv(EnvAPIKey)
	}
	if cfg.model == "" {
		// Chosen by the environment (its default when unset): a cache
		// miss says so, and its record command pins the value.
		cfg.modelFromEnv = true
		cfg.model = cfg.getenv(EnvModel)
	}
	if cfg.model == "" {
		cfg.model = DefaultModel
	}
	if cfg.provider == "" {
		cfg.provider = DefaultProvider
	}
	base := cfg.baseURL
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm: base URL %q is not an http(s) URL; set OPENAI_BASE_URL or WithBaseURL to e.g. \"http://localhost:11434/v1/\"", base)
	}
	key := cfg.apiKey
	if key == "" {
		key = replayKey
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
	ep, err := newEndpoint(h, base, key, retries)
	if err != nil {
		return nil, fmt.Errorf("llm: base URL %q: %w", base, err)
	}
	return &Client{
		ep:       ep,
		model:    cfg.model,
		modelEnv: cfg.modelFromEnv,
		provider: cfg.provider,
		baseURL:  cfg.baseURL,
		keySet:   cfg.apiKey != "",
		cache:    cfg.cache,
	}, nil
}

// ForTest returns a Client for the running test: its cache is
// cache.ForTest(t), so completions replay from the test package's
// testdata/voicetest/cache. A configuration error fails t.
func ForTest(t testing.TB, opts ...Option) *Client {
	t.Helper()
	c, err := New(append([]Option{WithCache(cache.ForTest(t))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Model returns the Client's default model.
func (c *Client) Model() string { return c.model }

// Complete answers req. The answer comes from the cache when it holds one
// (according to its mode); otherwise the endpoint is called and the answer
// stored. Invalid requests fail before any call, with an error saying what
// to fix.
//
// With req.Check set, only an answer that passes it is returned or stored:
// a failing answer is asked about once more (req.Retry), and the second
// answer, if it passes, is stored under req as first asked, so that a
// replay needs no retry. Two failing answers store nothing and return an
// error wrapping voicetest.ErrAnswerRejected that says what was wrong and
// how to ask again; an entry recorded before the check existed is not
// served either (see cache.DoJSONChecked).
func (c *Client) Complete(ctx context.Context, req voicetest.ChatRequest) (voicetest.ChatResponse, error) {
	if err := Validate(req); err != nil {
		return voicetest.ChatResponse{}, err
	}
	model := req.Model
	if model == "" {
		model = c.model
	}
	keyReq := req
	keyReq.Model = ""
	var first error // what was wrong with the first answer, if anything
	produce := func(ctx context.Context) (voicetest.ChatResponse, error) {
		resp, err := c.call(ctx, model, req)
		if err != nil || req.Check == nil {
			return resp, err
		}
		if first = req.Check(resp); first == nil {
			return resp, nil
		}
		return c.call(ctx, model, retryRequest(req, resp, first))
	}
	var check func(voicetest.ChatResponse) error
	if req.Check != nil {
		check = func(resp voicetest.ChatResponse) error {
			err := req.Check(resp)
			if err != nil && first != nil {
				return fmt.Errorf("%w: %v; after one retry: %w", voicetest.ErrAnswerRejected, first, err)
			}
			if err != nil {
				return fmt.Errorf("%w: %w", voicetest.ErrAnswerRejected, err)
			}
			return nil
		}
	}
	var resp voicetest.ChatResponse
	var err error
	if c.cache == nil {
		resp, err = produce(ctx)
		if err == nil && check != nil {
			err = check(resp)
		}
	} else {
		key := cache.Key{Kind: "llm", Provider: c.provider, Model: model,
			Fields: map[string]any{"request": keyReq}}
		if req.Model == "" && c.modelEnv {
			key.Env = map[string]string{"model": EnvModel}
		}
		resp, err = cache.DoJSONChecked(ctx, c.cache, key, produce, check)
	}
	if err != nil {
		err = fmt.Errorf("llm: %s chat completion (model %s): %w", c.provider, model, err)
		var miss *cache.MissError
		if errors.As(err, &miss) && !c.keySet {
			err = fmt.Errorf("%w\n\trecording calls the endpoint: set %s, or %s for a local OpenAI-compatible server", err, EnvAPIKey, EnvBaseURL)
		}
		return voicetest.ChatResponse{}, err
	}
	return resp, nil
}

// retryRequest asks req again after answer failed its check with problem:
// with req.Retry's messages appended, or RetryMessages'.
func retryRequest(req voicetest.ChatRequest, answer voicetest.ChatResponse, problem error) voicetest.ChatRequest {
	retry := req
	retry.Messages = append([]voicetest.ChatMessage(nil), req.Messages...)
	if req.Retry != nil {
		retry.Messages = append(retry.Messages, req.Retry(answer, problem)...)
	} else {
		retry.Messages = append(retry.Messages, RetryMessages(req, answer, problem)...)
	}
	return retry
}

// RetryMessages returns the messages that ask req again after answer was
// unusable for problem: the answer itself, then what was wrong with it,
// as a tool result for each of its tool calls (or as a user message when
// it called none, or called them malformed). It is what Complete sends
// when a ChatRequest has a Check but no Retry; callers that check answers
// themselves use it to ask again the same way.
func RetryMessages(req voicetest.ChatRequest, answer voicetest.ChatResponse, problem error) []voicetest.ChatMessage {
	how := "Answer again, correcting it."
	switch req.ToolChoice {
	case "", "auto", "none":
	case "required":
		how = "Call a tool again with a corrected answer."
	default:
		how = "Call " + req.ToolChoice + " again with a corrected answer."
	}
	msg := fmt.Sprintf("Your answer could not be used: %v. %s", problem, how)
	am := answer.Message
	usable := len(am.ToolCalls) > 0
	for _, tc := range am.ToolCalls {
		if tc.ID == "" || tc.Name == "" || (len(tc.Arguments) > 0 && !json.Valid(tc.Arguments)) {
			usable = false
		}
	}
	var out []voicetest.ChatMessage
	if !usable {
		if strings.TrimSpace(am.Content) != "" {
			out = append(out, voicetest.ChatMessage{Role: voicetest.ChatAssistant, Content: am.Content})
		}
		return append(out, voicetest.ChatMessage{Role: voicetest.ChatUser, Content: msg})
	}
	out = append(out, voicetest.ChatMessage{Role: voicetest.ChatAssistant, Content: am.Content, ToolCalls: am.ToolCalls})
	for _, tc := range am.ToolCalls {
		out = append(out, voicetest.ChatMessage{Role: voicetest.ChatTool, ToolCallID: tc.ID, Content: msg})
	}
	return out
}

// Validate checks a chat request the way an OpenAI-compatible endpoint
// would, so that a bad request fails before it reaches the cache or the
// network.
func Validate(req voicetest.ChatRequest) error {
	if len(req.Messages) == 0 {
		return errors.New("llm: chat request has no messages; add at least one user message")
	}
	calls := map[string]bool{}
	for i, m := range req.Messages {
		if err := validateAudio(i, m); err != nil {
			return err
		}
		switch m.Role {
		case voicetest.ChatSystem, voicetest.ChatUser:
			if len(m.ToolCalls) > 0 || m.ToolCallID != "" {
				return fmt.Errorf("llm: message %d (%s) carries tool calls or a tool call id; only assistant messages call tools and only tool messages answer them", i, m.Role)
			}
		case voicetest.ChatAssistant:
			if m.Content == "" && len(m.ToolCalls) == 0 {
				return fmt.Errorf("llm: message %d (assistant) has neither content nor tool calls", i)
			}
			for j, tc := range m.ToolCalls {
				if tc.ID == "" || tc.Name == "" {
					return fmt.Errorf("llm: message %d tool call %d needs an ID and a Name", i, j)
				}
				if len(tc.Arguments) > 0 && !json.Valid(tc.Arguments) {
					return fmt.Errorf("llm: message %d tool call %q has arguments that are not valid JSON", i, tc.Name)
				}
				calls[tc.ID] = true
			}
		case voicetest.ChatTool:
			if m.ToolCallID == "" {
				return fmt.Errorf("llm: message %d (tool) has no ToolCallID; set it to the ID of the call it answers", i)
			}
			if !calls[m.ToolCallID] {
				return fmt.Errorf("llm: message %d (tool) answers call %q, which no earlier assistant message made", i, m.ToolCallID)
			}
		default:
			return fmt.Errorf("llm: message %d has role %q; use system, user, assistant or tool", i, m.Role)
		}
	}
	names := map[string]bool{}
	for i, t := range req.Tools {
		if t.Name == "" || len(t.Name) > 64 || strings.IndexFunc(t.Name, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
		}) >= 0 {
			return fmt.Errorf("llm: tool %d is named %q; names are 1 to 64 letters, digits, '_' or '-'", i, t.Name)
		}
		if names[t.Name] {
			return fmt.Errorf("llm: tool %q is declared twice", t.Name)
		}
		names[t.Name] = true
		if len(t.Parameters) > 0 {
			if err := jsonObject(t.Parameters); err != nil {
				return fmt.Errorf("llm: tool %q parameters: %w", t.Name, err)
			}
		}
	}
	switch req.ToolChoice {
	case "", "auto", "none", "required":
		if req.ToolChoice != "" && len(req.Tools) == 0 {
			return fmt.Errorf("llm: tool choice %q needs tools; declare them in ChatRequest.Tools", req.ToolChoice)
		}
	default:
		if !names[req.ToolChoice] {
			known := slices.Sorted(func(yield func(string) bool) {
				for n := range names {
					if !yield(n) {
						return
					}
				}
			})
			return fmt.Errorf("llm: tool choice %q is not a declared tool (declared: %s); use auto, none, required or a tool's name", req.ToolChoice, strings.Join(known, ", "))
		}
	}
	if len(req.JSONSchema) > 0 {
		if err := jsonObject(req.JSONSchema); err != nil {
			return fmt.Errorf("llm: JSON schema: %w", err)
		}
	} else if req.SchemaName != "" {
		return fmt.Errorf("llm: SchemaName %q is set without a JSONSchema", req.SchemaName)
	}
	if req.Temperature != nil && (*req.Temperature < 0 || *req.Temperature > 2) {
		return fmt.Errorf("llm: temperature %g is outside [0, 2]", *req.Temperature)
	}
	if req.MaxTokens < 0 {
		return fmt.Errorf("llm: MaxTokens %d is negative; use 0 for the model's default", req.MaxTokens)
	}
	return nil
}

func jsonObject(raw json.RawMessage) error {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return fmt.Errorf("must be a JSON object (got %.60q)", string(raw))
	}
	return nil
}

// schemaName returns the name sent with a JSON schema.
func schemaName(req voicetest.ChatRequest) string {
	if req.SchemaName != "" {
		return req.SchemaName
	}
	return "response"
}

// call sends req to the endpoint.
func (c *Client) call(ctx context.Context, model string, req voicetest.ChatRequest) (voicetest.ChatResponse, error) {
	if !c.keySet && c.baseURL == "" {
		return voicetest.ChatResponse{}, errors.New("OPENAI_API_KEY is not set: set it to call OpenAI, or set OPENAI_BASE_URL (or WithBaseURL) to use a local OpenAI-compatible server")
	}
	body, err := encodeRequest(model, req)
	if err != nil {
		return voicetest.ChatResponse{}, err
	}
	res, _, err := c.ep.Post(ctx, body, "")
	if err != nil {
		return voicetest.ChatResponse{}, err
	}
	return decodeCompletion(res)
}
