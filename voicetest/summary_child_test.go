package voicetest_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// summaryChildEnv, set to 1, makes this test binary the child suite of
// TestSuiteSummary (see TestMain).
const summaryChildEnv = "VOICETEST_SUMMARY_CHILD"

// summaryChild skips the TestSummaryChild tests unless TestSuiteSummary
// runs them in a subprocess.
func summaryChild(t *testing.T) {
	t.Helper()
	if os.Getenv(summaryChildEnv) != "1" {
		t.Skip("run by TestSuiteSummary in a subprocess (" + summaryChildEnv + "=1)")
	}
}

// summaryChildConfig is a scenario of one user turn per reply.
func summaryChildConfig(replies ...fixtures.Reply) voicetest.Config {
	var script []voicetest.Step
	for range replies {
		script = append(script, voicetest.UserSays("hello"), voicetest.AgentTurn())
	}
	return voicetest.Config{
		Agent:     fixtures.ScriptedAgent(replies...),
		UserVoice: fixtures.FakeTTS(),
		Timeouts:  voicetest.Timeouts{Greeting: time.Millisecond},
		Script:    script,
		Golden:    voicetest.GoldenOptions{Disable: true},
	}
}

func TestSummaryChildPasses(t *testing.T) {
	summaryChild(t)
	voicetest.Scenario(t, summaryChildConfig(
		fixtures.Reply{Text: "one", Latency: 300 * time.Millisecond},
		fixtures.Reply{Text: "two", Latency: 500 * time.Millisecond},
	))
}

func TestSummaryChildParallel(t *testing.T) {
	summaryChild(t)
	for _, name := range []string{"a", "b"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			voicetest.Scenario(t, summaryChildConfig(fixtures.Reply{Text: "hi", Latency: 100 * time.Millisecond}))
		})
	}
}

func TestSummaryChildFailsVerdict(t *testing.T) {
	summaryChild(t)
	c := summaryChildConfig(fixtures.Reply{Text: "no", Latency: 700 * time.Millisecond})
	c.Name = "rude agent"
	c.Judge = voicetest.JudgeFunc(func(ctx context.Context, req voicetest.JudgeRequest) (voicetest.Judgment, error) {
		return voicetest.Judgment{Decided: true, Criteria: []voicetest.CriterionResult{
			{Criterion: "the agent is polite", Status: voicetest.StatusFail, Reasoning: "it said no"},
		}}, nil
	})
	c.Script = append(c.Script, voicetest.Verdict())
	voicetest.Scenario(t, c)
}
