package voicetest_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// countingAgent wraps an agent's Conn in one that counts what crosses it
// the way a wire adapter counts frames: every event Recv returns is a
// frame in, every SendAudio, SendText and EndUtterance a frame out, and
// each Interrupt a cancel.
type countingAgent struct {
	voicetest.Agent
	mu sync.Mutex
	c  *countingConn
}

func (a *countingAgent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	conn, err := a.Agent.Connect(ctx, s)
	if err != nil {
		return nil, err
	}
	c := &countingConn{Conn: conn}
	a.mu.Lock()
	a.c = c
	a.mu.Unlock()
	return c, nil
}

type countingConn struct {
	voicetest.Conn
	mu sync.Mutex
	st voicetest.WireStats
}

func (c *countingConn) count(f func(*voicetest.WireStats)) {
	c.mu.Lock()
	f(&c.st)
	c.mu.Unlock()
}

func (c *countingConn) SendAudio(ctx context.Context, a pcm.Chunk) error {
	c.count(func(s *voicetest.WireStats) { s.FramesOut++; s.BytesOut += int64(2 * len(a.Samples)) })
	return c.Conn.SendAudio(ctx, a)
}

func (c *countingConn) SendText(ctx context.Context, text string) error {
	c.count(func(s *voicetest.WireStats) { s.FramesOut++; s.BytesOut += int64(len(text)) })
	return c.Conn.SendText(ctx, text)
}

func (c *countingConn) EndUtterance(ctx context.Context) error {
	c.count(func(s *voicetest.WireStats) { s.FramesOut++; s.MarksSent++ })
	return c.Conn.EndUtterance(ctx)
}

func (c *countingConn) Interrupt(ctx context.Context) error {
	c.count(func(s *voicetest.WireStats) { s.Cancels++ })
	return c.Conn.Interrupt(ctx)
}

func (c *countingConn) Recv(ctx context.Context) (voicetest.AgentEvent, error) {
	ev, err := c.Conn.Recv(ctx)
	if err == nil {
		c.count(func(s *voicetest.WireStats) {
			s.FramesIn++
			s.BytesIn += int64(2*len(ev.Audio.Samples) + len(ev.Text))
		})
	}
	return ev, err
}

func (c *countingConn) WireStats() voicetest.WireStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.st
	s.Adapter = "counting"
	return s
}

// The wire statistics on virtual time: the runner takes the adapter's
// counts when the conversation ends, exactly, into Result.Metrics.Wire
// and the voicetest.wire_* attributes.
func TestWireMetricsAreTheAdaptersCountsExactly(t *testing.T) {
	a := &countingAgent{Agent: fixtures.Fake(fixtures.FakeConfig{BargeIn: true, StopLatency: 150 * time.Millisecond,
		Greeting: fixtures.Reply{Text: "Hello there", Latency: 200 * time.Millisecond},
		Replies:  []fixtures.Reply{{Text: "one two three four five six seven eight", Latency: 300 * time.Millisecond}, {Text: "fine", Latency: 100 * time.Millisecond}}})}
	res, err := runVirtual(t, voicetest.Config{
		Agent:     a,
		UserVoice: &toneTTS{},
		Script: []voicetest.Step{
			voicetest.AgentTurn(),
			voicetest.UserSays("a table for two"),
			voicetest.Interrupt("stop", voicetest.AfterWords(2)),
			voicetest.AgentTurn(),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := a.c.WireStats()
	got := res.Metrics.Wire
	if got == nil {
		t.Fatal("Result.Metrics.Wire is nil for an adapter that reports wire statistics")
	}
	if *got != want {
		t.Errorf("Metrics.Wire = %+v, want the adapter's counts %+v", *got, want)
	}
	// Exact on virtual time: the user's lines are 5 words of the
	// toneTTS's 400 ms, 2 s of audio at 24 kHz sent as 100 frames of
	// 20 ms (96 000 bytes), each line ended once (2 frames more); the
	// agent's 15 events are its audio and transcripts.
	exact := voicetest.WireStats{Adapter: "counting", FramesIn: 15, FramesOut: 102, BytesIn: 96040, BytesOut: 96000, MarksSent: 2}
	if want != exact {
		t.Errorf("counts %+v, want %+v", want, exact)
	}
	attrs := map[string]string{}
	for _, at := range res.Attrs() {
		attrs[at.Key] = at.Value
	}
	for k, v := range map[string]int64{
		"voicetest.wire_frames_in": want.FramesIn, "voicetest.wire_frames_out": want.FramesOut,
		"voicetest.wire_bytes_in": want.BytesIn, "voicetest.wire_bytes_out": want.BytesOut,
		"voicetest.wire_marks_sent": want.MarksSent,
	} {
		if attrs[k] != strconv.FormatInt(v, 10) {
			t.Errorf("attribute %s = %q, want %d", k, attrs[k], v)
		}
	}
}
