package tour_test

import (
	"testing"
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
			voicetest.Check(func(st *voicetest.State) error {
				return st.Expect().ContainsToolCall("book_table", map[string]any{"party": 2}).Err()
			}),
			voicetest.Verdict(),
		},
	})
	if res.Latency.P95 != 300*time.Millisecond {
		t.Errorf("p95 latency = %v, want the agent's 300ms think time (virtual time is exact)", res.Latency.P95)
	}
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
