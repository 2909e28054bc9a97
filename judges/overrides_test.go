package judges_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
)

// TestCriteriaJudgeOverrides: a scenario's judge with its own model,
// temperature and system prompt sends them; the decision rule still
// follows the prompt.
func TestCriteriaJudgeOverrides(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(verdict("final", "pass", "pass"))
	st := bookingState(t)
	j := judges.Criteria(twoCriteria...).WithLLM(newLLM(t, srv, t.TempDir(), cache.Off)).
		WithModel("judge-model-of-this-scenario").WithTemperature(0.3).
		WithSystemPrompt("You grade restaurant phone calls for a hotel chain.")
	final(t, j, st)
	reqs := chatRequests(t, srv)
	require.Len(t, reqs, 1)
	assert.Equal(t, "judge-model-of-this-scenario", reqs[0]["model"])
	assert.Equal(t, 0.3, reqs[0]["temperature"])
	sys, _ := messages(reqs[0])
	assert.True(t, len(sys) > 0 && sys[:len("You grade restaurant")] == "You grade restaurant", "the system prompt starts with the scenario's: %q", sys)
	assert.NotContains(t, sys, "homophones", "the built-in rules are replaced")
	assert.Contains(t, sys, "This is the final verdict", "the decision rule still follows")

	_, err := judges.Criteria("x").WithLLM(newLLM(t, srv, t.TempDir(), cache.Off)).WithTemperature(3).
		Evaluate(t.Context(), voicetest.JudgeRequest{State: st, Final: true})
	require.ErrorContains(t, err, "WithTemperature(3)")
}
