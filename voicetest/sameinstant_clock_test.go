package voicetest_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
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
	c := &clockStaleEndConn{clock: s.Clock, wake: make(chan struct{}, 1), done: make(chan struct{})}
	if a.log != "" {
		c.queue = append(c.queue, voicetest.AgentEvent{Kind: voicetest.AgentLog, Text: a.log})
	}
	c.queue = append(c.queue, voicetest.AgentEvent{Kind: voicetest.AgentTurnEnd})
	return c, nil
}

type clockStaleEndConn struct {
	clock    voicetest.Clock
	mu       sync.Mutex
	queue    []voicetest.AgentEvent
	returned int64
	wake     chan struct{}
	done     chan struct{}
	once     sync.Once
}

func (c *clockStaleEndConn) Capabilities() voicetest.Capabilities {
	return voicetest.Capabilities{Adapter: "stale-end", Text: true, StreamingTranscripts: true, TurnEnd: true, VirtualTime: true, SessionClock: true}
}

func (c *clockStaleEndConn) SendAudio(context.Context, pcm.Chunk) error {
	return errors.New("text only")
}
func (c *clockStaleEndConn) EndUtterance(context.Context) error     { return nil }
func (c *clockStaleEndConn) SendDTMF(context.Context, string) error { return errors.New("no DTMF") }
func (c *clockStaleEndConn) Interrupt(context.Context) error        { return nil }

func (c *clockStaleEndConn) SendText(ctx context.Context, text string) error {
	c.clock.Busy()
	evs := []voicetest.AgentEvent{
		{Kind: voicetest.AgentTranscript, Text: "You said " + text, Final: true, Speech: time.Second},
		{Kind: voicetest.AgentTurnEnd},
	}
	c.clock.AfterFunc(300*time.Millisecond, func() {
		c.mu.Lock()
		c.queue = append(c.queue, evs...)
		c.mu.Unlock()
		select {
		case c.wake <- struct{}{}:
		default:
		}
	})
	c.idle()
	return nil
}

// idle tells the Clock the agent has nothing to do, if its queue is empty.
func (c *clockStaleEndConn) idle() {
	c.mu.Lock()
	empty, n := len(c.queue) == 0, c.returned
	c.mu.Unlock()
	if empty {
		c.clock.Idle(n)
	}
}

func (c *clockStaleEndConn) Recv(ctx context.Context) (voicetest.AgentEvent, error) {
	for {
		c.mu.Lock()
		if len(c.queue) > 0 {
			ev := c.queue[0]
			c.queue = c.queue[1:]
			c.returned++
			c.mu.Unlock()
			return ev, nil
		}
		n := c.returned
		c.mu.Unlock()
		c.clock.Idle(n)
		select {
		case <-c.wake:
			c.clock.Now()
		case <-c.done:
			return voicetest.AgentEvent{}, &voicetest.TransportClosedError{Adapter: "stale-end"}
		case <-ctx.Done():
			return voicetest.AgentEvent{}, ctx.Err()
		}
	}
}

func (c *clockStaleEndConn) Close() error {
	c.once.Do(func() { close(c.done) })
	return nil
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
