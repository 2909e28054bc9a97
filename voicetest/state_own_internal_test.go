package voicetest

import (
	"testing"
	"time"
)

// TestOwnKeepsNoPointerIntoTheRunner: the State of a finished run's
// Result has its segments in start order, and its own pointer to them
// (State.segs pointed into the runner, which a Result holding it kept
// alive: 7.5 KiB more live heap per scenario in
// BenchmarkScale100ParallelText); with a callee left running (shared), a
// copy.
func TestOwnKeepsNoPointerIntoTheRunner(t *testing.T) {
	for _, shared := range []bool{false, true} {
		r := &runner{}
		r.segs = []Segment{{Role: RoleAgent, Start: 2 * time.Second}, {Role: RoleUser, Start: time.Second}}
		r.st.segs = &r.segs
		st := r.st.own(shared)
		if st.segs == &r.segs {
			t.Errorf("shared %v: the State's segments point into the runner", shared)
		}
		if got := *st.segs; len(got) != 2 || got[0].Start != time.Second || got[1].Start != 2*time.Second {
			t.Errorf("shared %v: segments %v, want the two in start order", shared, got)
		}
		if copied := &(*st.segs)[0] != &r.segs[0]; copied != shared {
			t.Errorf("shared %v: segments copied %v, want %v", shared, copied, shared)
		}
	}
}
