package judges_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
	"github.com/voicetest-go/voicetest/voicetest/llm"
)

// newLLM returns an llm.Client on srv (nil: no server, as in CI replay)
// with a cache in dir in mode m.
func newLLM(t *testing.T, srv *fakeopenai.Server, dir string, m cache.Mode) *llm.Client {
	t.Helper()
	c, err := cache.Open(dir, cache.WithMode(m))
	require.NoError(t, err)
	opts := []llm.Option{llm.WithCache(c), llm.WithModel("gpt-4o-mini"), llm.WithMaxRetries(0),
		llm.WithHTTPClient(&http.Client{Transport: &http.Transport{DisableKeepAlives: true}})}
	if srv != nil {
		opts = append(opts, llm.WithBaseURL(srv.BaseURL()), llm.WithAPIKey(srv.APIKey()))
	} else {
		opts = append(opts, llm.WithBaseURL("http://127.0.0.1:1/v1/"))
	}
	cl, err := llm.New(opts...)
	require.NoError(t, err)
	return cl
}

// verdict is a record_verdict call: decision, then one status per
// criterion (ids 1, 2, …).
func verdict(decision string, statuses ...string) fakeopenai.ChatReply {
	var cs []string
	for i, s := range statuses {
		cs = append(cs, fmt.Sprintf(`{"id":%d,"status":%q,"reasoning":"criterion %d is %s"}`, i+1, s, i+1, s))
	}
	return call(fmt.Sprintf(`{"decision":%q,"criteria":[%s],"reasoning":"overall %s"}`, decision, strings.Join(cs, ","), decision))
}

func call(args string) fakeopenai.ChatReply {
	return fakeopenai.ChatReply{ToolCalls: []fakeopenai.ToolCall{{Name: judges.VerdictTool, Arguments: args}}}
}

// chatRequests decodes the chat requests srv received.
func chatRequests(t *testing.T, srv *fakeopenai.Server) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, r := range srv.RequestsTo("/v1/chat/completions") {
		var m map[string]any
		require.NoError(t, json.Unmarshal(r.Body, &m))
		out = append(out, m)
	}
	return out
}

func messages(req map[string]any) (system, user string) {
	ms := req["messages"].([]any)
	return ms[0].(map[string]any)["content"].(string), ms[1].(map[string]any)["content"].(string)
}

// decisions returns the decision enum of the verdict tool in req.
func decisions(t *testing.T, req map[string]any) []any {
	t.Helper()
	tools := req["tools"].([]any)
	require.Len(t, tools, 1)
	fn := tools[0].(map[string]any)["function"].(map[string]any)
	assert.Equal(t, judges.VerdictTool, fn["name"])
	return fn["parameters"].(map[string]any)["properties"].(map[string]any)["decision"].(map[string]any)["enum"].([]any)
}

var twoCriteria = []string{"The agent confirms the party size", "The agent books the table"}

func TestCriteriaJudgeRequestAndVerdict(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(verdict("final", "pass", "fail"))
	res := voicetest.Scenario(t, voicetest.Config{Golden: noGolden(), Agent: bookingAgent(), Script: bookingScript(),
		Description: "Luigi's booking line: a caller books a table for two."})
	j := judges.Criteria(twoCriteria...).WithLLM(newLLM(t, srv, t.TempDir(), cache.Off))

	v := final(t, j, res.State)
	assert.Equal(t, voicetest.Judgment{Decided: true, Reasoning: "overall final", Criteria: []voicetest.CriterionResult{
		{Criterion: twoCriteria[0], Status: voicetest.StatusPass, Reasoning: "criterion 1 is pass"},
		{Criterion: twoCriteria[1], Status: voicetest.StatusFail, Reasoning: "criterion 2 is fail"},
	}}, v)

	reqs := chatRequests(t, srv)
	require.Len(t, reqs, 1)
	req := reqs[0]
	assert.Equal(t, map[string]any{"type": "function", "function": map[string]any{"name": judges.VerdictTool}}, req["tool_choice"])
	assert.Equal(t, 0.0, req["temperature"])
	assert.Equal(t, float64(judges.Seed), req["seed"])
	assert.Equal(t, []any{"final"}, decisions(t, req), "a final verdict cannot continue")
	sys, user := messages(req)
	assert.Contains(t, sys, "speech-to-text transcript")
	assert.Contains(t, sys, "homophones")
	assert.Contains(t, sys, "Judge only the numbered criteria")
	assert.Contains(t, sys, "This is the final verdict")
	assert.Equal(t, `Scenario (what the test is about: context for the criteria, not a criterion):
<scenario>
Luigi's booking line: a caller books a table for two.
</scenario>

Criteria:
1. The agent confirms the party size
2. The agent books the table

Transcript (turn 0 is before the user's first turn):
<transcript>
[turn 0] agent: Hello, Luigi's, how can I help?
[turn 1] user: A table for two at seven, please.
[turn 1] agent calls tool check_availability with {"party":2,"time":"19:00"}
[turn 1] tool check_availability returned {"free":true}
[turn 1] agent: We have a table for 2 at seven. Shall I book it?
[turn 2] user: Yes please, for Ann.
[turn 2] agent calls tool book with {"party":2,"time":"19:00","guest":{"name":"Ann"}}
[turn 2] tool book returned {"ok":true}
[turn 2] agent: Booked! Goodbye.
[turn 2] agent hangs up (goodbye)
</transcript>

Give your final verdict now.`, user)
}

// "Verdicts cached": a second identical evaluation is served from the
// cache, and the recorded cache replays with the server gone.
func TestCriteriaJudgeRecordAndReplay(t *testing.T) {
	st := bookingState(t)
	dir := t.TempDir()
	srv := fakeopenai.New(t)
	srv.QueueChat(verdict("final", "pass", "inconclusive"))
	rec := judges.Criteria(twoCriteria...).WithLLM(newLLM(t, srv, dir, cache.Record))
	first := final(t, rec, st)
	again := final(t, rec, st)
	assert.Equal(t, first, again)
	assert.Len(t, srv.RequestsTo("/v1/chat/completions"), 1, "the second evaluation is served from the cache")
	srv.Close()

	replay := judges.Criteria(twoCriteria...).WithLLM(newLLM(t, nil, dir, cache.Replay))
	assert.Equal(t, first, final(t, replay, st))
	assert.Equal(t, voicetest.StatusInconclusive, first.Status())

	// Another criterion is another request: a miss in replay mode, with
	// the command that records it.
	_, err := judges.Criteria("The agent is polite").WithLLM(newLLM(t, nil, dir, cache.Replay)).
		Evaluate(t.Context(), voicetest.JudgeRequest{State: st, Final: true})
	var miss *cache.MissError
	require.ErrorAs(t, err, &miss)
	assert.ErrorContains(t, err, "-voicetest.record")
}

// On the last allowed turn the judge must decide: the schema offers only
// "final", the prompt says so, and a "continue" is sent back.
func TestCriteriaJudgeForcedOnLastTurn(t *testing.T) {
	st := bookingState(t)
	srv := fakeopenai.New(t)
	srv.QueueChat(verdict("continue", "inconclusive", "inconclusive"), verdict("final", "pass", "inconclusive"))
	j := judges.Criteria(twoCriteria...).WithLLM(newLLM(t, srv, t.TempDir(), cache.Off))
	v, err := j.Evaluate(t.Context(), voicetest.JudgeRequest{State: st, Turn: 2, MaxTurns: 2})
	require.NoError(t, err)
	assert.True(t, v.Decided)
	assert.Equal(t, voicetest.StatusInconclusive, v.Status())
	assert.Equal(t, voicetest.StatusInconclusive, v.Criteria[1].Status, "inconclusive stays inconclusive")

	reqs := chatRequests(t, srv)
	require.Len(t, reqs, 2)
	assert.Equal(t, []any{"final"}, decisions(t, reqs[0]))
	sys, user := messages(reqs[0])
	assert.Contains(t, sys, "This is the final verdict")
	assert.Contains(t, user, "Give your final verdict now.")
	retry := reqs[1]["messages"].([]any)
	require.Len(t, retry, 4, "system, user, the invalid answer, its tool result")
	assert.Equal(t, "tool", retry[3].(map[string]any)["role"])
	assert.Contains(t, retry[3].(map[string]any)["content"], `decision is "continue", but this is the final verdict: set decision to "final"`)

	// Before the last turn "continue" is allowed.
	srv.QueueChat(verdict("continue", "inconclusive", "inconclusive"))
	v, err = j.Evaluate(t.Context(), voicetest.JudgeRequest{State: st, Turn: 1, MaxTurns: 2})
	require.NoError(t, err)
	assert.False(t, v.Decided)
	reqs = chatRequests(t, srv)
	assert.Equal(t, []any{"final", "continue"}, decisions(t, reqs[2]))
	sys, user = messages(reqs[2])
	assert.Contains(t, sys, "The conversation is still going on")
	assert.Contains(t, user, "The conversation is at user turn 1 of at most 2.")
}

func TestCriteriaJudgeContinuousDecisions(t *testing.T) {
	st := bookingState(t)
	for _, tc := range []struct {
		name    string
		reply   fakeopenai.ChatReply
		decided bool
		status  voicetest.Status
	}{
		{"continue", verdict("continue", "pass", "inconclusive"), false, voicetest.StatusInconclusive},
		{"final, all pass", verdict("final", "pass", "pass"), true, voicetest.StatusPass},
		{"a clear failure ends the run", verdict("final", "fail", "inconclusive"), true, voicetest.StatusFail},
		{"a failure ends the run even on continue", verdict("continue", "pass", "fail"), true, voicetest.StatusFail},
		{"inconclusive never ends the run early", verdict("final", "pass", "inconclusive"), false, voicetest.StatusInconclusive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeopenai.New(t)
			srv.QueueChat(tc.reply)
			j := judges.Criteria(twoCriteria...).WithLLM(newLLM(t, srv, t.TempDir(), cache.Off)).Continuous()
			v := midway(t, j, st)
			assert.Equal(t, tc.decided, v.Decided)
			assert.Equal(t, tc.status, v.Status())
			assert.Len(t, v.Criteria, 2)
		})
	}
}

func TestCriteriaJudgeRetriesAnInvalidAnswerOnce(t *testing.T) {
	st := bookingState(t)
	for _, tc := range []struct {
		name    string
		invalid fakeopenai.ChatReply
		problem string
	}{
		{"missing criterion", verdict("final", "pass"), "criteria 2 are not answered"},
		{"duplicate", call(`{"decision":"final","criteria":[{"id":1,"status":"pass","reasoning":""},{"id":1,"status":"fail","reasoning":""}],"reasoning":""}`),
			"criterion 1 is answered more than once; criteria 2 are not answered"},
		{"unknown id", call(`{"decision":"final","criteria":[{"id":1,"status":"pass","reasoning":""},{"id":3,"status":"pass","reasoning":""}],"reasoning":""}`),
			"criterion id 3 does not exist; ids are 1 to 2"},
		{"bad status", verdict("final", "pass", "maybe"), `criterion 2 has status "maybe"`},
		{"bad decision", verdict("done", "pass", "pass"), `decision is "done"`},
		{"not an object", call(`["pass","pass"]`), "the record_verdict arguments are not the JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeopenai.New(t)
			srv.QueueChat(tc.invalid, verdict("final", "pass", "fail"))
			j := judges.Criteria(twoCriteria...).WithLLM(newLLM(t, srv, t.TempDir(), cache.Off))
			v, err := j.Evaluate(t.Context(), voicetest.JudgeRequest{State: st, Final: true})
			require.NoError(t, err)
			assert.Equal(t, voicetest.StatusFail, v.Status())
			reqs := chatRequests(t, srv)
			require.Len(t, reqs, 2)
			ms := reqs[1]["messages"].([]any)
			last := ms[len(ms)-1].(map[string]any)
			assert.Contains(t, last["content"], "Your answer could not be used: "+tc.problem)
			assert.Equal(t, reqs[0]["messages"], ms[:2], "the retry repeats the question")
		})
	}

	t.Run("twice invalid", func(t *testing.T) {
		srv := fakeopenai.New(t)
		srv.QueueChat(verdict("final", "pass"), verdict("final", "pass", "pass", "pass"))
		j := judges.Criteria(twoCriteria...).WithLLM(newLLM(t, srv, t.TempDir(), cache.Off))
		_, err := j.Evaluate(t.Context(), voicetest.JudgeRequest{State: st, Final: true})
		require.ErrorIs(t, err, judges.ErrInvalidAnswer)
		assert.ErrorContains(t, err, "criteria 2 are not answered; after one retry: criterion id 3 does not exist")
		assert.Len(t, srv.RequestsTo("/v1/chat/completions"), 2)
	})
}

// scriptedLLM answers from a list, recording the requests. The
// fakeopenai double refuses to answer a forced tool choice without that
// call, as OpenAI does; some OpenAI-compatible servers ignore tool_choice,
// and this double stands in for them.
type scriptedLLM struct {
	answers []voicetest.ChatResponse
	reqs    []voicetest.ChatRequest
}

func (s *scriptedLLM) Complete(ctx context.Context, req voicetest.ChatRequest) (voicetest.ChatResponse, error) {
	if err := llm.Validate(req); err != nil {
		return voicetest.ChatResponse{}, err
	}
	s.reqs = append(s.reqs, req)
	if len(s.answers) == 0 {
		return voicetest.ChatResponse{}, errors.New("scriptedLLM: no answer left")
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	return a, nil
}

func TestCriteriaJudgeRetriesAnAnswerWithoutTheCall(t *testing.T) {
	st := bookingState(t)
	good := voicetest.ChatResponse{Message: voicetest.ChatMessage{Role: voicetest.ChatAssistant, ToolCalls: []voicetest.ToolCall{{ID: "c2", Name: judges.VerdictTool,
		Arguments: json.RawMessage(`{"decision":"final","criteria":[{"id":1,"status":"pass","reasoning":"ok"}],"reasoning":"ok"}`)}}}}
	for _, tc := range []struct {
		name    string
		bad     voicetest.ChatResponse
		problem string
		role    voicetest.ChatRole
	}{
		{"text only", voicetest.ChatResponse{Message: voicetest.ChatMessage{Role: voicetest.ChatAssistant, Content: "It passes."}},
			`the answer does not call record_verdict (it says "It passes.")`, voicetest.ChatUser},
		{"another tool", voicetest.ChatResponse{Message: voicetest.ChatMessage{Role: voicetest.ChatAssistant, ToolCalls: []voicetest.ToolCall{{ID: "c1", Name: "finish_test", Arguments: json.RawMessage(`{}`)}}}},
			"the answer calls finish_test instead of record_verdict", voicetest.ChatTool},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &scriptedLLM{answers: []voicetest.ChatResponse{tc.bad, good}}
			v, err := judges.Criteria("The agent books").WithLLM(l).Evaluate(t.Context(), voicetest.JudgeRequest{State: st, Final: true})
			require.NoError(t, err)
			assert.Equal(t, voicetest.StatusPass, v.Status())
			require.Len(t, l.reqs, 2)
			last := l.reqs[1].Messages[len(l.reqs[1].Messages)-1]
			assert.Equal(t, tc.role, last.Role)
			assert.Contains(t, last.Content, tc.problem)
		})
	}
}

func TestCriteriaJudgeFinalOnlyWaits(t *testing.T) {
	st := bookingState(t)
	srv := fakeopenai.New(t)
	j := judges.Criteria(twoCriteria...).WithLLM(newLLM(t, srv, t.TempDir(), cache.Off)).FinalOnly()
	v := midway(t, j, st)
	assert.False(t, v.Decided)
	assert.Empty(t, srv.Requests(), "no model call before the final verdict")
	srv.QueueChat(verdict("final", "pass", "pass"))
	v = final(t, j, st)
	assert.True(t, v.Decided)
	assert.Equal(t, voicetest.StatusPass, v.Status())
}

func TestCriteriaJudgeCheckpointAsksOnlyItsCriteria(t *testing.T) {
	st := bookingState(t)
	srv := fakeopenai.New(t)
	srv.QueueChat(verdict("final", "pass"))
	j := judges.Criteria(twoCriteria...).WithLLM(newLLM(t, srv, t.TempDir(), cache.Off))
	v, err := j.Evaluate(t.Context(), voicetest.JudgeRequest{State: st, Criteria: []string{"The agent greets the caller"}, Turn: 1, MaxTurns: 10})
	require.NoError(t, err)
	assert.True(t, v.Decided, "a checkpoint is decided")
	require.Len(t, v.Criteria, 1)
	assert.Equal(t, "The agent greets the caller", v.Criteria[0].Criterion)
	reqs := chatRequests(t, srv)
	assert.Equal(t, []any{"final"}, decisions(t, reqs[0]))
	_, user := messages(reqs[0])
	assert.Contains(t, user, "Criteria:\n1. The agent greets the caller\n\nTranscript")
	assert.NotContains(t, user, "party size")
}

func TestCriteriaJudgeBoundsTheTranscript(t *testing.T) {
	var replies []fixtures.Reply
	var steps []voicetest.Step
	for i := 1; i <= 30; i++ {
		replies = append(replies, fixtures.Reply{Text: fmt.Sprintf("This is my answer number %d.", i), Latency: 100 * time.Millisecond})
		steps = append(steps, voicetest.UserSays(fmt.Sprintf("Question %d?", i)), voicetest.AgentTurn())
	}
	res := voicetest.Scenario(t, voicetest.Config{Golden: noGolden(), Agent: fixtures.TextAgent(replies...), Script: steps, MaxTurns: 30})
	require.True(t, res.Success, "%v", res.Err)
	srv := fakeopenai.New(t)
	srv.QueueChat(verdict("final", "pass"))
	j := judges.Criteria("The agent answers every question").WithLLM(newLLM(t, srv, t.TempDir(), cache.Off)).WithMaxTranscript(800)
	final(t, j, res.State)
	_, user := messages(chatRequests(t, srv)[0])
	tr := user[strings.Index(user, "<transcript>\n")+len("<transcript>\n") : strings.Index(user, "</transcript>")]
	assert.LessOrEqual(t, len(tr), 800)
	assert.True(t, strings.HasPrefix(tr, "[turn 1] user: Question 1?\n"), tr)
	assert.True(t, strings.HasSuffix(tr, "[turn 30] agent: This is my answer number 30.\n"), tr)
	assert.Regexp(t, `\n\[… \d+ lines cut \(turns \d+–\d+\) …\]\n`, tr)
	sys, _ := messages(chatRequests(t, srv)[0])
	assert.Contains(t, sys, `a line "[… N lines cut …]" marks where`)
}

func TestCriteriaJudgeInstructionsAndModel(t *testing.T) {
	st := bookingState(t)
	srv := fakeopenai.New(t)
	srv.QueueChat(verdict("final", "pass"))
	base := judges.Criteria("The agent quotes prices with VAT")
	j := base.WithLLM(newLLM(t, srv, t.TempDir(), cache.Off)).WithInstructions("Prices on the menu include VAT.").WithModel("judge-model")
	final(t, j, st)
	req := chatRequests(t, srv)[0]
	assert.Equal(t, "judge-model", req["model"])
	sys, _ := messages(req)
	assert.True(t, strings.HasSuffix(sys, "Additional instructions from the test's author:\nPrices on the menu include VAT."), sys)
	assert.Equal(t, []string{"The agent quotes prices with VAT"}, base.Criteria())
	_, err := base.Evaluate(t.Context(), voicetest.JudgeRequest{State: st, Final: true})
	assert.ErrorContains(t, err, "has no LLM", "With methods return copies: base is unchanged")
}

func TestCriteriaJudgeErrors(t *testing.T) {
	st := bookingState(t)
	l := newLLM(t, nil, t.TempDir(), cache.Replay)
	for _, tc := range []struct {
		name string
		j    *judges.CriteriaJudge
		req  voicetest.JudgeRequest
		want string
	}{
		{"no LLM", judges.Criteria("x"), voicetest.JudgeRequest{State: st, Final: true}, "use judges.ForTest(t, criteria...)"},
		{"no criteria", judges.Criteria().WithLLM(l), voicetest.JudgeRequest{State: st, Final: true}, "no criteria to judge"},
		{"empty criterion", judges.Criteria("ok", " ").WithLLM(l), voicetest.JudgeRequest{State: st, Final: true}, "criterion 2 is empty"},
		{"duplicate criterion", judges.Criteria("ok", "ok").WithLLM(l), voicetest.JudgeRequest{State: st, Final: true}, `criterion "ok" is given twice`},
		{"no state", judges.Criteria("ok").WithLLM(l), voicetest.JudgeRequest{Final: true}, "JudgeRequest.State is nil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.j.Evaluate(t.Context(), tc.req)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// A scenario with an LLM judge, on virtual time: the judge is asked after
// each turn and the run ends early when it reports a clear failure.
func TestScenarioContinuousJudgeEndsEarly(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(
		verdict("continue", "inconclusive"), // after turn 1
		verdict("continue", "fail"),         // after turn 2: broken
	)
	res := run(t, voicetest.Config{
		Agent: fixtures.TextAgent(
			fixtures.Reply{Text: "Hi, what can I do?", Latency: 100 * time.Millisecond},
			fixtures.Reply{Text: "I will not tell you the opening hours.", Latency: 100 * time.Millisecond},
			fixtures.Reply{Text: "Anything else?", Latency: 100 * time.Millisecond},
		),
		User:     lines("hello", "when are you open?", "ok", "bye"),
		Judge:    judges.Criteria("The agent tells the caller the opening hours").WithLLM(newLLM(t, srv, t.TempDir(), cache.Off)),
		MaxTurns: 4,
	})
	assert.Equal(t, voicetest.StatusFail, res.Status)
	assert.Equal(t, 2, res.Turns)
	require.Len(t, res.Failed, 1)
	assert.Equal(t, "criterion 1 is fail", res.Failed[0].Reasoning)
	assert.Len(t, srv.RequestsTo("/v1/chat/completions"), 2)
}

// An inconclusive final verdict is reported as inconclusive, not as a
// failure, and the last allowed turn gets a forced decision.
func TestScenarioInconclusiveVerdict(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(
		verdict("continue", "inconclusive", "pass"),
		verdict("final", "inconclusive", "pass"), // turn 2 of 2: forced
	)
	res := run(t, voicetest.Config{
		Agent: fixtures.TextAgent(
			fixtures.Reply{Text: "Hello!", Latency: 100 * time.Millisecond},
			fixtures.Reply{Text: "Sure.", Latency: 100 * time.Millisecond},
		),
		User:     lines("hello", "can you help?", "more"),
		Judge:    judges.Criteria("The agent confirms the booking", "The agent is polite").WithLLM(newLLM(t, srv, t.TempDir(), cache.Off)),
		MaxTurns: 2,
	})
	assert.False(t, res.Success)
	assert.Equal(t, voicetest.StatusInconclusive, res.Status)
	assert.Empty(t, res.Failed)
	require.Len(t, res.Inconclusive, 1)
	assert.Equal(t, "The agent confirms the booking", res.Inconclusive[0].Criterion)
	require.Len(t, res.Passed, 1)
	reqs := chatRequests(t, srv)
	require.Len(t, reqs, 2)
	assert.Equal(t, []any{"final", "continue"}, decisions(t, reqs[0]))
	assert.Equal(t, []any{"final"}, decisions(t, reqs[1]), "the last allowed turn must decide")
}

// judges.ForTest records through the test package's cache from inside the
// synctest bubble Scenario runs in-process agents in.
func TestForTestRecordsInsideTheBubble(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(verdict("final", "pass"))
	t.Setenv("OPENAI_BASE_URL", srv.BaseURL())
	t.Setenv("OPENAI_API_KEY", srv.APIKey())
	t.Setenv("VOICETEST_LLM_MODEL", "gpt-4o-mini")
	t.Setenv("VOICETEST_CACHE", "off")
	res := voicetest.Scenario(t, voicetest.Config{
		Agent:  bookingAgent(),
		Judge:  judges.ForTest(t, "The agent books a table"),
		Script: append(bookingScript(), voicetest.Verdict()),
	})
	assert.True(t, res.Success, "%v", res.Err)
	assert.Len(t, srv.RequestsTo("/v1/chat/completions"), 1)
}
