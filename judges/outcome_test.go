package judges_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// outcomeState runs a text conversation in which the agent reports the
// variant "casual" of "greeting" and then sets outcome "booked" to
// booked, and returns its final state.
func outcomeState(t *testing.T, booked string) *voicetest.State {
	t.Helper()
	agent := fixtures.Fake(fixtures.FakeConfig{TextOnly: true, Replies: []fixtures.Reply{
		{Text: "Hi.", DataName: voicetest.DataVariant, Data: []byte(`{"test":"greeting","variant":"casual"}`)},
		{Text: "Done.", DataName: voicetest.DataOutcome, Data: []byte(`{"name":"booked","value":` + booked + `}`)},
	}})
	res := voicetest.Scenario(t, voicetest.Config{Golden: noGolden(), Agent: agent, Script: []voicetest.Step{
		voicetest.UserSays("hello"), voicetest.AgentTurn(),
		voicetest.UserSays("book it"), voicetest.AgentTurn(),
	}})
	require.True(t, res.Success, "%v", res.Err)
	return res.State
}

func TestOutcomeRules(t *testing.T) {
	end := outcomeState(t, "1")
	assert.Equal(t, map[string]float64{"booked": 1}, end.Outcomes())
	assert.Equal(t, map[string]string{"greeting": "casual"}, end.Variants())

	v := final(t, judges.All(judges.OutcomeEquals("booked", 1), judges.OutcomeAtLeast("booked", 0.5), judges.VariantIs("greeting", "casual")), end)
	assert.Equal(t, voicetest.StatusPass, v.Status(), "%+v", v)

	v = final(t, judges.OutcomeEquals("booked", 0), end)
	assert.Equal(t, voicetest.StatusFail, v.Status())
	assert.Contains(t, v.Criteria[0].Reasoning, `outcome "booked" is 1`)

	v = final(t, judges.OutcomeAtLeast("rating", 3), end)
	assert.Equal(t, voicetest.StatusFail, v.Status())
	assert.Contains(t, v.Criteria[0].Reasoning, "never set outcome \"rating\" (it set booked=1)")

	v = final(t, judges.VariantIs("greeting", "formal"), end)
	assert.Equal(t, voicetest.StatusFail, v.Status())

	// In the middle of a conversation an outcome can still change.
	v = midway(t, judges.OutcomeEquals("booked", 1), end)
	assert.False(t, v.Decided)
	assert.Equal(t, voicetest.StatusInconclusive, v.Criteria[0].Status)
}
