package cassette_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/cassette"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

func session() voicetest.Session {
	return voicetest.Session{Name: "conv", Rate: 24000, Logf: func(string, ...any) {}}
}

// replayed connects to the cassette "conv" under dir in replay mode and
// closes the Conn when t ends.
func replayed(t *testing.T, dir string) voicetest.Conn {
	t.Helper()
	a := cassette.New(t, nil, cassette.WithDir(dir), cassette.WithName("conv"), cassette.WithMode(cache.Replay))
	conn, err := a.Connect(t.Context(), session())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestReplayConn drives a replayed Conn by hand: the agent's events come
// at their recorded times after the calls they followed, never before the
// call; a call the cassette does not hold fails, and so does Recv then.
func TestReplayConn(t *testing.T) {
	dir := t.TempDir()
	record(t, dir, bookingAgent(), bookingConfig())
	synctest.Test(t, func(t *testing.T) {
		conn := replayed(t, dir)
		if c := conn.Capabilities(); c.Adapter != "fake-remote" || !c.VirtualTime || !c.DTMF {
			t.Errorf("capabilities %+v", c)
		}
		start := time.Now()
		ev, err := conn.Recv(t.Context())
		if err != nil || ev.Kind != voicetest.AgentAudio || ev.Audio.Duration() != 400*time.Millisecond {
			t.Fatalf("first event %v %v", ev.Kind, err)
		}
		if at := time.Since(start); at != 300*time.Millisecond+time.Microsecond && at != 300*time.Millisecond {
			t.Errorf("the greeting's first audio came after %v, recorded 300ms", at)
		}
		for ev.Kind != voicetest.AgentTurnEnd {
			if ev, err = conn.Recv(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		// The reply to the first utterance follows it: nothing comes
		// before the caller has sent it, however long it waits.
		waited := make(chan error, 1)
		go func() {
			_, err := conn.Recv(t.Context())
			waited <- err
		}()
		time.Sleep(time.Hour)
		synctest.Wait()
		select {
		case err := <-waited:
			t.Fatalf("Recv returned (%v) before the caller spoke", err)
		default:
		}
		// Something else than the recorded audio: a divergence, for the
		// call and for Recv.
		err = conn.SendText(t.Context(), "hello")
		var de *cassette.DivergenceError
		if !errors.As(err, &de) || de.Turn != 1 {
			t.Fatalf("SendText: %v, want a divergence at turn 1", err)
		}
		if err := <-waited; !errors.As(err, &de) {
			t.Errorf("Recv after the divergence: %v", err)
		}
	})
}

// TestReplayAfterHangUp: once the recorded agent has hung up, a call the
// cassette does not hold fails as on the closed line it was, not as a
// divergence, and Recv reports the closed transport.
func TestReplayAfterHangUp(t *testing.T) {
	dir := t.TempDir()
	closing := fixtures.Fake(fixtures.FakeConfig{Name: "closing", Greeting: fixtures.Reply{Text: "Sorry, we are closed", HangUp: true}})
	record(t, dir, closing, voicetest.Config{Script: []voicetest.Step{voicetest.AgentTurn()}})
	synctest.Test(t, func(t *testing.T) {
		conn := replayed(t, dir)
		for {
			ev, err := conn.Recv(t.Context())
			if err != nil {
				t.Fatalf("Recv before the hang-up: %v", err)
			}
			if ev.Kind == voicetest.AgentHangUp {
				break
			}
		}
		err := conn.SendAudio(t.Context(), pcm.Silence(24000, 20*time.Millisecond))
		var de *cassette.DivergenceError
		if !errors.Is(err, voicetest.ErrTransportClosed) || errors.As(err, &de) {
			t.Errorf("SendAudio after the hang-up: %v, want a closed transport", err)
		}
		if _, err := conn.Recv(t.Context()); !errors.Is(err, voicetest.ErrTransportClosed) {
			t.Errorf("Recv after the hang-up: %v", err)
		}
		if err := conn.Close(); err != nil {
			t.Error(err)
		}
		if _, err := conn.Recv(t.Context()); !errors.Is(err, voicetest.ErrTransportClosed) {
			t.Errorf("Recv after Close: %v", err)
		}
	})
}

// failedTB is a testing.TB whose test has failed, with its cleanups kept
// for the test to run.
type failedTB struct {
	*testing.T
	cleanups []func()
	logs     []string
}

func (f *failedTB) Failed() bool                      { return true }
func (f *failedTB) Cleanup(fn func())                 { f.cleanups = append(f.cleanups, fn) }
func (f *failedTB) Logf(format string, args ...any)   { f.logs = append(f.logs, format) }
func (f *failedTB) Helper()                           {}
func (f *failedTB) Errorf(format string, args ...any) { f.T.Errorf(format, args...) }

// TestFailedTestWritesNothing: a cassette must hold a conversation that
// passes, or it would replay the failure forever.
func TestFailedTestWritesNothing(t *testing.T) {
	dir := t.TempDir()
	ftb := &failedTB{T: t}
	a := cassette.New(ftb, bookingAgent(), cassette.WithDir(dir), cassette.WithName("conv"), cassette.WithMode(cache.Record))
	cfg := bookingConfig()
	cfg.Agent = a
	if _, err := runIn(t, cfg); err != nil {
		t.Fatal(err)
	}
	if len(ftb.cleanups) != 1 {
		t.Fatalf("%d cleanups registered, want the one that writes the cassette", len(ftb.cleanups))
	}
	ftb.cleanups[0]()
	if _, err := os.Stat(filepath.Join(dir, "conv")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed test wrote its cassette: %v", err)
	}
	if !strings.Contains(strings.Join(ftb.logs, "\n"), "not written: the test failed") {
		t.Errorf("logs %q", ftb.logs)
	}
}

// TestRerecordRemovesOldBodies: recording again (refresh) replaces the
// cassette and removes the bodies the new index does not name.
func TestRerecordRemovesOldBodies(t *testing.T) {
	dir := t.TempDir()
	record(t, dir, bookingAgent(), bookingConfig())
	before, _ := filepath.Glob(filepath.Join(dir, "conv", "*.wav"))
	t.Run("refresh", func(t *testing.T) {
		agent := fixtures.ScriptedAgent(fixtures.Reply{Text: "Something else entirely"})
		cfg := voicetest.Config{UserVoice: fixtures.FakeTTS(), Script: []voicetest.Step{voicetest.UserSays("hi"), voicetest.AgentTurn()}}
		if _, a, err := run(t, dir, cache.Refresh, agent, cfg); err != nil || a.Replaying() {
			t.Fatalf("Run: %v (replaying %v)", err, a.Replaying())
		}
	})
	after, _ := filepath.Glob(filepath.Join(dir, "conv", "*.wav"))
	if len(before) != 3 || len(after) != 1 {
		t.Fatalf("bodies before %v, after %v; want 3, then 1", before, after)
	}
	for _, b := range before {
		if b == after[0] {
			t.Errorf("the new body %s has an old name", b)
		}
	}
}

// TestShorterScriptIsLogged: a replay whose script stops before the
// recording's does passes (what ran matched), and says so in the log.
func TestShorterScriptIsLogged(t *testing.T) {
	dir := t.TempDir()
	record(t, dir, bookingAgent(), bookingConfig())
	cfg := bookingConfig()
	cfg.Script = cfg.Script[:3]
	var logs []string
	cfg.Logf = func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }
	if _, _, err := run(t, dir, cache.Replay, dialFails{}, cfg); err != nil {
		t.Fatal(err)
	}
	if log := strings.Join(logs, "\n"); !strings.Contains(log, "the conversation ended after 2 of the 5 caller turns") {
		t.Errorf("log:\n%s", log)
	}
}

// markAgent marks the tool events of its agent BeforeSpeech (as an
// adapter does whose protocol lets them come after the speech they
// preceded) when mark is set, and counts those it sees marked.
type markAgent struct {
	voicetest.Agent
	mark   bool
	marked *atomic.Int32
}

func (a markAgent) VirtualTime() bool { return true }

func (a markAgent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	c, err := a.Agent.Connect(ctx, s)
	if err != nil {
		return nil, err
	}
	return markConn{c, a}, nil
}

type markConn struct {
	voicetest.Conn
	a markAgent
}

func (c markConn) Recv(ctx context.Context) (voicetest.AgentEvent, error) {
	ev, err := c.Conn.Recv(ctx)
	if ev.Kind == voicetest.AgentToolCall || ev.Kind == voicetest.AgentToolResult {
		if c.a.mark {
			ev.BeforeSpeech = true
		}
		if ev.BeforeSpeech {
			c.a.marked.Add(1)
		}
	}
	return ev, err
}

// TestReplayKeepsBeforeSpeech: a cassette replays AgentEvent.BeforeSpeech
// as recorded.
func TestReplayKeepsBeforeSpeech(t *testing.T) {
	dir := t.TempDir()
	var recorded, replayed atomic.Int32
	record(t, dir, markAgent{bookingAgent(), true, &recorded}, bookingConfig())
	cfg := bookingConfig()
	cfg.Agent = markAgent{cassette.New(t, nil, cassette.WithDir(dir), cassette.WithName("conv"), cassette.WithMode(cache.Replay)), false, &replayed}
	synctest.Test(t, func(t *testing.T) {
		if _, err := voicetest.Run(t.Context(), cfg); err != nil {
			t.Fatal(err)
		}
	})
	if recorded.Load() != 2 || replayed.Load() != recorded.Load() {
		t.Errorf("tool events marked BeforeSpeech: %d recorded, %d replayed; want the call and its result both times", recorded.Load(), replayed.Load())
	}
}
