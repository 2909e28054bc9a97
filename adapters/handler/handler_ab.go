package handler

import (
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/voicetest-go/voicetest/voicetest"
)

// This file holds VoiceRun's agent model for tests: A/B tests with
// weighted variants inside the handler, outcomes the handler sets, and
// variables (secrets, settings) injected per scenario.

// abConfig is what the options say about A/B tests and variables.
type abConfig struct {
	forced    map[string]string
	seed      uint64
	seeded    bool
	variables map[string]string
}

// ForceVariant makes every conversation take variant for the A/B test
// named test (Call.Test), so that a table-driven test covers each
// variant. Test fails when variant is not one of the test's variants.
func ForceVariant(test, variant string) Option {
	return func(c *handlerConfig) {
		if c.ab.forced == nil {
			c.ab.forced = map[string]string{}
		}
		c.ab.forced[test] = variant
	}
}

// WithVariantSeed sets the seed from which Call.Test draws its variants.
// The draw depends on the seed, the scenario's name (Session.Name), the
// test's name and the conversation's number on this agent value (0 for
// its first Connect, 1 for the next…), so a scenario draws the same
// variants on every run of the test binary, and the runs of a
// voicetest.Repeat draw in proportion to the weights. Without it the seed
// is 0.
func WithVariantSeed(seed uint64) Option {
	return func(c *handlerConfig) { c.ab.seed, c.ab.seeded = seed, true }
}

// WithVariables gives every conversation variables, the settings and
// secrets an agent reads from its environment in production (VoiceRun's
// variables.get), readable with Call.Variable. They are never sent to the
// runner, logged or recorded. The map is copied.
func WithVariables(vars map[string]string) Option {
	return func(c *handlerConfig) { c.ab.variables = maps.Clone(vars) }
}

// abState is one conversation's A/B tests, outcomes and variables.
type abState struct {
	mu        sync.Mutex
	cfg       abConfig
	scenario  string
	run       int64
	chosen    map[string]string
	outcomes  map[string]float64
	variables map[string]string
}

func newABState(cfg abConfig, scenario string, run int64) *abState {
	// chosen and outcomes are made by their first write.
	return &abState{cfg: cfg, scenario: scenario, run: run, variables: cfg.variables}
}

// Variants are the variants of an A/B test with their weights: the chance
// of each is its weight over the sum of the weights.
type Variants map[string]float64

// Test returns the variant of the A/B test name this conversation takes,
// in the manner of VoiceRun's add_test and get_test: the first call for a
// name chooses one of variants, by weight (or as ForceVariant says), and
// reports the choice to the runner, where it is a timeline event
// (voicetest.DataVariant) that State.Variant and Result.Variants read;
// later calls return the same variant. Weights must be finite and not
// negative, with a positive sum.
func (c *Call) Test(name string, variants Variants) (string, error) {
	if name == "" {
		return "", fmt.Errorf("adapters: Test: the A/B test needs a name")
	}
	names := slices.Sorted(maps.Keys(variants))
	var sum float64
	for _, v := range names {
		w := variants[v]
		if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
			return "", fmt.Errorf("adapters: Test(%q): variant %q has weight %v; weights must be finite and not negative", name, v, w)
		}
		sum += w
	}
	if len(names) == 0 || sum <= 0 {
		return "", fmt.Errorf("adapters: Test(%q): give at least one variant with a positive weight", name)
	}
	ab := c.c.ab
	ab.mu.Lock()
	if v, ok := ab.chosen[name]; ok {
		ab.mu.Unlock()
		return v, nil
	}
	forced, isForced := ab.cfg.forced[name]
	var chosen string
	if isForced {
		if _, ok := variants[forced]; !ok {
			ab.mu.Unlock()
			return "", fmt.Errorf("adapters: Test(%q): ForceVariant asks for %q, which is not one of its variants %q", name, forced, names)
		}
		chosen = forced
	} else {
		h := fnv.New64a()
		fmt.Fprintf(h, "%s\x00%s\x00%d", ab.scenario, name, ab.run)
		x := rand.New(rand.NewPCG(ab.cfg.seed, h.Sum64())).Float64() * sum
		for _, v := range names {
			if w := variants[v]; w > 0 {
				chosen = v
				if x < w {
					break
				}
				x -= w
			}
		}
	}
	if ab.chosen == nil {
		ab.chosen = map[string]string{}
	}
	ab.chosen[name] = chosen
	ab.mu.Unlock()
	if err := c.Data(voicetest.DataVariant, voicetest.VariantData{Test: name, Variant: chosen, Forced: isForced}); err != nil {
		return chosen, err
	}
	return chosen, nil
}

// SetOutcome records the outcome name with value, in the manner of
// VoiceRun's set_outcome (a conversion, a booking, a rating): it is a
// timeline event (voicetest.DataOutcome) that State.Outcome, judges and
// Result.Variants read. A later value replaces an earlier one.
func (c *Call) SetOutcome(name string, value float64) error {
	if name == "" {
		return fmt.Errorf("adapters: SetOutcome: the outcome needs a name")
	}
	if math.IsNaN(value) || math.IsInf(value, 0) {
		return fmt.Errorf("adapters: SetOutcome(%q, %v): the value must be finite", name, value)
	}
	ab := c.c.ab
	ab.mu.Lock()
	if ab.outcomes == nil {
		ab.outcomes = map[string]float64{}
	}
	ab.outcomes[name] = value
	ab.mu.Unlock()
	return c.Data(voicetest.DataOutcome, voicetest.OutcomeData{Name: name, Value: value})
}

// Outcome returns the value SetOutcome last gave name in this
// conversation, in the manner of VoiceRun's get_outcome.
func (c *Call) Outcome(name string) (float64, bool) {
	ab := c.c.ab
	ab.mu.Lock()
	defer ab.mu.Unlock()
	v, ok := ab.outcomes[name]
	return v, ok
}

// Variable returns the variable name given with WithVariables.
func (c *Call) Variable(name string) (string, bool) {
	v, ok := c.c.ab.variables[name]
	return v, ok
}
