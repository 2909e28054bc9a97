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

func statuses(v voicetest.Judgment) map[string]voicetest.Status {
	m := map[string]voicetest.Status{}
	for _, c := range v.Criteria {
		m[c.Criterion] = c.Status
	}
	return m
}

func TestAllListsEveryCriterion(t *testing.T) {
	st := bookingState(t)
	srv := fakeopenai.New(t)
	srv.QueueChat(verdict("final", "pass"))
	all := judges.All(
		judges.Criteria("The agent confirms the time").WithLLM(newLLM(t, srv, t.TempDir(), cache.Off)),
		judges.Says("table for two"),
		judges.NeverSays("goodbye"),
		judges.ToolCalled("book", map[string]any{"party": 2}),
	)
	assert.Equal(t, []string{"The agent confirms the time", `the agent says "table for two"`, `the agent never says "goodbye"`, `the agent calls tool "book" with {"party":2}`}, all.Criteria())
	v := final(t, all, st)
	assert.True(t, v.Decided)
	assert.Equal(t, voicetest.StatusFail, v.Status())
	assert.Equal(t, map[string]voicetest.Status{
		"The agent confirms the time":                  voicetest.StatusPass,
		`the agent says "table for two"`:               voicetest.StatusPass,
		`the agent never says "goodbye"`:               voicetest.StatusFail,
		`the agent calls tool "book" with {"party":2}`: voicetest.StatusPass,
	}, statuses(v))
	assert.Contains(t, v.Reasoning, "overall final")
	assert.Contains(t, v.Reasoning, `turn 2: the agent said "Booked! Goodbye."`)
}

func TestAllMidway(t *testing.T) {
	st := bookingState(t)
	// Every judge settled: decided.
	v := midway(t, judges.All(judges.Says("table for two"), judges.HungUp()), st)
	assert.True(t, v.Decided)
	assert.Equal(t, voicetest.StatusPass, v.Status())
	// One still open: not decided.
	v = midway(t, judges.All(judges.Says("table for two"), judges.NeverSays("sorry")), st)
	assert.False(t, v.Decided)
	// A failure decides at once.
	v = midway(t, judges.All(judges.Says("see you"), judges.NeverSays("goodbye")), st)
	assert.True(t, v.Decided)
	assert.Equal(t, voicetest.StatusFail, v.Status())
}

func TestAllRoutesCheckpointCriteria(t *testing.T) {
	st := bookingState(t)
	says := judges.Says("table for two")
	srv := fakeopenai.New(t)
	srv.QueueChat(verdict("final", "inconclusive"))
	withLLM := judges.All(says, judges.Criteria("The agent is polite").WithLLM(newLLM(t, srv, t.TempDir(), cache.Off)))
	v, err := withLLM.Evaluate(t.Context(), voicetest.JudgeRequest{State: st, Criteria: []string{says.Criterion(), "The agent spells the name"}})
	require.NoError(t, err)
	assert.Equal(t, map[string]voicetest.Status{says.Criterion(): voicetest.StatusPass, "The agent spells the name": voicetest.StatusInconclusive}, statuses(v))
	_, user := messages(chatRequests(t, srv)[0])
	assert.Contains(t, user, "Criteria:\n1. The agent spells the name\n\n", "the LLM is asked only what no rule owns")

	// Without an LLM judge an unknown criterion is inconclusive, saying why.
	v, err = judges.All(says, judges.HungUp()).Evaluate(t.Context(), voicetest.JudgeRequest{State: st, Criteria: []string{"The agent spells the name"}})
	require.NoError(t, err)
	require.Len(t, v.Criteria, 1)
	assert.Equal(t, voicetest.StatusInconclusive, v.Criteria[0].Status)
	assert.Contains(t, v.Criteria[0].Reasoning, "no judge in All checks this criterion")
}

func TestAny(t *testing.T) {
	st := bookingState(t)
	anyEnd := judges.Any(judges.Says("see you"), judges.HungUp())
	assert.Equal(t, `any of: the agent says "see you" | the agent hangs up`, anyEnd.Criterion())
	v := final(t, anyEnd, st)
	require.Len(t, v.Criteria, 1)
	c := v.Criteria[0]
	assert.Equal(t, anyEnd.Criterion(), c.Criterion)
	assert.Equal(t, voicetest.StatusPass, c.Status)
	assert.Contains(t, c.Reasoning, `[fail] the agent says "see you": no agent message contains "see you"`)
	assert.Contains(t, c.Reasoning, "[pass] the agent hangs up: turn 2: the agent hung up")

	v = final(t, judges.Any(judges.Says("see you"), judges.ToolCalled("transfer", nil)), st)
	assert.Equal(t, voicetest.StatusFail, v.Status())
	assert.True(t, v.Decided)

	// Inconclusive when nothing passed and something could not tell.
	v = final(t, judges.Any(judges.Says("see you"), judges.InterruptionHandled(100)), st)
	assert.Equal(t, voicetest.StatusInconclusive, v.Status())

	// Midway: a settled pass decides; a pending alternative does not.
	assert.True(t, midway(t, anyEnd, st).Decided)
	v = midway(t, judges.Any(judges.Says("see you"), judges.ToolCalled("transfer", nil)), st)
	assert.False(t, v.Decided)
	assert.Equal(t, voicetest.StatusInconclusive, v.Status())

	// Nested in All, Any is one criterion.
	all := judges.All(anyEnd, judges.Says("table for two"))
	assert.Equal(t, []string{anyEnd.Criterion(), `the agent says "table for two"`}, all.Criteria())
	v, err := all.Evaluate(t.Context(), voicetest.JudgeRequest{State: st, Criteria: []string{anyEnd.Criterion()}})
	require.NoError(t, err)
	assert.Equal(t, map[string]voicetest.Status{anyEnd.Criterion(): voicetest.StatusPass}, statuses(v))
}

func TestComposeErrors(t *testing.T) {
	st := bookingState(t)
	_, err := judges.All().Evaluate(t.Context(), voicetest.JudgeRequest{State: st, Final: true})
	assert.ErrorContains(t, err, "All() was given no judges")
	_, err = judges.Any(judges.HungUp(), nil).Evaluate(t.Context(), voicetest.JudgeRequest{State: st, Final: true})
	assert.ErrorContains(t, err, "Any: judge 2 is nil")
	_, err = judges.All(judges.SaysRegexp("(")).Evaluate(t.Context(), voicetest.JudgeRequest{State: st, Final: true})
	assert.ErrorContains(t, err, "invalid pattern")
}
