package sdkcheck_test

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// The package's tests, longest first: the order in which turns runs
// them. The two browser tests take most of the package's time, so they
// start first, and the Node scripts fill the slot the shorter of them
// leaves.
const (
	rankLayerCode = iota
	rankElevenLabs
	rankRealtime
	rankOpenAI
	rankElevenLabsText
)

// turns is the package's one piece of shared state: the queue that runs
// its tests -parallel at a time, in rank order (see inTurn).
var turns = newQueue()

// TestMain lets the testing package start every parallel test at once
// and hands -parallel's limit to turns, which keeps it, so that the tests
// run as many at a time as before but in a set order. (The testing
// package starts waiting parallel tests in no set order: the longest
// started last left one slot idle for seconds.)
func TestMain(m *testing.M) {
	flag.Parse()
	f := flag.Lookup("test.parallel")
	n, ok := f.Value.(flag.Getter).Get().(int)
	if !ok || n < 1 {
		fmt.Fprintf(os.Stderr, "sdkcheck: -test.parallel is %v\n", f.Value)
		os.Exit(2)
	}
	turns.limit = n
	// Every test of the package at once, as far as the testing package
	// is concerned; turns admits them.
	if err := f.Value.Set(fmt.Sprint(max(n, 16))); err != nil {
		fmt.Fprintln(os.Stderr, "sdkcheck:", err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// inTurn makes t a parallel test that runs when its turn comes: once
// every test of a lower rank has started, and fewer than -parallel of the
// package's tests are running. It replaces t.Parallel.
//
// A test enters the queue in its sequential part, before t.Parallel: the
// testing package runs the sequential part of every test it will run
// (of a -count round) before any parallel part, so when the first of
// them asks for its turn, the queue holds all of them.
func inTurn(t *testing.T, rank int) {
	t.Helper()
	turns.enter(rank)
	t.Parallel()
	start := time.Now()
	turns.wait(rank)
	t.Cleanup(turns.done)
	if testing.Verbose() {
		t.Logf("its turn came after %v", time.Since(start).Round(time.Millisecond))
	}
}

// queue admits tests by rank, limit at a time.
type queue struct {
	limit int

	mu      sync.Mutex
	cond    *sync.Cond
	waiting map[int]int // tests waiting, by rank
	running int
}

func newQueue() *queue {
	q := &queue{waiting: map[int]int{}}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// enter adds a test of rank r to the queue.
func (q *queue) enter(r int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.waiting[r]++
}

// wait returns when the test of rank r may run.
func (q *queue) wait(r int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.running >= max(q.limit, 1) || q.before(r) {
		q.cond.Wait()
	}
	q.waiting[r]--
	q.running++
	q.cond.Broadcast()
}

// before reports whether a test of a lower rank than r is waiting.
func (q *queue) before(r int) bool {
	for rank, n := range q.waiting {
		if rank < r && n > 0 {
			return true
		}
	}
	return false
}

// done ends a running test's turn.
func (q *queue) done() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.running--
	q.cond.Broadcast()
}
