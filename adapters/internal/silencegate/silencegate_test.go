package silencegate

import (
	"slices"
	"testing"
)

func TestGate(t *testing.T) {
	g := Gate{Threshold: 100, MaxPause: 4}
	loud := []int16{500, -500}
	quiet := []int16{1, -1}
	steps := []struct {
		in   []int16
		want []int16
	}{
		{quiet, nil},                             // silence before any sound: dropped
		{loud, loud},                             // sound
		{quiet, nil},                             // a pause: held
		{loud, []int16{1, -1, 500, -500}},        // reported with the sound after it
		{quiet, nil}, {quiet, nil}, {quiet, nil}, // past MaxPause: dropped
		{loud, loud}, // no stale pause before it
	}
	for i, s := range steps {
		got := g.Process(slices.Clone(s.in))
		if !slices.Equal(got, s.want) {
			t.Errorf("step %d: Process(%v) = %v, want %v", i, s.in, got, s.want)
		}
	}
	if got := (&Gate{Threshold: -1}).Process(quiet); !slices.Equal(got, quiet) {
		t.Errorf("a negative threshold dropped %v", got)
	}
}
