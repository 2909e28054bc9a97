package livekit_test

import (
	"crypto/rand"
	"flag"
	"regexp"
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

// heapGate keeps the conversations that run beside TestConformance (see
// beside) out of the suite's heap check: they hold it shared while they
// run; the check's peer (subject's Start for BoundedMemory/Queue) holds
// it alone, from before its first heap measurement to its end.
var heapGate sync.RWMutex

// beside marks t, a parallel test, as a conversation that runs beside
// TestConformance: its goroutines are left out of the suite's leak checks
// (adaptertest.Exempt; the package's leak check at the end still sees
// them), and it does not run while the suite measures the whole
// process's heap. Call it right after t.Parallel, before t starts any
// goroutine.
func beside(t *testing.T) {
	t.Helper()
	adaptertest.Exempt(t)
	heapGate.RLock()
	t.Cleanup(heapGate.RUnlock)
}

// TestMain silences the SDK's package logger (pion's connection states at
// info level, on stderr), stops the shared server after the tests, and
// fails the package's tests if they leave a goroutine running or a
// socket open.
//
// When TestNodeAgent is to run, TestMain starts its Node.js worker ahead
// of the tests (see earlyNode), so that its start-up overlaps them.
func TestMain(m *testing.M) {
	lksdk.SetLogger(protologger.GetDiscardLogger())
	flag.Parse()
	if willRun("TestNodeAgent") {
		nodeEarly.start()
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
