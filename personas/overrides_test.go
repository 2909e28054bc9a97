package personas_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/personas"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
)

// TestLLMUserOverrides: a scenario's caller with its own model,
// temperature and system prompt sends them.
func TestLLMUserOverrides(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(say("Hi, a table please."))
	user := personas.LLM(personas.Rushed, "Book a table.").With(newClient(t, srv, t.TempDir(), cache.Off)).
		Model("caller-model-of-this-scenario").Temperature(0.9).
		SystemPrompt("You are a sommelier calling to ask about the wine list.")
	u, err := user.NextUtterance(t.Context(), &voicetest.State{})
	require.NoError(t, err)
	assert.Equal(t, "Hi, a table please.", u.Text)
	reqs := srv.RequestsTo("/v1/chat/completions")
	require.Len(t, reqs, 1)
	var m map[string]any
	require.NoError(t, json.Unmarshal(reqs[0].Body, &m))
	assert.Equal(t, "caller-model-of-this-scenario", m["model"])
	assert.Equal(t, 0.9, m["temperature"])
	sys := m["messages"].([]any)[0].(map[string]any)["content"]
	assert.Equal(t, "You are a sommelier calling to ask about the wine list.", sys)

	_, err = personas.LLM(personas.Rushed, "x").With(newClient(t, srv, t.TempDir(), cache.Off)).Temperature(-1).
		NextUtterance(t.Context(), &voicetest.State{})
	require.ErrorContains(t, err, "Temperature(-1)")
}
