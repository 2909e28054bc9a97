package voicetest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// Issue 14, item 1: nothing after a hang-up is silently skipped.

// A Check after the turn in which the agent hangs up runs on the final
// state, and fails the scenario when it fails.
func TestCheckAfterTheHangUpRuns(t *testing.T) {
	ran := false
	res, err := runVirtual(t, voicetest.Config{
		Agent: fixtures.HangUpAgent("Goodbye now"), UserVoice: &toneTTS{},
		Script: []voicetest.Step{
			voicetest.UserSays("cancel my order"),
			voicetest.AgentTurn(),
			voicetest.Check(func(st *voicetest.State) error {
				ran = true
				if got := st.LastAgentText(); got != "Goodbye now" {
					t.Errorf("the check saw %q, want the agent's last words", got)
				}
				return errors.New("the order was not cancelled")
			}),
		},
	})
	if !ran {
		t.Fatalf("the Check after the hang-up did not run (skipped %q)", res.SkippedSteps)
	}
	if err == nil || res.Success || !strings.Contains(err.Error(), "step 3 Check(): the order was not cancelled") {
		t.Fatalf("err = %v, success %v; want the failing check to fail the scenario", err, res.Success)
	}
	if len(res.SkippedSteps) != 0 {
		t.Errorf("SkippedSteps = %q, want none", res.SkippedSteps)
	}
}

// Read-only steps (Check, Checkpoint, Verdict) after a hang-up all run,
// and a passing scenario lists nothing as skipped.
func TestReadOnlyStepsRunAfterTheHangUp(t *testing.T) {
	var asked []string
	judge := criteriaJudge(func(req voicetest.JudgeRequest) (voicetest.Judgment, error) {
		if req.Final {
			asked = append(asked, "verdict")
		} else {
			asked = append(asked, "checkpoint")
		}
		return allPass(req)
	})
	checks := 0
	res, err := runVirtual(t, voicetest.Config{
		Agent: fixtures.HangUpAgent("Goodbye now"), UserVoice: &toneTTS{}, Judge: judge,
		Script: []voicetest.Step{
			voicetest.UserSays("cancel my order"),
			voicetest.AgentTurn(),
			voicetest.Check(func(*voicetest.State) error { checks++; return nil }),
			voicetest.Checkpoint("the agent says goodbye"),
			voicetest.Verdict(),
			voicetest.Check(func(*voicetest.State) error { checks++; return nil }),
		},
	})
	if err != nil || !res.Success {
		t.Fatalf("err %v, success %v", err, res.Success)
	}
	if checks != 2 || strings.Join(asked, ",") != "checkpoint,verdict" {
		t.Errorf("checks %d, judge asked %v; want both checks, the checkpoint and the verdict", checks, asked)
	}
	if res.Ended != "the agent hung up" || len(res.SkippedSteps) != 0 {
		t.Errorf("Ended %q, skipped %q", res.Ended, res.SkippedSteps)
	}
}

// A step that needs the line after the agent hung up fails the scenario
// with an error naming the step, when the agent hung up and why.
func TestLineStepAfterTheHangUpFails(t *testing.T) {
	for _, step := range []voicetest.Step{
		voicetest.UserSays("wait"),
		voicetest.AgentTurn(),
		voicetest.Silence(time.Second),
		voicetest.DTMF("1"),
		voicetest.Interrupt("hey", voicetest.AfterSpeechStarts()),
		voicetest.UserTurn(),
		voicetest.Proceed(1),
	} {
		t.Run(step.String(), func(t *testing.T) {
			res, err := runVirtual(t, voicetest.Config{
				Agent: fixtures.HangUpAgent("Goodbye now"), UserVoice: &toneTTS{}, User: lines("more"),
				Script: []voicetest.Step{
					voicetest.UserSays("cancel my order"),
					voicetest.AgentTurn(),
					step,
					voicetest.Check(func(*voicetest.State) error { return nil }),
				},
			})
			var hu *voicetest.HangUpError
			if !errors.As(err, &hu) || !errors.Is(err, voicetest.ErrHungUp) || res.Success {
				t.Fatalf("err = %v, want a *HangUpError failing the scenario", err)
			}
			var se *voicetest.StepError
			if !errors.As(err, &se) || se.Index != 3 || se.Step != step.String() {
				t.Errorf("err = %v, want it to name step 3 %s", err, step)
			}
			if hu.At != res.Duration || hu.Reason != "goodbye" || hu.Step != "step 2 AgentTurn()" {
				t.Errorf("HangUpError %+v, want the hang-up at %v (goodbye) during step 2", hu, res.Duration)
			}
			msg := err.Error()
			for _, want := range []string{"step 3 " + step.String(), "the agent hung up at 1.900s", `"goodbye"`, "during step 2 AgentTurn()", "voicetest.ExpectHangUp()"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q lacks %q", msg, want)
				}
			}
			if len(res.SkippedSteps) != 1 || res.SkippedSteps[0] != "step 4 Check()" || res.SkipReason != "step 3 "+step.String()+" failed" {
				t.Errorf("skipped %q because %q", res.SkippedSteps, res.SkipReason)
			}
		})
	}
}

// ExpectHangUp says the hang-up is the goal: it passes when the agent has
// hung up, waits for a goodbye still to come, and fails when the agent
// stays on the line.
func TestExpectHangUp(t *testing.T) {
	t.Run("already hung up", func(t *testing.T) {
		res, err := runVirtual(t, voicetest.Config{
			Agent: fixtures.HangUpAgent("Goodbye now"), UserVoice: &toneTTS{},
			Script: []voicetest.Step{voicetest.UserSays("cancel"), voicetest.AgentTurn(), voicetest.ExpectHangUp()},
		})
		if err != nil || !res.Success || res.Ended != "the agent hung up" {
			t.Fatalf("err %v, success %v, ended %q", err, res.Success, res.Ended)
		}
	})
	t.Run("waits for the goodbye", func(t *testing.T) {
		res, err := runVirtual(t, voicetest.Config{
			Agent: fixtures.HangUpAgent("Goodbye now"), UserVoice: &toneTTS{},
			Script: []voicetest.Step{voicetest.UserSays("cancel"), voicetest.ExpectHangUp()},
		})
		if err != nil || !res.Success || res.State.LastAgentText() != "Goodbye now" {
			t.Fatalf("err %v, success %v, last agent text %q", err, res.Success, res.State.LastAgentText())
		}
	})
	t.Run("the agent stays on the line", func(t *testing.T) {
		res, err := runVirtual(t, voicetest.Config{
			Agent: fixtures.ScriptedAgent(fixtures.Reply{Text: "Anything else?"}), UserVoice: &toneTTS{},
			Script: []voicetest.Step{voicetest.UserSays("that is all"), voicetest.AgentTurn(), voicetest.ExpectHangUp()},
		})
		var te *voicetest.TimeoutError
		if !errors.As(err, &te) || te.Phase != voicetest.PhaseHangUp || res.Success {
			t.Fatalf("err = %v, want a hang-up TimeoutError", err)
		}
		if !strings.Contains(err.Error(), "step 3 ExpectHangUp()") || !strings.Contains(err.Error(), "still on the line") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a line step after it is a script error", func(t *testing.T) {
		_, err := voicetest.Run(t.Context(), voicetest.Config{
			Agent:  fixtures.EchoAgent(),
			Script: []voicetest.Step{voicetest.AgentTurn(), voicetest.ExpectHangUp(), voicetest.UserSays("hello?")},
		})
		if err == nil || !strings.Contains(err.Error(), `Config.Script[2] (UserSays("hello?")) comes after ExpectHangUp() at Config.Script[1]`) {
			t.Fatalf("err = %v", err)
		}
	})
}

// After the user hangs up or the judge decides, line steps do not run,
// and the result says which and why; read-only steps still run.
func TestStepsAfterTheConversationEndedAreReported(t *testing.T) {
	checked := false
	ftb := newFakeTB(t)
	res := voicetest.Scenario(ftb, voicetest.Config{
		Golden: voicetest.GoldenOptions{Disable: true},
		Agent:  fixtures.EchoAgent(), UserVoice: &toneTTS{},
		User: voicetest.UserFunc(func(ctx context.Context, st *voicetest.State) (voicetest.Utterance, error) {
			return voicetest.Utterance{Text: "bye then", HangUp: true}, nil
		}),
		Script: []voicetest.Step{
			voicetest.UserTurn(), voicetest.AgentTurn(),
			voicetest.Check(func(*voicetest.State) error { checked = true; return nil }),
		},
	})
	if !res.Success || !checked {
		t.Fatalf("success %v, checked %v: %v", res.Success, checked, res.Err)
	}
	if len(res.SkippedSteps) != 1 || res.SkippedSteps[0] != "step 2 AgentTurn()" || !strings.Contains(res.SkipReason, "the user hung up") {
		t.Errorf("skipped %q because %q", res.SkippedSteps, res.SkipReason)
	}
	logged := strings.Join(ftb.logs, "\n")
	if !strings.Contains(logged, "not run (the user hung up") || !strings.Contains(logged, "step 2 AgentTurn()") {
		t.Errorf("a passing scenario must say what it did not run; log:\n%s", logged)
	}
}

// An AgentTurn after the hang-up still records the goodbye that arrived
// while the user spoke; a second one has nothing left and fails.
func TestAgentTurnRecordsTheLastWordsAfterTheHangUp(t *testing.T) {
	agent := fixtures.Fake(fixtures.FakeConfig{Greeting: fixtures.Reply{Text: "Bye", Latency: 410 * time.Millisecond, HangUp: true}})
	res, err := runVirtual(t, voicetest.Config{
		Agent: agent, UserVoice: &toneTTS{},
		Script: []voicetest.Step{voicetest.UserSays("I have a long question for you"), voicetest.AgentTurn(), voicetest.Check(func(st *voicetest.State) error {
			if st.LastAgentText() != "Bye" {
				return fmt.Errorf("the goodbye is not recorded: %+v", st.Transcript())
			}
			return nil
		})},
	})
	if err != nil || !res.Success {
		t.Fatalf("err = %v", err)
	}
	_, err = runVirtual(t, voicetest.Config{
		Agent: agent, UserVoice: &toneTTS{},
		Script: []voicetest.Step{voicetest.UserSays("I have a long question for you"), voicetest.AgentTurn(), voicetest.AgentTurn()},
	})
	var se *voicetest.StepError
	if !errors.Is(err, voicetest.ErrHungUp) || !errors.As(err, &se) || se.Index != 3 {
		t.Fatalf("err = %v, want step 3 to fail on the hang-up", err)
	}
}
