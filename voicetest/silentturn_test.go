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

// Issue 14, item 2, on the runner's side: an agent's silence is not a
// turn, whatever the adapter.

// staleEndAgent is a text-only test double whose Conn, like a buggy
// adapter, marks a turn end at the start without a word, then answers
// every message with "You said <text>" after 300 ms. silent lists the
// messages it answers with a bare turn end instead.
type staleEndAgent struct {
	silent map[string]bool
	log    string // an AgentLog line sent first, if not empty
}

func (a staleEndAgent) VirtualTime() bool { return true }

func (a staleEndAgent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	c := &staleEndConn{silent: a.silent, wake: make(chan struct{}, 1), done: make(chan struct{})}
	if a.log != "" {
		c.queue = append(c.queue, voicetest.AgentEvent{Kind: voicetest.AgentLog, Text: a.log})
	}
	c.queue = append(c.queue, voicetest.AgentEvent{Kind: voicetest.AgentTurnEnd})
	return c, nil
}

type staleEndConn struct {
	silent map[string]bool
	mu     sync.Mutex
	queue  []voicetest.AgentEvent
	wake   chan struct{}
	done   chan struct{}
	once   sync.Once
	timers []*time.Timer
}

func (c *staleEndConn) Capabilities() voicetest.Capabilities {
	return voicetest.Capabilities{Adapter: "stale-end", Text: true, StreamingTranscripts: true, TurnEnd: true, VirtualTime: true}
}

func (c *staleEndConn) push(evs ...voicetest.AgentEvent) {
	c.mu.Lock()
	c.queue = append(c.queue, evs...)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *staleEndConn) SendAudio(context.Context, pcm.Chunk) error { return errors.New("text only") }
func (c *staleEndConn) EndUtterance(context.Context) error         { return nil }
func (c *staleEndConn) SendDTMF(context.Context, string) error     { return errors.New("no DTMF") }
func (c *staleEndConn) Interrupt(context.Context) error            { return nil }

func (c *staleEndConn) SendText(ctx context.Context, text string) error {
	evs := []voicetest.AgentEvent{{Kind: voicetest.AgentTurnEnd}}
	if !c.silent[text] {
		evs = append([]voicetest.AgentEvent{{Kind: voicetest.AgentTranscript, Text: "You said " + text, Final: true, Speech: time.Second}}, evs...)
	}
	c.mu.Lock()
	c.timers = append(c.timers, time.AfterFunc(300*time.Millisecond, func() { c.push(evs...) }))
	c.mu.Unlock()
	return nil
}

func (c *staleEndConn) Recv(ctx context.Context) (voicetest.AgentEvent, error) {
	for {
		c.mu.Lock()
		if len(c.queue) > 0 {
			ev := c.queue[0]
			c.queue = c.queue[1:]
			c.mu.Unlock()
			return ev, nil
		}
		c.mu.Unlock()
		select {
		case <-c.wake:
		case <-c.done:
			return voicetest.AgentEvent{}, &voicetest.TransportClosedError{Adapter: "stale-end"}
		case <-ctx.Done():
			return voicetest.AgentEvent{}, ctx.Err()
		}
	}
}

func (c *staleEndConn) Close() error {
	c.once.Do(func() {
		c.mu.Lock()
		for _, t := range c.timers {
			t.Stop()
		}
		c.mu.Unlock()
		close(c.done)
	})
	return nil
}

// A turn end with no speech that came before the user's question is not
// the answer to it: each reply is recorded in its question's turn.
func TestAStaleSilentTurnEndIsNotAReply(t *testing.T) {
	script := []voicetest.Step{
		voicetest.UserSays("one"), voicetest.AgentTurn(),
		voicetest.UserSays("two"), voicetest.AgentTurn(),
	}
	res, err := runVirtual(t, voicetest.Config{Agent: staleEndAgent{}, Script: script})
	if err != nil {
		t.Fatal(err)
	}
	want := "user: one\nagent: You said one\nuser: two\nagent: You said two\n"
	if got := res.TranscriptText(); got != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
	}
	for _, m := range res.Transcript {
		if m.Role == voicetest.RoleAgent && (m.Latency != 300*time.Millisecond || !strings.HasSuffix(m.Text, []string{"", "one", "two"}[m.Turn])) {
			t.Errorf("agent message %+v: want the answer to turn %d, 300ms after it", m, m.Turn)
		}
	}

	// Under PaceFast the first line is sent at the very instant the
	// session starts, so the runner cannot tell the stale turn end from a
	// silent answer: the scenario must then fail visibly, never shift the
	// replies.
	res, err = runVirtual(t, voicetest.Config{Agent: staleEndAgent{}, Pacing: voicetest.PaceFast, Script: script})
	if err == nil {
		if got := res.TranscriptText(); got != want {
			t.Errorf("PaceFast passed with the transcript:\n%s\nwant:\n%s", got, want)
		}
	} else if !errors.Is(err, voicetest.ErrSilentTurn) {
		t.Errorf("PaceFast: err = %v, want a pass or ErrSilentTurn", err)
	}
}

// A turn that ends after the question without a word fails the AgentTurn,
// unless the step allows silence.
func TestASilentTurnFailsUnlessAllowed(t *testing.T) {
	agent := staleEndAgent{silent: map[string]bool{"hmm": true}}
	res, err := runVirtual(t, voicetest.Config{
		Agent:  agent,
		Script: []voicetest.Step{voicetest.UserSays("hmm"), voicetest.AgentTurn(), voicetest.UserSays("two"), voicetest.AgentTurn()},
	})
	var se *voicetest.StepError
	if !errors.Is(err, voicetest.ErrSilentTurn) || !errors.As(err, &se) || se.Index != 2 || res.Success {
		t.Fatalf("err = %v, want step 2 to fail with ErrSilentTurn", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "the stale-end agent ended its turn at 0.700s (turn 1) without a word") || !strings.Contains(msg, "AgentTurn(voicetest.AllowSilence())") {
		t.Errorf("err = %v", err)
	}
	res, err = runVirtual(t, voicetest.Config{
		Agent:  agent,
		Script: []voicetest.Step{voicetest.UserSays("hmm"), voicetest.AgentTurn(voicetest.AllowSilence()), voicetest.UserSays("two"), voicetest.AgentTurn()},
	})
	if err != nil || res.TranscriptText() != "user: hmm\nuser: two\nagent: You said two\n" {
		t.Fatalf("err %v, transcript:\n%s", err, res.TranscriptText())
	}
	if got := voicetest.AgentTurn(voicetest.AllowSilence()).String(); got != "AgentTurn(AllowSilence())" {
		t.Errorf("step name %q", got)
	}
}
