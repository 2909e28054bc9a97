package voicetest_test

import (
	"context"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// TestTranscriptOrderPaceFastRealClock runs on the real clock with
// PaceFast, where the agent's speech keeps its playback times and so runs
// ahead of the user's transfer times: the transcript must still be in
// conversational order (by turn, then by start within a turn).
func TestTranscriptOrderPaceFastRealClock(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a conversation on the real clock")
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	res, err := voicetest.Run(ctx, voicetest.Config{
		Agent: fixtures.Fake(fixtures.FakeConfig{Burst: true, Replies: []fixtures.Reply{
			{Text: "alpha alpha alpha", Latency: 5 * time.Millisecond},
			{Text: "bravo bravo bravo", Latency: 5 * time.Millisecond},
			{Text: "charlie charlie charlie", Latency: 5 * time.Millisecond},
		}}),
		UserVoice: &toneTTS{},
		Pacing:    voicetest.PaceFast,
		Timeouts:  voicetest.Timeouts{Greeting: time.Millisecond},
		Script: []voicetest.Step{
			voicetest.UserSays("one"), voicetest.AgentTurn(),
			voicetest.UserSays("two"), voicetest.AgentTurn(),
			voicetest.UserSays("three"), voicetest.AgentTurn(),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "user: one\nagent: alpha alpha alpha\nuser: two\nagent: bravo bravo bravo\nuser: three\nagent: charlie charlie charlie\n"
	if got := res.TranscriptText(); got != want {
		t.Errorf("transcript out of conversational order:\n%s\nwant:\n%s", got, want)
	}
	st := res.State.Transcript()
	for i := 1; i < len(st); i++ {
		if st[i].Turn < st[i-1].Turn {
			t.Errorf("State.Transcript()[%d] is turn %d after turn %d", i, st[i].Turn, st[i-1].Turn)
		}
	}
	if m, ok := res.State.LastMessage(voicetest.RoleAgent); !ok || m.Text != "charlie charlie charlie" {
		t.Errorf("LastMessage(agent) = %q, %v; want the last reply", m.Text, ok)
	}
	// The agent's speech keeps its playback times: it runs ahead of the
	// user's transfer times, which is what made the order wrong.
	var agentStart, userStart []time.Duration
	for _, m := range st {
		if m.Role == voicetest.RoleAgent {
			agentStart = append(agentStart, m.Start)
		} else {
			userStart = append(userStart, m.Start)
		}
	}
	if len(agentStart) != 3 || len(userStart) != 3 {
		t.Fatalf("got %d agent and %d user messages, want 3 each", len(agentStart), len(userStart))
	}
	for i := 1; i < 3; i++ {
		if agentStart[i] < agentStart[i-1] {
			t.Errorf("agent message %d starts at %v, before the previous one (%v)", i, agentStart[i], agentStart[i-1])
		}
	}
}
