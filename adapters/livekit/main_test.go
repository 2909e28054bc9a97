package livekit_test

import (
	"crypto/rand"
	"flag"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	protologger "github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/internal/leakcheck"
	"github.com/voicetest-go/voicetest/internal/peers/lkserver"
)

// server is the livekit-server the package's tests share (see
// lkserver.Shared): each test joins rooms of its own and registers its
// agents under names of its own (agentName), so the conversations, which
// mostly wait on real time, run in parallel. It is the package's one
// piece of shared state, started by the first test that asks for it and
// stopped by TestMain.
var server = lkserver.NewShared(lkserver.Config{})

// alone is the package's gate between its parallel conversations. The
// Go-double conversations (see beside), TestNodeAgent's conversation and
// each check of TestConformance (see subject) hold it shared; the
// conformance suite's heap check (BoundedMemory/Queue measures the whole
// process's heap) holds it alone. That check runs first in the suite
// (conformance.Subject.MemoryFirst), and the other conversations wait
// for it (heapChecked) before they take the gate, so that it neither
// waits for them nor they for it.
var alone = newGate()

// quiet keeps the Go-double conversations (beside, which holds it
// shared) off the barge-in of TestNodeAgent's conversation, which holds
// it alone for that part, and off TestLiveKitCassette's (besideQuiet):
// the framework's Silero VAD must hear the barge-in while the story
// plays, in real time (at load 30-50 it missed it, or the story stopped
// after a word, with conversations beside it); the cassette's replay
// must keep its recording's timing.
// TestConformance's checks, one at a time, do not take it, nor the
// conversations that run in their lane (besideChecks).
var quiet = newGate()

// checks is the lane of TestConformance's checks, which run one after
// another: each check's conversation holds it shared (see subject), and
// a Go-double conversation that runs in their lane rather than in
// doubles' (see besideChecks) holds it alone, between two checks. Those
// conversations do not take quiet: beside TestNodeAgent's barge-in, as
// beside TestLiveKitCassette's recording, this lane is the one Go-double
// conversation at a time that runs, a check or one of them.
//
// Why: on a quiet machine the package's path is the longer of the two
// lanes, and doubles' is the longer (its conversations, ~24 s, plus
// TestNodeAgent's hold of quiet, ~11 s, during which it idles, against
// ~32 s of checks). They start at the one stretch of the checks' lane
// with no conversation in it (dialing), so that they lengthen it little.
var checks = newGate()

// dialing is closed when TestConformance's Timeouts/Dial check starts:
// its agent dials a black hole, and the SDK's own validate request after
// the failed join waits out its fixed 3 s (server-sdk-go's
// cValidateTimeout) with no conversation, so that check does not hold
// checks, and the conversations of besideChecks start there. It is also
// closed when TestConformance ends or will not run (and, as heapChecked,
// with a -test.parallel of the caller's), and is closed once: with
// -count above 1 they start at once.
var dialing = newLatch()

// heapChecked is closed once TestConformance's heap check is over (or
// will not run): the other conversations start after it (see beside), so
// that it does not wait at the gate for those under way. It is closed
// once; with -count above 1 the later heap checks wait for the
// conversations under way instead, as a check asking the gate alone does.
var heapChecked = newLatch()

// nodeDone is closed once TestNodeAgent has ended (or will not run):
// TestLiveKitCassette records its call after it (see there).
var nodeDone = newLatch()

// doubles holds back the Go-double conversations (beside) beyond one at a
// time: all of the package's parallel tests start at once (see
// parallel), so that TestNodeAgent and TestConformance, the longest,
// start first thing, but one of these conversations beside them is as
// much as a loaded 2-core machine runs in real time (two at a time, at
// load 25-38, failed TestScenarioMultiTurn, -BargeIn and
// TestLegacyTranscriptions in 2 runs of 2; the base binary, one at a
// time, passed its run between them).
var doubles = make(chan struct{}, 1)

// latch is a channel closed once.
type latch struct {
	ch   chan struct{}
	once sync.Once
}

func newLatch() *latch { return &latch{ch: make(chan struct{})} }

// open closes l; later calls do nothing.
func (l *latch) open() { l.once.Do(func() { close(l.ch) }) }

// wait returns once l is open.
func (l *latch) wait() { <-l.ch }

// gate is a shared/exclusive lock held by tests until they end, which
// lets a waiting exclusive holder in first: while one waits, no new
// shared hold begins. A test's second shared hold is a no-op (a
// conformance check may start two peers), so that it cannot wait behind
// a waiting exclusive holder that waits for it.
type gate struct {
	mu      sync.Mutex
	cond    *sync.Cond
	holders map[testing.TB]bool // the tests holding it shared
	excl    bool                // held alone
	waiting int                 // tests waiting to hold it alone
}

func newGate() *gate {
	g := &gate{holders: map[testing.TB]bool{}}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// share holds g shared until t ends.
func (g *gate) share(t testing.TB) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.holders[t] {
		return
	}
	for g.excl || g.waiting > 0 {
		g.cond.Wait()
	}
	g.holders[t] = true
	t.Cleanup(func() {
		g.mu.Lock()
		delete(g.holders, t)
		g.mu.Unlock()
		g.cond.Broadcast()
	})
}

// exclusive holds g alone until t ends, or until release is called.
func (g *gate) exclusive(t testing.TB) (release func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.waiting++
	for g.excl || len(g.holders) > 0 {
		g.cond.Wait()
	}
	g.waiting--
	g.excl = true
	var once sync.Once
	release = func() {
		once.Do(func() {
			g.mu.Lock()
			g.excl = false
			g.mu.Unlock()
			g.cond.Broadcast()
		})
	}
	t.Cleanup(release)
	return release
}

// beside marks t, a parallel test, as a conversation that runs beside
// TestConformance: its goroutines are left out of the suite's leak checks
// (adaptertest.Exempt; the package's leak check at the end still sees
// them), and once the suite's heap check is over (heapChecked) and no
// other runs (doubles) it holds alone and quiet shared. Call it right
// after t.Parallel, before t starts any goroutine.
func beside(t *testing.T) {
	t.Helper()
	besideQuiet(t, false)
}

// besideChecks marks t, a parallel test, as a conversation that runs in
// TestConformance's lane (checks) rather than in doubles': its goroutines
// are left out of the suite's leak checks, as beside's, and once the
// suite's heap check is over and its Dial check has begun (dialing) it
// holds alone shared and checks alone, beside that check or between two
// of the suite's checks. It does not hold quiet: it is, like a check,
// the one conversation that runs beside TestNodeAgent's barge-in or
// TestLiveKitCassette's recording. Call it right after t.Parallel,
// before t starts any goroutine.
func besideChecks(t *testing.T) {
	t.Helper()
	adaptertest.Exempt(t)
	heapChecked.wait()
	dialing.wait()
	alone.share(t)
	checks.exclusive(t)
}

// besideQuiet is beside for a conversation whose timing is checked to a
// few hundred milliseconds (TestLiveKitCassette's replay against its
// recording): with exclusive set it holds quiet alone, so that no other
// Go-double conversation, nor TestNodeAgent's barge-in, runs meanwhile;
// TestConformance's checks still do, one at a time.
func besideQuiet(t *testing.T, exclusive bool) {
	t.Helper()
	adaptertest.Exempt(t)
	heapChecked.wait()
	doubles <- struct{}{}
	t.Cleanup(func() { <-doubles })
	alone.share(t)
	if exclusive {
		quiet.exclusive(t)
	} else {
		quiet.share(t)
	}
}

// parallel is the package's default -test.parallel, above its count of
// parallel tests (keep it so: heapChecked relies on TestConformance
// running from the start). They are conversations that mostly wait on
// real time (TestConformance's checks one after another, TestNodeAgent,
// the Go-double conversations), and side by side they take less wall
// time than two at a time, GOMAXPROCS's default on a 2-core machine.
// Which of them run at once is the business of the package's gates
// (alone, quiet, doubles), not of the order in which the testing package
// resumes them.
const parallel = 16

// TestMain silences the SDK's package logger (pion's connection states at
// info level, on stderr), stops the shared server after the tests, and
// fails the package's tests if they leave a goroutine running or a
// socket open. Unless -test.parallel is given, it runs up to parallel
// parallel tests at once.
//
// When TestNodeAgent is to run, TestMain starts its Node.js worker ahead
// of the tests (see earlyNode), so that its start-up overlaps them.
func TestMain(m *testing.M) {
	lksdk.SetLogger(protologger.GetDiscardLogger())
	flag.Parse()
	setParallel := true
	flag.Visit(func(f *flag.Flag) { setParallel = setParallel && f.Name != "test.parallel" })
	if setParallel {
		if err := flag.Set("test.parallel", strconv.Itoa(parallel)); err != nil {
			panic(err)
		}
	}
	if !setParallel || !willRun("TestConformance") {
		// With a -test.parallel of the caller's, TestConformance may
		// wait for a slot that the conversations waiting for its heap
		// check hold: they do not wait, and the check waits for them at
		// the gate instead.
		heapChecked.open()
		dialing.open()
	}
	if willRun("TestNodeAgent") {
		nodeEarly.start()
	}
	if !setParallel || !willRun("TestNodeAgent") {
		nodeDone.open() // as heapChecked
	}
	leakcheck.Main(m, leakcheck.AfterRun(func() {
		nodeEarly.close()
		server.Close()
	}))
}

// willRun reports whether -test.run and -test.skip select the top-level
// test name (their first level only: a pattern this reads wrong costs a
// worker started for nothing, or a start not overlapped, never a test).
func willRun(name string) bool {
	matches := func(flagName string, empty bool) bool {
		f := flag.Lookup(flagName)
		if f == nil || f.Value.String() == "" {
			return empty
		}
		first, _, _ := strings.Cut(f.Value.String(), "/")
		re, err := regexp.Compile(first)
		if err != nil {
			return empty
		}
		return re.MatchString(name)
	}
	return matches("test.run", true) && !matches("test.skip", false)
}

// agentName returns base with a random suffix: the name of an agent
// worker that no other test registers on the shared server. A worker of
// a test that has ended may still be registered there for a moment, and
// a dispatch by a name it shared would reach it.
func agentName(base string) string {
	return base + "-" + rand.Text()[:10]
}
