package judges_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

type ruleCase struct {
	name      string
	rule      *judges.Rule
	criterion string
	status    voicetest.Status
	reasoning string // a substring of the reasoning
}

func checkRules(t *testing.T, st *voicetest.State, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := final(t, tc.rule, st)
			require.Len(t, v.Criteria, 1)
			c := v.Criteria[0]
			assert.Equal(t, tc.criterion, c.Criterion)
			assert.Equal(t, tc.status, c.Status, "reasoning: %s", c.Reasoning)
			assert.Contains(t, c.Reasoning, tc.reasoning)
			assert.True(t, v.Decided, "a final verdict is always decided")
		})
	}
}

func TestTextRules(t *testing.T) {
	st := bookingState(t)
	checkRules(t, st, []ruleCase{
		{"says", judges.Says("table for two"), `the agent says "table for two"`, voicetest.StatusPass,
			`turn 1: the agent said "We have a table for 2 at seven. Shall I book it?"`},
		{"says normalises case punctuation and numbers", judges.Says("TABLE, for 2 at Seven!"), `the agent says "TABLE, for 2 at Seven!"`, voicetest.StatusPass, "turn 1"},
		{"says matches whole words", judges.Says("table for twenty"), `the agent says "table for twenty"`, voicetest.StatusFail,
			`no agent message contains "table for twenty" (3 agent messages); last: turn 2 "Booked! Goodbye."`},
		{"says matches whole words only", judges.Says("book"), `the agent says "book"`, voicetest.StatusPass, `turn 1`},
		{"says not a word prefix", judges.Says("boo"), `the agent says "boo"`, voicetest.StatusFail, "no agent message contains"},
		{"says regexp", judges.SaysRegexp(`(?i)booked!`), "the agent says something matching /(?i)booked!/", voicetest.StatusPass,
			`turn 2: the agent said "Booked! Goodbye." (match "Booked!")`},
		{"says regexp no match", judges.SaysRegexp(`\bsorry\b`), `the agent says something matching /\bsorry\b/`, voicetest.StatusFail, "no agent message contains a match"},
		{"never says", judges.NeverSays("sorry"), `the agent never says "sorry"`, voicetest.StatusPass, `no agent message contains "sorry" (3 agent messages checked)`},
		{"never says said", judges.NeverSays("goodbye"), `the agent never says "goodbye"`, voicetest.StatusFail, `turn 2: the agent said "Booked! Goodbye."`},
		{"never says regexp", judges.NeverSaysRegexp(`\d{4}`), `the agent never says anything matching /\d{4}/`, voicetest.StatusPass, "(3 agent messages checked)"},
		{"never says regexp said", judges.NeverSaysRegexp(`(?i)luigi`), `the agent never says anything matching /(?i)luigi/`, voicetest.StatusFail, `turn 0: the agent said "Hello, Luigi's, how can I help?" (match "Luigi")`},
		{"named", judges.Says("how can I help").Named("greets the caller"), "greets the caller", voicetest.StatusPass, "turn 0"},
	})
}

func TestToolRules(t *testing.T) {
	st := bookingState(t)
	checkRules(t, st, []ruleCase{
		{"called", judges.ToolCalled("book", nil), `the agent calls tool "book"`, voicetest.StatusPass,
			`turn 2: the agent called book {"party":2,"time":"19:00","guest":{"name":"Ann"}}`},
		{"called with subset", judges.ToolCalled("book", map[string]any{"party": 2, "guest": map[string]any{"name": "Ann"}}),
			`the agent calls tool "book" with {"guest":{"name":"Ann"},"party":2}`, voicetest.StatusPass, "turn 2"},
		{"called float matches int", judges.ToolCalled("check_availability", map[string]any{"party": 2.0}),
			`the agent calls tool "check_availability" with {"party":2}`, voicetest.StatusPass, "turn 1"},
		{"wrong value", judges.ToolCalled("book", map[string]any{"party": 3}), `the agent calls tool "book" with {"party":3}`, voicetest.StatusFail,
			"no call of book has the arguments: turn 2: book {\"party\":2,\"time\":\"19:00\",\"guest\":{\"name\":\"Ann\"}} differs at $.party"},
		{"missing nested key", judges.ToolCalled("book", map[string]any{"guest": map[string]any{"phone": "1"}}), `the agent calls tool "book" with {"guest":{"phone":"1"}}`, voicetest.StatusFail,
			"differs at $.guest.phone (missing)"},
		{"never called", judges.ToolCalled("transfer", nil), `the agent calls tool "transfer"`, voicetest.StatusFail,
			"the agent never called transfer (it called check_availability, book)"},
		{"not called", judges.ToolNotCalled("transfer"), `the agent never calls tool "transfer"`, voicetest.StatusPass, "no call of transfer among the agent's 2 tool calls"},
		{"not called but was", judges.ToolNotCalled("book"), `the agent never calls tool "book"`, voicetest.StatusFail, `turn 2: the agent called book {"party":2`},
	})
}

func TestConversationRules(t *testing.T) {
	st := bookingState(t)
	checkRules(t, st, []ruleCase{
		{"turns in range", judges.Turns(1, 2), "the conversation takes 1 to 2 user turns", voicetest.StatusPass, "2 user turns"},
		{"turns too few", judges.Turns(3, 0), "the conversation takes at least 3 user turns", voicetest.StatusFail, "2 user turns, fewer than 3"},
		{"turns too many", judges.Turns(0, 1), "the conversation takes 0 to 1 user turns", voicetest.StatusFail, "2 user turns, more than 1"},
		{"hung up", judges.HungUp(), "the agent hangs up", voicetest.StatusPass, "turn 2: the agent hung up at 13300ms (goodbye)"},
		{"p95 within", judges.LatencyP95Under(1200 * time.Millisecond), "p95 agent response latency is at most 1200ms", voicetest.StatusPass,
			"p95 1200ms over 2 replies (p50 850ms; slowest 1200ms in turn 2)"},
		{"p95 over", judges.LatencyP95Under(time.Second), "p95 agent response latency is at most 1000ms", voicetest.StatusFail,
			"p95 1200ms over 2 replies (p50 850ms; slowest 1200ms in turn 2), over the 1000ms budget"},
		{"each turn within", judges.EachTurnUnder(1500 * time.Millisecond), "every agent response latency is at most 1500ms", voicetest.StatusPass,
			"all 2 replies within budget (slowest 1200ms)"},
		{"each turn over", judges.EachTurnUnder(time.Second), "every agent response latency is at most 1000ms", voicetest.StatusFail,
			"turn 2 took 1200ms, over the 1000ms budget"},
		{"no barge-in", judges.InterruptionHandled(time.Second), "the agent stops speaking within 1000ms of a barge-in", voicetest.StatusInconclusive,
			"the user never barged in; add an Interrupt step"},
		{"no silence", judges.SilenceHandled(time.Second), "the agent re-prompts within 1000ms of the user falling silent", voicetest.StatusInconclusive,
			"the user never fell silent; add a Silence step"},
	})
}

func TestTimingRules(t *testing.T) {
	st := bargeInState(t)
	checkRules(t, st, []ruleCase{
		{"interruption handled", judges.InterruptionHandled(200 * time.Millisecond), "the agent stops speaking within 200ms of a barge-in", voicetest.StatusPass,
			"the agent stopped in time after every barge-in (turn 1: 150ms)"},
		{"interruption too slow", judges.InterruptionHandled(100 * time.Millisecond), "the agent stops speaking within 100ms of a barge-in", voicetest.StatusFail,
			"turn 1: the agent stopped 150ms after the barge-in at 1900ms (limit 100ms)"},
		{"silence handled", judges.SilenceHandled(2500 * time.Millisecond), "the agent re-prompts within 2500ms of the user falling silent", voicetest.StatusPass,
			"the agent re-prompted in time after every silence (turn 3: 2000ms)"},
		{"silence not handled", judges.SilenceHandled(time.Second), "the agent re-prompts within 1000ms of the user falling silent", voicetest.StatusFail,
			"turn 3: the agent said nothing for 1000ms after the user fell silent at 3700ms"},
		{"p95 with a slow re-prompt", judges.LatencyP95Under(time.Second), "p95 agent response latency is at most 1000ms", voicetest.StatusFail,
			"p95 2000ms over 3 replies (p50 300ms; slowest 2000ms in turn 3)"},
	})
}

func TestSilenceShorterThanLimitIsInconclusive(t *testing.T) {
	res := voicetest.Scenario(t, voicetest.Config{Golden: noGolden(),
		Agent:     fixtures.Fake(fixtures.FakeConfig{Replies: []fixtures.Reply{{Text: "okay", Latency: 200 * time.Millisecond}}}),
		UserVoice: toneTTS{},
		Script: []voicetest.Step{
			voicetest.UserSays("hi"),
			voicetest.AgentTurn(),
			voicetest.Silence(time.Second),
			voicetest.UserSays("hello?"),
		},
	})
	require.True(t, res.Success, "%v", res.Err)
	v := final(t, judges.SilenceHandled(3*time.Second), res.State)
	assert.Equal(t, voicetest.StatusInconclusive, v.Criteria[0].Status)
	assert.Contains(t, v.Criteria[0].Reasoning, "turn 1: the user spoke again 1000ms after falling silent at 1000ms, before the 3000ms limit")

	// Recorded for less than the limit after the silence: inconclusive too.
	res = voicetest.Scenario(t, voicetest.Config{Golden: noGolden(),
		Agent:     fixtures.Fake(fixtures.FakeConfig{Replies: []fixtures.Reply{{Text: "okay", Latency: 200 * time.Millisecond}}}),
		UserVoice: toneTTS{},
		Script:    []voicetest.Step{voicetest.UserSays("hi"), voicetest.AgentTurn(), voicetest.Silence(time.Second)},
	})
	require.True(t, res.Success, "%v", res.Err)
	v = final(t, judges.SilenceHandled(3*time.Second), res.State)
	assert.Equal(t, voicetest.StatusInconclusive, v.Criteria[0].Status)
	assert.Contains(t, v.Criteria[0].Reasoning, "recorded only 1000ms past the silence")
}

func TestRulesMidwayDecideOnlyWhatIsSettled(t *testing.T) {
	st := bookingState(t)
	for _, tc := range []struct {
		name    string
		rule    *judges.Rule
		status  voicetest.Status
		decided bool
	}{
		{"said: settled", judges.Says("table for two"), voicetest.StatusPass, true},
		{"not said yet: pending", judges.Says("see you tomorrow"), voicetest.StatusInconclusive, false},
		{"never said so far: may still be said", judges.NeverSays("sorry"), voicetest.StatusPass, false},
		{"said the forbidden: ends now", judges.NeverSays("goodbye"), voicetest.StatusFail, true},
		{"tool not called yet", judges.ToolCalled("transfer", nil), voicetest.StatusInconclusive, false},
		{"turns not enough yet", judges.Turns(3, 5), voicetest.StatusInconclusive, false},
		{"slow turn ends now", judges.EachTurnUnder(time.Second), voicetest.StatusFail, true},
		{"p95 over so far is not final", judges.LatencyP95Under(time.Second), voicetest.StatusInconclusive, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := midway(t, tc.rule, st)
			require.Len(t, v.Criteria, 1)
			assert.Equal(t, tc.status, v.Criteria[0].Status, v.Criteria[0].Reasoning)
			assert.Equal(t, tc.decided, v.Decided)
		})
	}
}

func TestRuleErrors(t *testing.T) {
	st := bookingState(t)
	for _, tc := range []struct {
		name string
		rule *judges.Rule
		want string
	}{
		{"bad regexp", judges.SaysRegexp("("), "SaysRegexp: invalid pattern"},
		{"bad never regexp", judges.NeverSaysRegexp("[a"), "NeverSaysRegexp: invalid pattern"},
		{"empty says", judges.Says(" ?! "), "nothing is left to match after normalising"},
		{"empty never says", judges.NeverSays(""), "nothing is left to match"},
		{"bad turns", judges.Turns(3, 2), "want 0 <= min <= max"},
		{"bad budget", judges.LatencyP95Under(0), "the budget must be positive"},
		{"bad each budget", judges.EachTurnUnder(-time.Second), "the budget must be positive"},
		{"bad interrupt limit", judges.InterruptionHandled(0), "the limit must be positive"},
		{"bad silence limit", judges.SilenceHandled(0), "the limit must be positive"},
		{"unencodable args", judges.ToolCalled("book", map[string]any{"f": func() {}}), "cannot be encoded as JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.rule.Evaluate(t.Context(), voicetest.JudgeRequest{State: st, Final: true})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, err := judges.Says("x").Evaluate(t.Context(), voicetest.JudgeRequest{Final: true})
	assert.ErrorContains(t, err, "JudgeRequest.State is nil")
	var zero judges.Rule
	_, err = zero.Evaluate(t.Context(), voicetest.JudgeRequest{State: st})
	assert.ErrorContains(t, err, "the Rule is nil or zero")
}

func TestRuleAtCheckpointAnswersOnlyItsCriterion(t *testing.T) {
	st := bookingState(t)
	r := judges.Says("table for two")
	v, err := r.Evaluate(t.Context(), voicetest.JudgeRequest{State: st, Criteria: []string{r.Criterion(), "the agent is polite"}})
	require.NoError(t, err)
	require.Len(t, v.Criteria, 2)
	assert.Equal(t, voicetest.StatusPass, v.Criteria[0].Status)
	assert.Equal(t, "the agent is polite", v.Criteria[1].Criterion)
	assert.Equal(t, voicetest.StatusInconclusive, v.Criteria[1].Status)
	assert.Contains(t, v.Criteria[1].Reasoning, `this judge checks only "the agent says \"table for two\""`)
	assert.True(t, v.Decided)
}

func TestRuleCheck(t *testing.T) {
	st := bookingState(t)
	assert.NoError(t, judges.Says("table for two").Check(st))
	err := judges.NeverSays("goodbye").Check(st)
	require.ErrorIs(t, err, judges.ErrNotPassed)
	assert.Contains(t, err.Error(), `criterion "the agent never says \"goodbye\"": fail: turn 2: the agent said "Booked! Goodbye."`)
}

func TestAudioOnlyAgentIsNotSeenAsSilent(t *testing.T) {
	res := voicetest.Scenario(t, voicetest.Config{Golden: noGolden(),
		Agent:     fixtures.AudioOnlyAgent(fixtures.Reply{Text: "sorry about that", Latency: 200 * time.Millisecond}),
		UserVoice: toneTTS{},
		Script:    []voicetest.Step{voicetest.UserSays("hi"), voicetest.AgentTurn()},
	})
	require.True(t, res.Success, "%v", res.Err)
	v := final(t, judges.NeverSays("sorry"), res.State)
	assert.Equal(t, voicetest.StatusInconclusive, v.Criteria[0].Status, "words we cannot see might hold the phrase")
	assert.Contains(t, v.Criteria[0].Reasoning, "(0 agent messages checked), but 1 more are audio only; set Config.AgentSTT")
	v = final(t, judges.Says("sorry"), res.State)
	assert.Equal(t, voicetest.StatusFail, v.Criteria[0].Status)
	assert.Contains(t, v.Criteria[0].Reasoning, "1 more are audio only, set Config.AgentSTT")
}

// In a Proceed run the rules end the conversation as soon as a criterion
// is broken, and the verdict says which and why.
func TestScenarioEndsEarlyOnBrokenRule(t *testing.T) {
	res := run(t, voicetest.Config{
		Agent: fixtures.TextAgent(
			fixtures.Reply{Text: "Hi, what can I do?", Latency: 100 * time.Millisecond},
			fixtures.Reply{Text: "Sorry, we are full.", Latency: 100 * time.Millisecond},
			fixtures.Reply{Text: "Anything else?", Latency: 100 * time.Millisecond},
		),
		User:     lines("hello", "a table please", "ok", "bye"),
		Judge:    judges.All(judges.NeverSays("sorry"), judges.Turns(0, 5)),
		MaxTurns: 4,
	})
	assert.False(t, res.Success)
	assert.Equal(t, voicetest.StatusFail, res.Status)
	assert.Equal(t, 2, res.Turns, "the run ends at the turn the agent said sorry")
	require.Len(t, res.Failed, 1)
	assert.Equal(t, `the agent never says "sorry"`, res.Failed[0].Criterion)
	assert.Contains(t, res.Failed[0].Reasoning, `turn 2: the agent said "Sorry, we are full."`)
	assert.True(t, errors.Is(res.Err, voicetest.ErrFailed))
}

// A script's Checkpoint asks a rule about its criterion by name.
func TestScenarioCheckpointWithRules(t *testing.T) {
	says := judges.Says("table for two")
	res := run(t, voicetest.Config{
		Agent: bookingAgent(),
		Judge: judges.All(says, judges.HungUp()),
		Script: []voicetest.Step{
			voicetest.AgentTurn(),
			voicetest.Checkpoint(says.Criterion()), // not said yet: fails now
			voicetest.UserSays("A table for two at seven, please."),
			voicetest.AgentTurn(),
		},
	})
	assert.False(t, res.Success)
	require.Len(t, res.Failed, 1)
	assert.Equal(t, says.Criterion(), res.Failed[0].Criterion)
	assert.Contains(t, res.Failed[0].Reasoning, `no agent message contains "table for two" (1 agent message); last: turn 0 "Hello, Luigi's, how can I help?"`)
	assert.Equal(t, []string{`step 3 UserSays("A table for two at seven, please.")`, "step 4 AgentTurn()"}, res.SkippedSteps)

	res = run(t, voicetest.Config{Agent: bookingAgent(), Judge: judges.All(says, judges.HungUp()),
		Script: append(bookingScript(), voicetest.Verdict())})
	assert.True(t, res.Success, "%v", res.Err)
	assert.Len(t, res.Passed, 2)
}

// Deterministic judges need no LLM: with no key, no endpoint and a cache
// that only replays, a scenario judged by rules runs and decides.
func TestRulesNeedNoLLM(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("VOICETEST_CACHE", "replay")
	res := voicetest.Scenario(t, voicetest.Config{
		Agent:  bookingAgent(),
		Judge:  judges.All(judges.Says("table for two"), judges.ToolCalled("book", nil), judges.HungUp(), judges.EachTurnUnder(2*time.Second)),
		Script: append(bookingScript(), voicetest.Verdict()),
	})
	assert.True(t, res.Success, "%v", res.Err)
	assert.Len(t, res.Passed, 4)
}
