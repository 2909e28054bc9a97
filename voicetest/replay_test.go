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
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// timedEvent is an event a replayAgent sends, after a delay from the end
// of the user's input.
type timedEvent struct {
	after time.Duration
	ev    voicetest.AgentEvent
}

// replayAgent is a test double that answers every user input with the
// same events, for runner behaviour the fixtures fakes do not produce.
type replayAgent struct {
	caps   voicetest.Capabilities
	events []timedEvent
}

func (a *replayAgent) VirtualTime() bool { return true }

func (a *replayAgent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	c := &replayConn{a: a, out: make(chan voicetest.AgentEvent, 64), done: make(chan struct{})}
	return c, nil
}

type replayConn struct {
	a    *replayAgent
	out  chan voicetest.AgentEvent
	done chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

func (c *replayConn) Capabilities() voicetest.Capabilities            { return c.a.caps }
func (c *replayConn) SendAudio(context.Context, pcm.Chunk) error      { return nil }
func (c *replayConn) SendDTMF(context.Context, string) error          { return nil }
func (c *replayConn) Interrupt(context.Context) error                 { return nil }
func (c *replayConn) EndUtterance(ctx context.Context) error          { c.answer(); return nil }
func (c *replayConn) SendText(ctx context.Context, text string) error { c.answer(); return nil }
func (c *replayConn) Close() error                                    { c.once.Do(func() { close(c.done) }); c.wg.Wait(); return nil }
func (c *replayConn) Recv(ctx context.Context) (voicetest.AgentEvent, error) {
	select {
	case ev := <-c.out:
		return ev, nil
	case <-c.done:
		return voicetest.AgentEvent{}, &voicetest.TransportClosedError{Adapter: "replay"}
	case <-ctx.Done():
		return voicetest.AgentEvent{}, ctx.Err()
	}
}

func (c *replayConn) answer() {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		start := time.Now()
		for _, te := range c.a.events {
			select {
			case <-time.After(te.after - time.Since(start)):
			case <-c.done:
				return
			}
			select {
			case c.out <- te.ev:
			case <-c.done:
				return
			}
		}
	}()
}

func TestTranscriptOfSeveralUtterancesInATurn(t *testing.T) {
	rate := pcm.DefaultRate
	agent := &replayAgent{
		caps: voicetest.Capabilities{Adapter: "replay", Audio: true, StreamingTranscripts: true, TurnEnd: true, VirtualTime: true},
		events: []timedEvent{
			{100 * time.Millisecond, voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: fixtures.WordTones("one two", rate)}},
			{100 * time.Millisecond, voicetest.AgentEvent{Kind: voicetest.AgentTranscript, Text: "One "}},
			{100 * time.Millisecond, voicetest.AgentEvent{Kind: voicetest.AgentTranscript, Text: "too."}},
			{100 * time.Millisecond, voicetest.AgentEvent{Kind: voicetest.AgentTranscript, Text: "One, two.", Final: true}},
			{900 * time.Millisecond, voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: fixtures.WordTones("three", rate)}},
			{900 * time.Millisecond, voicetest.AgentEvent{Kind: voicetest.AgentTranscript, Text: "Three"}},
			{900 * time.Millisecond, voicetest.AgentEvent{Kind: voicetest.AgentLog, Text: "done"}},
			{900 * time.Millisecond, voicetest.AgentEvent{Kind: voicetest.UserTranscript, Text: "hello", Final: true}},
			{900 * time.Millisecond, voicetest.AgentEvent{Kind: voicetest.AgentTurnEnd}},
		},
	}
	res, err := runVirtual(t, voicetest.Config{
		Agent: agent, UserVoice: &toneTTS{},
		Script: []voicetest.Step{voicetest.UserSays("hello"), voicetest.AgentTurn()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.TranscriptText(); got != "user: hello\nagent: One, two. Three\n" {
		t.Errorf("transcript:\n%s", got)
	}
	// The second utterance arrived after the first had played (at 1200 ms).
	want := `      0ms turn 1 user_start_speaking
    400ms turn 1 user_stop_speaking
    500ms turn 1 agent_start_speaking latency=100ms
   1300ms turn 1 user_transcript "hello"
   1300ms turn 1 agent_log "done"
   1700ms turn 1 agent_stop_speaking
`
	if got := res.TimelineText(); got != want {
		t.Errorf("timeline:\n%s\nwant:\n%s", got, want)
	}
	if seg := res.Recording.Segments[1]; seg.AudioDuration() != ms(1200) || !strings.Contains(seg.Text, "Three") {
		t.Errorf("agent segment %v of audio, text %q", seg.AudioDuration(), seg.Text)
	}
}

// slowAgent blocks in Connect until its context ends.
type slowAgent struct{}

func (slowAgent) VirtualTime() bool { return true }
func (slowAgent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestConnectFailures(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		res, err := runVirtual(t, voicetest.Config{Agent: slowAgent{}, Script: []voicetest.Step{voicetest.Sleep(time.Second)}})
		var te *voicetest.TimeoutError
		if !errors.As(err, &te) || te.Phase != voicetest.PhaseConnect || te.Timeout != voicetest.DefaultConnectTimeout {
			t.Fatalf("err = %v", err)
		}
		if res.Success || res.Duration != voicetest.DefaultConnectTimeout {
			t.Errorf("success %v, duration %v", res.Success, res.Duration)
		}
	})
	t.Run("no input capability", func(t *testing.T) {
		_, err := runVirtual(t, voicetest.Config{Agent: &replayAgent{caps: voicetest.Capabilities{Adapter: "mute"}},
			Script: []voicetest.Step{voicetest.Sleep(time.Second)}})
		if err == nil || !strings.Contains(err.Error(), `the mute adapter declares neither Audio nor Text input`) {
			t.Fatalf("err = %v", err)
		}
	})
}
