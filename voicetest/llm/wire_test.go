package llm

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// TestEncodeRequestMatchesOpenAIGo: the Client's own encoding of a chat
// request is the JSON openai-go's ChatCompletionNewParams encodes to (the
// Client's encoding before it wrote its own), for every kind of message
// and option.
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
	for i, req := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			require.NoError(t, Validate(req))
			params, err := openaiGoParams("m", req)
			require.NoError(t, err)
			want, err := json.Marshal(params)
			require.NoError(t, err)
			got, err := encodeRequest("m", req)
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(got))
		})
	}
}

// TestDecodeCompletionIsLenient: like openai-go, a field of an unexpected
// type reads as empty instead of failing the call; arguments sent as an
// object (some OpenAI-compatible servers do) are taken as they are.
func TestDecodeCompletionIsLenient(t *testing.T) {
	got, err := decodeCompletion([]byte(`{"model":7,"choices":[{"finish_reason":null,"message":{"content":["odd"],"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{"a":1}}}]}}]}`))
	require.NoError(t, err)
	assert.Empty(t, got.Model)
	assert.Empty(t, got.Message.Content)
	require.Len(t, got.Message.ToolCalls, 1)
	assert.JSONEq(t, `{"a":1}`, string(got.Message.ToolCalls[0].Arguments))

	got, err = decodeCompletion([]byte(`{"id":"x","object":"chat.completion","model":"gpt","usage":{"total_tokens":3},"choices":[{"index":0,"finish_reason":"stop","logprobs":null,"message":{"role":"assistant","content":"Hello \u00e9\n","refusal":null,"annotations":[]}}]}`))
	require.NoError(t, err)
	assert.Equal(t, voicetest.ChatResponse{Message: voicetest.ChatMessage{Role: voicetest.ChatAssistant, Content: "Hello é\n"}, FinishReason: "stop", Model: "gpt"}, got)

	_, err = decodeCompletion([]byte(`{"choices":[`))
	require.ErrorContains(t, err, "not the JSON expected")
}

// openaiGoParams is how the Client built its request with openai-go's
// types before it encoded requests itself (wire.go); kept to check that
// the two encode alike.
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
				return p, fmt.Errorf("llm: tool %q parameters: %w", t.Name, err)
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
			return p, fmt.Errorf("llm: JSON schema: %w", err)
		}
		p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: schemaName(req), Schema: schema},
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
