package openaioracle_test

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/internal/keepalive"
	"github.com/voicetest-go/voicetest/voicetest/llm"
)

var weatherTool = voicetest.ToolSpec{
	Name:        "get_weather",
	Description: "Weather for a city",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
}

// completion is the answer the capture server gives to a chat request.
const completion = `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"ok"}}]}`

// TestEncodeRequestMatchesOpenAIGo: the chat request voicetest/llm's
// Client sends (its own encoding, llm/wire.go) is the JSON openai-go's
// ChatCompletionNewParams encodes to (the Client's encoding before it
// wrote its own), for every kind of message and option; and the request
// openai-go sends for those parameters is, on the wire, the Client's
// (method, path, query, headers but the User-Agent, openai-go's telemetry
// and the length, the same JSON body).
func TestEncodeRequestMatchesOpenAIGo(t *testing.T) {
	temp, seed := 0.3, int64(7)
	audio := []voicetest.InputAudio{{Label: "Turn 1:", Audio: pcm.Chunk{Rate: 8000, Samples: []int16{1, -2, 3}}}, {Audio: pcm.Chunk{Rate: 16000, Samples: []int16{4}}}}
	cases := []voicetest.ChatRequest{
		{Messages: []voicetest.ChatMessage{{Role: voicetest.ChatUser, Content: "hi <there> & \"you\"\n\u2028"}}},
		{
			Messages: []voicetest.ChatMessage{
				{Role: voicetest.ChatSystem, Content: "You are terse."},
				{Role: voicetest.ChatUser, Content: "Weather in Paris?"},
				{Role: voicetest.ChatAssistant, ToolCalls: []voicetest.ToolCall{{ID: "c1", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Paris"}`)}, {ID: "c2", Name: "noargs"}}},
				{Role: voicetest.ChatTool, ToolCallID: "c1", Content: "sunny"},
				{Role: voicetest.ChatTool, ToolCallID: "c2", Content: ""},
				{Role: voicetest.ChatAssistant, Content: "It is sunny.", ToolCalls: []voicetest.ToolCall{{ID: "c3", Name: "get_weather", Arguments: json.RawMessage(`{}`)}}},
				{Role: voicetest.ChatTool, ToolCallID: "c3", Content: "still sunny"},
				{Role: voicetest.ChatAssistant, Content: "Still sunny."},
				{Role: voicetest.ChatUser, Content: ""},
			},
			Tools:       []voicetest.ToolSpec{weatherTool, {Name: "noargs"}, {Name: "described", Description: "d", Parameters: json.RawMessage(`{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"number"}}}`)}},
			ToolChoice:  "get_weather",
			Temperature: &temp,
			Seed:        &seed,
			MaxTokens:   50,
		},
		{Messages: []voicetest.ChatMessage{{Role: voicetest.ChatUser, Content: "x"}}, Tools: []voicetest.ToolSpec{weatherTool}, ToolChoice: "required"},
		{Messages: []voicetest.ChatMessage{{Role: voicetest.ChatUser, Content: "x"}}, Tools: []voicetest.ToolSpec{weatherTool}, ToolChoice: "auto"},
		{Messages: []voicetest.ChatMessage{{Role: voicetest.ChatUser, Content: "x"}}, Tools: []voicetest.ToolSpec{weatherTool}, ToolChoice: "none"},
		{Messages: []voicetest.ChatMessage{{Role: voicetest.ChatUser, Content: "x"}}, JSONSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)},
		{Messages: []voicetest.ChatMessage{{Role: voicetest.ChatUser, Content: "x"}}, JSONSchema: json.RawMessage(`{"type":"object"}`), SchemaName: "verdict"},
		{Messages: []voicetest.ChatMessage{{Role: voicetest.ChatUser, Content: "zero"}}, Temperature: new(float64), Seed: new(int64)},
		{Messages: []voicetest.ChatMessage{{Role: voicetest.ChatUser, Content: "Listen:", Audio: audio}, {Role: voicetest.ChatUser, Audio: audio[1:]}}},
	}
	srv := newCaptureServer(t, func(_ int, _ captured, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(completion))
	})
	base := srv.URL + "/v1/"
	cl, err := llm.New(llm.WithBaseURL(base), llm.WithAPIKey(oracleKey), llm.WithModel("m"), llm.WithMaxRetries(0))
	require.NoError(t, err)
	api := oracleClient(base, 0, keepalive.NewClient())
	for i, req := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			require.NoError(t, llm.Validate(req))
			params, err := openaiGoParams("m", req)
			require.NoError(t, err)
			want, err := json.Marshal(params)
			require.NoError(t, err)
			_, err = api.Chat.Completions.New(t.Context(), params)
			require.NoError(t, err)
			oracle := srv.take()
			got, err := cl.Complete(t.Context(), req)
			require.NoError(t, err)
			assert.Equal(t, "ok", got.Message.Content)
			ours := srv.take()
			require.Len(t, oracle, 1)
			require.Len(t, ours, 1)
			assert.JSONEq(t, string(want), string(ours[0].body), "the Client's body vs openai-go's encoding")
			assert.Equal(t, "/v1/chat/completions", ours[0].path)
			assert.Equal(t, oracle[0].method, ours[0].method, "method")
			assert.Equal(t, oracle[0].path, ours[0].path, "path")
			assert.Equal(t, oracle[0].query, ours[0].query, "query")
			// The lengths differ where the Client's encoding/json escapes
			// <, > and & in strings and openai-go's encoder does not: the
			// same JSON (compared above), sent with its own length.
			oh, oursH := headersThatMatter(oracle[0].header), headersThatMatter(ours[0].header)
			oh.Del("Content-Length")
			oursH.Del("Content-Length")
			assert.Equal(t, oh, oursH, "headers")
			assert.Equal(t, fmt.Sprint(len(ours[0].body)), ours[0].header.Get("Content-Length"), "the body is sent with its length")
		})
	}
}

// openaiGoParams is how the Client built its request with openai-go's
// types before it encoded requests itself (llm/wire.go); kept to check
// that the two encode alike.
func openaiGoParams(model string, req voicetest.ChatRequest) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{Model: shared.ChatModel(model)}
	for _, m := range req.Messages {
		switch m.Role {
		case voicetest.ChatSystem:
			p.Messages = append(p.Messages, openai.SystemMessage(m.Content))
		case voicetest.ChatUser:
			if len(m.Audio) > 0 {
				parts, err := openaiGoAudioParts(m)
				if err != nil {
					return p, err
				}
				p.Messages = append(p.Messages, openai.UserMessage(parts))
				continue
			}
			p.Messages = append(p.Messages, openai.UserMessage(m.Content))
		case voicetest.ChatTool:
			p.Messages = append(p.Messages, openai.ToolMessage(m.Content, m.ToolCallID))
		case voicetest.ChatAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if m.Content != "" {
				a.Content.OfString = openai.String(m.Content)
			}
			for _, tc := range m.ToolCalls {
				args := string(tc.Arguments)
				if args == "" {
					args = "{}"
				}
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       tc.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args},
					}})
			}
			p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		}
	}
	for _, t := range req.Tools {
		fd := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			fd.Description = openai.String(t.Description)
		}
		if len(t.Parameters) > 0 {
			var params map[string]any
			if err := json.Unmarshal(t.Parameters, &params); err != nil {
				return p, fmt.Errorf("tool %q parameters: %w", t.Name, err)
			}
			fd.Parameters = params
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fd))
	}
	switch req.ToolChoice {
	case "":
	case "auto", "none", "required":
		p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String(req.ToolChoice)}
	default:
		p.ToolChoice = openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: req.ToolChoice})
	}
	if len(req.JSONSchema) > 0 {
		var schema map[string]any
		if err := json.Unmarshal(req.JSONSchema, &schema); err != nil {
			return p, fmt.Errorf("JSON schema: %w", err)
		}
		p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				// The name the Client sends: the request's, else "response".
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: cmp.Or(req.SchemaName, "response"), Schema: schema},
			}}
	}
	if req.Temperature != nil {
		p.Temperature = openai.Float(*req.Temperature)
	}
	if req.Seed != nil {
		p.Seed = openai.Int(*req.Seed)
	}
	if req.MaxTokens > 0 {
		p.MaxTokens = openai.Int(int64(req.MaxTokens))
	}
	return p, nil
}

func openaiGoAudioParts(m voicetest.ChatMessage) ([]openai.ChatCompletionContentPartUnionParam, error) {
	var parts []openai.ChatCompletionContentPartUnionParam
	if m.Content != "" {
		parts = append(parts, openai.TextContentPart(m.Content))
	}
	for _, a := range m.Audio {
		if a.Label != "" {
			parts = append(parts, openai.TextContentPart(a.Label))
		}
		wav, err := a.WAV()
		if err != nil {
			return nil, err
		}
		parts = append(parts, openai.InputAudioContentPart(openai.ChatCompletionContentPartInputAudioInputAudioParam{
			Data: base64.StdEncoding.EncodeToString(wav), Format: "wav"}))
	}
	return parts, nil
}
