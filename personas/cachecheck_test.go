package personas_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/personas"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
)

// Issue 14, item 5: a persona answer that cannot be used (empty, an
// unknown tool) is never stored as a good cache entry. The persona's retry
// is recorded as one entry holding the usable line, under the question as
// first asked, and replays without the retry.
func TestLLMPersonaNeverCachesAnUnusableAnswer(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(say("  "), say("Two people, seven o'clock."))
	dir := t.TempDir()
	u, err := personas.LLM(personas.Rushed, "Book a table.").With(newClient(t, srv, dir, cache.Record)).NextUtterance(t.Context(), &voicetest.State{})
	require.NoError(t, err)
	assert.Equal(t, "Two people, seven o'clock.", u.Text)
	entries, err := filepath.Glob(filepath.Join(dir, "llm", strings.Repeat("[0-9a-f]", 64)+".json"))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "only the usable answer is stored")
	u, err = personas.LLM(personas.Rushed, "Book a table.").With(newClient(t, nil, dir, cache.Replay)).NextUtterance(t.Context(), &voicetest.State{})
	require.NoError(t, err)
	assert.Equal(t, "Two people, seven o'clock.", u.Text)
}
