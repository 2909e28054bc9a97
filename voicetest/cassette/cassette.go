package cassette

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/internal/atomicfile"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
)

// Agent is an agent under test behind a cassette: it records the
// conversations of a live agent, or replays them with no agent running.
// New makes one per test. It implements voicetest.Agent,
// voicetest.VirtualTimer and voicetest.Replayer.
type Agent struct {
	t      testing.TB
	inner  voicetest.Agent
	test   string
	dir    string // the cassette's directory
	path   string // its index
	mode   cache.Mode
	replay bool
	scrub  *scrubber

	mu    sync.Mutex
	ix    *index
	err   error // loading ix
	conns int
	recs  []*recording
	saved bool
}

// Option configures New.
type Option func(*options)

type options struct {
	mode    cache.Mode
	hasMode bool
	root    string
	name    string
	scrub   func(string) string
}

// WithMode sets the mode instead of the one the flags and environment
// choose (cache.DefaultMode).
func WithMode(m cache.Mode) Option {
	return func(o *options) { o.mode, o.hasMode = m, true }
}

// WithDir keeps the cassette under root instead of DefaultDir.
func WithDir(root string) Option {
	return func(o *options) { o.root = root }
}

// WithName names the cassette instead of the test's name (t.Name()): its
// directory under the root, a subdirectory per "/". Two Agents of one
// test need two names.
func WithName(name string) Option {
	return func(o *options) { o.name = name }
}

// WithScrub adds a function that removes what else must not be stored
// (a customer's name, an order number) from every text the cassette
// records, after the built-in scrubbing. It must be deterministic: replay
// compares the caller's scrubbed text with the recorded one.
func WithScrub(f func(string) string) Option {
	return func(o *options) { o.scrub = f }
}

// New returns agent behind the cassette of the test t, in the mode the
// flags and environment choose (see the package documentation):
//
//   - replay (CI): the conversation is served from the cassette, agent is
//     never dialled, and a missing cassette fails Connect with a
//     *MissError naming the command that records it;
//   - record (a developer's default): replay when the cassette exists,
//     else talk to agent and write the cassette when the test ends, if it
//     passed;
//   - refresh: talk to agent and write the cassette again;
//   - off: talk to agent, read and write nothing.
//
// The cassette is DefaultDir/<test name>/cassette.json with its audio
// bodies beside it. A bad mode setting fails t at once. agent may be nil
// when the cassette is only replayed.
func New(t testing.TB, agent voicetest.Agent, opts ...Option) *Agent {
	t.Helper()
	o := options{root: DefaultDir, name: t.Name()}
	for _, opt := range opts {
		opt(&o)
	}
	if !o.hasMode {
		m, err := cache.DefaultMode()
		if err != nil {
			t.Fatal(err)
		}
		o.mode = m
	}
	if o.mode < cache.Replay || o.mode > cache.Off {
		t.Fatalf("voicetest/cassette: invalid mode %v", o.mode)
	}
	dir, err := voicetest.TestDataDir(o.root, o.name, "")
	if err != nil {
		t.Fatalf("voicetest/cassette: %v", err)
	}
	a := &Agent{t: t, inner: agent, test: t.Name(), dir: dir, path: filepath.Join(dir, IndexFile), mode: o.mode, scrub: newScrubber(o.scrub)}
	_, statErr := os.Stat(a.path)
	switch a.mode {
	case cache.Replay:
		a.replay = true
	case cache.Record:
		a.replay = statErr == nil
	}
	if a.recording() {
		t.Cleanup(a.save)
	}
	return a
}

// recording reports whether the Agent records its conversations.
func (a *Agent) recording() bool {
	return !a.replay && a.mode != cache.Off
}

// Replaying reports whether the conversations are served from the
// cassette (voicetest.Replayer): Scenario then runs them on virtual time
// and compares their golden files within tolerance.
func (a *Agent) Replaying() bool { return a.replay }

// VirtualTime reports whether the Agent runs on virtual time
// (voicetest.VirtualTimer): a replay does, since it blocks only on timers
// and channels; a recording runs as the agent behind it does.
func (a *Agent) VirtualTime() bool {
	if a.replay {
		return true
	}
	v, ok := a.inner.(voicetest.VirtualTimer)
	return ok && v.VirtualTime()
}

// Path returns the cassette's index file.
func (a *Agent) Path() string { return a.path }

// Mode returns the mode the Agent runs in.
func (a *Agent) Mode() cache.Mode { return a.mode }

// command returns the command that records the cassette again.
func (a *Agent) command() string { return rerecordCommand(a.dir, a.test) }

// Connect opens one conversation: the next recorded one in replay,
// otherwise the agent's own, recorded unless the mode is off.
func (a *Agent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	if a.replay {
		return a.connectReplay(ctx, s)
	}
	if a.inner == nil {
		return nil, fmt.Errorf("voicetest/cassette: %s must be recorded (mode %s), but New was given no agent to record", a.path, a.mode)
	}
	start := time.Now()
	conn, err := a.inner.Connect(ctx, s)
	took := time.Since(start)
	if err != nil || a.mode == cache.Off {
		if err != nil && a.mode != cache.Off {
			err = fmt.Errorf("recording the cassette %s (the agent must be reachable): %w", a.path, err)
		}
		return conn, err
	}
	rec := newRecording(s, conn.Capabilities(), a.scrub)
	rec.conv.Connect = millis(took)
	a.mu.Lock()
	a.recs = append(a.recs, rec)
	a.mu.Unlock()
	logf(s, "voicetest/cassette: recording conversation %d of %s into %s", len(a.recs), s.Name, a.path)
	return &recordConn{inner: conn, rec: rec}, nil
}

// connectReplay serves the next conversation of the cassette.
func (a *Agent) connectReplay(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ix == nil && a.err == nil {
		a.ix, a.err = a.load()
		if a.err == nil {
			if err := cache.NoteUse(a.path); err != nil {
				a.err = err
			}
		}
	}
	if a.err != nil {
		return nil, a.err
	}
	n := a.conns
	a.conns++
	if n >= len(a.ix.Conversations) {
		return nil, &DivergenceError{Path: a.path, Conversation: n + 1, Turns: 0,
			Recorded: fmt.Sprintf("%d conversation(s)", len(a.ix.Conversations)),
			Sent:     fmt.Sprintf("connection %d (Config.Repeat, or another scenario on the same Agent?)", n+1),
			Command:  a.command()}
	}
	c := &a.ix.Conversations[n]
	if c.Rate != s.Rate {
		return nil, &DivergenceError{Path: a.path, Conversation: n + 1, Turns: len(c.Turns) - 1,
			Recorded: fmt.Sprintf("a session at %d Hz", c.Rate),
			Sent:     fmt.Sprintf("a session at %d Hz (Config.Rate)", s.Rate), Command: a.command()}
	}
	logf(s, "voicetest/cassette: replaying conversation %d of %s (recorded %s, %d caller turns, adapter %s) on virtual time",
		n+1, a.path, a.ix.Recorded, len(c.Turns)-1, c.Capabilities.Adapter)
	// The connection takes as long as it did (virtual time in a bubble).
	if d := time.Duration(c.Connect); d > 0 {
		a.mu.Unlock()
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			a.mu.Lock()
			return nil, ctx.Err()
		}
		a.mu.Lock()
	}
	return newReplayConn(a, n, c, s.Logf), nil
}

// load reads the cassette.
func (a *Agent) load() (*index, error) {
	data, err := readLimited(a.path, maxIndexBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &MissError{Test: a.test, Path: a.path, Command: cache.RecordCommand(a.test)}
	}
	if err != nil {
		return nil, &CorruptError{Path: a.path, Reason: err.Error(), Command: a.command()}
	}
	ix, err := decode(data, a.dir)
	if err != nil {
		return nil, &CorruptError{Path: a.path, Reason: err.Error(), Command: a.command()}
	}
	return ix, nil
}

// save writes what was recorded, when the test ends: the bodies, then the
// index, each atomically; then it removes the bodies of an earlier
// recording that the new index does not name.
func (a *Agent) save() {
	a.mu.Lock()
	recs := a.recs
	done := a.saved
	a.saved = true
	a.mu.Unlock()
	if done || len(recs) == 0 {
		return
	}
	if a.t.Failed() {
		a.t.Logf("voicetest/cassette: %s not written: the test failed, and a cassette must hold a conversation that passes; fix the test and run it again to record", a.path)
		return
	}
	ix := &index{Format: formatV1, Test: a.test, Recorded: time.Now().UTC().Format(time.RFC3339), Rerecord: a.command()}
	files := map[string][]byte{}
	var turns int
	var audio time.Duration
	for i, rec := range recs {
		c, err := rec.finish()
		if err != nil {
			a.t.Errorf("voicetest/cassette: %s not written: conversation %d: %v", a.path, i+1, err)
			return
		}
		for ti := range c.Turns {
			t := &c.Turns[ti]
			if len(t.agent) == 0 {
				continue
			}
			b, wav, err := newBody(i+1, ti, c.Rate, t.agent)
			if err != nil {
				a.t.Errorf("voicetest/cassette: %s not written: %v", a.path, err)
				return
			}
			t.AgentAudio = b
			files[b.File] = wav
			audio += pcm.DurationOf(len(t.agent), c.Rate)
		}
		turns += len(c.Turns) - 1
		ix.Conversations = append(ix.Conversations, c)
	}
	data, err := encode(ix)
	if err == nil {
		err = a.write(data, files)
	}
	if err != nil {
		a.t.Errorf("voicetest/cassette: writing %s: %v", a.path, err)
		return
	}
	if err := cache.NoteUse(a.path); err != nil {
		a.t.Errorf("voicetest/cassette: %v", err)
	}
	a.t.Logf("voicetest/cassette: recorded %s: %d conversation(s), %d caller turns, %v of agent audio", a.path, len(recs), turns, audio.Round(time.Millisecond))
}

// write puts the files of a cassette in place.
func (a *Agent) write(index []byte, bodies map[string][]byte) error {
	if err := atomicfile.MkdirAll(a.dir); err != nil {
		return err
	}
	for name, data := range bodies {
		if err := atomicfile.Write(filepath.Join(a.dir, name), data, nil); err != nil {
			return err
		}
	}
	if err := atomicfile.Write(a.path, index, nil); err != nil {
		return err
	}
	ents, err := os.ReadDir(a.dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if name := e.Name(); bodyName.MatchString(name) && bodies[name] == nil {
			if err := os.Remove(filepath.Join(a.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// String names the cassette and its mode, for logs.
func (a *Agent) String() string {
	verb := "recording"
	switch {
	case a.replay:
		verb = "replaying"
	case a.mode == cache.Off:
		verb = "passing through (off)"
	}
	return fmt.Sprintf("cassette %s (%s)", strings.TrimSuffix(a.path, string(filepath.Separator)+IndexFile), verb)
}

// logf logs through the session, when it has a log.
func logf(s voicetest.Session, format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}
