package tour_test

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/handler"
	"github.com/voicetest-go/voicetest/examples/tour"
	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/personas"
	"github.com/voicetest-go/voicetest/voicetest"
)

// TestBooking is the tour's first scenario: a scripted caller, a
// deterministic judge, and a check on the agent's tool call. The agent runs
// in process, so the scenario runs on virtual time and its golden
// transcript and timeline (testdata/golden/TestBooking/) match exactly.
func TestBooking(t *testing.T) {
	res := voicetest.Scenario(t, voicetest.Config{
		// The agent thinks 300 ms before each answer: that is the latency
		// the scenario measures.
		Agent: handler.New(tour.Greeter, handler.WithThinkTime(300*time.Millisecond)),
		Judge: judges.All(
			judges.Says("table for two"),
			judges.ToolCalled("book_table", map[string]any{"party": 2}),
			judges.HungUp(),
		),
		Script: []voicetest.Step{
			voicetest.AgentTurn(),                          // the greeting
			voicetest.UserSays("A table for two, please."), // the caller
			voicetest.AgentTurn(),
			voicetest.ExpectHangUp(), // booked: the agent ends the call
			voicetest.Check(func(st *voicetest.State) error {
				return st.Expect().ContainsToolCall("book_table", map[string]any{"party": 2}).Err()
			}),
			voicetest.Verdict(),
		},
	})
	if res.Latency.P95 != 300*time.Millisecond {
		t.Errorf("p95 latency = %v, want the agent's 300ms think time (virtual time is exact)", res.Latency.P95)
	}
	if len(res.SkippedSteps) > 0 {
		t.Errorf("steps not run: %s (%s)", res.SkippedSteps, res.SkipReason)
	}
}

// TestBookingCheckRuns proves that TestBooking's Check runs after the
// agent hangs up: the same script with a Check that cannot pass fails.
func TestBookingCheckRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res, err := voicetest.Run(t.Context(), voicetest.Config{
			Agent: handler.New(tour.Greeter, handler.WithThinkTime(300*time.Millisecond)),
			Script: []voicetest.Step{
				voicetest.AgentTurn(),
				voicetest.UserSays("A table for two, please."),
				voicetest.AgentTurn(),
				voicetest.ExpectHangUp(),
				voicetest.Check(func(st *voicetest.State) error {
					return st.Expect().ContainsToolCall("book_table", map[string]any{"party": 3}).Err()
				}),
			},
		})
		if !errors.Is(err, voicetest.ErrExpectation) || res.Success {
			t.Fatalf("err = %v, success %v; want the Check after the hang-up to run and fail", err, res.Success)
		}
		if !strings.HasPrefix(err.Error(), "step 5 Check(): ") {
			t.Errorf("err = %v, want it to name step 5 Check()", err)
		}
	})
}

// TestBookingTable runs the same agent against several callers, as a
// table-driven test with parallel subtests.
func TestBookingTable(t *testing.T) {
	for _, tc := range []struct {
		name string
		user voicetest.User
	}{
		{"direct", personas.Scripted("Two people, please.")},
		{"needs a second try", personas.Scripted("Hi there.", "Oh, two of us.")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			voicetest.Scenario(t, voicetest.Config{
				Agent: handler.New(tour.Greeter),
				User:  tc.user,
				Judge: judges.All(judges.ToolCalled("book_table", nil), judges.HungUp()),
			})
		})
	}
}
