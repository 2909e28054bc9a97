package voicetest

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/voicetest-go/voicetest/pcm"
)

// TTS turns text into speech. The speech package implements it for OpenAI
// and for local engines, each behind the record/replay cache.
type TTS interface {
	Synthesize(ctx context.Context, req SpeechRequest) (pcm.Chunk, error)
}

// SpeechRequest is what to say and how.
type SpeechRequest struct {
	// Text is what to say.
	Text string
	// Voice names the voice in the engine's terms ("nova", "slt"); empty
	// means the engine's default.
	Voice string
	// Instructions steer the delivery (tone, accent) where the engine
	// supports it.
	Instructions string
	// Speed scales the speaking rate; 0 means the engine's default (1).
	Speed float64
	// Rate is the sample rate wanted; 0 means the engine's native rate.
	// Engines resample when it differs.
	Rate int
}

// STT turns speech into text. The speech package implements it for OpenAI
// and for pocketsphinx, each behind the record/replay cache.
// Implementations must be safe for concurrent use: parallel scenarios
// share them, and the runner calls Config.AgentSTT from a goroutine of its
// own while the conversation goes on.
type STT interface {
	Transcribe(ctx context.Context, req TranscriptionRequest) (Transcription, error)
}

// TranscriptionRequest is speech to transcribe and hints for doing it.
type TranscriptionRequest struct {
	// Audio is the speech.
	Audio pcm.Chunk
	// Language is a BCP 47 tag ("en", "en-US"); empty means the engine's
	// default.
	Language string
	// Prompt is context that helps the engine (names, vocabulary).
	Prompt string
	// Phrases are phrases the speaker is expected to say, for engines that
	// take a grammar or a phrase list.
	Phrases []string
}

// Transcription is the text an STT engine heard.
type Transcription struct {
	// Text is the transcript.
	Text string
	// Language is the language the engine detected, when it reports one.
	Language string
}

// LLM answers chat completions. The llm package implements it for any
// OpenAI-compatible endpoint, behind the record/replay cache. Personas and
// judges use it; the voicetest runner itself does not.
type LLM interface {
	Complete(ctx context.Context, req ChatRequest) (ChatResponse, error)
}

// ChatRole is the author of a chat message.
type ChatRole string

// The chat roles.
const (
	ChatSystem    ChatRole = "system"
	ChatUser      ChatRole = "user"
	ChatAssistant ChatRole = "assistant"
	ChatTool      ChatRole = "tool"
)

// ChatMessage is one message of a chat completion request or answer.
type ChatMessage struct {
	Role    ChatRole `json:"role"`
	Content string   `json:"content,omitempty"`
	// ToolCalls are the calls an assistant message makes.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID ties a tool message to the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Audio is input audio for an audio-capable model, in a user message:
	// each clip after Content, its Label as text before it. In a cache
	// key a clip counts by its digest (see InputAudio).
	Audio []InputAudio `json:"audio,omitempty"`
}

// ToolSpec is a function the model may call.
type ToolSpec struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is the JSON schema of the arguments object.
	Parameters json.RawMessage `json:"parameters,omitempty"`
}

// ChatRequest is a chat completion request.
type ChatRequest struct {
	// Model overrides the client's model when not empty.
	Model    string        `json:"model,omitempty"`
	Messages []ChatMessage `json:"messages"`
	Tools    []ToolSpec    `json:"tools,omitempty"`
	// ToolChoice is "", "auto", "none", "required", or the name of a tool
	// the model must call.
	ToolChoice string `json:"tool_choice,omitempty"`
	// JSONSchema, when set, asks for a JSON answer matching the schema,
	// named SchemaName.
	JSONSchema json.RawMessage `json:"json_schema,omitempty"`
	SchemaName string          `json:"schema_name,omitempty"`
	// Temperature and Seed make answers repeatable where the model allows;
	// nil leaves the model's default.
	Temperature *float64 `json:"temperature,omitempty"`
	Seed        *int64   `json:"seed,omitempty"`
	// MaxTokens bounds the answer; 0 leaves the model's default.
	MaxTokens int `json:"max_tokens,omitempty"`

	// Check, when set, says whether an answer can be used: nil, or what
	// is wrong with it (JSON that does not parse, a verdict that leaves a
	// criterion out). An LLM that caches answers keeps only answers that
	// pass: when one fails, it asks once more, with Retry's messages
	// appended, and stores the second answer, if it passes, under the
	// request as first asked; when that fails too, it stores nothing and
	// returns an error wrapping ErrAnswerRejected. It is not part of the
	// request sent, nor of a cache key.
	Check func(ChatResponse) error `json:"-"`
	// Retry returns the messages that ask again after answer failed Check
	// with problem; nil sends the answer back with a message saying what
	// was wrong.
	Retry func(answer ChatResponse, problem error) []ChatMessage `json:"-"`
}

// ErrAnswerRejected matches, with errors.Is, the error of an LLM whose
// answer failed ChatRequest.Check, also after its one retry.
var ErrAnswerRejected = errors.New("voicetest: the model's answer failed its check")

// ChatResponse is a chat completion answer.
type ChatResponse struct {
	Message ChatMessage `json:"message"`
	// FinishReason is the model's reason to stop ("stop", "tool_calls",
	// "length").
	FinishReason string `json:"finish_reason,omitempty"`
	// Model is the model that produced the answer, as the endpoint
	// reported it: OpenAI names the snapshot ("gpt-4o-mini-2024-07-18"),
	// voicetest's own test double names itself ("fakeopenai-double").
	// A cached answer keeps it, so a committed cache says what really
	// answered. Empty when the endpoint did not say.
	Model string `json:"model,omitempty"`
}
