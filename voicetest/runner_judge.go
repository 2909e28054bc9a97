package voicetest

import (
	"context"
	"fmt"
	"strings"
)

// judge asks Config.Judge and records the criteria it answered.
func (r *runner) judge(ctx context.Context, req JudgeRequest, step string) (Judgment, error) {
	if r.cfg.Judge == nil {
		return Judgment{}, fmt.Errorf("%s needs Config.Judge; set it (e.g. judges.Criteria(...)) or remove the step", step)
	}
	if err := r.settle(ctx); err != nil {
		return Judgment{}, err
	}
	req.State = r.snapshot()
	req.Turn = r.st.turn
	req.MaxTurns = r.cfg.MaxTurns
	var v Judgment
	err := r.call(ctx, r.engine("Config.Judge", PhaseJudge), func(ctx context.Context) (err error) {
		v, err = r.cfg.Judge.Evaluate(ctx, req)
		return err
	})
	if err != nil {
		return Judgment{}, fmt.Errorf("asking Config.Judge (turn %d): %w", r.st.turn, err)
	}
	// Every criterion asked must be answered; a missing answer is
	// inconclusive, never a silent pass.
	for _, c := range req.Criteria {
		found := false
		for _, got := range v.Criteria {
			if got.Criterion == c {
				found = true
				break
			}
		}
		if !found {
			v.Criteria = append(v.Criteria, CriterionResult{Criterion: c, Status: StatusInconclusive, Reasoning: "the judge gave no answer for this criterion"})
		}
	}
	return v, nil
}

func (r *runner) record(v Judgment) {
	r.criteria = append(r.criteria, v.Criteria...)
}

func (r *runner) checkpoint(ctx context.Context, criteria []string) error {
	v, err := r.judge(ctx, JudgeRequest{Criteria: criteria}, "Checkpoint")
	if err != nil {
		return err
	}
	r.record(v)
	st := v.Status()
	r.addEvent(Event{At: r.now(), Type: EventJudgeCheckpoint, Turn: r.st.turn, Text: string(st) + ": " + summarize(v)})
	if st == StatusFail {
		return fmt.Errorf("%w: checkpoint: %s", ErrFailed, failures(v))
	}
	return nil
}

func (r *runner) finalVerdict(ctx context.Context) error {
	if r.verdict != nil {
		// Proceed's judge decided already: its verdict stands.
		r.logf("voicetest: %s: the judge already gave its final verdict (%s); it stands", r.stepName(), r.verdict.Status())
		return nil
	}
	v, err := r.judge(ctx, JudgeRequest{Final: true}, "Verdict")
	if err != nil {
		return err
	}
	r.setVerdict(v)
	return nil
}

func (r *runner) setVerdict(v Judgment) {
	v.Decided = true
	r.record(v)
	r.verdict = &v
	st := v.Status()
	r.addEvent(Event{At: r.now(), Type: EventVerdict, Turn: r.st.turn, Text: string(st) + ": " + summarize(v)})
	r.decide(st == StatusPass, v.Reasoning)
	r.end("the judge gave its verdict")
}

func summarize(v Judgment) string {
	var parts []string
	for _, c := range v.Criteria {
		parts = append(parts, fmt.Sprintf("%s=%s", quote(c.Criterion), c.Status))
	}
	return strings.Join(parts, ", ")
}

func failures(v Judgment) string {
	var parts []string
	for _, c := range v.Criteria {
		if c.Status == StatusFail {
			s := fmt.Sprintf("criterion %q failed", c.Criterion)
			if c.Reasoning != "" {
				s += ": " + c.Reasoning
			}
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "; ")
}
