package handler_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/handler"
	"github.com/voicetest-go/voicetest/internal/leakcheck"
	"github.com/voicetest-go/voicetest/voicetest"
)

// Issue 21 (textfast6): on the runner's virtual Clock, outside a bubble,
// a handler's calls run as a coroutine that the runner resumes on its own
// goroutine (handler_coro.go). These tests pin what that must keep: a
// handler that blocks does not hold the runner, runtime.Goexit in a
// handler does not end the runner's goroutine, a Say from a goroutine the
// handler started works, and Close resumes a parked Say.

// onCoroutine reports whether the calling goroutine is a coroutine of
// iter.Pull: the handler's calls on the runner's virtual Clock run on one,
// and each test checks that its handler did (or it tests nothing new).
func onCoroutine() bool {
	buf := make([]byte, 64<<10)
	return strings.Contains(string(buf[:runtime.Stack(buf, false)]), "iter.Pull")
}

// A handler call that blocks on anything but its Call, on the coroutine,
// is rescued: the runner does not stay parked in it, so its wait for the
// answer is bounded in real time and the scenario fails with a
// TimeoutError naming the phase, whatever the handler blocks on.
func TestCoroutineBlockedHandlerIsRescued(t *testing.T) {
	for _, tc := range []struct {
		name  string
		block func(ctx context.Context, release <-chan struct{}, mu *sync.Mutex)
	}{
		{"channel", func(_ context.Context, release <-chan struct{}, _ *sync.Mutex) { <-release }},
		{"ctx", func(ctx context.Context, _ <-chan struct{}, _ *sync.Mutex) { <-ctx.Done() }},
		{"mutex", func(_ context.Context, _ <-chan struct{}, mu *sync.Mutex) {
			mu.Lock() // held by the test until Run returns
			defer mu.Unlock()
			runtime.Gosched()
		}},
		// (Asleep until Run has returned, however late: on a loaded
		// machine the runner may look at its bound late, and a handler
		// that has returned by then has ended its turn without a word.
		// Short sleeps, so that the handler's goroutine is gone soon after
		// the test, not one the binary's final leak check waits for.)
		{"sleep", func(_ context.Context, release <-chan struct{}, _ *sync.Mutex) {
			for !closed(release) {
				time.Sleep(10 * time.Millisecond)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The cases wait on the real clock (the bound) and share
			// nothing: in parallel.
			t.Parallel()
			release := make(chan struct{})
			var mu sync.Mutex
			mu.Lock()
			var onCo atomic.Bool
			agent := handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
				if _, ok := ev.(handler.TextEvent); ok {
					onCo.Store(onCoroutine())
					tc.block(ctx, release, &mu)
				}
				return nil
			}, handler.WithStopTimeout(50*time.Millisecond))
			cfg := voicetest.Config{
				Agent:    agent,
				Script:   []voicetest.Step{voicetest.UserSays("Hello?"), voicetest.AgentTurn()},
				Timeouts: voicetest.Timeouts{FirstChunk: blockedBound},
			}
			res, err := voicetest.Run(context.Background(), cfg)
			close(release)
			mu.Unlock()
			if !onCo.Load() {
				t.Fatal("the handler call did not run on the coroutine")
			}
			wantFirstChunkTimeout(t, res, err)
		})
	}
}

// closed reports whether c is closed, without waiting.
func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// runtime.Goexit in a handler call (t.FailNow from a handler) ends that
// call's goroutine as on the worker, never the runner's: Run returns, on
// this goroutine, with the result the worker's path gives (the call never
// answers: a TimeoutError in its phase; a StopEvent call that never
// returns leaves the scenario as it was).
func TestCoroutineGoexitInHandler(t *testing.T) {
	for _, tc := range []struct {
		name    string
		exitOn  func(handler.Event) bool
		timeout bool
		// bound is the runner's real-clock bound: blockedBound where the
		// call never answers; longer where it must answer within it.
		bound time.Duration
	}{
		{"text", func(ev handler.Event) bool { _, ok := ev.(handler.TextEvent); return ok }, true, blockedBound},
		{"stop", func(ev handler.Event) bool { _, ok := ev.(handler.StopEvent); return ok }, false, 200 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakcheck.Check(t)
			var onCo atomic.Bool
			agent := handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
				if tc.exitOn(ev) {
					onCo.Store(onCoroutine())
					runtime.Goexit()
				}
				if _, ok := ev.(handler.TextEvent); ok {
					return c.Say("Hello there.")
				}
				return nil
			}, handler.WithStopTimeout(50*time.Millisecond))
			cfg := voicetest.Config{
				Agent:    agent,
				Script:   []voicetest.Step{voicetest.UserSays("Hello?"), voicetest.AgentTurn()},
				Timeouts: voicetest.Timeouts{FirstChunk: tc.bound},
			}
			returned := false
			t.Cleanup(func() {
				if !returned {
					t.Error("Run did not return: the handler's Goexit ended the runner's goroutine")
				}
			})
			res, err := voicetest.Run(context.Background(), cfg)
			returned = true
			if !onCo.Load() {
				t.Fatal("the handler call did not run on the coroutine")
			}
			var te *voicetest.TimeoutError
			if tc.timeout {
				if !errors.As(err, &te) || te.Phase != voicetest.PhaseFirstChunk {
					t.Fatalf("err = %v, want a TimeoutError in phase %q", err, voicetest.PhaseFirstChunk)
				}
				return
			}
			if err != nil || res == nil || !res.Success {
				t.Fatalf("Run: %v; want the scenario passed (its StopEvent call exited after it ended)", err)
			}
		})
	}
}

// A Say from a goroutine the handler started, while the handler's call
// runs on the coroutine, is the same conversation as on the worker (the
// path through plainAgent), to the nanosecond; and so is the next call.
func TestCoroutineSayFromAnotherGoroutine(t *testing.T) {
	leakcheck.Check(t)
	var onCo atomic.Int32
	fn := func(ctx context.Context, ev handler.Event, c *handler.Call) error {
		if _, ok := ev.(handler.TextEvent); !ok {
			return nil
		}
		if onCoroutine() {
			onCo.Add(1)
		}
		errc := make(chan error, 1)
		go func() { errc <- c.Say("One from a goroutine the handler started.") }()
		if err := <-errc; err != nil {
			return err
		}
		return c.Say("And one from the handler itself.")
	}
	cfg := func(a voicetest.Agent) voicetest.Config {
		return voicetest.Config{
			Agent: a,
			Script: []voicetest.Step{
				voicetest.UserSays("Hello?"), voicetest.AgentTurn(),
				voicetest.UserSays("Again?"), voicetest.AgentTurn(),
			},
		}
	}
	var diff string
	for range 3 { // (see TestCoroutineCallStartedByATask)
		a, err := voicetest.Run(context.Background(), cfg(handler.New(fn)))
		if err != nil {
			t.Fatal(err)
		}
		if onCo.Load() == 0 {
			t.Fatal("no handler call ran on the coroutine")
		}
		b, err := voicetest.Run(context.Background(), cfg(plainAgent{handler.New(fn)}))
		if err != nil {
			t.Fatal(err)
		}
		if !a.Success || a.Turns != 2 {
			t.Fatalf("in process: success %v, %d turns, want 2\n%s", a.Success, a.Turns, a.TranscriptText())
		}
		if a.Duration == b.Duration && a.TranscriptText() == b.TranscriptText() && a.TimelineText() == b.TimelineText() {
			return
		}
		diff = fmt.Sprintf("in process: %v\n%s%s\nthrough Recv: %v\n%s%s",
			a.Duration, a.TranscriptText(), a.TimelineText(), b.Duration, b.TranscriptText(), b.TimelineText())
	}
	t.Fatalf("three attempts differ; the last:\n%s", diff)
}

// Close while a Say is parked on the coroutine (the scenario ends while
// the agent speaks) resumes it: the Say returns ErrCallEnded, the code
// after it runs, the StopEvent call runs, and nothing is left parked.
func TestCoroutineCloseWhileParked(t *testing.T) {
	leakcheck.Check(t)
	var onCo atomic.Bool
	sayErr := make(chan error, 1)
	stopped := make(chan struct{}, 1)
	agent := handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
		switch ev.(type) {
		case handler.TextEvent:
			onCo.Store(onCoroutine())
			err := c.Say("Once upon a time there was a story so long that nobody ever heard it to its end, because every listener hung up first.")
			sayErr <- err
			return err
		case handler.StopEvent:
			stopped <- struct{}{}
		}
		return nil
	})
	cfg := voicetest.Config{
		Agent:  agent,
		Script: []voicetest.Step{voicetest.UserSays("Tell me a story."), voicetest.Sleep(2 * time.Second)},
	}
	res, err := voicetest.Run(context.Background(), cfg)
	if err != nil || !res.Success {
		t.Fatalf("Run: %v (want the scenario passed)", err)
	}
	if !onCo.Load() {
		t.Fatal("the handler call did not run on the coroutine")
	}
	select {
	case err := <-sayErr:
		if !errors.Is(err, handler.ErrCallEnded) {
			t.Fatalf("the parked Say returned %v, want ErrCallEnded", err)
		}
	default:
		t.Fatal("the parked Say had not returned when Run returned")
	}
	select {
	case <-stopped:
	default:
		t.Fatal("the StopEvent call had not run when Run returned")
	}
}

// A Say from a goroutine the handler started and one from the handler at
// the same time: only one goroutine at a time may park on the coroutine
// (the other takes the channel path); both are said, each once, and the
// turn ends after both.
func TestCoroutineConcurrentSays(t *testing.T) {
	leakcheck.Check(t)
	var onCo atomic.Int32
	agent := handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
		if _, ok := ev.(handler.TextEvent); !ok {
			return nil
		}
		if onCoroutine() {
			onCo.Add(1)
		}
		errc := make(chan error, 1)
		go func() { errc <- c.Say("One from a goroutine the handler started.") }()
		err := c.Say("And one from the handler itself.")
		return errors.Join(err, <-errc)
	})
	for i := range 5 {
		res, err := voicetest.Run(context.Background(), voicetest.Config{
			Agent:  agent,
			Script: []voicetest.Step{voicetest.UserSays("Hello?"), voicetest.AgentTurn(), voicetest.UserSays("Again?"), voicetest.AgentTurn()},
		})
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		tr := res.TranscriptText()
		if !res.Success || strings.Count(tr, "One from a goroutine") != 2 || strings.Count(tr, "And one from the handler") != 2 {
			t.Fatalf("run %d: success %v, want each line said once a turn:\n%s", i, res.Success, tr)
		}
	}
	if onCo.Load() == 0 {
		t.Fatal("no handler call ran on the coroutine")
	}
}

// A handler call that a background task starts (Emit) while the runner
// waits for the agent runs on the coroutine: the runner, waiting, is
// woken to resume it at once, so the conversation is the same as on the
// worker (through plainAgent), to the nanosecond. (Were it not woken, it
// would wait out catchUp's real-time bound, and the virtual time would
// run meanwhile as for an agent at work.)
func TestCoroutineCallStartedByATask(t *testing.T) {
	leakcheck.Check(t)
	var onCo atomic.Int32
	run := func(wrap func(voicetest.Agent) voicetest.Agent) *voicetest.Result {
		start := make(chan struct{})
		agent := handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
			switch ev.(type) {
			case handler.StartEvent:
				return c.Go("notify", func(ctx context.Context, tc *handler.Call) error {
					<-start // (after the runner's Notify)
					return tc.Emit("ready", nil)
				})
			case handler.CustomEvent:
				if onCoroutine() {
					onCo.Add(1)
				}
				return c.Say("The task is done.")
			}
			return nil
		})
		res, err := voicetest.Run(context.Background(), voicetest.Config{
			Agent: wrap(agent),
			Script: []voicetest.Step{
				voicetest.Check(func(*voicetest.State) error { close(start); return nil }),
				voicetest.AgentTurn(),
			},
		})
		if err != nil || !res.Success || !strings.Contains(res.TranscriptText(), "The task is done.") {
			t.Fatalf("Run: %v; transcript:\n%s", err, res.TranscriptText())
		}
		return res
	}
	// On a loaded machine a goroutine that waits too long to be scheduled
	// lets the virtual time run, on either path (see
	// TestInProcessPathIsTheSameConversation): a difference the path
	// makes shows in every attempt.
	var diff string
	for range 3 {
		onCo.Store(0)
		a := run(func(a voicetest.Agent) voicetest.Agent { return a })
		if onCo.Load() != 1 {
			t.Fatal("the call the task started did not run on the coroutine")
		}
		b := run(func(a voicetest.Agent) voicetest.Agent { return plainAgent{a} })
		if a.Duration == b.Duration && a.TimelineText() == b.TimelineText() {
			return
		}
		diff = fmt.Sprintf("in process: %v\n%s\nthrough Recv: %v\n%s", a.Duration, a.TimelineText(), b.Duration, b.TimelineText())
	}
	t.Fatalf("three attempts differ; the last:\n%s", diff)
}
