package cassette_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/cassette"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// run runs cfg on virtual time with agent behind the cassette named name
// under dir, in mode.
func run(t *testing.T, dir string, mode cache.Mode, agent voicetest.Agent, cfg voicetest.Config) (*voicetest.Result, *cassette.Agent, error) {
	t.Helper()
	a := cassette.New(t, agent, cassette.WithDir(dir), cassette.WithName("conv"), cassette.WithMode(mode))
	cfg.Agent = a
	var res *voicetest.Result
	var err error
	synctest.Test(t, func(t *testing.T) { res, err = voicetest.Run(t.Context(), cfg) })
	return res, a, err
}

func bookingAgent() *fixtures.FakeAgent {
	return fixtures.Fake(fixtures.FakeConfig{
		Name:     "fake-remote",
		Greeting: fixtures.Reply{Text: "Welcome to the bistro", Latency: 300 * time.Millisecond},
		Replies: []fixtures.Reply{
			{Text: "A table for two it is", Latency: 400 * time.Millisecond,
				Tools: []voicetest.ToolCall{{ID: "c1", Name: "book", Arguments: []byte(`{"party":2}`), Result: []byte(`{"ok":true}`)}}},
			{Text: "Goodbye", Latency: 250 * time.Millisecond, HangUp: true},
		},
		DTMF: true,
	})
}

func bookingConfig() voicetest.Config {
	return voicetest.Config{
		UserVoice: fixtures.FakeTTS(),
		Script: []voicetest.Step{
			voicetest.AgentTurn(),
			voicetest.UserSays("A table for two"),
			voicetest.AgentTurn(),
			voicetest.DTMF("1#"),
			voicetest.UserSays("Thanks"),
			voicetest.AgentTurn(),
		},
	}
}

// TestRecordThenReplay records a conversation, then replays it with an
// agent that would fail if it were dialled: the same transcript and
// timeline, event for event and to the nanosecond, since both ran on
// virtual time.
func TestRecordThenReplay(t *testing.T) {
	dir := t.TempDir()
	var recorded *voicetest.Result
	t.Run("record", func(t *testing.T) {
		res, a, err := run(t, dir, cache.Record, bookingAgent(), bookingConfig())
		if err != nil {
			t.Fatal(err)
		}
		if a.Replaying() {
			t.Fatal("a missing cassette replays in record mode")
		}
		recorded = res
	})
	if _, err := os.Stat(filepath.Join(dir, "conv", cassette.IndexFile)); err != nil {
		t.Fatalf("no cassette written: %v", err)
	}
	for _, mode := range []cache.Mode{cache.Replay, cache.Record} {
		t.Run("replay in "+mode.String()+" mode", func(t *testing.T) {
			res, a, err := run(t, dir, mode, dialFails{}, bookingConfig())
			if err != nil {
				t.Fatal(err)
			}
			if !a.Replaying() || !a.VirtualTime() {
				t.Fatalf("an existing cassette in %s mode: Replaying %v, VirtualTime %v", mode, a.Replaying(), a.VirtualTime())
			}
			if got, want := res.TranscriptText(), recorded.TranscriptText(); got != want {
				t.Errorf("transcript:\n%s\nrecorded:\n%s", got, want)
			}
			if got, want := res.TimelineText(), recorded.TimelineText(); got != want {
				t.Errorf("timeline:\n%s\nrecorded:\n%s", got, want)
			}
			if res.Ended != "the agent hung up" || res.Ended != recorded.Ended {
				t.Errorf("Ended %q, recorded %q", res.Ended, recorded.Ended)
			}
			if err := res.State.Expect().ContainsToolCall("book", map[string]any{"party": 2}).Err(); err != nil {
				t.Error(err)
			}
		})
	}
}

// dialFails is an agent that fails the test if it is connected to.
type dialFails struct{}

func (dialFails) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	return nil, errors.New("the replay dialled the agent")
}

// record records cfg against agent into the cassette "conv" under dir, in
// a subtest, so that the cassette is written when it returns.
func record(t *testing.T, dir string, agent voicetest.Agent, cfg voicetest.Config) *voicetest.Result {
	t.Helper()
	var res *voicetest.Result
	t.Run("record", func(t *testing.T) {
		var err error
		res, _, err = run(t, dir, cache.Record, agent, cfg)
		if err != nil {
			t.Fatal(err)
		}
	})
	if res == nil {
		t.FailNow()
	}
	return res
}

// TestDivergence: a replay whose caller says something else than the
// recording fails with an error that names the cassette's turn, what was
// recorded, what was sent and the command that re-records.
func TestDivergence(t *testing.T) {
	for _, tc := range []struct {
		name     string
		agent    func() *fixtures.FakeAgent
		changed  voicetest.Step
		turn     int
		recorded string
		sent     string
	}{
		{"text", func() *fixtures.FakeAgent {
			return fixtures.TextAgent(fixtures.Reply{Text: "Sure"}, fixtures.Reply{Text: "Bye"})
		},
			voicetest.UserSays("A table for three"), 1, `the text "A table for two"`, `the text "A table for three"`},
		{"audio, other length", bookingAgent, voicetest.UserSays("A table for three please"), 1, "audio of 1.37s (69 frames", "more audio: 1.38s after 69 frames"},
		{"audio, same length", bookingAgent, voicetest.UserSays("A table for owt"), 1, "audio of 1.37s (69 frames, 32880 samples, sha256 ", "audio of 1.37s (69 frames, 32880 samples, sha256 "},
		{"another call", bookingAgent, voicetest.DTMF("1"), 1, "audio of 1.37s", `the DTMF digits "1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := voicetest.Config{UserVoice: fixtures.FakeTTS(), Script: []voicetest.Step{
				voicetest.AgentTurn(), voicetest.UserSays("A table for two"), voicetest.AgentTurn(),
			}}
			if tc.name == "text" {
				cfg.Script = cfg.Script[1:]
			}
			record(t, dir, tc.agent(), cfg)
			for i, s := range cfg.Script {
				if s.String() == voicetest.UserSays("A table for two").String() {
					cfg.Script[i] = tc.changed
				}
			}
			t.Run("replay", func(t *testing.T) {
				_, a, err := run(t, dir, cache.Replay, dialFails{}, cfg)
				var de *cassette.DivergenceError
				if !errors.As(err, &de) {
					t.Fatalf("Run: %v, want a *DivergenceError", err)
				}
				if de.Turn != tc.turn || de.Conversation != 1 || de.Path != a.Path() {
					t.Errorf("turn %d of conversation %d of %s, want turn %d of conversation 1 of %s", de.Turn, de.Conversation, de.Path, tc.turn, a.Path())
				}
				if !strings.HasPrefix(de.Recorded, tc.recorded) || !strings.HasPrefix(de.Sent, tc.sent) {
					t.Errorf("recorded %q, sent %q; want %q…, %q…", de.Recorded, de.Sent, tc.recorded, tc.sent)
				}
				msg := err.Error()
				for _, want := range []string{"diverged from the cassette " + a.Path(), "caller turn 1 of", "recorded: " + tc.recorded, "sent:     " + tc.sent,
					"rm -r " + filepath.Join(dir, "conv") + " && go test ./voicetest/cassette -run '^TestDivergence$/^" + strings.ReplaceAll(tc.name, " ", "_")} {
					if !strings.Contains(msg, want) {
						t.Errorf("error lacks %q:\n%s", want, msg)
					}
				}
			})
		})
	}
}

// TestReplayMissing: in replay mode a test without a cassette fails at
// Connect with the command that records it, and never dials.
func TestReplayMissing(t *testing.T) {
	_, a, err := run(t, t.TempDir(), cache.Replay, dialFails{}, bookingConfig())
	var me *cassette.MissError
	if !errors.As(err, &me) {
		t.Fatalf("Run: %v, want a *MissError", err)
	}
	if me.Path != a.Path() || me.Command != "go test ./voicetest/cassette -run '^TestReplayMissing$' -voicetest.record" {
		t.Errorf("path %q command %q", me.Path, me.Command)
	}
	if !strings.Contains(err.Error(), "record it, with the agent reachable, with: go test") {
		t.Errorf("error %v", err)
	}
}

// TestCorrupt: a cassette whose body or index was damaged is not replayed.
func TestCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		reason string
	}{
		{"body edited", func(t *testing.T, dir string) {
			bodies, _ := filepath.Glob(filepath.Join(dir, "c1-t2.*.wav"))
			if len(bodies) != 1 {
				t.Fatalf("bodies %v", bodies)
			}
			b, _ := os.ReadFile(bodies[0])
			b[len(b)-1] ^= 1
			os.WriteFile(bodies[0], b, 0o644)
		}, "does not match the SHA-256 in the index"},
		{"body missing", func(t *testing.T, dir string) {
			bodies, _ := filepath.Glob(filepath.Join(dir, "c1-t0.*.wav"))
			os.Remove(bodies[0])
		}, "no such file"},
		{"index truncated", func(t *testing.T, dir string) {
			p := filepath.Join(dir, cassette.IndexFile)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)/2], 0o644)
		}, "it does not parse"},
		{"event samples changed", func(t *testing.T, dir string) {
			p := filepath.Join(dir, cassette.IndexFile)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(b), `"samples":9600}`, `"samples":9601}`, 1)), 0o644)
		}, "holds 38400 samples, its events 38401"},
		{"another format", func(t *testing.T, dir string) {
			p := filepath.Join(dir, cassette.IndexFile)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(b), "voicetest-cassette/v1", "voicetest-cassette/v9", 1)), 0o644)
		}, `its format is "voicetest-cassette/v9"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			record(t, dir, bookingAgent(), bookingConfig())
			tc.damage(t, filepath.Join(dir, "conv"))
			_, _, err := run(t, dir, cache.Replay, dialFails{}, bookingConfig())
			var ce *cassette.CorruptError
			if !errors.As(err, &ce) || !strings.Contains(ce.Reason, tc.reason) || !strings.Contains(err.Error(), "rm -r ") {
				t.Fatalf("Run: %v, want a *CorruptError saying %q", err, tc.reason)
			}
		})
	}
}

// TestRepeatRecordsEachRun: Config.Repeat connects once per run; each run
// is a conversation of the cassette, replayed in order.
func TestRepeatRecordsEachRun(t *testing.T) {
	dir := t.TempDir()
	cfg := bookingConfig()
	cfg.Repeat = voicetest.Repeat{Runs: 2}
	rec := record(t, dir, bookingAgent(), cfg)
	res, _, err := run(t, dir, cache.Replay, dialFails{}, cfg)
	if err != nil || len(res.Runs) != 2 {
		t.Fatalf("Run: %v, %d runs", err, len(res.Runs))
	}
	for i := range res.Runs {
		if got, want := res.Runs[i].TimelineText(), rec.Runs[i].TimelineText(); got != want {
			t.Errorf("run %d timeline:\n%s\nrecorded:\n%s", i+1, got, want)
		}
	}
	cfg.Repeat.Runs = 3
	_, _, err = run(t, dir, cache.Replay, dialFails{}, cfg)
	var de *cassette.DivergenceError
	if !errors.As(err, &de) || de.Conversation != 3 || !strings.Contains(err.Error(), "connection 3") {
		t.Errorf("a third run: %v, want a divergence at conversation 3", err)
	}
}

// TestOffModePassesThrough: in off mode the agent is used live and no
// cassette is written.
func TestOffModePassesThrough(t *testing.T) {
	dir := t.TempDir()
	t.Run("off", func(t *testing.T) {
		if _, a, err := run(t, dir, cache.Off, bookingAgent(), bookingConfig()); err != nil || a.Replaying() {
			t.Fatalf("Run: %v (replaying %v)", err, a.Replaying())
		}
	})
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("off mode wrote %d files", len(ents))
	}
}

// newCassette returns agent behind the cassette "conv" under dir.
func newCassette(t *testing.T, dir string, mode cache.Mode, agent voicetest.Agent, scrub func(string) string) *cassette.Agent {
	return cassette.New(t, agent, cassette.WithDir(dir), cassette.WithName("conv"), cassette.WithMode(mode), cassette.WithScrub(scrub))
}

// runIn runs cfg on virtual time.
func runIn(t *testing.T, cfg voicetest.Config) (res *voicetest.Result, err error) {
	synctest.Test(t, func(t *testing.T) { res, err = voicetest.Run(t.Context(), cfg) })
	return res, err
}

// slowConnect is an agent whose Connect takes a while, as joining a room
// and waiting for the agent to be dispatched does.
type slowConnect struct {
	voicetest.Agent
	took time.Duration
}

func (s slowConnect) Connect(ctx context.Context, sess voicetest.Session) (voicetest.Conn, error) {
	time.Sleep(s.took)
	return s.Agent.Connect(ctx, sess)
}

// TestReplayTakesTheConnectTime: a connection that took 700 ms to open
// takes 700 ms again in replay, so the replayed timeline starts where the
// recorded one did (it started 700 ms early before: the user's first line
// at 0 instead of 700 ms).
func TestReplayTakesTheConnectTime(t *testing.T) {
	dir := t.TempDir()
	first := func(res *voicetest.Result) time.Duration {
		for _, e := range res.Timeline {
			if e.Type == voicetest.EventUserStartSpeaking {
				return e.At
			}
		}
		t.Fatalf("no user speech in\n%s", res.TimelineText())
		return 0
	}
	cfg := voicetest.Config{UserVoice: fixtures.FakeTTS(), Script: []voicetest.Step{voicetest.UserSays("hello"), voicetest.AgentTurn()}}
	agent := fixtures.Fake(fixtures.FakeConfig{Name: "fake-remote", Replies: []fixtures.Reply{{Text: "hi", Latency: 200 * time.Millisecond}}})
	var rec, rep *voicetest.Result
	t.Run("record", func(t *testing.T) {
		res, _, err := run(t, dir, cache.Record, slowConnect{Agent: agent, took: 700 * time.Millisecond}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		rec = res
	})
	t.Run("replay", func(t *testing.T) {
		res, _, err := run(t, dir, cache.Replay, dialFails{}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		rep = res
	})
	if rec == nil || rep == nil {
		t.FailNow()
	}
	if r, p := first(rec), first(rep); r != 700*time.Millisecond || p != r {
		t.Errorf("the user's first line at %v recorded and %v replayed, want 700ms both", r, p)
	}
}
