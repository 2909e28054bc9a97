package voicetest

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// The sortedness checks that spare the sorts of a run's transcript and
// timeline (messagesSorted, eventsSorted) agree with the comparisons the
// sorts use, on short random slices with many ties.
func TestSortedChecksAreTheSortOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		n := rng.IntN(6)
		m := make([]Message, n)
		e := make([]Event, n)
		for i := range n {
			m[i] = Message{Turn: rng.IntN(3), Start: time.Duration(rng.IntN(3)), End: time.Duration(rng.IntN(3))}
			e[i] = Event{At: time.Duration(rng.IntN(3)), Turn: rng.IntN(3)}
		}
		if got, want := messagesSorted(m), slices.IsSortedFunc(m, cmpMessages); got != want {
			t.Fatalf("messagesSorted(%+v) = %v, want %v", m, got, want)
		}
		if got, want := eventsSorted(e), slices.IsSortedFunc(e, cmpEvents); got != want {
			t.Fatalf("eventsSorted(%+v) = %v, want %v", e, got, want)
		}
	}
}
