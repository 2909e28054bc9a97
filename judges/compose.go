package judges

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/voicetest-go/voicetest/voicetest"
)

// criteriaLister is a judge that names its criteria (Rule, CriteriaJudge,
// IntentJudge, AllJudge, AnyJudge).
type criteriaLister interface {
	Criteria() []string
}

// criteriaOf returns j's criteria, or a description of j.
func criteriaOf(j voicetest.Judge) []string {
	if l, ok := j.(criteriaLister); ok {
		return l.Criteria()
	}
	return []string{fmt.Sprintf("%T", j)}
}

// AllJudge requires every one of its judges; build it with All.
type AllJudge struct {
	judges []voicetest.Judge
}

var _ voicetest.Judge = (*AllJudge)(nil)

// All combines judges, deterministic and LLM alike, into one judge whose
// verdict lists every criterion of every judge:
//
//	judges.All(
//		judges.ForTest(t, "The agent confirms the time"),
//		judges.NeverSays("as an AI"),
//		judges.ToolCalled("book", map[string]any{"party": 2}),
//		judges.EachTurnUnder(1500*time.Millisecond),
//	)
//
// The verdict fails if any criterion fails and is inconclusive if any is
// inconclusive. In a running conversation it is decided, ending the
// conversation, when any judge reports a failed criterion or every judge
// has decided. A Checkpoint's criteria go to the judge that declares them;
// the others go to the first LLM criteria judge (CriteriaJudge), which
// can judge any criterion, or are inconclusive when there is none.
func All(judges ...voicetest.Judge) *AllJudge {
	return &AllJudge{judges: slices.Clone(judges)}
}

// Criteria returns the criteria of all the judges, in order.
func (a *AllJudge) Criteria() []string {
	var out []string
	for _, j := range a.judges {
		out = append(out, criteriaOf(j)...)
	}
	return out
}

// Evaluate implements voicetest.Judge.
func (a *AllJudge) Evaluate(ctx context.Context, req voicetest.JudgeRequest) (voicetest.Judgment, error) {
	if err := checkJudges("All", a.judges); err != nil {
		return voicetest.Judgment{}, err
	}
	type ask struct {
		j        voicetest.Judge
		criteria []string
	}
	var asks []ask
	var orphans []string
	if req.Criteria == nil {
		for _, j := range a.judges {
			asks = append(asks, ask{j: j})
		}
	} else {
		byJudge := make([][]string, len(a.judges))
		for _, c := range req.Criteria {
			owner := -1
			for i, j := range a.judges {
				if slices.Contains(criteriaOf(j), c) {
					owner = i
					break
				}
			}
			if owner < 0 {
				for i, j := range a.judges {
					if _, ok := j.(*CriteriaJudge); ok {
						owner = i
						break
					}
				}
			}
			if owner < 0 {
				orphans = append(orphans, c)
				continue
			}
			byJudge[owner] = append(byJudge[owner], c)
		}
		for i, cs := range byJudge {
			if len(cs) > 0 {
				asks = append(asks, ask{j: a.judges[i], criteria: cs})
			}
		}
	}
	forced := isForced(req)
	out := voicetest.Judgment{}
	allDecided := true
	var reasons []string
	for _, x := range asks {
		r := req
		if x.criteria != nil {
			r.Criteria = x.criteria
		}
		v, err := x.j.Evaluate(ctx, r)
		if err != nil {
			return voicetest.Judgment{}, err
		}
		out.Criteria = append(out.Criteria, v.Criteria...)
		if !v.Decided {
			allDecided = false
		}
		if v.Reasoning != "" && len(asks) > 1 {
			reasons = append(reasons, v.Reasoning)
		} else if v.Reasoning != "" {
			out.Reasoning = v.Reasoning
		}
	}
	for _, c := range orphans {
		out.Criteria = append(out.Criteria, voicetest.CriterionResult{Criterion: c, Status: voicetest.StatusInconclusive,
			Reasoning: fmt.Sprintf("no judge in All checks this criterion (they check %s) and none is an LLM criteria judge; add judges.Criteria", quoteList(a.Criteria()))})
	}
	if len(reasons) > 0 {
		out.Reasoning = strings.Join(reasons, "; ")
	}
	out.Decided = forced || allDecided || out.Status() == voicetest.StatusFail
	return out, nil
}

// AnyJudge requires one of its judges; build it with Any.
type AnyJudge struct {
	judges []voicetest.Judge
	name   string
}

var _ voicetest.Judge = (*AnyJudge)(nil)

// Any combines judges into one criterion, "any of: A | B", that passes
// when one of the judges passes (all its criteria pass), fails when every
// judge fails, and is inconclusive otherwise. Its reasoning lists each
// alternative's outcome:
//
//	judges.Any(judges.Says("goodbye"), judges.HungUp())
//
// In a running conversation it is decided when a decided judge passes or
// every judge has decided and failed.
func Any(judges ...voicetest.Judge) *AnyJudge {
	return &AnyJudge{judges: slices.Clone(judges)}
}

// Named returns a copy of the judge reported under criterion instead of
// "any of: …".
func (a *AnyJudge) Named(criterion string) *AnyJudge {
	return &AnyJudge{judges: slices.Clone(a.judges), name: criterion}
}

// Criterion returns the combined criterion, "any of: A | B", or the name
// given to Named.
func (a *AnyJudge) Criterion() string {
	if a.name != "" {
		return a.name
	}
	var parts []string
	for _, j := range a.judges {
		if j == nil {
			parts = append(parts, "<nil>")
			continue
		}
		parts = append(parts, strings.Join(criteriaOf(j), " and "))
	}
	return "any of: " + strings.Join(parts, " | ")
}

// Criteria returns the one combined criterion.
func (a *AnyJudge) Criteria() []string { return []string{a.Criterion()} }

// Evaluate implements voicetest.Judge.
func (a *AnyJudge) Evaluate(ctx context.Context, req voicetest.JudgeRequest) (voicetest.Judgment, error) {
	if err := checkJudges("Any", a.judges); err != nil {
		return voicetest.Judgment{}, err
	}
	crit := a.Criterion()
	asked := req.Criteria
	if asked == nil {
		asked = []string{crit}
	}
	out := voicetest.Judgment{Decided: isForced(req)}
	for _, c := range asked {
		if c != crit {
			out.Criteria = append(out.Criteria, notMine(c, a.Criteria()))
			continue
		}
		sub := req
		sub.Criteria = nil
		if req.Criteria != nil {
			// A checkpoint on the combined criterion: each alternative
			// must decide now.
			sub.Final = true
		}
		status := voicetest.StatusFail
		allDecided := true
		passDecided := false
		var lines []string
		for _, j := range a.judges {
			v, err := j.Evaluate(ctx, sub)
			if err != nil {
				return voicetest.Judgment{}, err
			}
			st := v.Status()
			switch {
			case st == voicetest.StatusPass:
				status = voicetest.StatusPass
				passDecided = passDecided || v.Decided
			case st == voicetest.StatusInconclusive && status == voicetest.StatusFail:
				status = voicetest.StatusInconclusive
			}
			if !v.Decided {
				allDecided = false
			}
			lines = append(lines, fmt.Sprintf("[%s] %s", st, describeJudgment(j, v)))
		}
		out.Criteria = append(out.Criteria, voicetest.CriterionResult{Criterion: crit, Status: status, Reasoning: strings.Join(lines, "; ")})
		if passDecided || (status == voicetest.StatusFail && allDecided) {
			out.Decided = true
		}
	}
	return out, nil
}

func describeJudgment(j voicetest.Judge, v voicetest.Judgment) string {
	var parts []string
	for _, c := range v.Criteria {
		parts = append(parts, fmt.Sprintf("%s: %s", c.Criterion, c.Reasoning))
	}
	if len(parts) == 0 {
		return strings.Join(criteriaOf(j), " and ") + ": no answer"
	}
	return strings.Join(parts, "; ")
}

func checkJudges(name string, js []voicetest.Judge) error {
	if len(js) == 0 {
		return fmt.Errorf("judges: %s() was given no judges; pass at least one", name)
	}
	for i, j := range js {
		if j == nil {
			return fmt.Errorf("judges: %s: judge %d is nil", name, i+1)
		}
	}
	return nil
}
