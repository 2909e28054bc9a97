package summarytest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

func TestMain(m *testing.M) { voicetest.Main(m) }

func child(t *testing.T) {
	t.Helper()
	if os.Getenv("VOICETEST_SUMMARY_CHILD") != "1" {
		t.Skip("run by voicetest's TestSuiteSummary in a subprocess (VOICETEST_SUMMARY_CHILD=1)")
	}
}

func cfg(replies ...fixtures.Reply) voicetest.Config {
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

func TestPasses(t *testing.T) {
	child(t)
	voicetest.Scenario(t, cfg(
		fixtures.Reply{Text: "one", Latency: 300 * time.Millisecond},
		fixtures.Reply{Text: "two", Latency: 500 * time.Millisecond},
	))
}

func TestParallel(t *testing.T) {
	child(t)
	for _, name := range []string{"a", "b"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			voicetest.Scenario(t, cfg(fixtures.Reply{Text: "hi", Latency: 100 * time.Millisecond}))
		})
	}
}

func TestFailsVerdict(t *testing.T) {
	child(t)
	c := cfg(fixtures.Reply{Text: "no", Latency: 700 * time.Millisecond})
	c.Name = "rude agent"
	c.Judge = voicetest.JudgeFunc(func(ctx context.Context, req voicetest.JudgeRequest) (voicetest.Judgment, error) {
		return voicetest.Judgment{Decided: true, Criteria: []voicetest.CriterionResult{
			{Criterion: "the agent is polite", Status: voicetest.StatusFail, Reasoning: "it said no"},
		}}, nil
	})
	c.Script = append(c.Script, voicetest.Verdict())
	voicetest.Scenario(t, c)
}
