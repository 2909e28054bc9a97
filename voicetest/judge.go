package voicetest

import "context"

// Judge gives verdicts on a conversation. The judges package implements it
// with an LLM criteria judge and deterministic checks.
type Judge interface {
	Evaluate(ctx context.Context, req JudgeRequest) (Judgment, error)
}

// JudgeRequest asks a Judge about the conversation so far.
type JudgeRequest struct {
	// Criteria, when not nil, are the criteria to judge now (a Checkpoint
	// step); nil means the judge's own criteria.
	Criteria []string
	// State is the conversation so far. The judge must not keep it.
	State *State
	// Final requires a decision: the conversation is over or this is the
	// last allowed turn, so "continue" is not an answer.
	Final bool
	// Turn is the number of user turns so far; MaxTurns the limit.
	Turn, MaxTurns int
}

// Status is the outcome of one criterion.
type Status string

// The criterion outcomes. StatusInconclusive is reported as such, never folded
// into StatusFail.
const (
	StatusPass         Status = "pass"
	StatusFail         Status = "fail"
	StatusInconclusive Status = "inconclusive"
)

// CriterionResult is the judge's answer for one criterion.
type CriterionResult struct {
	Criterion string `json:"criterion"`
	Status    Status `json:"status"`
	Reasoning string `json:"reasoning,omitempty"`
}

// Judgment is a judge's answer.
type Judgment struct {
	// Decided is false when a non-final judge wants the conversation to go
	// on; Criteria may then hold what is already known.
	Decided bool `json:"decided"`
	// Criteria holds one result per criterion judged.
	Criteria []CriterionResult `json:"criteria"`
	// Reasoning is the judge's overall explanation.
	Reasoning string `json:"reasoning,omitempty"`
}

// Status returns the verdict's overall outcome: Fail if any criterion
// failed, else Inconclusive if any was inconclusive, else Pass. A verdict
// with no criteria is Inconclusive.
func (v Judgment) Status() Status {
	if len(v.Criteria) == 0 {
		return StatusInconclusive
	}
	st := StatusPass
	for _, c := range v.Criteria {
		switch c.Status {
		case StatusFail:
			return StatusFail
		case StatusPass:
		default:
			st = StatusInconclusive
		}
	}
	return st
}

// JudgeFunc adapts a function to the Judge interface.
type JudgeFunc func(ctx context.Context, req JudgeRequest) (Judgment, error)

// Evaluate calls f.
func (f JudgeFunc) Evaluate(ctx context.Context, req JudgeRequest) (Judgment, error) {
	return f(ctx, req)
}
