package voicetest_test

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/voicetest-go/voicetest/voicetest"
)

// On virtual time (a synctest bubble), what the agent does at one
// instant is handled by a rule, not by the goroutine scheduler: a run
// gives the same result however its goroutines are scheduled.

// yieldAgent wraps an agent whose Conn's Recv yields the processor hops
// times before it returns each event: the event comes at the same
// virtual instant, but later in real time, as it does on a loaded
// machine. queued, if not nil, is closed when Recv is called for the
// second time: the first event is then in the runner's queue.
type yieldAgent struct {
	voicetest.Agent
	hops   int
	queued chan struct{}
}

func (a yieldAgent) VirtualTime() bool { return true }

func (a yieldAgent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	c, err := a.Agent.Connect(ctx, s)
	if err != nil {
		return nil, err
	}
	return &yieldConn{Conn: c, hops: a.hops, queued: a.queued}, nil
}

type yieldConn struct {
	voicetest.Conn
	hops   int
	queued chan struct{}
	mu     sync.Mutex
	calls  int
}

func (c *yieldConn) Recv(ctx context.Context) (voicetest.AgentEvent, error) {
	c.mu.Lock()
	c.calls++
	if c.calls == 2 && c.queued != nil {
		close(c.queued)
	}
	c.mu.Unlock()
	ev, err := c.Conn.Recv(ctx)
	for range c.hops {
		runtime.Gosched()
	}
	return ev, err
}

// However the goroutines of a run are scheduled, a run on virtual time
// has one outcome. Here the agent's silent turn end at 0s reaches the
// runner's queue before the user's first line (the script waits for it),
// or after the runner has begun the line (Recv yields the processor 64
// times first), or as the scheduler pleases: the turn end is never the
// answer to the line, and the transcript and timeline are the same, on
// either pacing.
func TestSameInstantEventsDoNotDependOnScheduling(t *testing.T) {
	want := "user: one\nagent: You said one\nuser: two\nagent: You said two\n"
	for _, pacing := range []voicetest.Pacing{voicetest.PaceRealTime, voicetest.PaceFast} {
		var first, firstName string
		for _, sched := range []struct {
			name string
			hops int
			wait bool
		}{
			{"the turn end queued before the line", 0, true},
			{"the turn end queued after the line began", 64, false},
			{"as scheduled", 0, false},
		} {
			for range 20 {
				queued := make(chan struct{})
				script := []voicetest.Step{
					voicetest.Check(func(*voicetest.State) error {
						if sched.wait {
							<-queued
						}
						return nil
					}),
					voicetest.UserSays("one"), voicetest.AgentTurn(),
					voicetest.UserSays("two"), voicetest.AgentTurn(),
				}
				res, err := runVirtual(t, voicetest.Config{Agent: yieldAgent{Agent: staleEndAgent{log: "hello"}, hops: sched.hops, queued: queued}, Pacing: pacing, Script: script})
				got := res.TranscriptText() + res.TimelineText()
				if err != nil {
					got = "error: " + err.Error() + "\n" + got
				}
				if first == "" {
					first, firstName = got, sched.name
					if !strings.HasPrefix(got, want) {
						t.Errorf("%v, %s: got\n%s\nwant the transcript:\n%s", pacing, sched.name, got, want)
					}
				}
				if got != first {
					t.Fatalf("%v: %s gives\n%s\nbut %s gives\n%s", pacing, sched.name, got, firstName, first)
				}
			}
		}
	}
}
