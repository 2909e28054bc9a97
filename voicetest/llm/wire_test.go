package llm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/voicetest"
)

// The Client's encoding of a request is checked against openai-go's, its
// oracle, in voicetest/internal/openaioracle (TestEncodeRequestMatchesOpenAIGo),
// so that this package's test binary does not link openai-go.

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
