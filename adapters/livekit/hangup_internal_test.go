package livekit

import (
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
