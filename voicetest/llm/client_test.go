package llm

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
)

func noEnv(string) string { return "" }

// newClient returns a Client on srv with a fresh cache in mode m.
func newClient(t *testing.T, srv *fakeopenai.Server, m cache.Mode, opts ...Option) (*Client, *cache.Cache) {
	t.Helper()
	c, err := cache.Open(t.TempDir(), cache.WithMode(m))
	require.NoError(t, err)
	base := []Option{withGetenv(noEnv), WithCache(c), WithModel("gpt-4o-mini"), WithMaxRetries(0)}
	if srv != nil {
		base = append(base, WithBaseURL(srv.BaseURL()), WithAPIKey(srv.APIKey()))
	}
	cl, err := New(append(base, opts...)...)
	require.NoError(t, err)
	return cl, c
}

var weatherTool = voicetest.ToolSpec{
	Name:        "get_weather",
	Description: "Weather for a city",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
}

func TestCompleteForcedToolRequestShape(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.ChatReply{ToolCalls: []fakeopenai.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}})
	cl, _ := newClient(t, srv, cache.Off)
	temp, seed := 0.0, int64(7)
	resp, err := cl.Complete(t.Context(), voicetest.ChatRequest{
		Messages: []voicetest.ChatMessage{
			{Role: voicetest.ChatSystem, Content: "You are terse."},
			{Role: voicetest.ChatUser, Content: "Weather in Paris?"},
		},
		Tools:       []voicetest.ToolSpec{weatherTool},
		ToolChoice:  "get_weather",
		Temperature: &temp,
		Seed:        &seed,
		MaxTokens:   50,
	})
	require.NoError(t, err)
	assert.Equal(t, "tool_calls", resp.FinishReason)
	require.Len(t, resp.Message.ToolCalls, 1)
	assert.Equal(t, "call_1", resp.Message.ToolCalls[0].ID)
	assert.Equal(t, "get_weather", resp.Message.ToolCalls[0].Name)
	assert.JSONEq(t, `{"city":"Paris"}`, string(resp.Message.ToolCalls[0].Arguments))

	reqs := srv.RequestsTo("/v1/chat/completions")
	require.Len(t, reqs, 1)
	assert.Equal(t, http.StatusOK, reqs[0].Status)
	var body map[string]any
	require.NoError(t, json.Unmarshal(reqs[0].Body, &body))
	assert.Equal(t, "gpt-4o-mini", body["model"])
	assert.Equal(t, map[string]any{"type": "function", "function": map[string]any{"name": "get_weather"}}, body["tool_choice"])
	assert.Equal(t, []any{map[string]any{"type": "function", "function": map[string]any{
		"name": "get_weather", "description": "Weather for a city",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}},
	}}}, body["tools"])
	assert.Equal(t, []any{
		map[string]any{"role": "system", "content": "You are terse."},
		map[string]any{"role": "user", "content": "Weather in Paris?"},
	}, body["messages"])
	assert.Equal(t, 0.0, body["temperature"])
	assert.Equal(t, 7.0, body["seed"])
	assert.Equal(t, 50.0, body["max_tokens"])
}

func TestCompleteToolFollowUpAndJSONSchema(t *testing.T) {
	srv := fakeopenai.New(t)
	var got fakeopenai.ChatRequest
	srv.HandleChat(func(r fakeopenai.ChatRequest) (fakeopenai.ChatReply, error) {
		got = r
		return fakeopenai.ChatReply{Content: `{"summary":"sunny","ok":true}`}, nil
	})
	cl, _ := newClient(t, srv, cache.Off)
	resp, err := cl.Complete(t.Context(), voicetest.ChatRequest{
		Model: "llama3.2",
		Messages: []voicetest.ChatMessage{
			{Role: voicetest.ChatUser, Content: "Weather in Paris?"},
			{Role: voicetest.ChatAssistant, ToolCalls: []voicetest.ToolCall{{ID: "call_9", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}},
			{Role: voicetest.ChatTool, ToolCallID: "call_9", Content: `{"sky":"clear"}`},
		},
		Tools:      []voicetest.ToolSpec{weatherTool},
		ToolChoice: "none",
		JSONSchema: json.RawMessage(`{"type":"object","properties":{"summary":{"type":"string"},"ok":{"type":"boolean"}}}`),
		SchemaName: "weather_summary",
	})
	require.NoError(t, err)
	assert.Equal(t, `{"summary":"sunny","ok":true}`, resp.Message.Content)
	assert.Equal(t, voicetest.ChatAssistant, resp.Message.Role)
	assert.Equal(t, "stop", resp.FinishReason)

	assert.Equal(t, "llama3.2", got.Model)
	assert.Equal(t, "none", got.ToolChoice)
	require.Len(t, got.Messages, 3)
	assert.Equal(t, []fakeopenai.ToolCall{{ID: "call_9", Name: "get_weather", Arguments: `{"city":"Paris"}`}}, got.Messages[1].ToolCalls)
	assert.Equal(t, "call_9", got.Messages[2].ToolCallID)
	assert.Equal(t, `{"sky":"clear"}`, got.Messages[2].Content)
	require.NotNil(t, got.ResponseFormat)
	assert.Equal(t, "json_schema", got.ResponseFormat.Type)
	assert.Equal(t, "weather_summary", got.ResponseFormat.SchemaName)
	assert.JSONEq(t, `{"type":"object","properties":{"summary":{"type":"string"},"ok":{"type":"boolean"}}}`, string(got.ResponseFormat.Schema))
}

func TestCompleteRecordsThenReplaysWithoutServer(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.ChatReply{Content: "Hello there."})
	dir := t.TempDir()
	rec, err := cache.Open(dir, cache.WithMode(cache.Record))
	require.NoError(t, err)
	cl, err := New(withGetenv(noEnv), WithCache(rec), WithBaseURL(srv.BaseURL()), WithAPIKey(srv.APIKey()))
	require.NoError(t, err)
	req := voicetest.ChatRequest{Messages: []voicetest.ChatMessage{{Role: voicetest.ChatUser, Content: "Say hello."}}}
	first, err := cl.Complete(t.Context(), req)
	require.NoError(t, err)
	assert.Equal(t, "Hello there.", first.Message.Content)

	// Replay: no key, no base URL, nothing to call. The answer must come
	// from disk; the server's queue is empty, so a call would fail.
	rep, err := cache.Open(dir, cache.WithMode(cache.Replay))
	require.NoError(t, err)
	offline, err := New(withGetenv(noEnv), WithCache(rep))
	require.NoError(t, err)
	again, err := offline.Complete(t.Context(), req)
	require.NoError(t, err)
	assert.Equal(t, first, again)
	assert.Len(t, srv.RequestsTo("/v1/chat/completions"), 1)

	// A different request misses, with the cache's typed error.
	req.Messages[0].Content = "Say goodbye."
	_, err = offline.Complete(t.Context(), req)
	var miss *cache.MissError
	require.ErrorAs(t, err, &miss)
}

func TestCompleteNoKeyForOpenAI(t *testing.T) {
	cl, _ := newClient(t, nil, cache.Record)
	_, err := cl.Complete(t.Context(), voicetest.ChatRequest{Messages: []voicetest.ChatMessage{{Role: voicetest.ChatUser, Content: "hi"}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "OPENAI_API_KEY")
}

func TestEnvironmentConfiguresClient(t *testing.T) {
	srv := fakeopenai.New(t)
	var model string
	srv.HandleChat(func(r fakeopenai.ChatRequest) (fakeopenai.ChatReply, error) {
		model = r.Model
		return fakeopenai.ChatReply{Content: "ok"}, nil
	})
	env := map[string]string{EnvBaseURL: srv.BaseURL(), EnvAPIKey: srv.APIKey(), EnvModel: "qwen2.5"}
	cl, err := New(withGetenv(func(k string) string { return env[k] }))
	require.NoError(t, err)
	assert.Equal(t, "qwen2.5", cl.Model())
	_, err = cl.Complete(t.Context(), voicetest.ChatRequest{Messages: []voicetest.ChatMessage{{Role: voicetest.ChatUser, Content: "hi"}}})
	require.NoError(t, err)
	assert.Equal(t, "qwen2.5", model)

	// Options override the environment.
	cl, err = New(withGetenv(func(k string) string { return env[k] }), WithModel("other"))
	require.NoError(t, err)
	assert.Equal(t, "other", cl.Model())

	_, err = New(withGetenv(noEnv), WithBaseURL("localhost:11434"))
	require.ErrorContains(t, err, "not an http(s) URL")
}

func TestEndpointErrorsAreReported(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.ChatReply{Error: &fakeopenai.APIError{Status: 400, Type: "invalid_request_error", Message: "model not found"}})
	cl, c := newClient(t, srv, cache.Record)
	_, err := cl.Complete(t.Context(), voicetest.ChatRequest{Messages: []voicetest.ChatMessage{{Role: voicetest.ChatUser, Content: "hi"}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "model not found")
	// Nothing was stored for the failed call.
	rep, err := cache.Open(c.Dir(), cache.WithMode(cache.Replay))
	require.NoError(t, err)
	off, err := New(withGetenv(noEnv), WithCache(rep))
	require.NoError(t, err)
	_, err = off.Complete(t.Context(), voicetest.ChatRequest{Messages: []voicetest.ChatMessage{{Role: voicetest.ChatUser, Content: "hi"}}})
	var miss *cache.MissError
	assert.True(t, errors.As(err, &miss), "want a miss, got %v", err)
}

func TestValidateRejectsBadRequests(t *testing.T) {
	user := voicetest.ChatMessage{Role: voicetest.ChatUser, Content: "hi"}
	hot := 3.0
	for _, tc := range []struct {
		name string
		req  voicetest.ChatRequest
		want string
	}{
		{"no messages", voicetest.ChatRequest{}, "no messages"},
		{"bad role", voicetest.ChatRequest{Messages: []voicetest.ChatMessage{{Role: "robot", Content: "x"}}}, `role "robot"`},
		{"orphan tool message", voicetest.ChatRequest{Messages: []voicetest.ChatMessage{user, {Role: voicetest.ChatTool, ToolCallID: "c1", Content: "x"}}}, "no earlier assistant"},
		{"empty assistant", voicetest.ChatRequest{Messages: []voicetest.ChatMessage{{Role: voicetest.ChatAssistant}}}, "neither content nor tool calls"},
		{"choice without tools", voicetest.ChatRequest{Messages: []voicetest.ChatMessage{user}, ToolChoice: "required"}, "needs tools"},
		{"unknown forced tool", voicetest.ChatRequest{Messages: []voicetest.ChatMessage{user}, Tools: []voicetest.ToolSpec{weatherTool}, ToolChoice: "book"}, "declared: get_weather"},
		{"bad tool name", voicetest.ChatRequest{Messages: []voicetest.ChatMessage{user}, Tools: []voicetest.ToolSpec{{Name: "get weather"}}}, "names are 1 to 64"},
		{"duplicate tool", voicetest.ChatRequest{Messages: []voicetest.ChatMessage{user}, Tools: []voicetest.ToolSpec{weatherTool, weatherTool}}, "declared twice"},
		{"parameters not object", voicetest.ChatRequest{Messages: []voicetest.ChatMessage{user}, Tools: []voicetest.ToolSpec{{Name: "t", Parameters: json.RawMessage(`[1]`)}}}, "JSON object"},
		{"schema not object", voicetest.ChatRequest{Messages: []voicetest.ChatMessage{user}, JSONSchema: json.RawMessage(`"x"`)}, "JSON schema"},
		{"schema name alone", voicetest.ChatRequest{Messages: []voicetest.ChatMessage{user}, SchemaName: "v"}, "without a JSONSchema"},
		{"temperature", voicetest.ChatRequest{Messages: []voicetest.ChatMessage{user}, Temperature: &hot}, "temperature 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(tc.req)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.True(t, strings.HasPrefix(err.Error(), "llm: "), err.Error())
		})
	}
}

func TestFakeRejectsScriptWithBadArguments(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.ChatReply{ToolCalls: []fakeopenai.ToolCall{{Name: "get_weather", Arguments: `{"city":`}}})
	cl, _ := newClient(t, srv, cache.Off)
	_, err := cl.Complete(t.Context(), voicetest.ChatRequest{
		Messages: []voicetest.ChatMessage{{Role: voicetest.ChatUser, Content: "hi"}},
		Tools:    []voicetest.ToolSpec{weatherTool},
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not JSON")
	assert.Contains(t, err.Error(), "500")
}

func TestDecodeCompletionChecksModelOutput(t *testing.T) {
	decode := func(body string) []byte { return []byte(body) }
	_, err := decodeCompletion(decode(`{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":"}}]}}]}`))
	require.ErrorContains(t, err, "not valid JSON")

	_, err = decodeCompletion(decode(`{"choices":[]}`))
	require.ErrorContains(t, err, "no choices")

	_, err = decodeCompletion(decode(`{"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"","refusal":"I can't help with that."}}]}`))
	require.ErrorContains(t, err, "refused")

	got, err := decodeCompletion(decode(`{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":""}}]}}]}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{}`, string(got.Message.ToolCalls[0].Arguments))
}

// BenchmarkCompleteCacheHit answers a completion from a replaying cache.
func BenchmarkCompleteCacheHit(b *testing.B) {
	srv := fakeopenai.New(b)
	srv.QueueChat(fakeopenai.ChatReply{ToolCalls: []fakeopenai.ToolCall{{ID: "c1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}})
	dir := b.TempDir()
	rec, err := cache.Open(dir, cache.WithMode(cache.Record))
	require.NoError(b, err)
	req := voicetest.ChatRequest{
		Messages:   []voicetest.ChatMessage{{Role: voicetest.ChatUser, Content: "Weather in Paris?"}},
		Tools:      []voicetest.ToolSpec{weatherTool},
		ToolChoice: "get_weather",
	}
	cl, err := New(withGetenv(noEnv), WithCache(rec), WithBaseURL(srv.BaseURL()), WithAPIKey(srv.APIKey()))
	require.NoError(b, err)
	_, err = cl.Complete(b.Context(), req)
	require.NoError(b, err)
	rep, err := cache.Open(dir, cache.WithMode(cache.Replay))
	require.NoError(b, err)
	cl, err = New(withGetenv(noEnv), WithCache(rep))
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cl.Complete(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
}
