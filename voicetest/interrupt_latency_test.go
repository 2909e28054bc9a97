package voicetest_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// quietStopAgent is a test double: it wraps an agent and drops its
// AgentInterrupted events, like an agent that stops talking on a
// barge-in without saying so (its audio just ends).
type quietStopAgent struct{ voicetest.Agent }

func (a quietStopAgent) VirtualTime() bool { return true }

func (a quietStopAgent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	c, err := a.Agent.Connect(ctx, s)
	if err != nil {
		return nil, err
	}
	return quietStopConn{c}, nil
}

type quietStopConn struct{ voicetest.Conn }

func (c quietStopConn) Recv(ctx context.Context) (voicetest.AgentEvent, error) {
	for {
		ev, err := c.Conn.Recv(ctx)
		if err != nil {
			return ev, err
		}
		if ev.Kind != voicetest.AgentInterrupted {
			return ev, nil
		}
	}
}

// TestInterruptResponseTimeIsOnOneEvent shows what Event.Latency says of
// a barge-in: the interrupt response time is on the agent_interrupted
// event when the agent reports one (the interrupted turn's
// agent_stop_speaking then has none), and on that agent_stop_speaking
// when the agent reports none.
func TestInterruptResponseTimeIsOnOneEvent(t *testing.T) {
	const stop = 150 * time.Millisecond
	for _, tc := range []struct {
		name  string
		agent voicetest.Agent
		onInt bool // the response time is on agent_interrupted
	}{
		{"native interrupt", fixtures.Fake(fixtures.FakeConfig{NativeInterrupt: true, StopLatency: stop, Replies: interruptReplies()}), true},
		{"overlapping audio, agent reports it stopped", fixtures.Fake(fixtures.FakeConfig{BargeIn: true, StopLatency: stop, Replies: interruptReplies()}), true},
		{"overlapping audio, agent just stops", quietStopAgent{fixtures.Fake(fixtures.FakeConfig{BargeIn: true, StopLatency: stop, Replies: interruptReplies()})}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := runVirtual(t, voicetest.Config{
				Agent: tc.agent, UserVoice: &toneTTS{},
				Script: []voicetest.Step{
					voicetest.UserSays("hi"),
					voicetest.Interrupt("stop please", voicetest.AfterWords(2)),
					voicetest.AgentTurn(),
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			resp := res.Latency.InterruptResponse
			if len(resp) != 1 || resp[0] <= 0 {
				t.Fatalf("InterruptResponse = %v, want one positive response time\n%s", resp, res.TimelineText())
			}
			var onStop, onInterrupted time.Duration
			interrupted := 0
			for _, e := range res.Timeline {
				switch {
				case e.Type == voicetest.EventAgentStopSpeaking && e.Turn == 1:
					onStop = e.Latency
				case e.Type == voicetest.EventAgentInterrupted:
					interrupted++
					onInterrupted = e.Latency
				}
			}
			want := [2]time.Duration{resp[0], 0} // agent_interrupted, agent_stop_speaking
			if !tc.onInt {
				want = [2]time.Duration{0, resp[0]}
				if interrupted != 0 {
					t.Errorf("%d agent_interrupted events, want none", interrupted)
				}
			}
			if got := [2]time.Duration{onInterrupted, onStop}; got != want {
				t.Errorf("latency on agent_interrupted %v, on turn 1's agent_stop_speaking %v; want %v, %v\n%s",
					got[0], got[1], want[0], want[1], res.TimelineText())
			}
		})
	}
}

// TestResultStateTimelineIsInTheFixedOrder backs State.Timeline's doc: a
// Result's State gives the same timeline as Result.Timeline, whose events
// at one instant follow the fixed order (here the barge-in and the agent's
// stop at the same instant: user_interrupt first, then agent_stop_speaking,
// then the user's speech starting the next turn).
func TestResultStateTimelineIsInTheFixedOrder(t *testing.T) {
	res, err := runVirtual(t, voicetest.Config{
		Agent:     fixtures.Fake(fixtures.FakeConfig{NativeInterrupt: true, Replies: interruptReplies()}),
		UserVoice: &toneTTS{},
		Script: []voicetest.Step{
			voicetest.UserSays("hi"),
			voicetest.Interrupt("stop please", voicetest.After(500*time.Millisecond)),
			voicetest.AgentTurn(),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.State.Timeline(), res.Timeline) {
		t.Errorf("State.Timeline() differs from Result.Timeline")
	}
	var at []voicetest.EventType
	for _, e := range res.Timeline {
		if e.At == res.Timeline[3].At {
			at = append(at, e.Type)
		}
	}
	want := []voicetest.EventType{voicetest.EventUserInterrupt, voicetest.EventAgentStopSpeaking, voicetest.EventUserStartSpeaking, voicetest.EventAgentInterrupted}
	if !reflect.DeepEqual(at, want) {
		t.Errorf("events at %v: %v, want %v\n%s", res.Timeline[3].At, at, want, res.TimelineText())
	}
}
