package voicetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// TurnTaking is how the simulated caller decides that the agent is done
// and it may speak, the way a person on the phone does: not at the first
// pause of an agent that said "let me check that for you…", but once the
// agent has been quiet for a while, or has really finished. The zero
// value keeps the runner's own rule: the caller speaks as soon as the
// agent's turn is over (its turn end, or Timeouts.TailSilence of quiet),
// and a User's Utterance.Wait is a plain pause before its line. Any field
// set applies the steps below (bounds alone: only step 3).
//
// It applies where the User is asked for its next turn (UserTurn and
// Proceed; not a barge-in). There, in order:
//
//  1. Idle: the caller waits until the agent has been quiet for Idle since
//     its last act (audio, until it has played; text; a tool call). Each
//     new act restarts the wait; speech that comes meanwhile is recorded
//     as more of the agent's turn (a second message in the same turn).
//  2. Classifier, when set, is asked whether the caller should speak now.
//     It may answer "not yet, ask again in N": the caller waits N (again
//     recording whatever the agent says meanwhile, then waiting Idle once
//     it has spoken), and asks again.
//  3. The User is asked for its utterance. A User that answers with a
//     wait and nothing to say (Utterance.Wait, as an LLM persona's wait
//     tool does) is treated as the classifier's "not yet": the caller
//     waits, then asks the User again.
//
// Every wait of steps 2 and 3 is a user_wait event on the timeline (At
// when it began, Duration how long it was to last, Text the reason) and
// is counted in Metrics.Waits. The waits of one turn are bounded by
// MaxWaits and MaxWait; at the bound the caller stops waiting and speaks,
// and a user_wait_limit event says so. Everything runs on the
// conversation's clock, so on virtual time the same agent gives the same
// waits, to the nanosecond, on every run.
type TurnTaking struct {
	// Idle is how long the agent must have been quiet before the caller
	// speaks; zero does not wait beyond the agent's turn end. Gym's
	// default is 3 s.
	Idle time.Duration
	// Classifier, when set, decides whether the caller speaks now or
	// waits; see TurnClassifier.
	Classifier TurnClassifier
	// MaxWaits bounds the waits (the classifier's and the User's) in one
	// user turn (default DefaultTurnMaxWaits).
	MaxWaits int
	// MaxWait bounds their total in one user turn (default
	// DefaultTurnMaxWait); a wait that would go past it is cut short.
	MaxWait time.Duration

	on bool // a field was set: the policy applies (set by validate)
}

// Defaults of TurnTaking.
const (
	DefaultTurnMaxWaits = 5
	DefaultTurnMaxWait  = 30 * time.Second
)

// The timeline events of Config.TurnTaking.
const (
	// EventUserWait is a wait of the simulated caller: At when it began,
	// Duration how long it lasted (until the agent spoke again, at the
	// longest what was asked), Text the reason.
	EventUserWait EventType = "user_wait"
	// EventUserWaitLimit marks the caller giving up waiting at
	// TurnTaking.MaxWaits or MaxWait; Text says which.
	EventUserWaitLimit EventType = "user_wait_limit"
)

// TurnClassifier decides, for Config.TurnTaking, whether the simulated
// caller takes its turn now. A rule (TurnClassifierFunc over the
// agent's last words) or a model call through the cache (see the
// personas package) both fit. It must not keep st after it returns.
type TurnClassifier interface {
	TakeTurn(ctx context.Context, st *State) (TurnDecision, error)
}

// TurnDecision is a TurnClassifier's answer.
type TurnDecision struct {
	// Wait is zero to speak now, or how long to wait before the
	// classifier is asked again ("not yet, check again in N ms").
	Wait time.Duration
	// Reason says why, for the timeline.
	Reason string
}

// TurnClassifierFunc adapts a function to TurnClassifier.
type TurnClassifierFunc func(ctx context.Context, st *State) (TurnDecision, error)

// TakeTurn calls f.
func (f TurnClassifierFunc) TakeTurn(ctx context.Context, st *State) (TurnDecision, error) {
	return f(ctx, st)
}

// enabled reports whether the policy applies: any of its fields was set
// (bounds alone count a User's waits).
func (tt TurnTaking) enabled() bool { return tt.on }

// validate checks tt and fills in its defaults.
func (tt *TurnTaking) validate() error {
	switch {
	case tt.Idle < 0:
		return fmt.Errorf("voicetest: Config.TurnTaking.Idle is %v; use a positive duration, or 0 to speak at the agent's turn end", tt.Idle)
	case tt.MaxWaits < 0:
		return fmt.Errorf("voicetest: Config.TurnTaking.MaxWaits is %d; use a positive number, or 0 for the default %d", tt.MaxWaits, DefaultTurnMaxWaits)
	case tt.MaxWait < 0:
		return fmt.Errorf("voicetest: Config.TurnTaking.MaxWait is %v; use a positive duration, or 0 for the default %v", tt.MaxWait, DefaultTurnMaxWait)
	}
	tt.on = tt.Idle > 0 || tt.Classifier != nil || tt.MaxWaits > 0 || tt.MaxWait > 0
	if tt.MaxWaits == 0 {
		tt.MaxWaits = DefaultTurnMaxWaits
	}
	if tt.MaxWait == 0 {
		tt.MaxWait = DefaultTurnMaxWait
	}
	return nil
}

// turnWaits counts the caller's waits in one user turn.
type turnWaits struct {
	n      int
	waited time.Duration
	gaveUp bool
}

// askUserTurn asks the User for its next turn, once Config.TurnTaking
// says the agent is done (see TurnTaking).
func (r *runner) askUserTurn(ctx context.Context) (Utterance, error) {
	tt := r.cfg.TurnTaking
	if !tt.enabled() || r.cfg.User == nil {
		return r.askUser(ctx)
	}
	var w turnWaits
	for {
		if err := r.awaitIdle(ctx); err != nil {
			return Utterance{}, err
		}
		if r.ended != "" || r.hungUp {
			return Utterance{}, nil // userTurn records the end
		}
		if tt.Classifier != nil && !w.gaveUp {
			d, err := r.classifyTurn(ctx)
			if err != nil {
				return Utterance{}, err
			}
			if d.Wait > 0 {
				if err := r.holdOn(ctx, &w, d.Wait, d.Reason); err != nil {
					return Utterance{}, err
				}
				if !w.gaveUp {
					continue
				}
			}
		}
		u, err := r.askUser(ctx)
		if err != nil {
			return Utterance{}, err
		}
		if !waitOnly(u) {
			if w.gaveUp {
				u.Wait = 0 // the caller has waited enough
			}
			return u, nil
		}
		if w.gaveUp {
			return Utterance{}, r.waitedTooLong(w)
		}
		why := u.WaitReason
		if strings.TrimSpace(why) == "" {
			why = "the caller chose to wait"
		}
		if err := r.holdOn(ctx, &w, u.Wait, why); err != nil {
			return Utterance{}, err
		}
		if w.gaveUp {
			// Ask once more, now that waiting is over.
			u, err := r.askUser(ctx)
			if err == nil && waitOnly(u) {
				err = r.waitedTooLong(w)
			}
			u.Wait = 0
			return u, err
		}
	}
}

// waitOnly reports whether u is a wait with nothing to say.
func waitOnly(u Utterance) bool {
	return u.Wait > 0 && !u.Done && !u.HangUp && strings.TrimSpace(u.Text) == "" && u.Audio.IsEmpty()
}

// waitedTooLong is the error of a User that asks to wait again once
// TurnTaking's bound is reached.
func (r *runner) waitedTooLong(w turnWaits) error {
	return fmt.Errorf("Config.User asked to wait again before turn %d after %d waits (%v in all), past Config.TurnTaking's bound (MaxWaits %d, MaxWait %v): a caller that has waited enough must speak or hang up; raise the bound if the agent really takes that long",
		r.st.turn+1, w.n, w.waited, r.cfg.TurnTaking.MaxWaits, r.cfg.TurnTaking.MaxWait)
}

// classifyTurn asks TurnTaking.Classifier.
func (r *runner) classifyTurn(ctx context.Context) (TurnDecision, error) {
	if err := r.settle(ctx); err != nil {
		return TurnDecision{}, err
	}
	var d TurnDecision
	st := r.snapshot()
	err := r.call(ctx, r.engine("Config.TurnTaking.Classifier", PhaseUser), func(ctx context.Context) (err error) {
		d, err = r.cfg.TurnTaking.Classifier.TakeTurn(ctx, st)
		return err
	})
	if err != nil {
		return TurnDecision{}, fmt.Errorf("asking Config.TurnTaking.Classifier before turn %d: %w", r.st.turn+1, err)
	}
	if d.Wait < 0 {
		return TurnDecision{}, fmt.Errorf("Config.TurnTaking.Classifier answered a negative wait (%v) before turn %d: answer 0 to speak now, or how long to wait", d.Wait, r.st.turn+1)
	}
	return d, nil
}

// holdOn waits d for the agent, within the turn's bounds, recording the
// wait on the timeline, and records whatever the agent says meanwhile.
func (r *runner) holdOn(ctx context.Context, w *turnWaits, d time.Duration, reason string) error {
	tt := r.cfg.TurnTaking
	left := tt.MaxWait - w.waited
	if w.n >= tt.MaxWaits || left <= 0 {
		w.gaveUp = true
		why := fmt.Sprintf("stopped waiting after %d waits (TurnTaking.MaxWaits)", w.n)
		if w.n < tt.MaxWaits {
			why = fmt.Sprintf("stopped waiting after %v (TurnTaking.MaxWait)", w.waited)
		}
		r.addEvent(Event{At: r.now(), Type: EventUserWaitLimit, Turn: r.st.turn, Role: RoleUser, Text: why})
		return nil
	}
	d = min(d, left)
	w.n++
	start := r.now()
	r.addEvent(Event{At: start, Type: EventUserWait, Turn: r.st.turn, Role: RoleUser, Text: reason, Duration: d})
	ev := len(r.st.timeline) - 1
	err := r.pump(ctx, r.agentBack, func() time.Duration { return start + d })
	waited := min(r.now()-start, d)
	r.st.timeline[ev].Duration = waited
	w.waited += waited
	if errors.Is(err, errDeadline) {
		return nil
	}
	if err != nil {
		return err
	}
	// The agent came back before the wait was over: its words are the
	// rest of its turn, and the caller waits for it to be idle again.
	return r.agentTurn(ctx, turnOptions{allowSilence: true})
}

// awaitIdle waits until the agent has been quiet for TurnTaking.Idle,
// recording as the rest of its turn whatever it says meanwhile.
func (r *runner) awaitIdle(ctx context.Context) error {
	idle := r.cfg.TurnTaking.Idle
	if idle <= 0 {
		return nil
	}
	for r.ended == "" {
		err := r.pump(ctx, r.agentBack, func() time.Duration { return r.lastAct() + idle })
		if errors.Is(err, errDeadline) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := r.agentTurn(ctx, turnOptions{allowSilence: true}); err != nil {
			return err
		}
	}
	return nil
}

// agentBack reports whether the agent has started a new stretch of its
// turn (speech, text, a turn end) or left the call.
func (r *runner) agentBack() bool {
	return r.seg != nil || r.hasText || r.turnEnds > 0 || r.hungUp || r.streamClosed
}

// lastAct returns when the agent last acted on its turn: its last event
// that keeps a turn open (see actsOnTurn) or, on real-time pacing, the
// end of its audio's playback, whichever is later.
func (r *runner) lastAct() time.Duration {
	if r.realTime() {
		return max(r.lastAgentAt, r.playEnd)
	}
	return r.lastAgentAt
}
