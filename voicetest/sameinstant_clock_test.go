package voicetest_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
)

// clockStaleEndAgent is staleEndAgent on the runner's virtual Clock
// (Session.Clock, Capabilities.SessionClock), for Run outside a synctest
// bubble: it keeps the Clock's protocol (Busy when the runner calls its
// Conn, Idle with the events its Recv returned when it has nothing to do).
type clockStaleEndAgent struct{ log string }

func (a clockStaleEndAgent) VirtualTime() bool { return true }

func (a clockStaleEndAgent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	if s.Clock == nil {
		return nil, errors.New("clockStaleEndAgent needs Session.Clock")
	}
	c, err := staleEndAgent{log: a.log}.Connect(ctx, s)
	if err != nil {
		return nil, err
	}
	return &clockStaleEndConn{staleEndConn: c.(*staleEndConn), clock: s.Clock}, nil
}

type clockStaleEndConn struct {
	*staleEndConn
	clock    voicetest.Clock
	returned atomic.Int64 // events Recv has returned
}

func (c *clockStaleEndConn) Capabilities() voicetest.Capabilities {
	caps := c.staleEndConn.Capabilities()
	caps.SessionClock = true
	return caps
}

func (c *clockStaleEndConn) SendText(ctx context.Context, text string) error {
	c.clock.Busy()
	c.clock.AfterFunc(300*time.Millisecond, func() {
		c.push(voicetest.AgentEvent{Kind: voicetest.AgentTranscript, Text: "You said " + text, Final: true, Speech: time.Second},
			voicetest.AgentEvent{Kind: voicetest.AgentTurnEnd})
	})
	c.mu.Lock()
	idle := len(c.queue) == 0
	c.mu.Unlock()
	if idle {
		c.clock.Idle(c.returned.Load())
	}
	return nil
}

func (c *clockStaleEndConn) Recv(ctx context.Context) (voicetest.AgentEvent, error) {
	for {
		c.mu.Lock()
		if len(c.queue) > 0 {
			ev := c.queue[0]
			c.queue = c.queue[1:]
			c.returned.Add(1)
			c.mu.Unlock()
			return ev, nil
		}
		c.mu.Unlock()
		c.clock.Idle(c.returned.Load())
		select {
		case <-c.wake:
			c.clock.Now() // a timer fired: the agent has seen it
		case <-c.done:
			return voicetest.AgentEvent{}, &voicetest.TransportClosedError{Adapter: "stale-end"}
		case <-ctx.Done():
			return voicetest.AgentEvent{}, ctx.Err()
		}
	}
}

// The same on the runner's virtual Clock, outside a bubble.
func TestSameInstantEventsOnTheSessionClock(t *testing.T) {
	want := "user: one\nagent: You said one\nuser: two\nagent: You said two\n"
	for _, pacing := range []voicetest.Pacing{voicetest.PaceRealTime, voicetest.PaceFast} {
		seen := map[string]int{}
		for range 200 {
			res, err := voicetest.Run(t.Context(), voicetest.Config{Agent: clockStaleEndAgent{log: "hello"}, Pacing: pacing, Script: []voicetest.Step{
				voicetest.UserSays("one"), voicetest.AgentTurn(),
				voicetest.UserSays("two"), voicetest.AgentTurn(),
			}})
			got := res.TranscriptText() + res.TimelineText()
			if err != nil {
				got = "error: " + err.Error() + "\n" + got
			}
			seen[got]++
		}
		if len(seen) != 1 {
			for k, v := range seen {
				t.Errorf("%v: %d runs gave\n%s", pacing, v, k)
			}
		}
		for k := range seen {
			if !strings.HasPrefix(k, want) {
				t.Errorf("%v: got\n%s", pacing, k)
			}
		}
	}
}

// stalledClockAgent is clockStaleEndAgent whose first Recv keeps its
// goroutine running, without returning, for stall of real time: what a
// starved goroutine looks like to the scheduler (runnable, or running on
// a thread the machine does not run), where a goroutine waiting for
// something (a model over the network) is blocked.
type stalledClockAgent struct{ stall time.Duration }

func (a stalledClockAgent) VirtualTime() bool { return true }

func (a stalledClockAgent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	c, err := clockStaleEndAgent{log: "hello"}.Connect(ctx, s)
	if err != nil {
		return nil, err
	}
	return &stalledClockConn{clockStaleEndConn: c.(*clockStaleEndConn), stall: a.stall}, nil
}

type stalledClockConn struct {
	*clockStaleEndConn
	stall time.Duration
	first atomic.Bool
}

func (c *stalledClockConn) Recv(ctx context.Context) (voicetest.AgentEvent, error) {
	if c.first.CompareAndSwap(false, true) {
		for start := time.Now(); time.Since(start) < c.stall; {
			runtime.Gosched() // runnable all along, never blocked
		}
	}
	return c.clockStaleEndConn.Recv(ctx)
}

// TestSameInstantEventsOnTheSessionClock failed about once in 20 runs on
// a loaded machine: catchUp gave the agent 100 ms of real time to take up
// what it queued at connect, and a goroutine the machine did not run for
// that long lost the stale turn end to the user's first line. A stall
// longer than that bound, of a goroutine that wants to run, does not
// change the conversation.
func TestSameInstantEventsSurviveAStarvedAgent(t *testing.T) {
	want := "user: one\nagent: You said one\nuser: two\nagent: You said two\n"
	// (PaceFast: where it failed; the stall costs 150 ms of CPU a run.)
	res, err := voicetest.Run(t.Context(), voicetest.Config{Agent: stalledClockAgent{stall: 150 * time.Millisecond}, Pacing: voicetest.PaceFast, Script: []voicetest.Step{
		voicetest.UserSays("one"), voicetest.AgentTurn(),
		voicetest.UserSays("two"), voicetest.AgentTurn(),
	}})
	if err != nil {
		t.Fatalf("%v\n%s", err, res.TranscriptText())
	}
	if got := res.TranscriptText(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
