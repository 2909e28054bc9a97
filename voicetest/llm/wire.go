package llm

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/internal/openaihttp"
)

// The Chat Completions request and response, as far as the Client uses
// them (platform.openai.com/docs/api-reference/chat/create). The Client
// encodes and decodes them itself with encoding/json, which costs a
// fraction of openai-go's reflective parameter and result types, and
// sends them itself (voicetest/internal/openaihttp: headers, retries,
// errors, as openai-go did). wire_test.go checks that a request encodes to the same JSON as
// openai-go's ChatCompletionNewParams.

type wireRequest struct {
	Model          string              `json:"model"`
	Messages       []wireMessage       `json:"messages"`
	Tools          []wireTool          `json:"tools,omitempty"`
	ToolChoice     any                 `json:"tool_choice,omitempty"`
	ResponseFormat *wireResponseFormat `json:"response_format,omitempty"`
	Temperature    *float64            `json:"temperature,omitempty"`
	Seed           *int64              `json:"seed,omitempty"`
	MaxTokens      int                 `json:"max_tokens,omitempty"`
}

type wireMessage struct {
	Role string `json:"role"`
	// Content is a string, or []wirePart for a user message with audio;
	// nil (omitted) for an assistant message that only calls tools.
	Content    any            `json:"content,omitempty"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type wirePart struct {
	Type       string          `json:"type"`
	Text       *string         `json:"text,omitempty"`
	InputAudio *wireInputAudio `json:"input_audio,omitempty"`
}

type wireInputAudio struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string          `json:"type"`
	Function wireFunctionDef `json:"function"`
}

type wireFunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type wireNamedToolChoice struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

type wireResponseFormat struct {
	Type       string `json:"type"`
	JSONSchema struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
	} `json:"json_schema"`
}

// encodeRequest returns the JSON body of a Chat Completions request for
// req (validated) with model.
func encodeRequest(model string, req voicetest.ChatRequest) ([]byte, error) {
	w := wireRequest{Model: model, Messages: make([]wireMessage, 0, len(req.Messages)),
		Temperature: req.Temperature, Seed: req.Seed, MaxTokens: max(req.MaxTokens, 0)}
	for _, m := range req.Messages {
		wm := wireMessage{Role: string(m.Role)}
		switch m.Role {
		case voicetest.ChatSystem:
			wm.Content = m.Content
		case voicetest.ChatUser:
			if len(m.Audio) > 0 {
				parts, err := audioParts(m)
				if err != nil {
					return nil, err
				}
				wm.Content = parts
			} else {
				wm.Content = m.Content
			}
		case voicetest.ChatTool:
			wm.Content, wm.ToolCallID = m.Content, m.ToolCallID
		case voicetest.ChatAssistant:
			if m.Content != "" {
				wm.Content = m.Content
			}
			for _, tc := range m.ToolCalls {
				args := string(tc.Arguments)
				if args == "" {
					args = "{}"
				}
				wm.ToolCalls = append(wm.ToolCalls, wireToolCall{ID: tc.ID, Type: "function",
					Function: wireFunction{Name: tc.Name, Arguments: args}})
			}
		default:
			continue // Validate refuses other roles
		}
		w.Messages = append(w.Messages, wm)
	}
	for _, t := range req.Tools {
		w.Tools = append(w.Tools, wireTool{Type: "function",
			Function: wireFunctionDef{Name: t.Name, Description: t.Description, Parameters: t.Parameters}})
	}
	switch req.ToolChoice {
	case "":
	case "auto", "none", "required":
		w.ToolChoice = req.ToolChoice
	default:
		var c wireNamedToolChoice
		c.Type, c.Function.Name = "function", req.ToolChoice
		w.ToolChoice = c
	}
	if len(req.JSONSchema) > 0 {
		f := &wireResponseFormat{Type: "json_schema"}
		f.JSONSchema.Name, f.JSONSchema.Schema = schemaName(req), req.JSONSchema
		w.ResponseFormat = f
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("llm: encoding the request: %w", err)
	}
	return b, nil
}

// audioParts returns the content parts of a user message with input
// audio, in the shape of OpenAI's Chat Completions API for audio-capable
// models (platform.openai.com/docs/api-reference/chat/create, user message
// content parts; the audio guide, platform.openai.com/docs/guides/audio):
// the message's text as a "text" part, then for each clip its label as a
// "text" part and the clip as an "input_audio" part,
// {"data": <base64 WAV>, "format": "wav"}.
func audioParts(m voicetest.ChatMessage) ([]wirePart, error) {
	var parts []wirePart
	if m.Content != "" {
		parts = append(parts, wirePart{Type: "text", Text: &m.Content})
	}
	for i, a := range m.Audio {
		if a.Label != "" {
			parts = append(parts, wirePart{Type: "text", Text: &a.Label})
		}
		wav, err := a.WAV()
		if err != nil {
			return nil, fmt.Errorf("llm: input audio %d (%q): %w", i, a.Label, err)
		}
		parts = append(parts, wirePart{Type: "input_audio",
			InputAudio: &wireInputAudio{Data: base64.StdEncoding.EncodeToString(wav), Format: "wav"}})
	}
	return parts, nil
}

// wireCompletion is the part of a chat completion the Client reads, with
// the fields' types as OpenAI sends them; lenientCompletion is the same
// taking a field of an unexpected type as empty, as openai-go does, for
// the completions the first cannot decode.
type wireCompletion = completionOf[string, string]

type lenientCompletion = completionOf[lenientString, argsString]

type completionOf[S, A ~string] struct {
	Model   S `json:"model"`
	Choices []struct {
		FinishReason S `json:"finish_reason"`
		Message      struct {
			Content   S `json:"content"`
			Refusal   S `json:"refusal"`
			ToolCalls []struct {
				ID       S `json:"id"`
				Type     S `json:"type"`
				Function struct {
					Name      S `json:"name"`
					Arguments A `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
	} `json:"choices"`
}

// lenientString decodes a JSON string; null or a value of another type
// decodes as "".
type lenientString = openaihttp.LenientString

// argsString is a tool call's arguments: a JSON string holding the
// arguments object, as OpenAI sends it, or (from some OpenAI-compatible
// servers) the object itself.
type argsString string

// UnmarshalJSON implements json.Unmarshaler.
func (s *argsString) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) == 0 || string(b) == "null":
		*s = ""
	case b[0] == '"':
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = argsString(v)
	default:
		*s = argsString(b)
	}
	return nil
}

// decodeCompletion returns the answer in a chat completion's JSON.
func decodeCompletion(body []byte) (voicetest.ChatResponse, error) {
	var res wireCompletion
	err := json.Unmarshal(body, &res)
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		var lenient lenientCompletion
		if err = json.Unmarshal(body, &lenient); err == nil {
			return answerOf(lenient)
		}
	}
	if err != nil {
		return voicetest.ChatResponse{}, fmt.Errorf("the endpoint's completion is not the JSON expected (%.200q): %w", body, err)
	}
	return answerOf(res)
}

// answerOf returns the answer in a decoded completion.
func answerOf[S, A ~string](res completionOf[S, A]) (voicetest.ChatResponse, error) {
	if len(res.Choices) == 0 {
		return voicetest.ChatResponse{}, errors.New("the endpoint answered a completion with no choices")
	}
	ch := res.Choices[0]
	out := voicetest.ChatResponse{
		Message:      voicetest.ChatMessage{Role: voicetest.ChatAssistant, Content: string(ch.Message.Content)},
		FinishReason: string(ch.FinishReason),
		Model:        string(res.Model),
	}
	if ch.Message.Refusal != "" && out.Message.Content == "" {
		return out, fmt.Errorf("the model refused: %s", ch.Message.Refusal)
	}
	for _, tc := range ch.Message.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			return out, fmt.Errorf("the model made a %q tool call; only function tools are supported", tc.Type)
		}
		args := json.RawMessage(tc.Function.Arguments)
		if strings.TrimSpace(string(tc.Function.Arguments)) == "" {
			args = json.RawMessage("{}")
		}
		if !json.Valid(args) {
			return out, fmt.Errorf("the model called %q with arguments that are not valid JSON: %.200q", tc.Function.Name, tc.Function.Arguments)
		}
		out.Message.ToolCalls = append(out.Message.ToolCalls, voicetest.ToolCall{ID: string(tc.ID), Name: string(tc.Function.Name), Arguments: args})
	}
	return out, nil
}
