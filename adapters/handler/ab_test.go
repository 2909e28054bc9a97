package handler_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/voicetest-go/voicetest/adapters/handler"
	"github.com/voicetest-go/voicetest/voicetest"
)

// abAgent greets in one of two styles (an A/B test), books when asked,
// and sets the outcome "booked"; the casual greeting makes callers book.
func abAgent(ctx context.Context, ev handler.Event, c *handler.Call) error {
	switch ev := ev.(type) {
	case handler.StartEvent:
		v, err := c.Test("greeting", handler.Variants{"formal": 1, "casual": 1})
		if err != nil {
			return err
		}
		key, _ := c.Variable("BOOKING_API_KEY")
		if key != "sk-canary-ab" {
			return fmt.Errorf("BOOKING_API_KEY is %q", key)
		}
		if v == "casual" {
			return c.Say("Hey there, want a table?")
		}
		return c.Say("Good evening. How may I assist you?")
	case handler.TextEvent:
		if strings.Contains(ev.Text, "yes") {
			if err := c.SetOutcome("booked", 1); err != nil {
				return err
			}
			return c.Say("Booked.")
		}
		if err := c.SetOutcome("booked", 0); err != nil {
			return err
		}
		return c.Say("Goodbye.")
	}
	return nil
}

// outcomeJudge passes when the agent set outcome name to want (the
// judges package has the real rules; a handler test links no LLM
// client, see adapters.TestDependencyRule).
func outcomeJudge(name string, want float64) voicetest.Judge {
	return voicetest.JudgeFunc(func(ctx context.Context, req voicetest.JudgeRequest) (voicetest.Judgment, error) {
		st := voicetest.StatusFail
		if v, ok := req.State.Outcome(name); ok && v == want {
			st = voicetest.StatusPass
		}
		return voicetest.Judgment{Decided: true, Criteria: []voicetest.CriterionResult{{Criterion: name, Status: st}}}, nil
	})
}

// abCaller books only after a casual greeting.
var abCaller = voicetest.UserFunc(func(ctx context.Context, st *voicetest.State) (voicetest.Utterance, error) {
	if st.Turn() > 0 {
		return voicetest.Utterance{Done: true}, nil
	}
	if strings.HasPrefix(st.LastAgentText(), "Hey") {
		return voicetest.Utterance{Text: "yes please"}, nil
	}
	return voicetest.Utterance{Text: "no thanks"}, nil
})

func abScript() []voicetest.Step {
	return []voicetest.Step{voicetest.AgentTurn(), voicetest.UserTurn(), voicetest.AgentTurn()}
}

// TestABForcedVariants: a table-driven test covers every variant; the
// variant is a timeline event, the outcome is recorded and assertable
// from a check and from a judge.
func TestABForcedVariants(t *testing.T) {
	for _, tc := range []struct {
		variant string
		booked  float64
	}{{"formal", 0}, {"casual", 1}} {
		t.Run(tc.variant, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				agent := handler.New(abAgent, handler.ForceVariant("greeting", tc.variant),
					handler.WithVariables(map[string]string{"BOOKING_API_KEY": "sk-canary-ab"}))
				res, err := voicetest.Run(t.Context(), voicetest.Config{
					Agent: agent, User: abCaller,
					Judge:  outcomeJudge("booked", tc.booked),
					Script: append(abScript(), voicetest.Verdict()),
				})
				if err != nil {
					t.Fatal(err)
				}
				if v, ok := res.State.Variant("greeting"); !ok || v != tc.variant {
					t.Errorf("State.Variant = %q, %v; want %q", v, ok, tc.variant)
				}
				if b, ok := res.State.Outcome("booked"); !ok || b != tc.booked {
					t.Errorf("State.Outcome(booked) = %v, %v; want %v", b, ok, tc.booked)
				}
				var variantAt int = -1
				for i, e := range res.Timeline {
					if e.Type == voicetest.EventData && e.Text == voicetest.DataVariant {
						variantAt = i
						if !strings.Contains(string(e.Data), `"forced":true`) {
							t.Errorf("variant event %s: want it marked forced", e.Data)
						}
					}
				}
				if variantAt < 0 {
					t.Errorf("no %s event on the timeline:\n%s", voicetest.DataVariant, res.TimelineText())
				}
				// The secret variable never reaches the recorded conversation.
				if all := res.TimelineText() + res.TranscriptText(); strings.Contains(all, "sk-canary-ab") {
					t.Error("the variable's value is in the timeline or transcript")
				}
			})
		})
	}
}

// TestABSeededUnderRepeat: seeded variants under Repeat split the runs by
// weight, the same way on every run of the test, and the summary gives
// each variant's runs, passes and outcomes.
func TestABSeededUnderRepeat(t *testing.T) {
	summary := func() []voicetest.VariantSummary {
		var out []voicetest.VariantSummary
		synctest.Test(t, func(t *testing.T) {
			agent := handler.New(abAgent, handler.WithVariantSeed(7),
				handler.WithVariables(map[string]string{"BOOKING_API_KEY": "sk-canary-ab"}))
			res, _ := voicetest.Run(t.Context(), voicetest.Config{
				Name: "ab", Agent: agent, User: abCaller, Repeat: voicetest.Repeat{Runs: 40, MinPassRate: 0.1},
				Judge:  outcomeJudge("booked", 1),
				Script: append(abScript(), voicetest.Verdict()),
			})
			if res == nil {
				t.Fatal("no result")
			}
			out = res.Variants()
		})
		return out
	}
	got := summary()
	if len(got) != 2 {
		t.Fatalf("summary %v, want the two variants", got)
	}
	casual, formal := got[0], got[1]
	t.Logf("%s\n%s", casual, formal)
	if casual.Variant != "casual" || formal.Variant != "formal" || casual.Runs+formal.Runs != 40 {
		t.Fatalf("summary %v: want casual and formal over 40 runs", got)
	}
	if casual.Runs < 10 || formal.Runs < 10 {
		t.Errorf("equal weights split 40 runs %d/%d; want each at least 10", casual.Runs, formal.Runs)
	}
	if casual.Passed != casual.Runs || formal.Passed != 0 {
		t.Errorf("passed: casual %d of %d, formal %d of %d; want all casual runs to book and no formal one", casual.Passed, casual.Runs, formal.Passed, formal.Runs)
	}
	if o := casual.Outcomes["booked"]; o.N != casual.Runs || o.Mean != 1 {
		t.Errorf("casual booked %+v, want mean 1 over every run", o)
	}
	if o := formal.Outcomes["booked"]; o.Mean != 0 {
		t.Errorf("formal booked %+v, want mean 0", o)
	}
	if again := summary(); fmt.Sprint(again) != fmt.Sprint(got) {
		t.Errorf("a second run drew %v, want the same variants as %v (seeded)", again, got)
	}
}

// TestABErrors: bad tests and a forced variant that does not exist fail
// the handler with a clear error.
func TestABErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		variants handler.Variants
		opts     []handler.Option
		want     string
	}{
		{"", handler.Variants{"a": 1}, nil, "needs a name"},
		{"t", handler.Variants{}, nil, "positive weight"},
		{"t", handler.Variants{"a": -1, "b": 2}, nil, "not negative"},
		{"t", handler.Variants{"a": 1}, []handler.Option{handler.ForceVariant("t", "z")}, `asks for "z"`},
	} {
		synctest.Test(t, func(t *testing.T) {
			agent := handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
				if _, ok := ev.(handler.StartEvent); ok {
					_, err := c.Test(tc.name, tc.variants)
					return err
				}
				return nil
			}, tc.opts...)
			_, err := voicetest.Run(t.Context(), voicetest.Config{Agent: agent, Script: []voicetest.Step{voicetest.AgentTurn()}})
			var he *handler.Error
			if !errors.As(err, &he) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Test(%q, %v): %v, want a handler error about %q", tc.name, tc.variants, err, tc.want)
			}
		})
	}
}
