package voicetest_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// lateToolAgent wraps an agent whose tool calls and results reach the
// runner late after the reply's first audio, as a protocol that carries
// events and audio on separate channels may deliver them (LiveKit's
// session events on the data channel, its speech on the audio track);
// mark sets AgentEvent.BeforeSpeech on them, as an adapter does that
// knows from the agent's own stamps that they came first.
type lateToolAgent struct {
	voicetest.Agent
	late time.Duration
	mark bool
}

func (a lateToolAgent) VirtualTime() bool { return true }

type recvResult struct {
	ev  voicetest.AgentEvent
	err error
}

func (a lateToolAgent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	c, err := a.Agent.Connect(ctx, s)
	if err != nil {
		return nil, err
	}
	lc := &lateToolConn{Conn: c, out: make(chan recvResult, 64), done: make(chan struct{})}
	go lc.pump(a.late, a.mark)
	return lc, nil
}

type lateToolConn struct {
	voicetest.Conn
	out  chan recvResult
	done chan struct{}
}

// pump reads the wrapped Conn, holds each tool event back until late
// after the next agent audio, and forwards the rest at once.
func (c *lateToolConn) pump(late time.Duration, mark bool) {
	var held []voicetest.AgentEvent
	send := func(r recvResult) bool {
		select {
		case c.out <- r:
			return true
		case <-c.done:
			return false
		}
	}
	for {
		ev, err := c.Conn.Recv(context.Background())
		if err == nil && (ev.Kind == voicetest.AgentToolCall || ev.Kind == voicetest.AgentToolResult) {
			ev.BeforeSpeech = mark
			held = append(held, ev)
			continue
		}
		if !send(recvResult{ev, err}) || err != nil {
			return
		}
		if ev.Kind == voicetest.AgentAudio && len(held) > 0 {
			h := held
			held = nil
			go func() {
				time.Sleep(late)
				for _, ev := range h {
					if !send(recvResult{ev: ev}) {
						return
					}
				}
			}()
		}
	}
}

func (c *lateToolConn) Recv(ctx context.Context) (voicetest.AgentEvent, error) {
	select {
	case r := <-c.out:
		return r.ev, r.err
	case <-ctx.Done():
		return voicetest.AgentEvent{}, ctx.Err()
	}
}

func (c *lateToolConn) Close() error {
	err := c.Conn.Close()
	select {
	case <-c.done:
	default:
		close(c.done)
	}
	return err
}

// TestBeforeSpeechOrdersWithoutDelay: a tool call that reaches the runner
// 250 ms after the first audio of the reply it caused comes before that
// reply's message in the turn's items when the adapter marks it
// BeforeSpeech, recorded at the speech's start; the reply's latency and
// times are those of its audio's arrival, the same (to the nanosecond, on
// virtual time) as when the tool events come in order, or late and
// unmarked (where the call comes after the message).
func TestBeforeSpeechOrdersWithoutDelay(t *testing.T) {
	tools := []voicetest.ToolCall{{ID: "c1", Name: "lookup", Arguments: []byte(`{"name":"ada"}`), Result: []byte(`{"table":4}`)}}
	base := func() voicetest.Agent {
		return fixtures.ScriptedAgent(fixtures.Reply{Text: "Table four at seven", Latency: 400 * time.Millisecond, Tools: tools})
	}
	type outcome struct {
		latency, start time.Duration
		order          []voicetest.EventType
	}
	run := func(t *testing.T, a voicetest.Agent) outcome {
		t.Helper()
		res, err := runVirtual(t, voicetest.Config{
			Agent: a, UserVoice: &toneTTS{},
			Script: []voicetest.Step{voicetest.UserSays("check my booking"), voicetest.AgentTurn()},
		})
		if err != nil {
			t.Fatal(err)
		}
		var o outcome
		for _, m := range res.Transcript {
			if m.Role == voicetest.RoleAgent {
				o.latency, o.start = m.Latency, m.Start
			}
		}
		for _, e := range res.State.Events() {
			o.order = append(o.order, e.Type)
		}
		if o.latency <= 0 {
			t.Fatalf("no latency measured: %+v", res.Transcript)
		}
		return o
	}
	inOrder := run(t, base())
	marked := run(t, lateToolAgent{Agent: base(), late: 250 * time.Millisecond, mark: true})
	unmarked := run(t, lateToolAgent{Agent: base(), late: 250 * time.Millisecond})
	want := []voicetest.EventType{voicetest.EventToolCall, voicetest.EventToolResult, voicetest.EventMessage}
	for _, c := range []struct {
		name string
		o    outcome
		want []voicetest.EventType
	}{
		{"in order", inOrder, want},
		{"late, BeforeSpeech", marked, want},
		{"late, unmarked", unmarked, []voicetest.EventType{voicetest.EventMessage, voicetest.EventToolCall, voicetest.EventToolResult}},
	} {
		if !slices.Equal(c.o.order, c.want) {
			t.Errorf("%s: items %v, want %v", c.name, c.o.order, c.want)
		}
		if c.o.latency != inOrder.latency || c.o.start != inOrder.start {
			t.Errorf("%s: reply latency %v, start %v; in order %v, %v: a late tool event must not move the speech", c.name, c.o.latency, c.o.start, inOrder.latency, inOrder.start)
		}
	}
}
