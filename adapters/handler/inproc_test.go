package handler_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/handler"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// Issue 21: on the runner's virtual Clock, the runner takes a handler
// agent's events itself and calls its sends on its own goroutine
// (internal/inproc), instead of through a receive goroutine and a goroutine
// per call. The conversation must be the same to the nanosecond.

// plainAgent hides what a handler Conn offers beyond voicetest.Conn, so
// that the runner receives and sends through the goroutines it uses for
// any other adapter.
type plainAgent struct{ a voicetest.Agent }

func (p plainAgent) VirtualTime() bool { return p.a.(voicetest.VirtualTimer).VirtualTime() }

func (p plainAgent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	c, err := p.a.Connect(ctx, s)
	if err != nil {
		return nil, err
	}
	return plainConn{c}, nil
}

type plainConn struct{ voicetest.Conn }

// receiving is a Check that reports whether a goroutine of the run sits
// in the runner's receive loop.
func receiving(seen *[]bool) voicetest.Step {
	return voicetest.Check(func(*voicetest.State) error {
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		*seen = append(*seen, strings.Contains(string(buf[:n]), "voicetest.receive("))
		return nil
	})
}

// quickBooking is an agent with think time, tool events, an inactivity
// timeout and DTMF whose handler never waits on the real clock.
func quickBooking(ctx context.Context, ev handler.Event, c *handler.Call) error {
	switch ev := ev.(type) {
	case handler.StartEvent:
		return c.Say("Hello, how can I help?")
	case handler.TextEvent:
		if strings.Contains(strings.ToLower(ev.Text), "table") {
			if _, err := c.Tool("book_table", map[string]any{"request": ev.Text}, func() (any, error) {
				return map[string]string{"status": "booked"}, nil
			}); err != nil {
				return err
			}
			return c.Say("Your table is booked, and I can tell you more about the menu if you like.")
		}
		return c.Say("Sorry, I did not get that.")
	case handler.TimeoutEvent:
		return c.Say("Are you still there?")
	case handler.DTMFEvent:
		return c.Say("You pressed " + ev.Digits + ".")
	}
	return nil
}

func TestInProcessPathIsTheSameConversation(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  func(seen *[]bool) voicetest.Config
	}{
		{"text", func(seen *[]bool) voicetest.Config {
			return voicetest.Config{
				Agent: handler.New(quickBooking, handler.WithThinkTime(200*time.Millisecond), handler.WithInactivityTimeout(4*time.Second)),
				Script: []voicetest.Step{
					voicetest.AgentTurn(),
					receiving(seen),
					voicetest.UserSays("A table for two at seven, please."),
					voicetest.Interrupt("Wait.", voicetest.AfterWords(3)),
					voicetest.AgentTurn(),
					voicetest.Sleep(5 * time.Second),
					voicetest.AgentTurn(),
					voicetest.DTMF("1#"),
					voicetest.AgentTurn(),
				},
			}
		}},
		{"audio", func(seen *[]bool) voicetest.Config {
			return voicetest.Config{
				Agent:     handler.New(quickBooking, handler.AudioMode(fixtures.FakeTTS(), fixtures.FakeSTT()), handler.WithThinkTime(250*time.Millisecond)),
				UserVoice: fixtures.FakeTTS(),
				Rate:      pcm.Rate16k,
				Script: []voicetest.Step{
					voicetest.AgentTurn(),
					receiving(seen),
					voicetest.UserSays("A table for two at seven, please."),
					voicetest.AgentTurn(),
					voicetest.UserSays("Is there parking?"),
					voicetest.Interrupt("Wait, hold on.", voicetest.AfterWords(2)),
					voicetest.AgentTurn(),
				},
			}
		}},
		{"fast", func(seen *[]bool) voicetest.Config {
			cfg := tenTurnConfig(voicetest.PaceFast)
			// After the first turn: the receive goroutine has begun by
			// then (before, its stack may show only the go statement's
			// wrapper).
			cfg.Script = slices.Insert(cfg.Script, 2, receiving(seen))
			return cfg
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The virtual Clock lets the time run as the real clock does
			// while the agent works past the next thing due (in audio
			// mode a frame or a word is due every few ms): on a loaded
			// machine a goroutine that waits that long to be scheduled
			// moves a run's times, on either path. A difference that
			// the path makes shows in every attempt.
			var diff string
			for range 3 {
				var seenInProc, seenPlain []bool
				inproc := tc.cfg(&seenInProc)
				plain := tc.cfg(&seenPlain)
				plain.Agent = plainAgent{plain.Agent}
				var got [2]*voicetest.Result
				for i, cfg := range []voicetest.Config{inproc, plain} {
					res, err := voicetest.Run(context.Background(), cfg)
					if err != nil && !errors.Is(err, voicetest.ErrFailed) {
						t.Fatalf("run %d: %v", i, err)
					}
					got[i] = res
				}
				if !slices.Equal(seenInProc, []bool{false}) || !slices.Equal(seenPlain, []bool{true}) {
					t.Fatalf("a receive goroutine ran: %v with the handler's Conn (want none), %v through plainConn (want one)", seenInProc, seenPlain)
				}
				a, b := got[0], got[1]
				if !a.Success || a.Turns < 2 {
					t.Fatalf("the scenario did not run through: %v, %d turns\n%s", a.Err, a.Turns, a.TranscriptText())
				}
				if a.Duration == b.Duration && a.TranscriptText() == b.TranscriptText() && a.TimelineText() == b.TimelineText() &&
					slices.Equal(a.Latency.PerTurn, b.Latency.PerTurn) && a.Success == b.Success {
					return
				}
				diff = fmt.Sprintf("in process: %v, success %v, latencies %v\n%s%s\nthrough Recv and call: %v, success %v, latencies %v\n%s%s",
					a.Duration, a.Success, a.Latency.PerTurn, a.TranscriptText(), a.TimelineText(),
					b.Duration, b.Success, b.Latency.PerTurn, b.TranscriptText(), b.TimelineText())
			}
			t.Errorf("three attempts differ; the last:\n%s", diff)
		})
	}
}

// A handler call that blocks on something of its own (not its Call)
// holds no runner: it runs on the handler's goroutine, so under Run,
// outside a bubble, the runner's wait for its answer is bounded in real
// time and the scenario fails with a TimeoutError naming the phase. (This
// is why the handler's calls stay off the runner's goroutine, hand-offs
// and all.)
func TestRunHungHandlerIsATimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	agent := handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
		if _, ok := ev.(handler.TextEvent); ok {
			<-release // not ctx: a handler stuck on its own channel
		}
		return nil
	}, handler.WithStopTimeout(50*time.Millisecond))
	cfg := voicetest.Config{
		Agent:    agent,
		Script:   []voicetest.Step{voicetest.UserSays("Hello?"), voicetest.AgentTurn()},
		Timeouts: voicetest.Timeouts{FirstChunk: blockedBound},
	}
	res, err := voicetest.Run(context.Background(), cfg)
	wantFirstChunkTimeout(t, res, err)
}

// blockedBound is the runner's real-clock bound (Timeouts.FirstChunk) in
// the tests whose handler never answers: any bound shows that the wait is
// bounded, and each is paid in wall time (twice: Run takes ~2 × the bound
// + 70 ms).
const blockedBound = 100 * time.Millisecond

// wantFirstChunkTimeout fails the test unless Run's answer is a failed
// scenario and a TimeoutError in phase first_chunk.
func wantFirstChunkTimeout(t *testing.T, res *voicetest.Result, err error) {
	t.Helper()
	var te *voicetest.TimeoutError
	if !errors.As(err, &te) || te.Phase != voicetest.PhaseFirstChunk {
		t.Fatalf("err = %v, want a TimeoutError in phase %q", err, voicetest.PhaseFirstChunk)
	}
	if res == nil || res.Success {
		t.Fatalf("result %+v, want a failed scenario", res)
	}
}

// The runner closes a handler Conn on its own goroutine (StartClose, then
// a wait for the loop's end), and that wait keeps Close's bound: a
// StopEvent call that outlasts it (here its own stop timeout is longer)
// fails the scenario with a TimeoutError naming Close, on both paths.
func TestPromptCloseIsBounded(t *testing.T) {
	for _, wrap := range []struct {
		name string
		f    func(voicetest.Agent) voicetest.Agent
	}{
		{"in process", func(a voicetest.Agent) voicetest.Agent { return a }},
		{"through Close", func(a voicetest.Agent) voicetest.Agent { return plainAgent{a} }},
	} {
		t.Run(wrap.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				agent := handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
					switch ev.(type) {
					case handler.TextEvent:
						return c.Say("Yes.")
					case handler.StopEvent:
						<-release // ignores ctx
					}
					return nil
				}, handler.WithStopTimeout(time.Hour))
				res, err := voicetest.Run(t.Context(), voicetest.Config{
					Agent:  wrap.f(agent),
					Script: []voicetest.Step{voicetest.UserSays("Hello?"), voicetest.AgentTurn()},
				})
				close(release)
				var te *voicetest.TimeoutError
				if !errors.As(err, &te) || te.Phase != voicetest.PhaseClose || te.Callee != "the handler adapter's Close" {
					t.Fatalf("err = %v, want a TimeoutError for the handler adapter's Close", err)
				}
				if res.State.LastAgentText() != "Yes." {
					t.Errorf("last agent text %q", res.State.LastAgentText())
				}
			})
		})
	}
}
