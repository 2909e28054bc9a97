package judges_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/voicetest"
)

// recTB records what Report logs; it embeds a real *testing.T for the
// rest.
type recTB struct {
	*testing.T
	logs  []string
	attrs map[string]string
}

func (r *recTB) Helper()         {}
func (r *recTB) Log(args ...any) { r.logs = append(r.logs, fmt.Sprint(args...)) }
func (r *recTB) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}
func (r *recTB) Attr(key, value string) { r.attrs[key] = value }
func (r *recTB) Error(args ...any)      { r.T.Fatalf("Report must not fail the test: %v", args) }
func (r *recTB) Errorf(format string, args ...any) {
	r.T.Fatalf("Report must not fail the test: "+format, args...)
}

func TestReport(t *testing.T) {
	res := run(t, voicetest.Config{Agent: bookingAgent(), Script: append(bookingScript(), voicetest.Verdict()),
		Judge: judges.All(judges.Says("table for two"), judges.NeverSays("goodbye"), judges.InterruptionHandled(100*time.Millisecond))})
	rec := &recTB{T: t, attrs: map[string]string{}}
	judges.Report(rec, res)
	assert.Equal(t, []string{
		`PASS criterion "the agent says \"table for two\"": turn 1: the agent said "We have a table for 2 at seven. Shall I book it?"`,
		`FAIL criterion "the agent never says \"goodbye\"": turn 2: the agent said "Booked! Goodbye."`,
		`INCONCLUSIVE criterion "the agent stops speaking within 100ms of a barge-in": the user never barged in; add an Interrupt step to test this`,
	}, rec.logs)
	assert.Equal(t, map[string]string{"voicetest.criteria_pass": "1", "voicetest.criteria_fail": "1", "voicetest.criteria_inconclusive": "1"}, rec.attrs)

	rec = &recTB{T: t, attrs: map[string]string{}}
	judges.Report(rec, nil)
	assert.Equal(t, []string{"judges: no result to report (the scenario did not run)"}, rec.logs)
}
