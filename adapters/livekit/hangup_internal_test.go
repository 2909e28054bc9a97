package livekit

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	lksdk "github.com/livekit/server-sdk-go/v2"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/scrub"
)

// The agent leaves the room (the SDK's callback, hangUp) while the test
// closes the Conn: the goroutine with which hangUp leaves the room is
// one that Close waits for, whichever comes first. (Before, hangUp could
// add it to Close's WaitGroup while Close was already waiting: the race
// detector flagged it in TestConformance/HangUp, and Close could return
// with it still running.) Under -race this fails on that; without it,
// it checks that both end the conversation once and Close succeeds.
func TestHangUpWhileClosing(t *testing.T) {
	for range 50 {
		st := &settings{Agent: Agent{MaxQueueBytes: DefaultMaxQueueBytes, MaxFrameBytes: DefaultMaxFrameBytes}}
		c, err := newConn(st, voicetest.Session{Name: t.Name(), Rate: agentRate, Logf: func(string, ...any) {}}, scrub.New())
		if err != nil {
			t.Fatal(err)
		}
		c.room = lksdk.NewRoom(nil)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			c.hangUp("the agent left the room")
		}()
		go func() {
			defer wg.Done()
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}()
		wg.Wait()
		c.mu.Lock()
		ended := c.ended
		c.mu.Unlock()
		if !ended {
			t.Fatal("neither the hang-up nor Close ended the conversation")
		}
	}
}

// An event the agent's room delivers while the adapter hangs up (the
// SDK's goroutines deliver audio, transcripts and agent states while
// hangUp runs) is not queued after the hang-up: Recv returns AgentHangUp,
// then the *TransportClosedError. Before, the receiver stopped only in
// end, after hangUp had logged the hang-up, and an event delivered in
// between came after AgentHangUp (TestConformance/HangUp under load:
// "Recv after the hang-up: <nil>, want a *TransportClosedError"). The
// test's Logf delivers one at that moment.
func TestNothingAfterHangUp(t *testing.T) {
	st := &settings{Agent: Agent{MaxQueueBytes: DefaultMaxQueueBytes, MaxFrameBytes: DefaultMaxFrameBytes}}
	var c *conn
	logf := func(format string, args ...any) {
		if strings.Contains(fmt.Sprintf(format, args...), "hung up") {
			c.recv.deliver([]voicetest.AgentEvent{{Kind: voicetest.AgentLog, Text: "agent state: speaking → listening"}}, nil)
		}
	}
	c, err := newConn(st, voicetest.Session{Name: t.Name(), Rate: agentRate, Logf: logf}, scrub.New())
	if err != nil {
		t.Fatal(err)
	}
	c.room = lksdk.NewRoom(nil)
	t.Cleanup(func() { _ = c.Close() })
	c.hangUp("the agent left the room")
	ev, err := c.Recv(t.Context())
	if err != nil || ev.Kind != voicetest.AgentHangUp {
		t.Fatalf("Recv = %+v, %v; want the AgentHangUp", ev, err)
	}
	if ev, err := c.Recv(t.Context()); !errors.Is(err, voicetest.ErrTransportClosed) {
		t.Errorf("Recv after the hang-up = %+v, %v; want a *TransportClosedError", ev, err)
	}
}
