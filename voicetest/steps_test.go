package voicetest_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

func TestGreetingThenProceedUntilVerdict(t *testing.T) {
	agent := fixtures.Fake(fixtures.FakeConfig{
		Greeting: fixtures.Reply{Text: "Welcome to the bistro", Latency: 200 * time.Millisecond},
		Replies: []fixtures.Reply{
			{Text: "For how many", Latency: 250 * time.Millisecond},
			{Text: "Booked for two", Latency: 350 * time.Millisecond},
			{Text: "Anything else", Latency: 450 * time.Millisecond},
		},
	})
	asked := 0
	judge := criteriaJudge(func(req voicetest.JudgeRequest) (voicetest.Judgment, error) {
		asked++
		if req.State == nil || req.MaxTurns != voicetest.DefaultMaxTurns {
			t.Errorf("judge request without state or MaxTurns: %+v", req)
		}
		if !strings.Contains(req.State.AgentText(), "Booked") {
			return voicetest.Judgment{Decided: false}, nil
		}
		return voicetest.Judgment{Decided: true, Reasoning: "booked",
			Criteria: []voicetest.CriterionResult{{Criterion: "books a table", Status: voicetest.StatusPass}}}, nil
	})
	res, err := runVirtual(t, voicetest.Config{
		Agent: agent, UserVoice: &toneTTS{}, Judge: judge,
		User: lines("A table please", "Two people", "No thanks"),
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !res.Success || res.Verdict == nil || res.Reasoning != "booked" || len(res.Passed) != 1 {
		t.Fatalf("Success %v, verdict %+v, reasoning %q, passed %v", res.Success, res.Verdict, res.Reasoning, res.Passed)
	}
	if asked != 2 || res.Turns != 2 {
		t.Errorf("judge asked %d times over %d turns, want 2 and 2", asked, res.Turns)
	}
	want := "agent: Welcome to the bistro\nuser: A table please\nagent: For how many\nuser: Two people\nagent: Booked for two\n"
	if got := res.TranscriptText(); got != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
	}
	if tr := res.Transcript; tr[0].Turn != 0 || tr[1].Turn != 1 || tr[2].Turn != 1 {
		t.Errorf("turn numbers: %d %d %d, want 0 1 1", tr[0].Turn, tr[1].Turn, tr[2].Turn)
	}
	// The greeting has no latency (no user speech before it), so two turns.
	if got := res.Latency.PerTurn; len(got) != 2 || got[0] != ms(250) || got[1] != ms(350) {
		t.Errorf("PerTurn = %v, want [250ms 350ms]", got)
	}
	if res.Latency.TTFB != ms(200) {
		t.Errorf("TTFB = %v, want 200ms", res.Latency.TTFB)
	}
	if tl := res.TimelineText(); !strings.Contains(tl, "verdict \"pass: \\\"books a table\\\"=pass\"") {
		t.Errorf("timeline lacks the verdict:\n%s", tl)
	}
}

func TestProceedStopsAtMaxTurnsWithFinalJudgement(t *testing.T) {
	var finals []bool
	judge := criteriaJudge(func(req voicetest.JudgeRequest) (voicetest.Judgment, error) {
		finals = append(finals, req.Final)
		if !req.Final {
			return voicetest.Judgment{}, nil
		}
		return voicetest.Judgment{Decided: true, Reasoning: "never confirmed",
			Criteria: []voicetest.CriterionResult{{Criterion: "confirms", Status: voicetest.StatusFail, Reasoning: "no confirmation"}}}, nil
	})
	res, err := runVirtual(t, voicetest.Config{
		Agent:     fixtures.EchoAgent(),
		UserVoice: &toneTTS{}, Judge: judge, MaxTurns: 3,
		User: voicetest.UserFunc(func(ctx context.Context, st *voicetest.State) (voicetest.Utterance, error) {
			return voicetest.Utterance{Text: "again"}, nil
		}),
	})
	if !errors.Is(err, voicetest.ErrFailed) || res.Success || res.Status != voicetest.StatusFail {
		t.Fatalf("err = %v, Success %v, Status %v; want ErrFailed and a failure", err, res.Success, res.Status)
	}
	if len(finals) != 3 || finals[0] || finals[1] || !finals[2] {
		t.Errorf("judge Final flags = %v, want [false false true]", finals)
	}
	if res.Turns != 3 || len(res.Failed) != 1 || !strings.Contains(err.Error(), "no confirmation") {
		t.Errorf("turns %d, failed %v, err %v", res.Turns, res.Failed, err)
	}
	// The echo agent sends no transcript and no STT is set: audio only.
	if !strings.Contains(res.TranscriptText(), "agent: (audio only)") {
		t.Errorf("transcript lacks the audio-only placeholder:\n%s", res.TranscriptText())
	}
}

func TestTextOnlyAgentSpeakingTimes(t *testing.T) {
	res, err := runVirtual(t, voicetest.Config{
		Agent: fixtures.TextAgent(fixtures.Reply{Text: "One two three", Latency: 100 * time.Millisecond}),
		Script: []voicetest.Step{
			voicetest.UserSays("a b c d e"), // 5 words at 150 wpm = 2 s
			voicetest.AgentTurn(),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `      0ms turn 1 user_start_speaking
   2000ms turn 1 user_stop_speaking
   2100ms turn 1 agent_start_speaking latency=100ms
   3300ms turn 1 agent_stop_speaking
`
	if got := res.TimelineText(); got != want {
		t.Errorf("timeline:\n%s\nwant:\n%s", got, want)
	}
	if len(res.Recording.Segments) != 2 || !res.Recording.Segments[1].Audio().IsEmpty() {
		t.Errorf("segments %+v, want 2 without audio", res.Recording.Segments)
	}
}

func TestAudioOnlyAgentTailSilenceAndSTT(t *testing.T) {
	for _, tc := range []struct {
		name string
		stt  voicetest.STT
		want string
	}{
		{"with STT", lengthSTT{}, "agent: heard 1119ms\n"},
		{"without STT", nil, "agent: (audio only)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := runVirtual(t, voicetest.Config{
				Agent:     fixtures.AudioOnlyAgent(fixtures.Reply{Text: "one two three", Latency: 400 * time.Millisecond}),
				UserVoice: &toneTTS{}, AgentSTT: tc.stt,
				Script: []voicetest.Step{voicetest.UserSays("hi"), voicetest.AgentTurn(), voicetest.UserSays("bye")},
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.TranscriptText(); got != "user: hi\n"+tc.want+"user: bye\n" {
				t.Errorf("transcript:\n%s", got)
			}
			// Agent audio 800..2000 ms; the user speaks again after 600 ms of
			// tail silence.
			want := `      0ms turn 1 user_start_speaking
    400ms turn 1 user_stop_speaking
    800ms turn 1 agent_start_speaking latency=400ms
   2000ms turn 1 agent_stop_speaking
   2600ms turn 2 user_start_speaking
   3000ms turn 2 user_stop_speaking
`
			if got := res.TimelineText(); got != want {
				t.Errorf("timeline:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestSilentAgentTimesOutNamingThePhase(t *testing.T) {
	res, err := runVirtual(t, voicetest.Config{
		Agent: fixtures.SilentAgent(), UserVoice: &toneTTS{},
		Script: []voicetest.Step{voicetest.UserSays("hello"), voicetest.AgentTurn(), voicetest.UserSays("anyone")},
	})
	var te *voicetest.TimeoutError
	if !errors.As(err, &te) || te.Phase != voicetest.PhaseFirstChunk || te.Timeout != voicetest.DefaultFirstChunkTimeout || te.Turn != 1 {
		t.Fatalf("err = %v, want a first-chunk TimeoutError after %v in turn 1", err, voicetest.DefaultFirstChunkTimeout)
	}
	var se *voicetest.StepError
	if !errors.As(err, &se) || se.Index != 2 || se.Step != "AgentTurn()" {
		t.Errorf("err = %v, want it to name step 2 AgentTurn()", err)
	}
	if len(res.SkippedSteps) != 1 || res.SkippedSteps[0] != `step 3 UserSays("anyone")` {
		t.Errorf("SkippedSteps = %q", res.SkippedSteps)
	}
	if want := voicetest.DefaultFirstChunkTimeout + ms(400); res.Duration != want {
		t.Errorf("Duration = %v, want %v of virtual time", res.Duration, want)
	}
}

func TestAgentHangUpEndsGracefullyAndJudgeStillRuns(t *testing.T) {
	judge := func(judged *bool) voicetest.Judge {
		return criteriaJudge(func(req voicetest.JudgeRequest) (voicetest.Judgment, error) {
			*judged = true
			if !req.Final {
				t.Error("the verdict after a hang-up must be final")
			}
			return allPass(req)
		})
	}
	// The hang-up is the goal (ExpectHangUp): the verdict runs on the
	// final state and nothing is skipped.
	judged := false
	res, err := runVirtual(t, voicetest.Config{
		Agent: fixtures.HangUpAgent("Goodbye now"), UserVoice: &toneTTS{}, Judge: judge(&judged),
		Script: []voicetest.Step{
			voicetest.UserSays("cancel my order"),
			voicetest.AgentTurn(),
			voicetest.ExpectHangUp(),
			voicetest.Verdict(),
		},
	})
	if err != nil || !res.Success || !judged {
		t.Fatalf("err %v, success %v, judged %v; want a graceful end and a verdict", err, res.Success, judged)
	}
	if res.Ended != "the agent hung up" || len(res.SkippedSteps) != 0 {
		t.Errorf("Ended %q, skipped %q", res.Ended, res.SkippedSteps)
	}
	if !strings.Contains(res.TimelineText(), "agent_hang_up \"goodbye\"") {
		t.Errorf("timeline lacks the hang-up:\n%s", res.TimelineText())
	}
	if res.State.LastAgentText() != "Goodbye now" {
		t.Errorf("last agent text %q", res.State.LastAgentText())
	}

	// A script that goes on talking after the hang-up fails at its next
	// line step (issue 14: it used to skip the rest and pass); the steps
	// after it are listed, not run.
	judged = false
	res, err = runVirtual(t, voicetest.Config{
		Agent: fixtures.HangUpAgent("Goodbye now"), UserVoice: &toneTTS{}, Judge: judge(&judged),
		Script: []voicetest.Step{
			voicetest.UserSays("cancel my order"),
			voicetest.AgentTurn(),
			voicetest.UserSays("wait"),
			voicetest.AgentTurn(),
			voicetest.Verdict(),
		},
	})
	if !errors.Is(err, voicetest.ErrHungUp) || res.Success || judged {
		t.Fatalf("err %v, success %v, judged %v; want step 3 to fail on the hang-up", err, res.Success, judged)
	}
	if !strings.HasPrefix(err.Error(), `step 3 UserSays("wait"): voicetest: the agent hung up at 1.900s ("goodbye") during step 2 AgentTurn()`) {
		t.Errorf("err = %v", err)
	}
	if strings.Join(res.SkippedSteps, ", ") != "step 4 AgentTurn(), step 5 Verdict()" {
		t.Errorf("skipped %q", res.SkippedSteps)
	}
}

func TestGarbageAgentsFailClearly(t *testing.T) {
	for _, tc := range []struct {
		name    string
		g       fixtures.Garbage
		wantIs  error
		wantMsg string
	}{
		{"odd audio", fixtures.GarbageOddAudio, pcm.ErrOddLength, "odd number of bytes"},
		{"unknown kind", fixtures.GarbageUnknownKind, nil, "unknown kind 200"},
		{"zero rate", fixtures.GarbageZeroRate, pcm.ErrBadRate, "no valid sample rate"},
		{"wrong rate", fixtures.GarbageWrongRate, nil, "adapters must convert audio to Session.Rate"},
		{"nil tool", fixtures.GarbageNilTool, nil, "tool_call event with no Tool"},
		{"dropped transport", fixtures.GarbageDrop, voicetest.ErrTransportClosed, "closed without a hang-up"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := runVirtual(t, voicetest.Config{
				Agent: fixtures.GarbageAgent(tc.g), UserVoice: &toneTTS{},
				Script: []voicetest.Step{voicetest.UserSays("hello"), voicetest.AgentTurn()},
			})
			if err == nil || res.Success {
				t.Fatal("garbage accepted")
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("err = %v, want errors.Is %v", err, tc.wantIs)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) || !strings.Contains(err.Error(), "fake-garbage") {
				t.Errorf("err = %q, want it to name the adapter and say %q", err, tc.wantMsg)
			}
		})
	}
}

func TestToolCallsAndExpectations(t *testing.T) {
	args, _ := json.Marshal(map[string]any{"party": 2, "time": "19:00", "extras": map[string]any{"window": true}})
	res, err := runVirtual(t, voicetest.Config{
		Agent: fixtures.ScriptedAgent(
			fixtures.Reply{Text: "Checking", Latency: 100 * time.Millisecond, Tools: []voicetest.ToolCall{
				{ID: "c1", Name: "check_availability", Arguments: json.RawMessage(`{"party":2}`), Result: json.RawMessage(`{"free":true}`)},
			}},
			fixtures.Reply{Text: "Booked your table", Tools: []voicetest.ToolCall{
				{ID: "c2", Name: "book", Arguments: args, Result: json.RawMessage(`{"ok":true}`)},
			}, Data: json.RawMessage(`{"booking":42}`), DataName: "booking"},
		),
		UserVoice: &toneTTS{},
		Script: []voicetest.Step{
			voicetest.UserSays("table for two"), voicetest.AgentTurn(),
			voicetest.UserSays("at seven"), voicetest.AgentTurn(),
			voicetest.Check(func(st *voicetest.State) error {
				if !st.HasToolCall("book") || st.HasToolCall("cancel") {
					return errors.New("HasToolCall is wrong")
				}
				if c, ok := st.LastToolCall(); !ok || c.Name != "book" || len(st.ToolCalls()) != 2 {
					return errors.New("LastToolCall/ToolCalls are wrong")
				}
				return st.ExpectTurn(2).
					NextEvent().IsToolCall("book", map[string]any{"party": 2.0, "extras": map[string]any{"window": true}}).
					NextEvent().IsToolResult().
					NextEvent().IsData("booking").
					NextEvent().IsMessageContaining(voicetest.RoleAgent, "booked").
					NoMoreEvents().
					ContainsToolCall("book", map[string]any{"time": "19:00"}).
					ContainsMessage("YOUR TABLE").
					Err()
			}),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	st := res.State
	for _, tc := range []struct {
		name string
		x    *voicetest.Expectation
		msg  string
	}{
		{"wrong tool", st.Expect().NextEvent().IsToolCall("book", nil), `expected a call of tool "book", got tool_call check_availability`},
		{"wrong arg", st.Expect().Skip(3).NextEvent().IsToolCall("book", map[string]any{"party": 3}), "first difference at $.party"},
		{"missing nested arg", st.Expect().ContainsToolCall("book", map[string]any{"extras": map[string]any{"door": true}}), "$.extras.door"},
		{"more events", st.ExpectTurn(1).Skip(2).NoMoreEvents(), "expected no more agent items, but item 2 is message agent"},
		{"past the end", st.ExpectTurn(1).Skip(3).NextEvent().IsMessage(voicetest.RoleAgent), "there is none"},
		{"skip too far", st.Expect().Skip(99), "cannot skip 99"},
		{"no message", st.Expect().ContainsMessage("refund"), `no agent message contains "refund"`},
		{"not an error", st.Expect().Skip(1).NextEvent().IsToolError(), "expected a failed tool result"},
		{"sticky", st.Expect().Skip(99).NoMoreEvents().ContainsMessage("Checking"), "cannot skip 99"},
	} {
		err := tc.x.Err()
		if !errors.Is(err, voicetest.ErrExpectation) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: err = %v, want ErrExpectation with %q", tc.name, err, tc.msg)
		}
	}
	// A failing Check fails the scenario with the step named.
	res2, err := runVirtual(t, voicetest.Config{
		Agent:     fixtures.ScriptedAgent(fixtures.Reply{Text: "hello"}),
		UserVoice: &toneTTS{},
		Script: []voicetest.Step{
			voicetest.UserSays("hi"), voicetest.AgentTurn(),
			voicetest.Check(func(st *voicetest.State) error { return st.Expect().ContainsToolCall("book", nil).Err() }),
			voicetest.UserSays("never said"),
		},
	})
	var se *voicetest.StepError
	if !errors.As(err, &se) || se.Index != 3 || !errors.Is(err, voicetest.ErrExpectation) || res2.Success {
		t.Errorf("err = %v, want a StepError for step 3 wrapping ErrExpectation", err)
	}
}

func TestCheckpointsAndOutcomes(t *testing.T) {
	judge := criteriaJudge(func(req voicetest.JudgeRequest) (voicetest.Judgment, error) {
		var v voicetest.Judgment
		for _, c := range req.Criteria {
			st := voicetest.StatusPass
			switch {
			case strings.HasPrefix(c, "bad"):
				st = voicetest.StatusFail
			case strings.HasPrefix(c, "unsure"):
				st = voicetest.StatusInconclusive
			case strings.HasPrefix(c, "skip"):
				continue // the judge forgets this one
			}
			v.Criteria = append(v.Criteria, voicetest.CriterionResult{Criterion: c, Status: st, Reasoning: "because " + c})
		}
		if req.Criteria == nil {
			return voicetest.Judgment{Decided: true, Reasoning: "unsure overall",
				Criteria: []voicetest.CriterionResult{{Criterion: "overall", Status: voicetest.StatusInconclusive}}}, nil
		}
		return v, nil
	})
	base := func(steps ...voicetest.Step) voicetest.Config {
		return voicetest.Config{
			Agent:     fixtures.ScriptedAgent(fixtures.Reply{Text: "hello"}, fixtures.Reply{Text: "again"}),
			UserVoice: &toneTTS{}, Judge: judge,
			Script: append([]voicetest.Step{voicetest.UserSays("hi"), voicetest.AgentTurn()}, steps...),
		}
	}
	t.Run("pass and inconclusive continue", func(t *testing.T) {
		res, err := runVirtual(t, base(voicetest.Checkpoint("greets", "unsure of tone", "skipped by judge"),
			voicetest.UserSays("more"), voicetest.AgentTurn()))
		if err != nil || !res.Success || res.Turns != 2 {
			t.Fatalf("err %v, success %v, turns %d", err, res.Success, res.Turns)
		}
		if len(res.Passed) != 1 || len(res.Inconclusive) != 2 || res.Inconclusive[1].Reasoning != "the judge gave no answer for this criterion" {
			t.Errorf("passed %v, inconclusive %v", res.Passed, res.Inconclusive)
		}
		if !strings.Contains(res.TimelineText(), "judge_checkpoint \"inconclusive:") {
			t.Errorf("timeline lacks the checkpoint:\n%s", res.TimelineText())
		}
	})
	t.Run("fail stops now", func(t *testing.T) {
		res, err := runVirtual(t, base(voicetest.Checkpoint("greets", "bad manners"), voicetest.UserSays("more")))
		if !errors.Is(err, voicetest.ErrFailed) || res.Success || !strings.Contains(err.Error(), `criterion "bad manners" failed: because bad manners`) {
			t.Fatalf("err = %v", err)
		}
		if len(res.SkippedSteps) != 1 || len(res.Failed) != 1 {
			t.Errorf("skipped %v, failed %v", res.SkippedSteps, res.Failed)
		}
	})
	t.Run("inconclusive final verdict", func(t *testing.T) {
		res, err := runVirtual(t, base(voicetest.Verdict(), voicetest.UserSays("never")))
		if res.Success || res.Status != voicetest.StatusInconclusive || !errors.Is(err, voicetest.ErrFailed) {
			t.Fatalf("status %v, err %v; want inconclusive, not success", res.Status, err)
		}
		if len(res.SkippedSteps) != 1 || res.Reasoning != "unsure overall" {
			t.Errorf("skipped %v, reasoning %q", res.SkippedSteps, res.Reasoning)
		}
	})
	t.Run("succeed", func(t *testing.T) {
		res, err := runVirtual(t, base(voicetest.Succeed("good enough"), voicetest.Fail("unreached")))
		if err != nil || !res.Success || res.Reasoning != "good enough" || len(res.SkippedSteps) != 1 {
			t.Fatalf("err %v, res %+v", err, res)
		}
	})
	t.Run("fail now", func(t *testing.T) {
		res, err := runVirtual(t, base(voicetest.Fail("agent was rude")))
		if !errors.Is(err, voicetest.ErrFailed) || res.Success || !strings.Contains(err.Error(), "step 3 Fail(\"agent was rude\")") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("judge required", func(t *testing.T) {
		cfg := base(voicetest.Checkpoint("x"))
		cfg.Judge = nil
		_, err := runVirtual(t, cfg)
		if err == nil || !strings.Contains(err.Error(), "Checkpoint needs Config.Judge") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestToolAgentPreset(t *testing.T) {
	res, err := runVirtual(t, voicetest.Config{
		Agent: fixtures.ToolAgent(), UserVoice: &toneTTS{},
		User: lines("A table for two?", "At seven please"),
		Script: []voicetest.Step{
			voicetest.Proceed(2),
			voicetest.Check(func(st *voicetest.State) error {
				return st.Expect().
					NextEvent().IsMessageContaining(voicetest.RoleAgent, "help").
					NextEvent().IsToolCall("check_availability", map[string]any{"party": 2}).
					NextEvent().IsToolResult().
					NextEvent().IsMessage(voicetest.RoleAgent).
					NextEvent().IsToolCall("book", map[string]any{"time": "19:00"}).
					NextEvent().IsToolResult().
					NextEvent().IsMessageContaining(voicetest.RoleAgent, "booked").
					NoMoreEvents().Err()
			}),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Latency.PerTurn; len(got) != 2 || got[0] != ms(600) || got[1] != ms(800) {
		t.Errorf("PerTurn = %v", got)
	}
	if !strings.Contains(res.TimelineText(), `tool_result book {"confirmation":"A7"}`) {
		t.Errorf("timeline:\n%s", res.TimelineText())
	}
}
