package voicetest_test

import (
	"context"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// slowLineAgent is a test double: it wraps an agent so that every
// SendAudio blocks for perFrame before passing the frame on, like a
// network line (or an adapter pacing its own clock) that has fallen behind
// real time on an overloaded machine.
type slowLineAgent struct {
	voicetest.Agent
	perFrame time.Duration
}

func (a slowLineAgent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	c, err := a.Agent.Connect(ctx, s)
	if err != nil {
		return nil, err
	}
	return slowLineConn{c, a.perFrame}, nil
}

type slowLineConn struct {
	voicetest.Conn
	perFrame time.Duration
}

func (c slowLineConn) SendAudio(ctx context.Context, f pcm.Chunk) error {
	time.Sleep(c.perFrame)
	return c.Conn.SendAudio(ctx, f)
}

// TestBargeInOnALineBehindRealTime: when every frame of the user's speech
// takes longer to send than it lasts, the runner is always late for its
// next frame; the agent's events that arrive meanwhile (here its
// AgentInterrupted) must still be handled as they come, during the barge-in,
// not after it.
func TestBargeInOnALineBehindRealTime(t *testing.T) {
	const stop = 150 * time.Millisecond
	res, err := runVirtual(t, voicetest.Config{
		Agent: slowLineAgent{fixtures.Fake(fixtures.FakeConfig{BargeIn: true, StopLatency: stop,
			Replies: interruptReplies()}), 30 * time.Millisecond},
		UserVoice: &toneTTS{},
		Pacing:    voicetest.PaceRealTime,
		Script: []voicetest.Step{
			voicetest.UserSays("hi"),
			voicetest.Interrupt("stop please", voicetest.AfterWords(2)),
			voicetest.AgentTurn(),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var interruptAt, interruptedAt, stoppedAt time.Duration = -1, -1, -1
	for _, e := range res.Timeline {
		switch {
		case e.Type == voicetest.EventUserInterrupt:
			interruptAt = e.At
		case e.Type == voicetest.EventAgentInterrupted:
			interruptedAt = e.At
			if e.Latency != e.At-interruptAt {
				t.Errorf("agent_interrupted at %v has latency %v, want %v (from the barge-in at %v)", e.At, e.Latency, e.At-interruptAt, interruptAt)
			}
		case e.Type == voicetest.EventAgentStopSpeaking && e.Turn == 1:
			stoppedAt = e.At
		}
	}
	// The agent hears the barge-in a frame late (the slow line), then
	// stops StopLatency later.
	if interruptAt < 0 || interruptedAt < interruptAt+stop || interruptedAt > interruptAt+stop+100*time.Millisecond {
		t.Fatalf("barge-in at %v, agent_interrupted at %v, want %v after it plus at most a few frames:\n%s", interruptAt, interruptedAt, stop, res.TimelineText())
	}
	if got := res.Latency.InterruptResponse; len(got) != 1 || got[0] != interruptedAt-interruptAt {
		t.Errorf("InterruptResponse = %v, want [%v] (the agent's AgentInterrupted was not handled during the barge-in)\n%s", got, interruptedAt-interruptAt, res.TimelineText())
	}
	if stoppedAt != interruptedAt {
		t.Errorf("the interrupted reply stopped at %v, want %v, when the agent said it stopped:\n%s", stoppedAt, interruptedAt, res.TimelineText())
	}
}
