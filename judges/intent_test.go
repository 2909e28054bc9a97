package judges_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

func intentReply(status, reasoning string) fakeopenai.ChatReply {
	return fakeopenai.ChatReply{ToolCalls: []fakeopenai.ToolCall{{Name: judges.IntentTool,
		Arguments: fmt.Sprintf(`{"status":%q,"reasoning":%q}`, status, reasoning)}}}
}

func TestIntentJudgeRequestAndCache(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(intentReply("pass", "It offers a table for two."))
	in := judges.Intent(newLLM(t, srv, t.TempDir(), cache.Record), "offers the caller a table")
	r, err := in.Judge(t.Context(), "We have a table for 2 at seven.")
	require.NoError(t, err)
	assert.Equal(t, voicetest.CriterionResult{Criterion: "offers the caller a table", Status: voicetest.StatusPass, Reasoning: "It offers a table for two."}, r)
	again, err := in.Judge(t.Context(), "We have a table for 2 at seven.")
	require.NoError(t, err)
	assert.Equal(t, r, again)

	reqs := chatRequests(t, srv)
	require.Len(t, reqs, 1, "the second identical question is answered from the cache")
	req := reqs[0]
	assert.Equal(t, map[string]any{"type": "function", "function": map[string]any{"name": judges.IntentTool}}, req["tool_choice"])
	assert.Equal(t, 0.0, req["temperature"])
	assert.Equal(t, float64(judges.Seed), req["seed"])
	sys, user := messages(req)
	assert.Contains(t, sys, "speech-to-text transcript")
	assert.Equal(t, "Intent: offers the caller a table\n\nAgent message:\n<message>\nWe have a table for 2 at seven.\n</message>", user)
}

func TestIntentJudgeCheckAndEvaluate(t *testing.T) {
	st := bookingState(t)
	srv := fakeopenai.New(t)
	srv.QueueChat(intentReply("fail", "It says goodbye without confirming the time."))
	in := judges.Intent(newLLM(t, srv, t.TempDir(), cache.Off), "confirms the booking time")
	err := in.Check(st)
	require.ErrorIs(t, err, judges.ErrNotPassed)
	assert.Contains(t, err.Error(), `criterion "the agent's last message: confirms the booking time": fail: turn 2 "Booked! Goodbye.": It says goodbye without confirming the time.`)
	_, user := messages(chatRequests(t, srv)[0])
	assert.Contains(t, user, "<message>\nBooked! Goodbye.\n</message>", "Check judges the last agent message")

	srv.QueueChat(intentReply("inconclusive", "Too short to tell."))
	v := final(t, in, st)
	assert.True(t, v.Decided)
	require.Len(t, v.Criteria, 1)
	assert.Equal(t, voicetest.StatusInconclusive, v.Criteria[0].Status)
	assert.Equal(t, in.Criterion(), v.Criteria[0].Criterion)
}

func TestIntentJudgeInExpectations(t *testing.T) {
	st := bookingState(t)
	srv := fakeopenai.New(t)
	srv.QueueChat(intentReply("pass", "A greeting that offers help."))
	greets := judges.Intent(newLLM(t, srv, t.TempDir(), cache.Off), "greets the caller and offers help")
	err := st.Expect().
		NextEvent().IsMessageMatching(t.Context(), voicetest.RoleAgent, greets).
		NextEvent().IsToolCall("check_availability", map[string]any{"party": 2}).
		Err()
	require.NoError(t, err)

	srv.QueueChat(intentReply("fail", "It greets but does not mention opening hours."))
	hours := judges.Intent(newLLM(t, srv, t.TempDir(), cache.Off), "gives the opening hours")
	err = st.Expect().NextEvent().IsMessageMatching(t.Context(), voicetest.RoleAgent, hours).Err()
	require.ErrorIs(t, err, voicetest.ErrExpectation)
	assert.Contains(t, err.Error(), `item 0: message agent: "Hello, Luigi's, how can I help?" does not match: judges: criterion not passed: intent "gives the opening hours": fail: It greets but does not mention opening hours.`)
	assert.Len(t, srv.RequestsTo("/v1/chat/completions"), 2)
}

func TestIntentJudgeRetriesAnInvalidStatus(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(intentReply("yes", "sure"), intentReply("pass", "sure"))
	r, err := judges.Intent(newLLM(t, srv, t.TempDir(), cache.Off), "says hello").Judge(t.Context(), "hello")
	require.NoError(t, err)
	assert.Equal(t, voicetest.StatusPass, r.Status)
	reqs := chatRequests(t, srv)
	require.Len(t, reqs, 2)
	ms := reqs[1]["messages"].([]any)
	assert.Contains(t, ms[len(ms)-1].(map[string]any)["content"], `Your answer could not be used: status is "yes"`)

	srv.QueueChat(intentReply("yes", "sure"), intentReply("no", "sure"))
	_, err = judges.Intent(newLLM(t, srv, t.TempDir(), cache.Off), "says hi").Judge(t.Context(), "hello")
	assert.ErrorIs(t, err, judges.ErrInvalidAnswer)
}

func TestIntentJudgeWithoutWordsOrLLM(t *testing.T) {
	res := voicetest.Scenario(t, voicetest.Config{Golden: noGolden(),
		Agent:     fixtures.AudioOnlyAgent(fixtures.Reply{Text: "hello there", Latency: 200 * time.Millisecond}),
		UserVoice: toneTTS{},
		Script:    []voicetest.Step{voicetest.UserSays("hi"), voicetest.AgentTurn()},
	})
	require.True(t, res.Success, "%v", res.Err)
	srv := fakeopenai.New(t)
	v := final(t, judges.Intent(newLLM(t, srv, t.TempDir(), cache.Off), "greets"), res.State)
	assert.Equal(t, voicetest.StatusInconclusive, v.Criteria[0].Status)
	assert.Contains(t, v.Criteria[0].Reasoning, "turn 1: the agent's last message has no transcript ((audio only)); set Config.AgentSTT")
	assert.Empty(t, srv.Requests(), "nothing to ask the model")

	_, err := judges.Intent(nil, "greets").Judge(t.Context(), "hi")
	assert.ErrorContains(t, err, "Intent has no LLM")
	_, err = judges.Intent(newLLM(t, srv, t.TempDir(), cache.Off), " ").Judge(t.Context(), "hi")
	assert.ErrorContains(t, err, "empty intent")
}

// An intent check in a Check step of a virtual-time scenario fails the
// scenario with the model's reasoning.
func TestScenarioIntentCheckStep(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(intentReply("pass", "It greets the caller."), intentReply("fail", "It asks instead of confirming."))
	l := newLLM(t, srv, t.TempDir(), cache.Off)
	res := run(t, voicetest.Config{
		Agent: bookingAgent(),
		Script: []voicetest.Step{
			voicetest.AgentTurn(),
			voicetest.Check(judges.Intent(l, "greets the caller").Check),
			voicetest.UserSays("A table for two at seven, please."),
			voicetest.AgentTurn(),
			voicetest.Check(judges.Intent(l, "confirms the booking").Check),
			voicetest.UserSays("Yes please, for Ann."),
			voicetest.AgentTurn(),
		},
	})
	assert.False(t, res.Success)
	require.ErrorIs(t, res.Err, judges.ErrNotPassed)
	var se *voicetest.StepError
	require.ErrorAs(t, res.Err, &se)
	assert.Equal(t, 5, se.Index)
	assert.Contains(t, res.Err.Error(), `turn 1 "We have a table for 2 at seven. Shall I book it?": It asks instead of confirming.`)
	assert.Len(t, srv.RequestsTo("/v1/chat/completions"), 2)
}
