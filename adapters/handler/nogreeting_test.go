package handler_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/handler"
	"github.com/voicetest-go/voicetest/internal/leakcheck"
	"github.com/voicetest-go/voicetest/voicetest"
)

// Issue 14, item 2: an agent's silence is not a turn. The same rule is
// checked across every adapter by the adapters package's
// TestRepliesBelongToTheirQuestionsWhenTheAgentDoesNotGreet.

// echoHandler answers every line with "You said <line>" and, unless
// greet, says nothing at the start.
func echoHandler(greet bool) handler.Func {
	return func(ctx context.Context, ev handler.Event, c *handler.Call) error {
		switch ev := ev.(type) {
		case handler.StartEvent:
			if greet {
				return c.Say("Hello, how can I help?")
			}
		case handler.TextEvent:
			return c.Say("You said " + ev.Text)
		}
		return nil
	}
}

// echoesBelong checks that the agent's reply in each user turn repeats
// that turn's question (agents that say back what they heard).
func echoesBelong(t *testing.T, res *voicetest.Result) {
	t.Helper()
	questions := map[int]string{}
	replies := map[int]string{}
	for _, m := range res.Transcript {
		switch {
		case m.Role == voicetest.RoleUser:
			questions[m.Turn] = m.Text
		case replies[m.Turn] != "":
			t.Errorf("turn %d holds two agent replies: %q and %q\n%s", m.Turn, replies[m.Turn], m.Text, res.TranscriptText())
		default:
			replies[m.Turn] = m.Text
		}
	}
	for turn := 1; turn <= 2; turn++ {
		if q := questions[turn]; q == "" || !strings.Contains(replies[turn], q) {
			t.Errorf("turn %d: the user said %q, the agent's reply recorded in that turn is %q\n%s", turn, q, replies[turn], res.TranscriptText())
		}
	}
}

// A Handler agent that does not greet ends no turn at the start: a script
// that waits for a greeting times out naming the phase, and Proceed, which
// waits for a greeting only briefly, goes on to the user.
func TestHandlerThatDoesNotGreet(t *testing.T) {
	t.Run("AgentTurn for a greeting", func(t *testing.T) {
		var res *voicetest.Result
		synctest.Test(t, func(t *testing.T) {
			res = voicetest.Scenario(&quietTB{T: t}, voicetest.Config{
				Agent:  handler.New(echoHandler(false)),
				Golden: voicetest.GoldenOptions{Disable: true},
				Script: []voicetest.Step{voicetest.AgentTurn()},
			})
		})
		var te *voicetest.TimeoutError
		if res.Success || !errorsAs(res.Err, &te) || te.Phase != voicetest.PhaseFirstChunk {
			t.Fatalf("err = %v, want a first-chunk timeout: the agent never greets", res.Err)
		}
	})
	t.Run("Proceed", func(t *testing.T) {
		res := voicetest.Scenario(t, voicetest.Config{
			Agent:  handler.New(echoHandler(false)),
			User:   lines("A table for two.", "At seven."),
			Golden: voicetest.GoldenOptions{Disable: true},
		})
		echoesBelong(t, res)
	})
	t.Run("a silent answer", func(t *testing.T) {
		silent := func(ctx context.Context, ev handler.Event, c *handler.Call) error {
			if ev, ok := ev.(handler.TextEvent); ok && ev.Text != "hmm" {
				return c.Say("You said " + ev.Text)
			}
			return nil // an answer of silence to "hmm"
		}
		var res *voicetest.Result
		synctest.Test(t, func(t *testing.T) {
			res = voicetest.Scenario(&quietTB{T: t}, voicetest.Config{
				Agent:  handler.New(silent),
				Golden: voicetest.GoldenOptions{Disable: true},
				Script: []voicetest.Step{voicetest.UserSays("hmm"), voicetest.AgentTurn()},
			})
		})
		if res.Success || !strings.Contains(fmt.Sprint(res.Err), "step 2 AgentTurn(): voicetest: the agent's turn ended with no speech") {
			t.Fatalf("err = %v, want the silent turn to fail", res.Err)
		}
		res = voicetest.Scenario(t, voicetest.Config{
			Agent:  handler.New(silent),
			Golden: voicetest.GoldenOptions{Disable: true},
			Script: []voicetest.Step{
				voicetest.UserSays("hmm"), voicetest.AgentTurn(voicetest.AllowSilence()),
				voicetest.UserSays("A table for two."), voicetest.AgentTurn(),
			},
		})
		if got := res.State.LastAgentText(); got != "You said A table for two." {
			t.Errorf("last agent text %q", got)
		}
	})
}

// quietTB records a scenario's failure instead of failing the test, so
// that a test can check a scenario that must fail.
type quietTB struct {
	*testing.T
	errs []string
}

func (q *quietTB) Helper()           {}
func (q *quietTB) Error(args ...any) { q.record(fmt.Sprint(args...)) }
func (q *quietTB) Errorf(format string, args ...any) {
	q.record(fmt.Sprintf(format, args...))
}

// record keeps an error and has the test remove the artifacts it names.
func (q *quietTB) record(msg string) {
	q.errs = append(q.errs, msg)
	leakcheck.RemoveArtifactsLater(q.T, msg)
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// expectSilentStart checks that a handler that does not greet sends
// nothing in its first second (no turn end for its silent start: issue
// 14), and that its StartEvent call did not fail (Recv would report it).
func expectSilentStart(t *testing.T, h *harness) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	if ev, err := h.conn.Recv(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("at the start: %s, %v; want nothing from an agent that does not greet", format(h.since(), ev), err)
	}
}

// lines is a scripted user (personas.Scripted would link the LLM client
// into this package's test binary, which TestHandlerTestLinksNoWireLibrary
// forbids): it says each line in turn, then is done.
func lines(say ...string) voicetest.User {
	n := 0
	return voicetest.UserFunc(func(ctx context.Context, st *voicetest.State) (voicetest.Utterance, error) {
		if n == len(say) {
			return voicetest.Utterance{Done: true}, nil
		}
		n++
		return voicetest.Utterance{Text: say[n-1]}, nil
	})
}
