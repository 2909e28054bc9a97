package voicetest_test

import (
	"testing"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// Issue 14, item 4: at one instant the timeline follows its rule, here a
// native barge-in: the user interrupts, the agent's speech stops, the
// user's speech starts, the agent reports the interruption.
func TestTimelineOrderAtOneInstant(t *testing.T) {
	res, err := runVirtual(t, voicetest.Config{
		Agent: fixtures.BargeInAgent(interruptReplies()...), UserVoice: &toneTTS{},
		Script: []voicetest.Step{voicetest.UserSays("hi"), voicetest.Interrupt("stop please", voicetest.AfterWords(2)), voicetest.AgentTurn()},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `      0ms turn 1 user_start_speaking
    400ms turn 1 user_stop_speaking
    700ms turn 1 agent_start_speaking latency=300ms
   1100ms turn 1 user_interrupt "stop please"
   1100ms turn 1 agent_stop_speaking
   1100ms turn 2 user_start_speaking
   1100ms turn 2 agent_interrupted
   1900ms turn 2 user_stop_speaking
   2100ms turn 2 agent_start_speaking latency=200ms
   2500ms turn 2 agent_stop_speaking
`
	if got := res.TimelineText(); got != want {
		t.Errorf("timeline:\n%s\nwant:\n%s", got, want)
	}
}
