package voicetest

import (
	"runtime/metrics"
	"testing"
)

// Without the scheduler's metrics (a runtime that does not have them),
// catchUp's budget counts every tick, as it did before it read them: the
// wait ends when catchUpWait is counted, not at catchUpMax with nothing
// counted.
func TestCatchUpBudgetWithoutSchedulerMetrics(t *testing.T) {
	t.Parallel()
	b := newCatchUpBudget()
	defer b.timer.Stop()
	b.sched = []metrics.Sample{{Name: "/voicetest/no-such:goroutines"}, {Name: "/voicetest/nor-this:goroutines"}}
	for {
		<-b.timer.C
		if b.spent() {
			break
		}
	}
	if b.counted < catchUpWait {
		t.Errorf("the budget ended with %v counted; want at least catchUpWait (%v): ticks without the metrics must count", b.counted, catchUpWait)
	}
}
