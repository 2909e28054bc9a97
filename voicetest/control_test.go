package voicetest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

func replies(texts ...string) []fixtures.Reply {
	var out []fixtures.Reply
	for _, t := range texts {
		out = append(out, fixtures.Reply{Text: t, Latency: 200 * time.Millisecond})
	}
	return out
}

// TestProceedCallbacks: OnStep runs after the user's and the agent's part
// of each turn, OnTurn after each turn, and OnTurn's SetEffects changes
// the caller's sound from the next turn on (the set_effects pattern).
func TestProceedCallbacks(t *testing.T) {
	var steps, turns []string
	tap := &tapAgent{Agent: fixtures.ScriptedAgent(replies("a", "b", "c")...)}
	res, err := runVirtual(t, voicetest.Config{
		Agent: tap, UserVoice: &toneTTS{}, User: lines("one", "two", "three"),
		Script: []voicetest.Step{voicetest.Proceed(3,
			voicetest.OnStep(func(ctx context.Context, c *voicetest.Control) error {
				m, _ := c.State().LastMessage(voicetest.RoleAgent)
				steps = append(steps, strings.Join([]string{string(rune('0' + c.State().Turn())), m.Text}, ":"))
				return nil
			}),
			voicetest.OnTurn(func(ctx context.Context, c *voicetest.Control) error {
				turns = append(turns, c.State().LastAgentText())
				// The caller walks into a noisier, quieter place.
				c.SetEffects(pcm.Gain(-10 * float64(c.State().Turn())))
				return nil
			}),
		)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"1:", "1:a", "2:a", "2:b", "3:b", "3:c"}; strings.Join(steps, " ") != strings.Join(want, " ") {
		t.Errorf("OnStep saw %q, want %q", steps, want)
	}
	if want := []string{"a", "b", "c"}; strings.Join(turns, " ") != strings.Join(want, " ") {
		t.Errorf("OnTurn saw %q, want %q", turns, want)
	}
	var levels []float64
	for _, s := range res.Recording.Segments {
		if s.Role == voicetest.RoleUser {
			levels = append(levels, pcm.DBFS(pcm.RMS(s.Audio())))
		}
	}
	if len(levels) != 3 || levels[1]-levels[0] > -9.9 || levels[2]-levels[1] > -9.9 {
		t.Errorf("user levels %.1f dBFS, want each turn 10 dB below the last (SetEffects from OnTurn)", levels)
	}
}

// TestProceedUntil stops Proceed when the condition holds; the script
// goes on.
func TestProceedUntil(t *testing.T) {
	checked := false
	res, err := runVirtual(t, voicetest.Config{
		Agent: fixtures.TextAgent(replies("Which day?", "Booked for Friday.", "Anything else?")...),
		User:  lines("A table please", "Friday", "No"),
		Script: []voicetest.Step{
			voicetest.Proceed(0, voicetest.Until(func(st *voicetest.State) bool {
				return strings.Contains(st.LastAgentText(), "Booked")
			})),
			voicetest.Check(func(st *voicetest.State) error { checked = true; return nil }),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Turns != 2 || !checked {
		t.Errorf("%d turns, check ran %v; want Proceed to stop after turn 2 and the script to go on", res.Turns, checked)
	}
}

// TestControlEndsScenario: a callback or a custom step ends the scenario
// with a verdict and a reason.
func TestControlEndsScenario(t *testing.T) {
	base := func(script ...voicetest.Step) voicetest.Config {
		return voicetest.Config{Agent: fixtures.TextAgent(replies("Hello", "Sure", "Done")...), User: lines("hi", "again", "more"), Script: script}
	}
	res, err := runVirtual(t, base(
		voicetest.Proceed(0, voicetest.OnTurn(func(ctx context.Context, c *voicetest.Control) error {
			if c.State().Turn() == 2 {
				c.Succeed("the agent answered twice")
			}
			return nil
		})),
		voicetest.Fail("never reached"),
	))
	if err != nil || !res.Success || res.Reasoning != "the agent answered twice" || res.Turns != 2 {
		t.Errorf("OnTurn Succeed: err %v, success %v, reasoning %q, %d turns", err, res.Success, res.Reasoning, res.Turns)
	}
	if len(res.SkippedSteps) != 1 || !strings.Contains(res.SkipReason, "the agent answered twice") {
		t.Errorf("skipped %q (%s), want the Fail step skipped with the reason", res.SkippedSteps, res.SkipReason)
	}

	_, err = runVirtual(t, base(voicetest.Proceed(0, voicetest.OnStep(func(ctx context.Context, c *voicetest.Control) error {
		c.Fail("the caller gave up")
		return nil
	}))))
	if !errors.Is(err, voicetest.ErrFailed) || !strings.Contains(err.Error(), "the caller gave up") {
		t.Errorf("OnStep Fail: %v, want ErrFailed with the reason", err)
	}

	res, err = runVirtual(t, base(
		voicetest.UserSays("hi"), voicetest.AgentTurn(),
		voicetest.Do("check the greeting", func(ctx context.Context, c *voicetest.Control) error {
			if c.State().LastAgentText() == "Hello" {
				c.Succeed("greeted")
			} else {
				c.Fail("no greeting")
			}
			return nil
		}),
		voicetest.UserSays("never said"),
	))
	if err != nil || res.Reasoning != "greeted" || res.Turns != 1 {
		t.Errorf("Do Succeed: err %v, reasoning %q, %d turns", err, res.Reasoning, res.Turns)
	}

	boom := errors.New("boom")
	_, err = runVirtual(t, base(voicetest.Do("explode", func(ctx context.Context, c *voicetest.Control) error { return boom })))
	var se *voicetest.StepError
	if !errors.Is(err, boom) || !errors.As(err, &se) || se.Step != `Do("explode")` {
		t.Errorf("Do returning an error: %v, want it wrapped in a StepError naming the step", err)
	}

	_, err = runVirtual(t, base(voicetest.Do("fail", func(ctx context.Context, c *voicetest.Control) error {
		c.Fail("policy violated")
		return nil
	})))
	if !errors.Is(err, voicetest.ErrFailed) || !strings.Contains(err.Error(), "policy violated") {
		t.Errorf("Do Fail: %v", err)
	}
}

// TestControlRunsSteps: a custom step runs steps of its own.
func TestControlRunsSteps(t *testing.T) {
	res, err := runVirtual(t, voicetest.Config{
		Agent: fixtures.TextAgent(replies("Hello", "Sure")...),
		Script: []voicetest.Step{voicetest.Do("two turns", func(ctx context.Context, c *voicetest.Control) error {
			for _, line := range []string{"hi", "a table"} {
				if err := c.Run(ctx, voicetest.UserSays(line), voicetest.AgentTurn()); err != nil {
					return err
				}
			}
			return nil
		})},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.TranscriptText(); got != "user: hi\nagent: Hello\nuser: a table\nagent: Sure\n" {
		t.Errorf("transcript:\n%s", got)
	}
	_, err = runVirtual(t, voicetest.Config{
		Agent:  fixtures.TextAgent(),
		Script: []voicetest.Step{voicetest.Do("bad", func(ctx context.Context, c *voicetest.Control) error { return c.Run(ctx, voicetest.UserSays("")) })},
	})
	if err == nil || !strings.Contains(err.Error(), "UserSays needs text") {
		t.Errorf("Run of a bad step: %v", err)
	}
}

// TestInject: injected messages are history: in the transcript, the
// timeline and what the User sees, marked Injected.
func TestInject(t *testing.T) {
	var seen []string
	user := voicetest.UserFunc(func(ctx context.Context, st *voicetest.State) (voicetest.Utterance, error) {
		for _, m := range st.Transcript() {
			seen = append(seen, string(m.Role)+": "+m.Text)
		}
		return voicetest.Utterance{Text: "Friday at seven"}, nil
	})
	res, err := runVirtual(t, voicetest.Config{
		Agent: fixtures.TextAgent(replies("Booked.")...), User: user,
		Script: []voicetest.Step{
			voicetest.Inject(voicetest.RoleUser, "I'd like a table for two."),
			voicetest.Inject(voicetest.RoleAgent, "Sure, for which day?"),
			voicetest.UserTurn(), voicetest.AgentTurn(),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "user: I'd like a table for two.|agent: Sure, for which day?"; strings.Join(seen, "|") != want {
		t.Errorf("the User saw %q, want the injected history %q", seen, want)
	}
	if len(res.Transcript) != 4 || !res.Transcript[0].Injected || !res.Transcript[1].Injected || res.Transcript[2].Injected {
		t.Errorf("transcript %+v: want two injected messages, then the live ones", res.Transcript)
	}
	n := 0
	for _, e := range res.Timeline {
		if e.Type == voicetest.EventHistory {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d history events, want 2", n)
	}
	for _, s := range []voicetest.Step{voicetest.Inject("bot", "x"), voicetest.Inject(voicetest.RoleUser, " ")} {
		if _, err := voicetest.Run(t.Context(), voicetest.Config{Agent: fixtures.SilentAgent(), Script: []voicetest.Step{s}}); err == nil {
			t.Errorf("%s: no script error", s)
		}
	}
}

// wrapConn is a Conn wrapper with Unwrap, as a recorder would be.
type wrapConn struct{ voicetest.Conn }

func (w wrapConn) Unwrap() voicetest.Conn { return w.Conn }

type wrapAgent struct{ voicetest.Agent }

func (a wrapAgent) VirtualTime() bool { return true }
func (a wrapAgent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	c, err := a.Agent.Connect(ctx, s)
	return wrapConn{c}, err
}

// dtmfSender is an extension a test looks for on the adapter's Conn.
type dtmfSender interface {
	SendDTMF(ctx context.Context, digits string) error
	Capabilities() voicetest.Capabilities
}

// TestControlConn: a step reaches the adapter's own connection, through
// wrappers.
func TestControlConn(t *testing.T) {
	var direct, through bool
	var name string
	_, err := runVirtual(t, voicetest.Config{
		Agent: wrapAgent{fixtures.Fake(fixtures.FakeConfig{Name: "fake-dtmf", DTMF: true, TextOnly: true})},
		Script: []voicetest.Step{voicetest.Do("use the connection", func(ctx context.Context, c *voicetest.Control) error {
			_, direct = c.Conn().(wrapConn)
			var d dtmfSender
			d, through = voicetest.ConnAs[dtmfSender](c.Conn())
			if through {
				name = d.Capabilities().Adapter
			}
			_, isWrap := voicetest.ConnAs[wrapConn](c.Conn())
			if !isWrap {
				return errors.New("ConnAs did not find the outer wrapper")
			}
			return nil
		})},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !direct || !through || name != "fake-dtmf" {
		t.Errorf("Conn() is the wrapper %v; ConnAs found the adapter's Conn %v (%q)", direct, through, name)
	}
	if _, ok := voicetest.ConnAs[wrapConn](nil); ok {
		t.Error("ConnAs(nil) found something")
	}
}

// A Do step or a Proceed callback that panics fails the scenario with an
// error naming it and carrying its stack; the test binary goes on.
func TestControlPanicFailsTheScenario(t *testing.T) {
	for _, tc := range []struct {
		name string
		step func(fn func(context.Context, *voicetest.Control) error) voicetest.Step
		want string
	}{
		{"Do", func(fn func(context.Context, *voicetest.Control) error) voicetest.Step {
			return voicetest.Do("boom", fn)
		}, `Do("boom") panicked: kaput`},
		{"OnTurn", func(fn func(context.Context, *voicetest.Control) error) voicetest.Step {
			return voicetest.Proceed(1, voicetest.OnTurn(fn))
		}, "OnTurn panicked: kaput"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := runVirtual(t, voicetest.Config{
				Agent: fixtures.ScriptedAgent(fixtures.Reply{Text: "hi"}, fixtures.Reply{Text: "sure"}), UserVoice: &toneTTS{},
				User:   lines("hello"),
				Script: []voicetest.Step{tc.step(func(context.Context, *voicetest.Control) error { panic("kaput") })},
			})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
			var ps interface{ PanicStack() []byte }
			if !errors.As(err, &ps) || !strings.Contains(string(ps.PanicStack()), "control_test.go") {
				t.Errorf("err %v carries no stack through the test's function", err)
			}
			if res == nil || res.Success {
				t.Errorf("result %+v, want a failed scenario", res)
			}
		})
	}
}

// A Do step that never returns ends at Timeouts.MaxDuration with a
// *TimeoutError naming it, instead of hanging the test; the Control it
// holds no longer acts on the scenario.
func TestControlLeftRunningIsBounded(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	after := make(chan error, 1)
	res, err := voicetest.Run(t.Context(), voicetest.Config{
		Agent: fixtures.ScriptedAgent(fixtures.Reply{Text: "hi"}), UserVoice: &toneTTS{},
		Timeouts: voicetest.Timeouts{MaxDuration: 200 * time.Millisecond},
		Script: []voicetest.Step{voicetest.Do("stuck", func(ctx context.Context, c *voicetest.Control) error {
			<-release // ignores ctx
			after <- c.Inject(context.Background(), voicetest.RoleUser, "too late")
			return nil
		})},
	})
	var te *voicetest.TimeoutError
	if !errors.As(err, &te) || te.Phase != voicetest.PhaseScenario || !strings.Contains(err.Error(), `Do("stuck")`) {
		t.Fatalf("err = %v, want a *TimeoutError in phase %q naming the step", err, voicetest.PhaseScenario)
	}
	if res == nil || res.Success {
		t.Errorf("result %+v, want a failed scenario", res)
	}
	close(release)
	if err := <-after; err == nil || !strings.Contains(err.Error(), "no longer valid") {
		t.Errorf("Inject after the scenario gave up: %v, want the Control no longer valid", err)
	}
	for _, m := range res.Transcript {
		if m.Text == "too late" {
			t.Errorf("the abandoned step injected %q into the transcript", m.Text)
		}
	}
}

// A Do step's Control may be used from a callback of the steps it runs
// (an OnTurn inside c.Run reaching the outer c): the Control does not
// lock itself out.
func TestControlUsedFromANestedCallback(t *testing.T) {
	var levels []float64
	res, err := runVirtual(t, voicetest.Config{
		Agent: fixtures.ScriptedAgent(replies("a", "b")...), UserVoice: &toneTTS{}, User: lines("one", "two"),
		Script: []voicetest.Step{voicetest.Do("nested", func(ctx context.Context, outer *voicetest.Control) error {
			return outer.Run(ctx, voicetest.Proceed(2, voicetest.OnTurn(func(ctx context.Context, inner *voicetest.Control) error {
				outer.SetEffects(pcm.Gain(-20))
				levels = append(levels, float64(len(outer.State().Transcript())))
				return nil
			})))
		})},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(levels) != 2 || levels[0] != 2 || levels[1] != 4 {
		t.Errorf("the outer Control saw transcripts of %v messages after each turn, want [2 4]", levels)
	}
	if res == nil || !res.Success {
		t.Errorf("result %+v", res)
	}
}
