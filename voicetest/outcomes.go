package voicetest

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Agents report A/B test variants and outcomes as data events with these
// names (AgentData, recorded as EventData on the timeline), in the manner
// of VoiceRun's add_test/get_test and set_outcome: the handler adapter's
// Call.Test and Call.SetOutcome send them, and any adapter may.
const (
	// DataVariant names the data event of a chosen A/B variant; its data
	// is a VariantData.
	DataVariant = "ab_variant"
	// DataOutcome names the data event of an outcome; its data is an
	// OutcomeData.
	DataOutcome = "outcome"
)

// VariantData is the payload of a DataVariant event.
type VariantData struct {
	// Test names the A/B test ("greeting").
	Test string `json:"test"`
	// Variant is the variant chosen for this conversation ("casual").
	Variant string `json:"variant"`
	// Forced reports a variant chosen by the test, not drawn.
	Forced bool `json:"forced,omitempty"`
}

// OutcomeData is the payload of a DataOutcome event.
type OutcomeData struct {
	// Name names the outcome ("booked", "conversion").
	Name string `json:"name"`
	// Value is its value; a later event for the same name replaces it.
	Value float64 `json:"value"`
}

// Variants returns the A/B variants the agent chose in this conversation,
// by test name.
func (s *State) Variants() map[string]string {
	out := map[string]string{}
	for _, e := range s.Events() {
		if v, ok := variantOf(e); ok {
			out[v.Test] = v.Variant
		}
	}
	return out
}

// Variant returns the variant the agent chose for test, and false when it
// did not run that test.
func (s *State) Variant(test string) (string, bool) {
	v, ok := s.Variants()[test]
	return v, ok
}

// Outcomes returns the outcomes the agent set, by name (the last value of
// each).
func (s *State) Outcomes() map[string]float64 {
	out := map[string]float64{}
	for _, e := range s.Events() {
		if o, ok := outcomeOf(e); ok {
			out[o.Name] = o.Value
		}
	}
	return out
}

// Outcome returns the outcome name's last value, and false when the agent
// never set it.
func (s *State) Outcome(name string) (float64, bool) {
	v, ok := s.Outcomes()[name]
	return v, ok
}

func variantOf(e Event) (VariantData, bool) {
	var v VariantData
	if e.Type != EventData || e.Text != DataVariant || json.Unmarshal(e.Data, &v) != nil || v.Test == "" {
		return VariantData{}, false
	}
	return v, true
}

func outcomeOf(e Event) (OutcomeData, bool) {
	var o OutcomeData
	if e.Type != EventData || e.Text != DataOutcome || json.Unmarshal(e.Data, &o) != nil || o.Name == "" || math.IsNaN(o.Value) {
		return OutcomeData{}, false
	}
	return o, true
}

// VariantSummary summarises the runs of a scenario in which the agent
// chose one variant of an A/B test: how many, how many passed, and the
// outcomes they set.
type VariantSummary struct {
	// Test and Variant name the A/B test and the variant.
	Test, Variant string
	// Runs is the number of runs with this variant; Passed how many of
	// them passed.
	Runs, Passed int
	// Outcomes are the outcomes set in those runs, by name.
	Outcomes map[string]OutcomeSummary
}

// OutcomeSummary is an outcome's values over several runs.
type OutcomeSummary struct {
	// N is the number of runs that set it.
	N int
	// Mean, Min and Max are over those runs.
	Mean, Min, Max float64
}

// Variants summarises the scenario's runs by the variant the agent chose
// for each A/B test: under Config.Repeat, all the runs (with
// Config.Repeat and a seeded choice, each variant gets its share); for a
// single run, that run. Runs in which a test was not run count for no
// variant of it. The summaries are ordered by test, then variant.
func (res *Result) Variants() []VariantSummary {
	runs := res.Runs
	if runs == nil {
		runs = []*Result{res}
	}
	type key struct{ test, variant string }
	sums := map[key]*VariantSummary{}
	for _, r := range runs {
		if r.State == nil {
			continue
		}
		outs := r.State.Outcomes()
		for test, variant := range r.State.Variants() {
			k := key{test, variant}
			s := sums[k]
			if s == nil {
				s = &VariantSummary{Test: test, Variant: variant, Outcomes: map[string]OutcomeSummary{}}
				sums[k] = s
			}
			s.Runs++
			if r.Success {
				s.Passed++
			}
			for name, v := range outs {
				o := s.Outcomes[name]
				if o.N == 0 {
					o.Min, o.Max = v, v
				}
				o.Mean = (o.Mean*float64(o.N) + v) / float64(o.N+1)
				o.N++
				o.Min, o.Max = min(o.Min, v), max(o.Max, v)
				s.Outcomes[name] = o
			}
		}
	}
	out := make([]VariantSummary, 0, len(sums))
	for _, s := range sums {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Test != out[j].Test {
			return out[i].Test < out[j].Test
		}
		return out[i].Variant < out[j].Variant
	})
	return out
}

// String renders the summary on one line: `greeting=casual: 3 runs, 2
// passed; booked mean 0.67 (0–1, 3 runs)`.
func (v VariantSummary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s=%s: %d runs, %d passed", v.Test, v.Variant, v.Runs, v.Passed)
	names := make([]string, 0, len(v.Outcomes))
	for n := range v.Outcomes {
		names = append(names, n)
	}
	slices.Sort(names)
	for i, n := range names {
		o := v.Outcomes[n]
		sep := ", "
		if i == 0 {
			sep = "; "
		}
		fmt.Fprintf(&b, "%s%s mean %.3g (%.3g–%.3g, %d runs)", sep, n, o.Mean, o.Min, o.Max, o.N)
	}
	return b.String()
}
