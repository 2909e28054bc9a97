package judges

import (
	"fmt"
	"math"

	"github.com/voicetest-go/voicetest/voicetest"
)

// OutcomeAtLeast passes when the agent set the outcome name
// (voicetest.DataOutcome, the handler's Call.SetOutcome) to at least min
// by the end of the conversation. An outcome can change until then, so
// in the middle of a conversation it only reports what it sees.
func OutcomeAtLeast(name string, min float64) *Rule {
	return outcomeRule(fmt.Sprintf("the agent sets outcome %q to at least %g", name, min), name, func(v float64) bool { return v >= min })
}

// OutcomeEquals passes when the agent's last value of the outcome name is
// want.
func OutcomeEquals(name string, want float64) *Rule {
	return outcomeRule(fmt.Sprintf("the agent sets outcome %q to %g", name, want), name, func(v float64) bool { return v == want })
}

func outcomeRule(criterion, name string, ok func(float64) bool) *Rule {
	return &Rule{criterion: criterion, eval: func(st *voicetest.State, final bool) (outcome, error) {
		if name == "" {
			return outcome{}, fmt.Errorf("outcome rule: the outcome needs a name")
		}
		v, set := st.Outcome(name)
		switch {
		case !set && !final:
			return pending("outcome %q not set yet (turn %d)", name, st.Turn()), nil
		case !set:
			return fail("the agent never set outcome %q (it set %s)", name, outcomeList(st)), nil
		case !final:
			return pending("outcome %q is %g so far (turn %d)", name, v, st.Turn()), nil
		case ok(v):
			return pass(true, "outcome %q is %g", name, v), nil
		}
		return fail("outcome %q is %g", name, v), nil
	}}
}

// VariantIs passes when the agent took variant for the A/B test named
// test (voicetest.DataVariant, the handler's Call.Test).
func VariantIs(test, variant string) *Rule {
	return &Rule{criterion: fmt.Sprintf("the agent takes variant %q of A/B test %q", variant, test), eval: func(st *voicetest.State, final bool) (outcome, error) {
		got, ok := st.Variant(test)
		switch {
		case !ok && !final:
			return pending("A/B test %q not run yet (turn %d)", test, st.Turn()), nil
		case !ok:
			return fail("the agent never ran A/B test %q", test), nil
		case got == variant:
			return pass(true, "A/B test %q: variant %q", test, got), nil
		}
		return fail("A/B test %q: variant %q", test, got), nil
	}}
}

func outcomeList(st *voicetest.State) string {
	outs := st.Outcomes()
	if len(outs) == 0 {
		return "none"
	}
	s := ""
	for _, k := range sortedKeys(outs) {
		if s != "" {
			s += ", "
		}
		v := outs[k]
		if math.Trunc(v) == v {
			s += fmt.Sprintf("%s=%d", k, int64(v))
		} else {
			s += fmt.Sprintf("%s=%g", k, v)
		}
	}
	return s
}
