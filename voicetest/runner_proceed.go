package voicetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

func (r *runner) proceed(ctx context.Context, n int, o proceedOptions) error {
	if r.cfg.User == nil {
		return errors.New("Config.User is nil: Proceed asks the User for each utterance; set Config.User")
	}
	if !r.greeted && r.st.turn == 0 && r.agentTurns == 0 {
		r.greeted = true
		if err := r.agentTurn(ctx, turnOptions{greeting: true}); err != nil {
			return err
		}
	}
	for i := 0; n == 0 || i < n; i++ {
		if r.ended != "" || r.st.turn >= r.cfg.MaxTurns {
			break
		}
		u, err := r.askUserTurn(ctx) // turntaking.go
		if err != nil {
			return err
		}
		if err := r.userTurn(ctx, u, false); err != nil {
			return err
		}
		if r.ended != "" {
			break
		}
		if stop, err := r.callback(ctx, o.onStep, "OnStep"); stop || err != nil {
			return err
		}
		barged, err := r.userInterrupts(ctx)
		if err != nil {
			return err
		}
		if r.ended != "" {
			break
		}
		if barged && r.hungUp {
			r.end("the agent hung up")
			break
		}
		if err := r.agentTurn(ctx, turnOptions{}); err != nil {
			return err
		}
		if stop, err := r.callback(ctx, o.onStep, "OnStep"); stop || err != nil {
			return err
		}
		if r.ended == "" && r.cfg.Judge != nil {
			final := r.st.turn >= r.cfg.MaxTurns
			v, err := r.judge(ctx, JudgeRequest{Final: final}, "Proceed")
			if err != nil {
				return err
			}
			if v.Decided || final {
				r.setVerdict(v)
				return nil
			}
		}
		if stop, err := r.callback(ctx, o.onTurn, "OnTurn"); stop || err != nil {
			return err
		}
		if o.until != nil {
			if err := r.settle(ctx); err != nil {
				return err
			}
			if o.until(&r.st) {
				r.logf("voicetest: %s: its Until condition holds after turn %d", r.stepName(), r.st.turn)
				return nil
			}
		}
	}
	return nil
}

// userInterrupts lets a User that implements Interrupter barge in on the
// agent's coming reply: when it decides to, its next utterance is said as
// Interrupt(text, After(d)) would say it. It reports whether the user
// barged in; the agent's reply to the barge-in is then still to come.
func (r *runner) userInterrupts(ctx context.Context) (bool, error) {
	ir, ok := r.cfg.User.(Interrupter)
	if !ok || r.hungUp || r.st.turn >= r.cfg.MaxTurns {
		return false, nil
	}
	if err := r.settle(ctx); err != nil {
		return false, err
	}
	var yes bool
	var after time.Duration
	st := r.snapshot()
	err := r.call(ctx, r.engine("Config.User's InterruptDecision", PhaseUser), func(context.Context) error {
		yes, after = ir.InterruptDecision(st)
		return nil
	})
	if err != nil {
		return false, err
	}
	if !yes {
		return false, nil
	}
	u, err := r.askUser(ctx)
	if err != nil {
		return false, fmt.Errorf("asking the interrupting Config.User for its barge-in: %w", err)
	}
	if u.Done {
		return false, r.userTurn(ctx, u, true)
	}
	if strings.TrimSpace(u.Text) == "" && u.Audio.IsEmpty() {
		// Nothing to say over the agent: let it answer.
		if u.HangUp {
			return false, r.userTurn(ctx, u, true)
		}
		return false, nil
	}
	if err := r.interrupt(ctx, u, After(max(after, 0))); err != nil {
		return true, fmt.Errorf("the user's barge-in %s after %v: %w", quote(u.Text), max(after, 0), err)
	}
	if u.HangUp && r.ended == "" {
		r.userHangsUp("")
	}
	return true, nil
}
