package judges_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/adapters/handler"
	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// bargeInConfig: the agent greets (200–1000 ms); the user says "hi"
// (1000–1400); the agent answers 300 ms later and the user barges in
// after two words (2100); the agent stops 150 ms later; it answers the
// barge-in 200 ms after it ends (2900 → 3100); the user then stays
// silent 2 s. On virtual time every figure is exact.
func bargeInConfig() voicetest.Config {
	return voicetest.Config{
		Golden: noGolden(),
		Agent: fixtures.Fake(fixtures.FakeConfig{BargeIn: true, StopLatency: 150 * time.Millisecond,
			Greeting: fixtures.Reply{Text: "Hello there", Latency: 200 * time.Millisecond},
			Replies: []fixtures.Reply{
				{Text: "one two three four five", Latency: 300 * time.Millisecond},
				{Text: "okay then", Latency: 200 * time.Millisecond},
			}}),
		UserVoice: toneTTS{},
		Script: []voicetest.Step{
			voicetest.AgentTurn(),
			voicetest.UserSays("hi"),
			voicetest.Interrupt("stop please", voicetest.AfterWords(2)),
			voicetest.AgentTurn(),
			voicetest.Silence(2 * time.Second),
		},
	}
}

func qualityState(t *testing.T) *voicetest.State {
	t.Helper()
	res := voicetest.Scenario(t, bargeInConfig())
	require.True(t, res.Success, "barge-in scenario: %v", res.Err)
	return res.State
}

func TestQualityRules(t *testing.T) {
	st := qualityState(t)
	checkRules(t, st, []ruleCase{
		{"talk-over within", judges.MaxTalkOver(150 * time.Millisecond), "the agent and the caller talk over each other for at most 150ms in all",
			voicetest.StatusPass, "150ms of talk-over (turn 1 at 2100ms: 150ms by the user, the agent gave way)"},
		{"talk-over over", judges.MaxTalkOver(100 * time.Millisecond), "the agent and the caller talk over each other for at most 100ms in all",
			voicetest.StatusFail, "150ms of talk-over (turn 1 at 2100ms: 150ms by the user, the agent gave way), over 100ms"},
		{"agent talk-over", judges.MaxAgentTalkOver(0), "the agent talks over the caller for at most 0ms in all",
			voicetest.StatusPass, "no talk-over"},
		{"pause within", judges.MaxPause(2 * time.Second), "no pause in the conversation lasts more than 2000ms",
			voicetest.StatusPass, "longest pause 2000ms at 3900ms in turn 2, after the agent (3 pauses, 2500ms of dead air)"},
		{"pause over", judges.MaxPause(time.Second), "no pause in the conversation lasts more than 1000ms",
			voicetest.StatusFail, "longest pause 2000ms at 3900ms in turn 2, after the agent (3 pauses, 2500ms of dead air), over 1000ms"},
		{"unfilled", judges.MaxUnfilledGap(500 * time.Millisecond), "the agent never leaves the caller waiting unanswered for more than 500ms",
			voicetest.StatusPass, "the agent answered every time the caller stopped"},
		{"p90 within", judges.LatencyUnder(90, 300*time.Millisecond), "p90 agent response latency is at most 300ms",
			voicetest.StatusPass, "p90 300ms over 2 replies (p50 250ms, max 300ms in turn 1)"},
		{"p50 over", judges.LatencyUnder(50, 200*time.Millisecond), "p50 agent response latency is at most 200ms",
			voicetest.StatusFail, "p50 250ms over 2 replies (p50 250ms, max 300ms in turn 1), over the 200ms budget"},
		{"slowest", judges.LatencyUnder(100, 299*time.Millisecond), "the slowest agent response latency is at most 299ms",
			voicetest.StatusFail, "the slowest 300ms over 2 replies"},
		{"rate", judges.SpeakingRate(140, 160), "the agent speaks at 140 to 160 words a minute",
			voicetest.StatusPass, "150 words a minute (4 words in 1600ms of speech, 2.0 words a turn)"},
		{"rate too slow", judges.SpeakingRate(160, 220), "the agent speaks at 160 to 220 words a minute",
			voicetest.StatusFail, "150 words a minute (4 words in 1600ms of speech, 2.0 words a turn), outside 160 to 220"},
		{"wer not measured", judges.MaxWER(0.05), "the agent's audio says what its transcript says, word error rate at most 5%",
			voicetest.StatusInconclusive, "set Config.MeasureAgentWER and Config.AgentSTT"},
	})
}

// A rule over a metric that only grows fails for good at once; one whose
// figure may still come down waits.
func TestQualityRulesMidConversation(t *testing.T) {
	st := qualityState(t)
	mid := func(r *judges.Rule) voicetest.Judgment {
		v, err := r.Evaluate(context.Background(), voicetest.JudgeRequest{State: st, Turn: 2, MaxTurns: 10})
		require.NoError(t, err)
		return v
	}
	v := mid(judges.MaxTalkOver(100 * time.Millisecond))
	assert.True(t, v.Decided, "talk-over only grows: over the limit is final")
	assert.Equal(t, voicetest.StatusFail, v.Status())
	v = mid(judges.LatencyUnder(50, 200*time.Millisecond))
	assert.False(t, v.Decided, "a median over budget may still come down")
	assert.Equal(t, voicetest.StatusInconclusive, v.Status())
	v = mid(judges.LatencyUnder(100, 200*time.Millisecond))
	assert.True(t, v.Decided, "the slowest reply only grows")
	v = mid(judges.SpeakingRate(140, 160))
	assert.False(t, v.Decided, "the rate is decided at the end")
}

func TestQualityRulesRejectBadLimits(t *testing.T) {
	st := qualityState(t)
	for _, r := range []*judges.Rule{judges.LatencyUnder(42, time.Second), judges.LatencyUnder(95, 0), judges.MaxPause(0),
		judges.SpeakingRate(200, 100), judges.MaxWER(-1), judges.MaxTalkOver(-time.Second), judges.MaxUnfilledGap(0)} {
		_, err := r.Evaluate(context.Background(), voicetest.JudgeRequest{State: st, Final: true})
		assert.Error(t, err, "%s", r)
	}
}

// mangleTTS says 70 where the text says 17: a TTS that mangles numbers.
type mangleTTS struct{}

func (mangleTTS) Synthesize(ctx context.Context, req voicetest.SpeechRequest) (pcm.Chunk, error) {
	req.Text = strings.ReplaceAll(req.Text, "17", "70")
	return fixtures.FakeTTS().Synthesize(ctx, req)
}

// TestMaxWERCatchesAMangledNumber: the agent's transcript says 17, its
// audio 70. MaxWER fails and shows both; a suite gates on it without an
// LLM.
func TestMaxWERCatchesAMangledNumber(t *testing.T) {
	agent := handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
		if _, ok := ev.(handler.TextEvent); ok {
			return c.Say("Your table for 17 is booked.")
		}
		return nil
	}, handler.AudioMode(mangleTTS{}, fixtures.FakeSTT()))
	res := run(t, voicetest.Config{
		Golden: noGolden(), Agent: agent, UserVoice: fixtures.FakeTTS(), AgentSTT: fixtures.FakeSTT(), MeasureAgentWER: true,
		Judge:  judges.All(judges.MaxWER(0.05), judges.MaxPause(time.Second)),
		Script: []voicetest.Step{voicetest.UserSays("Book a table"), voicetest.AgentTurn(), voicetest.Verdict()},
	})
	require.Len(t, res.Failed, 1, "err: %v", res.Err)
	assert.Equal(t, "the agent's audio says what its transcript says, word error rate at most 5%", res.Failed[0].Criterion)
	assert.Contains(t, res.Failed[0].Reasoning, `word error rate 16.7% (1 edits in 6 words of 1 messages); worst turn 1: it said "Your table for 17 is booked.", its audio says "Your table for 70 is booked.", over 5%`)
	require.Len(t, res.Passed, 1)
}
