package voicetest_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/internal/leakcheck"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// The fault suite: agents that misbehave in every way a remote agent can,
// each of which must end the scenario with a typed, readable error within the
// configured timeouts, with bounded memory and with nothing left running
// (TestMain checks goroutines and sockets after the package's tests).

// faultConn is a Conn whose Recv is a function of the test's choosing. Its
// Send methods accept everything until Close.
type faultConn struct {
	caps   voicetest.Capabilities
	recv   func(ctx context.Context, closed <-chan struct{}) (voicetest.AgentEvent, error)
	closed chan struct{}
	once   sync.Once
	sent   atomic.Int64 // audio samples received from the runner
}

func (c *faultConn) Capabilities() voicetest.Capabilities { return c.caps }

func (c *faultConn) check(ctx context.Context) error {
	select {
	case <-c.closed:
		return &voicetest.TransportClosedError{Adapter: c.caps.Adapter}
	default:
		return ctx.Err()
	}
}

func (c *faultConn) SendAudio(ctx context.Context, a pcm.Chunk) error {
	c.sent.Add(int64(len(a.Samples)))
	return c.check(ctx)
}
func (c *faultConn) EndUtterance(ctx context.Context) error       { return c.check(ctx) }
func (c *faultConn) SendText(ctx context.Context, _ string) error { return c.check(ctx) }
func (c *faultConn) SendDTMF(ctx context.Context, _ string) error { return c.check(ctx) }
func (c *faultConn) Interrupt(ctx context.Context) error          { return c.check(ctx) }
func (c *faultConn) Close() error                                 { c.once.Do(func() { close(c.closed) }); return nil }
func (c *faultConn) Recv(ctx context.Context) (voicetest.AgentEvent, error) {
	if err := c.check(ctx); err != nil {
		return voicetest.AgentEvent{}, err
	}
	return c.recv(ctx, c.closed)
}

// faultAgent connects to a faultConn. It runs on virtual time when virtual
// is set (its recv must then block only on channels and timers).
type faultAgent struct {
	name    string
	virtual bool
	turnEnd bool
	recv    func(ctx context.Context, closed <-chan struct{}) (voicetest.AgentEvent, error)
	conn    atomic.Pointer[faultConn] // the last connection, for the test to watch
}

func (a *faultAgent) VirtualTime() bool { return a.virtual }

func (a *faultAgent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	c := &faultConn{
		caps: voicetest.Capabilities{Adapter: a.name, Audio: true, StreamingTranscripts: true,
			TurnEnd: a.turnEnd, VirtualTime: a.virtual,
			InputFormat:  voicetest.AudioFormat{Encoding: "pcm16", Rate: s.Rate},
			OutputFormat: voicetest.AudioFormat{Encoding: "pcm16", Rate: s.Rate}},
		recv:   a.recv,
		closed: make(chan struct{}),
	}
	a.conn.Store(c)
	return c, nil
}

// waitOrClose blocks until ctx is done or the conn is closed, as a Recv
// with nothing to receive must.
func waitOrClose(ctx context.Context, closed <-chan struct{}, adapter string) (voicetest.AgentEvent, error) {
	select {
	case <-ctx.Done():
		return voicetest.AgentEvent{}, ctx.Err()
	case <-closed:
		return voicetest.AgentEvent{}, &voicetest.TransportClosedError{Adapter: adapter}
	}
}

// sleepOrClose waits d (virtual time in a bubble) unless the conn closes or
// ctx ends first.
func sleepOrClose(ctx context.Context, closed <-chan struct{}, d time.Duration, adapter string) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-closed:
		return &voicetest.TransportClosedError{Adapter: adapter}
	}
}

// frame is 20 ms of a 440 Hz-ish square wave at rate: audible agent audio.
func frame(rate int, d time.Duration) pcm.Chunk {
	n := pcm.SamplesFor(rate, d)
	s := make([]int16, n)
	for i := range s {
		if (i/27)%2 == 0 {
			s[i] = 8000
		} else {
			s[i] = -8000
		}
	}
	return pcm.Chunk{Rate: rate, Samples: s}
}

// speakAfterUser is a Recv script: wait for the first user audio, then
// answer with n frames of audio 20 ms apart, then call after.
func script(steps ...func(ctx context.Context, closed <-chan struct{}) (voicetest.AgentEvent, error)) func(ctx context.Context, closed <-chan struct{}) (voicetest.AgentEvent, error) {
	var i atomic.Int64
	return func(ctx context.Context, closed <-chan struct{}) (voicetest.AgentEvent, error) {
		n := int(i.Add(1)) - 1
		if n >= len(steps) {
			n = len(steps) - 1 // the last step repeats
		}
		return steps[n](ctx, closed)
	}
}

// audioAfter returns a step that sends a frame of agent audio after d.
func audioAfter(d time.Duration, adapter string) func(ctx context.Context, closed <-chan struct{}) (voicetest.AgentEvent, error) {
	return func(ctx context.Context, closed <-chan struct{}) (voicetest.AgentEvent, error) {
		if err := sleepOrClose(ctx, closed, d, adapter); err != nil {
			return voicetest.AgentEvent{}, err
		}
		return voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: frame(pcm.DefaultRate, voicetest.FrameDuration)}, nil
	}
}

func oneTurn() []voicetest.Step {
	return []voicetest.Step{voicetest.UserSays("hello there"), voicetest.AgentTurn()}
}

// runBubble runs cfg inside a synctest bubble and returns the result, the
// error and the virtual time the run took.
func runBubble(t *testing.T, cfg voicetest.Config) (res *voicetest.Result, took time.Duration, err error) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		res, err = voicetest.Run(t.Context(), cfg)
		took = time.Since(start)
	})
	return res, took, err
}

func TestFaultAgentClosesMidTurn(t *testing.T) {
	const name = "closes-mid-turn"
	agent := &faultAgent{name: name, virtual: true, turnEnd: true, recv: script(
		audioAfter(time.Second, name), // after the user's 800 ms + 200 ms
		audioAfter(20*time.Millisecond, name),
		func(ctx context.Context, closed <-chan struct{}) (voicetest.AgentEvent, error) {
			return voicetest.AgentEvent{}, &voicetest.TransportClosedError{Adapter: name, Err: errors.New("connection reset by peer")}
		},
	)}
	res, _, err := runBubble(t, voicetest.Config{Agent: agent, UserVoice: &toneTTS{}, Script: oneTurn()})
	var tc *voicetest.TransportClosedError
	if !errors.As(err, &tc) || tc.Adapter != name {
		t.Fatalf("err = %v, want a *TransportClosedError from %s", err, name)
	}
	for _, want := range []string{"step 2 AgentTurn()", "closed without a hang-up", "connection reset by peer"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// What the agent said before it dropped is kept.
	if len(res.Recording.Segments) == 0 || res.Success {
		t.Errorf("segments %d, success %v: the audio before the drop must be recorded and the run failed", len(res.Recording.Segments), res.Success)
	}
}

func TestFaultAgentNeverAnswers(t *testing.T) {
	for _, turnEnd := range []bool{false, true} {
		agent := &faultAgent{name: "never-answers", virtual: true, turnEnd: turnEnd,
			recv: func(ctx context.Context, closed <-chan struct{}) (voicetest.AgentEvent, error) {
				return waitOrClose(ctx, closed, "never-answers")
			}}
		const timeout = 5 * time.Second
		_, took, err := runBubble(t, voicetest.Config{Agent: agent, UserVoice: &toneTTS{}, Script: oneTurn(),
			Timeouts: voicetest.Timeouts{FirstChunk: timeout}})
		var te *voicetest.TimeoutError
		if !errors.As(err, &te) || te.Phase != voicetest.PhaseFirstChunk || te.Timeout != timeout || te.Turn != 1 {
			t.Fatalf("turnEnd %v: err = %v, want a first-chunk *TimeoutError of %v in turn 1", turnEnd, err, timeout)
		}
		if !strings.Contains(err.Error(), "FirstChunk") {
			t.Errorf("error %q does not name the setting to change", err)
		}
		// Virtual time: exactly the user's 800 ms of speech plus the timeout.
		if want := 800*time.Millisecond + timeout; took != want {
			t.Errorf("turnEnd %v: the run took %v of virtual time, want %v", turnEnd, took, want)
		}
	}
}

func TestFaultAgentAnswersForever(t *testing.T) {
	const name = "answers-forever"
	newAgent := func() *faultAgent {
		return &faultAgent{name: name, virtual: true, turnEnd: true, recv: script(
			audioAfter(time.Second, name),
			audioAfter(voicetest.FrameDuration, name), // and again, forever
		)}
	}
	const limit = 3 * time.Second
	res, took, err := runBubble(t, voicetest.Config{Agent: newAgent(), UserVoice: &toneTTS{}, Script: oneTurn(),
		Timeouts: voicetest.Timeouts{MaxTurnAudio: limit}})
	if err != nil {
		t.Fatalf("err = %v; reaching MaxTurnAudio without FailOnMaxTurnAudio is not an error", err)
	}
	var cut bool
	for _, e := range res.Timeline {
		cut = cut || e.Type == voicetest.EventMaxTurnAudio
	}
	if !cut {
		t.Errorf("no %s event in the timeline:\n%s", voicetest.EventMaxTurnAudio, res.TimelineText())
	}
	agentAudio := time.Duration(0)
	for _, s := range res.Recording.Segments {
		if s.Role == voicetest.RoleAgent {
			agentAudio += s.AudioDuration()
		}
	}
	// Bounded: the turn stops at the limit (plus at most the frames already
	// buffered), not when the agent stops.
	if agentAudio < limit || agentAudio > limit+time.Second || took > 2*time.Second+limit {
		t.Errorf("recorded %v of agent audio in %v of virtual time, want about %v", agentAudio, took, limit)
	}

	_, _, err = runBubble(t, voicetest.Config{Agent: newAgent(), UserVoice: &toneTTS{}, Script: oneTurn(),
		Timeouts: voicetest.Timeouts{MaxTurnAudio: limit, FailOnMaxTurnAudio: true}})
	var te *voicetest.TimeoutError
	if !errors.As(err, &te) || te.Phase != voicetest.PhaseTurn || te.Timeout != limit || !strings.Contains(te.Hint, "MaxTurnAudio") {
		t.Fatalf("err = %v, want an agent-turn *TimeoutError naming MaxTurnAudio", err)
	}
}

func TestFaultAgentStallsMidTurn(t *testing.T) {
	// The agent starts its reply, then goes quiet without ending its turn:
	// an adapter that marks turn ends waits at most FirstChunk for the
	// next event.
	const name = "stalls"
	agent := &faultAgent{name: name, virtual: true, turnEnd: true, recv: script(
		audioAfter(time.Second, name),
		audioAfter(voicetest.FrameDuration, name),
		func(ctx context.Context, closed <-chan struct{}) (voicetest.AgentEvent, error) {
			return waitOrClose(ctx, closed, name)
		},
	)}
	const timeout = 7 * time.Second
	_, took, err := runBubble(t, voicetest.Config{Agent: agent, UserVoice: &toneTTS{}, Script: oneTurn(),
		Timeouts: voicetest.Timeouts{FirstChunk: timeout}})
	var te *voicetest.TimeoutError
	if !errors.As(err, &te) || te.Phase != voicetest.PhaseTurn || te.Timeout != timeout {
		t.Fatalf("err = %v, want an agent-turn *TimeoutError of %v", err, timeout)
	}
	// The last frame arrived at 1.02 s and played until 1.04 s; the wait
	// is measured from the end of its playback.
	if want := 1040*time.Millisecond + timeout; took != want {
		t.Errorf("the run took %v of virtual time, want %v", took, want)
	}
}

func TestFaultRecvIgnoresClose(t *testing.T) {
	// An adapter whose Recv ignores both ctx and Close cannot be stopped;
	// the runner must not hang on it, and must say what to fix.
	var logs []string
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		agent := &faultAgent{name: "deaf", virtual: true, recv: func(ctx context.Context, closed <-chan struct{}) (voicetest.AgentEvent, error) {
			<-release
			return voicetest.AgentEvent{}, errors.New("released")
		}}
		start := time.Now()
		res, err := voicetest.Run(t.Context(), voicetest.Config{Agent: agent, UserVoice: &toneTTS{},
			Script:   oneTurn(),
			Timeouts: voicetest.Timeouts{FirstChunk: time.Second},
			Logf:     func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }})
		var te *voicetest.TimeoutError
		if !errors.As(err, &te) || te.Phase != voicetest.PhaseFirstChunk {
			t.Errorf("err = %v, want the first-chunk timeout (the first error)", err)
		}
		// The runner waited a bounded time for Recv after Close.
		if took := time.Since(start); took > 800*time.Millisecond+time.Second+10*time.Second {
			t.Errorf("Run took %v of virtual time", took)
		}
		_ = res
	})
	if !strings.Contains(strings.Join(logs, "\n"), "Recv did not return within") {
		t.Errorf("logs %q do not report the stuck Recv", logs)
	}
}

func TestFaultOddLengthAndMalformedFrames(t *testing.T) {
	// Malformed frames reach the runner as Recv errors (the adapter's
	// decoding) or as invalid events; both end the turn with an error
	// that says what was wrong.
	cases := []struct {
		name string
		g    fixtures.Garbage
		is   error
		say  string
	}{
		{"odd-length PCM", fixtures.GarbageOddAudio, pcm.ErrOddLength, "odd number of bytes"},
		{"zero rate", fixtures.GarbageZeroRate, pcm.ErrBadRate, "no valid sample rate"},
		{"wrong rate", fixtures.GarbageWrongRate, nil, "must convert audio to Session.Rate"},
		{"unknown kind", fixtures.GarbageUnknownKind, nil, "unknown kind"},
		{"tool call without tool", fixtures.GarbageNilTool, nil, "no Tool"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, _, err := runBubble(t, voicetest.Config{Agent: fixtures.GarbageAgent(tc.g), UserVoice: &toneTTS{}, Script: oneTurn()})
			var se *voicetest.StepError
			if !errors.As(err, &se) || se.Index != 2 {
				t.Fatalf("err = %v, want a *StepError for step 2", err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v, want errors.Is %v", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.say) || res.Success {
				t.Errorf("err = %q, want it to say %q and the run to fail", err, tc.say)
			}
		})
	}
}

func TestFaultContextCancelledMidScenario(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		// The echo agent answers each line; the test's context is cancelled
		// in the middle of the third turn.
		steps := []voicetest.Step{}
		for range 10 {
			steps = append(steps, voicetest.UserSays("one two three"), voicetest.AgentTurn())
		}
		const at = 3500 * time.Millisecond
		time.AfterFunc(at, cancel)
		start := time.Now()
		res, err := voicetest.Run(ctx, voicetest.Config{Agent: fixtures.EchoAgent(), UserVoice: &toneTTS{}, Script: steps})
		took := time.Since(start)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled wrapped", err)
		}
		var se *voicetest.StepError
		if !errors.As(err, &se) || se.Index < 3 || se.Index > 7 {
			t.Errorf("err = %v, want the step running at %v named", err, at)
		}
		if took != at {
			t.Errorf("Run returned %v after the start, want exactly when the context was cancelled (%v)", took, at)
		}
		if res == nil || res.Success || len(res.SkippedSteps) == 0 || len(res.Transcript) == 0 {
			t.Errorf("the result must keep the conversation so far and list the skipped steps: %+v", res)
		}
	})
}

func TestFaultContextCancelledOnTheRealClock(t *testing.T) {
	leakcheck.Check(t)
	// A remote agent that never answers, and a context cancelled while the
	// runner waits for it: Run returns at once, not at FirstChunk (an hour).
	agent := &faultAgent{name: "remote", recv: func(ctx context.Context, closed <-chan struct{}) (voicetest.AgentEvent, error) {
		return waitOrClose(ctx, closed, "remote")
	}}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := voicetest.Run(ctx, voicetest.Config{Agent: agent, UserVoice: &toneTTS{}, Pacing: voicetest.PaceFast,
			Script: oneTurn(), Timeouts: voicetest.Timeouts{FirstChunk: time.Hour}})
		errc <- err
	}()
	// Wait until the user has spoken, then cancel.
	for c := agent.conn.Load(); c == nil || c.sent.Load() == 0; c = agent.conn.Load() {
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute): // a hang, not a timing assertion
		t.Fatal("Run did not return within a minute of the cancellation")
	}
}

// floodAgent sends events of one kind as fast as the runner takes them,
// forever, after one frame of audio.
func floodAgent(name string, ev voicetest.AgentEvent, turnEnd bool) *faultAgent {
	return &faultAgent{name: name, turnEnd: turnEnd, recv: script(
		func(ctx context.Context, closed <-chan struct{}) (voicetest.AgentEvent, error) {
			return voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: frame(pcm.DefaultRate, voicetest.FrameDuration)}, nil
		},
		func(ctx context.Context, closed <-chan struct{}) (voicetest.AgentEvent, error) {
			select {
			case <-closed:
				return voicetest.AgentEvent{}, &voicetest.TransportClosedError{Adapter: name}
			case <-ctx.Done():
				return voicetest.AgentEvent{}, ctx.Err()
			default:
				return ev, nil
			}
		},
	)}
}

// heapAfterGC returns the live heap after a collection.
func heapAfterGC() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// runBounded runs cfg on the real clock, failing t if it does not return
// within a minute (a hang, not a timing assertion) or keeps more than
// maxHeap bytes of heap live at its end.
func runBounded(t *testing.T, cfg voicetest.Config, maxHeap uint64) (*voicetest.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	before := heapAfterGC()
	res, err := voicetest.Run(ctx, cfg)
	if ctx.Err() != nil {
		t.Fatalf("Run did not end within a minute (err %v): it hangs on this fault", err)
	}
	if grown := int64(heapAfterGC()) - int64(before); grown > int64(maxHeap) {
		t.Errorf("the result holds %d MB of heap, want at most %d MB", grown>>20, maxHeap>>20)
	}
	runtime.KeepAlive(res)
	return res, err
}

func TestFaultAgentFloodsAudio(t *testing.T) {
	leakcheck.Check(t)
	// Audio as fast as the runner takes it: the turn stops at MaxTurnAudio
	// and the result holds about that much audio, however fast the agent.
	agent := floodAgent("audio-flood", voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: frame(pcm.DefaultRate, voicetest.FrameDuration)}, false)
	const limit = 10 * time.Second // 480 kB of audio at 24 kHz
	res, err := runBounded(t, voicetest.Config{Agent: agent, UserVoice: &toneTTS{}, Script: oneTurn(), Pacing: voicetest.PaceFast,
		Timeouts: voicetest.Timeouts{MaxTurnAudio: limit}}, 16<<20)
	if err != nil {
		t.Fatalf("err = %v", err)
	}
	if res.Timeline[len(res.Timeline)-1].Type != voicetest.EventAgentStopSpeaking {
		t.Errorf("timeline does not end with the cut-off turn:\n%s", res.TimelineText())
	}
}

func TestFaultAgentSendsOversizedFrames(t *testing.T) {
	leakcheck.Check(t)
	// Each frame is a minute of audio (2.9 MB): MaxTurnAudio stops the turn
	// after the first, whatever the agent sends next.
	agent := floodAgent("oversized", voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: frame(pcm.DefaultRate, time.Minute)}, true)
	res, err := runBounded(t, voicetest.Config{Agent: agent, UserVoice: &toneTTS{}, Script: oneTurn(), Pacing: voicetest.PaceFast,
		Timeouts: voicetest.Timeouts{MaxTurnAudio: 5 * time.Second}}, 64<<20)
	if err != nil {
		t.Fatalf("err = %v", err)
	}
	if res.Recording.Segments[len(res.Recording.Segments)-1].AudioDuration() > 2*time.Minute+time.Second {
		t.Errorf("kept %v of agent audio", res.Recording.Segments[len(res.Recording.Segments)-1].AudioDuration())
	}
}

func TestFaultAgentFloodsEvents(t *testing.T) {
	leakcheck.Check(t)
	// Events that are not speech (logs, data, transcripts of the user),
	// sent without pause after the agent started speaking, neither keep
	// the turn open (they are not the agent's acts on it) nor grow the
	// result without bound: the turn ends as if they were not there, or,
	// if 100000 of them arrive before it does, the runner fails the
	// scenario; either way the timeline keeps at most 10000 of them.
	for _, tc := range []struct {
		name string
		ev   voicetest.AgentEvent
	}{
		{"logs", voicetest.AgentEvent{Kind: voicetest.AgentLog, Text: "debug: still here"}},
		{"data", voicetest.AgentEvent{Kind: voicetest.AgentData, Text: "ui", Data: []byte(`{"x":1}`)}},
		{"user transcripts", voicetest.AgentEvent{Kind: voicetest.UserTranscript, Text: "hello there"}},
	} {
		for _, turnEnd := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/turnEnd=%v", tc.name, turnEnd), func(t *testing.T) {
				agent := floodAgent("flood", tc.ev, turnEnd)
				// FirstChunk bounds the wait for the 100000 events when the
				// adapter marks turn ends (nothing else ends the turn): 2 s
				// ran out before them at load 50 on two cores, in the base
				// as well, and 20 s under -race at that load (issue 21,
				// suite-cpu2); a bound, not a timing assertion, which a
				// runner without the flood limit still reaches (under
				// runBounded's minute).
				res, err := runBounded(t, voicetest.Config{Agent: agent, UserVoice: &toneTTS{}, Script: oneTurn(), Pacing: voicetest.PaceFast,
					Timeouts: voicetest.Timeouts{FirstChunk: 45 * time.Second, TailSilence: 200 * time.Millisecond}}, 64<<20)
				var se *voicetest.StepError
				if err != nil && (!errors.As(err, &se) || !strings.Contains(err.Error(), "the flood adapter sent more than 100000 events in one agent turn") ||
					!strings.Contains(err.Error(), tc.ev.Kind.String())) {
					t.Errorf("err = %v, want none, or a *StepError saying the adapter floods the runner with %s events", err, tc.ev.Kind)
				}
				if n := len(res.Timeline); n > 10_100 {
					t.Errorf("the timeline holds %d events, want at most about 10000", n)
				}
			})
		}
	}
}

func TestFaultNetworkResetOnLoopback(t *testing.T) {
	leakcheck.Check(t)
	// The agent answers with the start of its audio, then resets the TCP
	// connection (RST, not a clean close).
	agent := startLoopbackAgent(t, 0)
	agent.onEnd = func(c *net.TCPConn) {
		writeFrame(c, 'a', agent.reply[:len(agent.reply)/2])
		c.SetLinger(0)
		c.Close()
	}
	_, err := runBounded(t, voicetest.Config{Agent: agent, UserVoice: &toneTTS{}, Script: oneTurn(), Pacing: voicetest.PaceFast,
		Timeouts: voicetest.Timeouts{FirstChunk: 30 * time.Second}}, 64<<20)
	var tc *voicetest.TransportClosedError
	if !errors.As(err, &tc) || tc.Adapter != "loopback" || !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("err = %v, want a *TransportClosedError wrapping ECONNRESET", err)
	}
	if !strings.Contains(err.Error(), "connection reset by peer") || !strings.Contains(err.Error(), "AgentTurn()") {
		t.Errorf("error %q does not say what happened where", err)
	}
}

func TestFaultStallMidFrameOnLoopback(t *testing.T) {
	leakcheck.Check(t)
	// The agent sends a frame header and half of its payload, then stalls
	// with the connection open: the runner's read blocks mid-frame, the
	// turn times out, and Close unblocks the read.
	agent := startLoopbackAgent(t, 0)
	agent.onEnd = func(c *net.TCPConn) {
		var hdr [5]byte
		hdr[0] = 'a'
		binary.BigEndian.PutUint32(hdr[1:], uint32(len(agent.reply)))
		c.Write(hdr[:])
		c.Write(agent.reply[:len(agent.reply)/2])
	}
	const timeout = 300 * time.Millisecond
	_, err := runBounded(t, voicetest.Config{Agent: agent, UserVoice: &toneTTS{}, Script: oneTurn(), Pacing: voicetest.PaceFast,
		Timeouts: voicetest.Timeouts{FirstChunk: timeout}}, 64<<20)
	var te *voicetest.TimeoutError
	if !errors.As(err, &te) || te.Phase != voicetest.PhaseFirstChunk || te.Timeout != timeout {
		t.Fatalf("err = %v, want a first-chunk *TimeoutError of %v", err, timeout)
	}
}
