package voicetest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// Issue #15, item 9: a callee (user code, an engine, an adapter) that
// ignores its context and does not return must not hold the scenario past
// its bound, nor past the cancellation of its context. Each callee below
// blocks until the test releases it (or an hour of virtual time passes,
// so that the test fails rather than deadlocks where the bound is
// missing), whatever its context says.

// hang blocks until release is closed or an hour has passed, ignoring any
// context: a callee stuck in a call that takes no context.
func hang(release <-chan struct{}) {
	select {
	case <-release:
	case <-time.After(time.Hour):
	}
}

// hungAgent wraps an agent; the method named by stuck hangs (see hang).
type hungAgent struct {
	voicetest.Agent
	stuck   string
	release <-chan struct{}
}

func (a *hungAgent) VirtualTime() bool { return true }

func (a *hungAgent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	if a.stuck == "Connect" {
		hang(a.release)
	}
	c, err := a.Agent.Connect(ctx, s)
	if err != nil {
		return nil, err
	}
	return &hungConn{Conn: c, a: a}, nil
}

type hungConn struct {
	voicetest.Conn
	a *hungAgent
}

func (c *hungConn) hang(method string) {
	if c.a.stuck == method {
		hang(c.a.release)
	}
}

func (c *hungConn) SendAudio(ctx context.Context, a pcm.Chunk) error {
	c.hang("SendAudio")
	return c.Conn.SendAudio(ctx, a)
}

func (c *hungConn) EndUtterance(ctx context.Context) error {
	c.hang("EndUtterance")
	return c.Conn.EndUtterance(ctx)
}

func (c *hungConn) SendText(ctx context.Context, text string) error {
	c.hang("SendText")
	return c.Conn.SendText(ctx, text)
}

func (c *hungConn) Close() error {
	err := c.Conn.Close()
	c.hang("Close")
	return err
}

// hungUser hangs in NextUtterance, or in InterruptDecision.
type hungUser struct {
	release   <-chan struct{}
	decision  bool
	utterance int
}

func (u *hungUser) NextUtterance(ctx context.Context, st *voicetest.State) (voicetest.Utterance, error) {
	if !u.decision {
		hang(u.release)
	}
	u.utterance++
	if u.utterance > 1 {
		return voicetest.Utterance{Done: true}, nil
	}
	return voicetest.Utterance{Text: "A table for two"}, nil
}

func (u *hungUser) InterruptDecision(st *voicetest.State) (bool, time.Duration) {
	hang(u.release)
	return false, 0
}

type hungTTS struct{ release <-chan struct{} }

func (s hungTTS) Synthesize(ctx context.Context, req voicetest.SpeechRequest) (pcm.Chunk, error) {
	hang(s.release)
	return pcm.Silence(req.Rate, time.Second), nil
}

type hungSTT struct{ release <-chan struct{} }

func (s hungSTT) Transcribe(ctx context.Context, req voicetest.TranscriptionRequest) (voicetest.Transcription, error) {
	hang(s.release)
	return voicetest.Transcription{Text: "hello"}, nil
}

// stuckCases are the callees of a scenario, each stuck in turn: the
// configuration that makes it the one called, and the phase and callee
// the timeout must name.
func stuckCases(release <-chan struct{}) []struct {
	name   string
	cfg    voicetest.Config
	phase  voicetest.Phase
	callee string
} {
	reply := fixtures.Reply{Text: "Sure, for two.", Latency: 200 * time.Millisecond}
	talk := []voicetest.Step{voicetest.UserSays("A table for two"), voicetest.AgentTurn()}
	stuck := func(method string, a voicetest.Agent) voicetest.Agent {
		return &hungAgent{Agent: a, stuck: method, release: release}
	}
	judge := criteriaJudge(func(req voicetest.JudgeRequest) (voicetest.Judgment, error) {
		hang(release)
		return allPass(req)
	})
	return []struct {
		name   string
		cfg    voicetest.Config
		phase  voicetest.Phase
		callee string
	}{
		{"judge", voicetest.Config{Agent: fixtures.ScriptedAgent(reply), UserVoice: &toneTTS{}, Judge: judge,
			Script: append(talk, voicetest.Verdict())}, voicetest.PhaseJudge, "Config.Judge"},
		{"user", voicetest.Config{Agent: fixtures.ScriptedAgent(reply), UserVoice: &toneTTS{}, User: &hungUser{release: release},
			Script: []voicetest.Step{voicetest.UserTurn()}}, voicetest.PhaseUser, "Config.User"},
		{"interrupt decision", voicetest.Config{Agent: fixtures.ScriptedAgent(reply), UserVoice: &toneTTS{},
			User: &hungUser{release: release, decision: true}, Script: []voicetest.Step{voicetest.Proceed(1)}},
			voicetest.PhaseUser, "Config.User's InterruptDecision"},
		{"tts", voicetest.Config{Agent: fixtures.ScriptedAgent(reply), UserVoice: hungTTS{release}, Script: talk},
			voicetest.PhaseSynthesize, "Config.UserVoice"},
		{"stt", voicetest.Config{Agent: fixtures.AudioOnlyAgent(reply), UserVoice: &toneTTS{}, AgentSTT: hungSTT{release},
			Script: append(talk, voicetest.Check(func(*voicetest.State) error { return nil }))},
			voicetest.PhaseTranscribe, "Config.AgentSTT"},
		{"check", voicetest.Config{Agent: fixtures.ScriptedAgent(reply), UserVoice: &toneTTS{},
			Script: append(talk, voicetest.Check(func(*voicetest.State) error { hang(release); return nil }))},
			voicetest.PhaseCheck, "Check"},
		{"effects", voicetest.Config{Agent: fixtures.ScriptedAgent(reply), UserVoice: &toneTTS{},
			Effects: func(c pcm.Chunk) pcm.Chunk { hang(release); return c }, Script: talk},
			voicetest.PhaseEffects, "Config.Effects"},
		{"connect", voicetest.Config{Agent: stuck("Connect", fixtures.ScriptedAgent(reply)), UserVoice: &toneTTS{}, Script: talk},
			voicetest.PhaseConnect, "Agent.Connect"},
		{"send audio", voicetest.Config{Agent: stuck("SendAudio", fixtures.ScriptedAgent(reply)), UserVoice: &toneTTS{}, Script: talk},
			voicetest.PhaseSend, "the fake-scripted adapter's SendAudio"},
		{"end utterance", voicetest.Config{Agent: stuck("EndUtterance", fixtures.ScriptedAgent(reply)), UserVoice: &toneTTS{}, Script: talk},
			voicetest.PhaseSend, "the fake-scripted adapter's EndUtterance"},
		{"send text", voicetest.Config{Agent: stuck("SendText", fixtures.TextAgent(reply)), Script: talk},
			voicetest.PhaseSend, "the fake-text adapter's SendText"},
		{"close", voicetest.Config{Agent: stuck("Close", fixtures.ScriptedAgent(reply)), UserVoice: &toneTTS{}, Script: talk},
			voicetest.PhaseClose, "the fake-scripted adapter's Close"},
	}
}

func TestStuckCalleeIsBounded(t *testing.T) {
	for _, tc := range stuckCases(nil) {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				defer close(release) // the callee returns at last, so the bubble ends
				cfg := stuckCasesFor(release, tc.name)
				cfg.Timeouts.Engine = 10 * time.Second
				cfg.Timeouts.Connect = 10 * time.Second
				cfg.Timeouts.FirstChunk = 10 * time.Second
				start := time.Now()
				_, err := voicetest.Run(t.Context(), cfg)
				took := time.Since(start) // virtual time
				var te *voicetest.TimeoutError
				if !errors.As(err, &te) {
					t.Fatalf("Run after %v: %v, want a *TimeoutError", took, err)
				}
				if te.Phase != tc.phase || te.Callee != tc.callee {
					t.Errorf("timeout names phase %q and callee %q, want %q and %q: %v", te.Phase, te.Callee, tc.phase, tc.callee, err)
				}
				if took >= time.Minute {
					t.Errorf("Run returned after %v of virtual time: it waited for the stuck callee", took)
				}
			})
		})
	}
}

// stuckCasesFor returns the Config of the named case, made with release.
func stuckCasesFor(release <-chan struct{}, name string) voicetest.Config {
	for _, tc := range stuckCases(release) {
		if tc.name == name {
			return tc.cfg
		}
	}
	panic("no case " + name)
}

// Cancelling the scenario's context ends it at once, even while a callee
// that ignores the context is running: the error names the callee and the
// phase, and wraps the context's error.
func TestStuckCalleeCancelled(t *testing.T) {
	for _, tc := range stuckCases(nil) {
		if tc.name == "close" {
			continue // Close runs after the context has ended anyway
		}
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				defer close(release)
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				time.AfterFunc(8*time.Second, cancel) // once the callee hangs, before its bound
				start := time.Now()
				_, err := voicetest.Run(ctx, stuckCasesFor(release, tc.name))
				took := time.Since(start)
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("Run after %v: %v, want context.Canceled", took, err)
				}
				if msg := err.Error(); !strings.Contains(msg, tc.callee) || !strings.Contains(msg, string(tc.phase)) {
					t.Errorf("the error does not name the callee %q and the phase %q: %v", tc.callee, tc.phase, err)
				}
				if took >= time.Minute {
					t.Errorf("Run returned %v after its context was cancelled", took-8*time.Second)
				}
			})
		})
	}
}

// A Check that never returns (it blocks forever on a channel of its own,
// so the synctest bubble Scenario runs it in cannot end): the scenario
// fails at Timeouts.Engine with a timeout naming the Check, and the test
// says why the bubble could not end instead of crashing the test binary
// with synctest's deadlock panic. Run in a child test process, since the
// Check's goroutine stays blocked for good.
func TestNeverReturningCheckUnderScenario(t *testing.T) {
	if os.Getenv("VOICETEST_STRAY_CHILD") == "1" {
		voicetest.Scenario(t, voicetest.Config{
			Golden: voicetest.GoldenOptions{Disable: true}, Agent: fixtures.ScriptedAgent(fixtures.Reply{Text: "Hello"}),
			UserVoice: &toneTTS{}, Timeouts: voicetest.Timeouts{Engine: time.Second},
			Script: []voicetest.Step{voicetest.UserSays("hi"), voicetest.AgentTurn(),
				voicetest.Check(func(*voicetest.State) error { select {} })},
		})
		return
	}
	t.Parallel() // waits on a child process, which runs the branch above alone
	cmd := exec.Command(os.Args[0], "-test.run=^TestNeverReturningCheckUnderScenario$", "-test.v", "-test.count=1")
	// The child's scenario fails, so it keeps its artifacts: in a
	// directory of this test's, gone when it ends.
	cmd.Env = append(os.Environ(), "VOICETEST_STRAY_CHILD=1", "TMPDIR="+t.TempDir())
	out, _ := cmd.CombinedOutput()
	for _, want := range []string{
		`timeout in phase "check" after 1s (turn 1) waiting for Check`,
		"callee_bound_test.go:",
		"voicetest: Check never returned, so the scenario's synctest bubble could not end",
		"--- FAIL: TestNeverReturningCheckUnderScenario",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the child's output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "panic:") {
		t.Errorf("the child panicked:\n%s", out)
	}
}
