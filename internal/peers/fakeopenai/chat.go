package fakeopenai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// ChatRequest is a validated /v1/chat/completions request.
type ChatRequest struct {
	Model    string
	Messages []ChatMessage
	Tools    []Tool
	// ToolChoice is "" (not sent), "auto", "none", "required", or the name
	// of the function the model is forced to call (ForcedTool set).
	ToolChoice string
	ForcedTool bool
	// ResponseFormat is nil when the request did not set one.
	ResponseFormat *ResponseFormat
	Temperature    *float64
	Seed           *int64
	// MaxTokens is max_completion_tokens or max_tokens, nil when neither.
	MaxTokens *int
	// Stream asks for the answer as server-sent chunks; IncludeUsage
	// (stream_options.include_usage) for a last chunk with the usage.
	Stream, IncludeUsage bool
	// Raw holds every top-level field as sent.
	Raw map[string]json.RawMessage
}

// ChatMessage is one message of a ChatRequest.
type ChatMessage struct {
	Role string
	// Content is the text content; array content parts are joined.
	Content    string
	ToolCalls  []ToolCall
	ToolCallID string
	// Audio holds the message's input_audio content parts, in order
	// (user messages only; see chat_audio.go).
	Audio []InputAudio
}

// ToolCall is a function call of an assistant message, in a request or in a
// ChatReply.
type ToolCall struct {
	// ID is the call's id; a ChatReply may leave it empty to have one made.
	ID   string
	Name string
	// Arguments is the JSON text of the arguments object.
	Arguments string
}

// Tool is a function tool declared in a ChatRequest.
type Tool struct {
	Name, Description string
	Parameters        json.RawMessage
	Strict            *bool
}

// ResponseFormat is a ChatRequest's response_format.
type ResponseFormat struct {
	// Type is "text", "json_object" or "json_schema".
	Type string
	// SchemaName, Schema and Strict are set for "json_schema".
	SchemaName string
	Schema     json.RawMessage
	Strict     *bool
}

// ChatReply is what the Server answers to one chat completion request.
type ChatReply struct {
	// Content is the assistant's text.
	Content string
	// ToolCalls are the functions the assistant calls.
	ToolCalls []ToolCall
	// FinishReason defaults to "tool_calls" when there are tool calls and
	// "stop" otherwise.
	FinishReason string
	// Error, when set, is served instead of a completion.
	Error *APIError
}

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

var chatFields = []string{"model", "messages", "tools", "tool_choice", "parallel_tool_calls", "response_format",
	"temperature", "top_p", "seed", "max_tokens", "max_completion_tokens", "n", "stop", "stream", "stream_options",
	"presence_penalty", "frequency_penalty", "logit_bias", "logprobs", "top_logprobs", "user", "metadata", "store",
	"reasoning_effort", "service_tier", "modalities", "audio", "prediction", "verbosity", "safety_identifier",
	"prompt_cache_key", "web_search_options"}

func (s *Server) serveChat(w http.ResponseWriter, r *http.Request) {
	req, apiErr := parseChat(r)
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	s.mu.Lock()
	var reply ChatReply
	var err error
	haveReply := false
	if len(s.chatQueue) > 0 {
		reply, s.chatQueue = s.chatQueue[0], s.chatQueue[1:]
		haveReply = true
	}
	h := s.chatHandler
	s.chatCount++
	n := s.chatCount
	s.mu.Unlock()
	if !haveReply {
		if h == nil {
			writeError(w, serverError("no scripted chat reply is left and no handler is set; call QueueChat or HandleChat"))
			return
		}
		if reply, err = h(req); err != nil {
			writeError(w, errorFrom(err))
			return
		}
	}
	if reply.Error != nil {
		writeError(w, reply.Error)
		return
	}
	if apiErr := checkReply(req, reply); apiErr != nil {
		writeError(w, apiErr)
		return
	}
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	if reply.Content != "" || len(reply.ToolCalls) == 0 {
		msg["content"] = reply.Content
	}
	finish := reply.FinishReason
	if len(reply.ToolCalls) > 0 {
		calls := make([]any, len(reply.ToolCalls))
		for i, c := range reply.ToolCalls {
			id := c.ID
			if id == "" {
				id = fmt.Sprintf("call_fake_%d_%d", n, i)
			}
			calls[i] = map[string]any{"id": id, "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": c.Arguments}}
		}
		msg["tool_calls"] = calls
		if finish == "" {
			finish = "tool_calls"
		}
	}
	if finish == "" {
		finish = "stop"
	}
	id := fmt.Sprintf("chatcmpl-fake-%d", n)
	usage := chatUsage(req, reply)
	if req.Stream {
		streamChat(w, req, id, msg, finish, usage)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id":      id,
		"object":  "chat.completion",
		"created": 1700000000,
		"model":   Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
		"usage":   usage,
	})
}

// chatUsage counts tokens as words: a stand-in, but one that grows with
// the prompt and the reply as real counts do.
func chatUsage(req ChatRequest, reply ChatReply) map[string]any {
	prompt := 0
	for _, m := range req.Messages {
		prompt += len(strings.Fields(m.Content)) + 1
	}
	completion := len(strings.Fields(reply.Content))
	for _, c := range reply.ToolCalls {
		completion += 1 + len(c.Arguments)/4
	}
	return map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
}

// streamChat answers a streamed completion as the API does: server-sent
// chat.completion.chunk objects (the role first, then the content word by
// word, or each tool call's id and name and then its arguments in pieces,
// then an empty delta with the finish_reason), with
// stream_options.include_usage a last chunk of no choices and the usage
// (every other chunk then carries "usage": null), and "data: [DONE]"
// (API reference, "The chat completion chunk object").
func streamChat(w http.ResponseWriter, req ChatRequest, id string, msg map[string]any, finish string, usage map[string]any) {
	sse := newSSE(w)
	chunk := func(delta map[string]any, finish any) error {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1700000000, "model": Model,
			"system_fingerprint": nil, "choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}}
		if req.IncludeUsage {
			c["usage"] = nil
		}
		return sse.event(c)
	}
	if chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil) != nil {
		return
	}
	if content, _ := msg["content"].(string); content != "" {
		for _, piece := range strings.SplitAfter(content, " ") {
			if piece != "" && chunk(map[string]any{"content": piece}, nil) != nil {
				return
			}
		}
	}
	calls, _ := msg["tool_calls"].([]any)
	for i, c := range calls {
		call := c.(map[string]any)
		fn := call["function"].(map[string]any)
		if chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": call["id"], "type": "function",
			"function": map[string]any{"name": fn["name"], "arguments": ""}}}}, nil) != nil {
			return
		}
		args := fn["arguments"].(string)
		for off := 0; off < len(args); off += 8 {
			if chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i,
				"function": map[string]any{"arguments": args[off:min(off+8, len(args))]}}}}, nil) != nil {
				return
			}
		}
	}
	if chunk(map[string]any{}, finish) != nil {
		return
	}
	if req.IncludeUsage {
		if sse.event(map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1700000000, "model": Model,
			"system_fingerprint": nil, "choices": []any{}, "usage": usage}) != nil {
			return
		}
	}
	_ = sse.raw([]byte("[DONE]"))
}

// checkReply rejects a scripted reply that the real API could not give to
// this request, so a wrong script fails loudly rather than passing.
func checkReply(req ChatRequest, reply ChatReply) *APIError {
	for _, c := range reply.ToolCalls {
		if !slices.ContainsFunc(req.Tools, func(t Tool) bool { return t.Name == c.Name }) {
			return serverError("scripted reply calls tool %q, which the request did not declare", c.Name)
		}
		if !json.Valid([]byte(c.Arguments)) {
			return serverError("scripted reply's call to %q has arguments that are not JSON: %q", c.Name, c.Arguments)
		}
	}
	if req.ForcedTool && !slices.ContainsFunc(reply.ToolCalls, func(c ToolCall) bool { return c.Name == req.ToolChoice }) {
		return serverError("the request forces tool %q but the scripted reply does not call it", req.ToolChoice)
	}
	if req.ToolChoice == "required" && len(reply.ToolCalls) == 0 {
		return serverError("the request has tool_choice \"required\" but the scripted reply calls no tool")
	}
	if req.ToolChoice == "none" && len(reply.ToolCalls) > 0 {
		return serverError("the request has tool_choice \"none\" but the scripted reply calls a tool")
	}
	if rf := req.ResponseFormat; rf != nil && rf.Type != "text" && len(reply.ToolCalls) == 0 && !json.Valid([]byte(reply.Content)) {
		return serverError("the request asks for %s output but the scripted reply's content is not JSON: %q", rf.Type, reply.Content)
	}
	return nil
}

func parseChat(r *http.Request) (ChatRequest, *APIError) {
	f, e := decodeJSONObject(r, chatFields...)
	if e != nil {
		return ChatRequest{}, e
	}
	req := ChatRequest{Raw: f}
	if ok, e := field(f, "model", &req.Model, "a string"); e != nil {
		return req, e
	} else if !ok || req.Model == "" {
		return req, badRequest("model", "you must provide a model parameter")
	}
	if e := parseMessages(f, &req); e != nil {
		return req, e
	}
	if e := parseTools(f, &req); e != nil {
		return req, e
	}
	if e := parseResponseFormat(f, &req); e != nil {
		return req, e
	}
	var t float64
	if ok, e := field(f, "temperature", &t, "a number"); e != nil {
		return req, e
	} else if ok {
		if t < 0 || t > 2 {
			return req, badRequest("temperature", "Invalid 'temperature': %g. Expected a value between 0 and 2.", t)
		}
		req.Temperature = &t
	}
	var seed int64
	if ok, e := field(f, "seed", &seed, "an integer"); e != nil {
		return req, e
	} else if ok {
		req.Seed = &seed
	}
	for _, name := range []string{"max_tokens", "max_completion_tokens"} {
		var n int
		if ok, e := field(f, name, &n, "an integer"); e != nil {
			return req, e
		} else if ok {
			if n < 1 {
				return req, badRequest(name, "Invalid '%s': integer below minimum value. Expected a value >= 1, but got %d instead.", name, n)
			}
			if req.MaxTokens != nil {
				return req, badRequest(name, "Set max_tokens or max_completion_tokens, not both.")
			}
			req.MaxTokens = &n
		}
	}
	if _, e := field(f, "stream", &req.Stream, "a boolean"); e != nil {
		return req, e
	}
	var opts struct {
		IncludeUsage *bool `json:"include_usage"`
	}
	if ok, e := field(f, "stream_options", &opts, "an object"); e != nil {
		return req, e
	} else if ok {
		if !req.Stream {
			return req, badRequest("stream_options", "The 'stream_options' parameter is only allowed when 'stream' is enabled.")
		}
		req.IncludeUsage = opts.IncludeUsage != nil && *opts.IncludeUsage
	}
	return req, nil
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string  `json:"name"`
			Arguments *string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

func parseMessages(f map[string]json.RawMessage, req *ChatRequest) *APIError {
	var msgs []wireMessage
	if ok, e := field(f, "messages", &msgs, "an array of message objects"); e != nil {
		return e
	} else if !ok {
		return badRequest("messages", "Missing required parameter: 'messages'.")
	}
	if len(msgs) == 0 {
		return badRequest("messages", "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.")
	}
	pending := map[string]bool{} // tool call ids awaiting a tool message
	for i, m := range msgs {
		p := fmt.Sprintf("messages[%d]", i)
		cm := ChatMessage{Role: m.Role, ToolCallID: m.ToolCallID}
		text, audio, e := messageContent(p, m.Role, m.Content)
		if e != nil {
			return e
		}
		cm.Content, cm.Audio = text, audio
		switch m.Role {
		case "system", "developer", "user":
			if m.Content == nil || string(m.Content) == "null" {
				return badRequest(p+".content", "Missing required parameter: '%s.content'.", p)
			}
		case "assistant":
			if (m.Content == nil || string(m.Content) == "null") && len(m.ToolCalls) == 0 {
				return badRequest(p+".content", "Invalid '%s': an assistant message needs content or tool_calls.", p)
			}
			for j, c := range m.ToolCalls {
				cp := fmt.Sprintf("%s.tool_calls[%d]", p, j)
				switch {
				case c.ID == "":
					return badRequest(cp+".id", "Missing required parameter: '%s.id'.", cp)
				case c.Type != "function":
					return badRequest(cp+".type", "Invalid value for '%s.type': %q. Supported values are: 'function'.", cp, c.Type)
				case c.Function.Name == "":
					return badRequest(cp+".function.name", "Missing required parameter: '%s.function.name'.", cp)
				case c.Function.Arguments == nil:
					return badRequest(cp+".function.arguments", "Missing required parameter: '%s.function.arguments'.", cp)
				}
				pending[c.ID] = true
				cm.ToolCalls = append(cm.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: *c.Function.Arguments})
			}
		case "tool":
			if m.ToolCallID == "" {
				return badRequest(p+".tool_call_id", "Missing required parameter: '%s.tool_call_id'.", p)
			}
			if !pending[m.ToolCallID] {
				return badRequest(p+".tool_call_id", "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls' (no call has id %q).", m.ToolCallID)
			}
			delete(pending, m.ToolCallID)
		case "":
			return badRequest(p+".role", "Missing required parameter: '%s.role'.", p)
		default:
			return badRequest(p+".role", "Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'tool', 'function', and 'developer'.", m.Role)
		}
		req.Messages = append(req.Messages, cm)
	}
	return nil
}

func parseTools(f map[string]json.RawMessage, req *ChatRequest) *APIError {
	var tools []struct {
		Type     string `json:"type"`
		Function *struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
			Strict      *bool           `json:"strict"`
		} `json:"function"`
	}
	if _, e := field(f, "tools", &tools, "an array of tool objects"); e != nil {
		return e
	}
	for i, t := range tools {
		p := fmt.Sprintf("tools[%d]", i)
		if t.Type != "function" {
			return badRequest(p+".type", "Invalid value for '%s.type': %q. This server supports 'function'.", p, t.Type)
		}
		if t.Function == nil {
			return badRequest(p+".function", "Missing required parameter: '%s.function'.", p)
		}
		if !toolName.MatchString(t.Function.Name) {
			return badRequest(p+".function.name", "Invalid '%s.function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$' of at most 64 characters, got %q.", p, t.Function.Name)
		}
		if slices.ContainsFunc(req.Tools, func(o Tool) bool { return o.Name == t.Function.Name }) {
			return badRequest(p+".function.name", "Duplicate tool name %q.", t.Function.Name)
		}
		if t.Function.Parameters != nil && jsonKind(t.Function.Parameters) != "an object" {
			return badRequest(p+".function.parameters", "Invalid type for '%s.function.parameters': expected an object, but got %s.", p, jsonKind(t.Function.Parameters))
		}
		req.Tools = append(req.Tools, Tool{Name: t.Function.Name, Description: t.Function.Description,
			Parameters: t.Function.Parameters, Strict: t.Function.Strict})
	}
	raw, ok := f["tool_choice"]
	if !ok || string(raw) == "null" {
		return nil
	}
	if len(req.Tools) == 0 {
		return badRequest("tool_choice", "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.")
	}
	var mode string
	if json.Unmarshal(raw, &mode) == nil {
		if mode != "none" && mode != "auto" && mode != "required" {
			return badRequest("tool_choice", "Invalid value for 'tool_choice': %q. Supported values are: 'none', 'auto', and 'required'.", mode)
		}
		req.ToolChoice = mode
		return nil
	}
	var named struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &named); err != nil || named.Type != "function" {
		return badRequest("tool_choice", "Invalid 'tool_choice': expected 'none', 'auto', 'required' or {\"type\": \"function\", \"function\": {\"name\": …}}.")
	}
	if !slices.ContainsFunc(req.Tools, func(t Tool) bool { return t.Name == named.Function.Name }) {
		return badRequest("tool_choice", "Invalid value for 'tool_choice': function %q is not among the declared tools.", named.Function.Name)
	}
	req.ToolChoice, req.ForcedTool = named.Function.Name, true
	return nil
}

func parseResponseFormat(f map[string]json.RawMessage, req *ChatRequest) *APIError {
	var rf struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict *bool           `json:"strict"`
		} `json:"json_schema"`
	}
	if ok, e := field(f, "response_format", &rf, "an object"); e != nil || !ok {
		return e
	}
	out := &ResponseFormat{Type: rf.Type}
	switch rf.Type {
	case "text", "json_object":
	case "json_schema":
		if rf.JSONSchema == nil {
			return badRequest("response_format.json_schema", "Missing required parameter: 'response_format.json_schema'.")
		}
		if !toolName.MatchString(rf.JSONSchema.Name) {
			return badRequest("response_format.json_schema.name", "Invalid 'response_format.json_schema.name': expected a string matching '^[a-zA-Z0-9_-]+$' of at most 64 characters, got %q.", rf.JSONSchema.Name)
		}
		if jsonKind(rf.JSONSchema.Schema) != "an object" {
			return badRequest("response_format.json_schema.schema", "Invalid 'response_format.json_schema.schema': expected an object, but got %s.", jsonKind(rf.JSONSchema.Schema))
		}
		out.SchemaName, out.Schema, out.Strict = rf.JSONSchema.Name, rf.JSONSchema.Schema, rf.JSONSchema.Strict
	default:
		return badRequest("response_format.type", "Invalid value for 'response_format.type': %q. Supported values are: 'text', 'json_object' and 'json_schema'.", rf.Type)
	}
	req.ResponseFormat = out
	return nil
}
