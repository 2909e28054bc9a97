package judges_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
)

// entryPattern matches the entry files (<digest>.json, not their bodies)
// of the llm answers in a cache directory.
var entryPattern = filepath.Join("llm", strings.Repeat("[0-9a-f]", 64)+".json")

// Issue 14, item 5: a verdict that does not validate is never stored as a
// good cache entry. The judge's retry is recorded as one entry holding
// the valid verdict, under the question as first asked, and replays
// without the retry; two invalid answers store nothing.
func TestCriteriaJudgeNeverCachesAnInvalidVerdict(t *testing.T) {
	st := bookingState(t)
	srv := fakeopenai.New(t)
	srv.QueueChat(verdict("final", "pass"), verdict("final", "pass", "fail"))
	dir := t.TempDir()
	v, err := judges.Criteria(twoCriteria...).WithLLM(newLLM(t, srv, dir, cache.Record)).Evaluate(t.Context(), voicetest.JudgeRequest{State: st, Final: true})
	require.NoError(t, err)
	assert.Equal(t, voicetest.StatusFail, v.Status())
	stored, _ := filepath.Glob(filepath.Join(dir, entryPattern))
	assert.Len(t, stored, 1, "only the valid verdict is stored")
	v, err = judges.Criteria(twoCriteria...).WithLLM(newLLM(t, nil, dir, cache.Replay)).Evaluate(t.Context(), voicetest.JudgeRequest{State: st, Final: true})
	require.NoError(t, err)
	assert.Equal(t, voicetest.StatusFail, v.Status())

	srv.QueueChat(verdict("final", "pass"), verdict("final", "pass", "pass", "pass"))
	dir = t.TempDir()
	_, err = judges.Criteria(twoCriteria...).WithLLM(newLLM(t, srv, dir, cache.Record)).Evaluate(t.Context(), voicetest.JudgeRequest{State: st, Final: true})
	require.ErrorIs(t, err, judges.ErrInvalidAnswer)
	assert.Contains(t, err.Error(), "criteria 2 are not answered; after one retry: criterion id 3 does not exist")
	assert.Contains(t, err.Error(), "it was not stored")
	stored, _ = filepath.Glob(filepath.Join(dir, entryPattern))
	assert.Empty(t, stored, "invalid verdicts are not stored")
}
