// Package leakcheck finds goroutines and sockets that tests leave behind.
//
// It has two entry points. Main wraps a package's tests in TestMain:
//
//	func TestMain(m *testing.M) { leakcheck.Main(m) }
//
// It snapshots the goroutines and the open sockets before the tests run and,
// once they have all passed, waits (a bounded number of short sleeps: a
// goroutine that is already on its way out gets time to finish) until only the
// goroutines of the snapshot remain and no more sockets are open than before.
// Otherwise it prints the stack of every leaked goroutine, with the function
// that started it, and the address of every leaked TCP socket, and the test
// binary fails.
//
// Check does the same for one test, without the socket count:
//
//	func TestDial(t *testing.T) {
//		leakcheck.Check(t)
//		...
//	}
//
// It registers a t.Cleanup that fails t with the stacks of the goroutines
// started during the test that are still running when it ends. Goroutines
// running other tests are not counted, but goroutines they start are, so use
// Check only in tests that do not run in parallel with others (Main covers
// parallel tests).
//
// A leak check may wait, but it asserts nothing about time: a goroutine that
// exits late is not a leak, only one that has not exited when the wait is over.
// The default wait is five seconds (see WaitFor).
//
// Sockets are counted on Linux only, from /proc/self/fd; elsewhere only
// goroutines are checked.
//
// Main also gives the tests a temporary directory of their own: TMPDIR
// (os.TempDir, and what child processes inherit) names a fresh directory
// while they run. Once they have passed, anything left in it (a file of
// os.CreateTemp or a directory of os.MkdirTemp that no test removed; a
// child process's scratch files) is reported by name and the binary
// fails; otherwise the directory is removed. When the tests failed, the
// directory is kept and its path printed, since a failure's files (a
// failed scenario's artifacts) may be what explains it. t.TempDir
// directories are removed by the testing package before the check.
package leakcheck

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// DefaultWait is how long a check waits for goroutines and sockets to go away
// before it reports them.
const DefaultWait = 5 * time.Second

// Option configures Main and Check.
type Option func(*options)

type options struct {
	wait    time.Duration
	ignore  []string
	sockets bool
	after   []func()
	out     io.Writer
	exit    func(int)
}

func newOptions(opts []Option) *options {
	o := &options{wait: DefaultWait, sockets: true, out: os.Stderr, exit: os.Exit}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

// WaitFor sets how long a check waits for leftover goroutines and sockets to
// go away before it reports them (DefaultWait if d ≤ 0).
func WaitFor(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.wait = d
		}
	}
}

// IgnoreFunc declares goroutines that may outlive the tests: any goroutine
// with a frame of the named function (as runtime stacks print it, e.g.
// "net/http.(*persistConn).readLoop", or a prefix of it ending in "." such
// as "internal/poll.") is not a leak.
func IgnoreFunc(names ...string) Option {
	return func(o *options) { o.ignore = append(o.ignore, names...) }
}

// NoSockets turns off the socket count of Main, for packages that keep a
// socket open on purpose.
func NoSockets() Option {
	return func(o *options) { o.sockets = false }
}

// AfterRun has Main call f once the tests have run, before it checks
// for leaks (also when they failed): to stop what the tests shared, such
// as a server that TestMain's package started once for all of them.
func AfterRun(f func()) Option {
	return func(o *options) { o.after = append(o.after, f) }
}

// withOutput and withExit redirect Main's report and exit, for this package's
// own tests.
func withOutput(w io.Writer) Option { return func(o *options) { o.out = w } }
func withExit(f func(int)) Option   { return func(o *options) { o.exit = f } }

// runner is the part of *testing.M that Main uses.
type runner interface{ Run() int }

// Main runs the tests of m and exits with their status. When they passed,
// it then checks that no goroutine they started is still running and (on
// Linux) that no more sockets are open than before they ran; a leak is
// reported on stderr with its stacks and makes the binary exit with status 1.
// While fuzzing (-test.fuzz set, or in a fuzz worker) it only runs the tests:
// the fuzzing engine keeps its own goroutines and pipes.
func Main(m *testing.M, opts ...Option) {
	o := newOptions(opts)
	if m == nil {
		fmt.Fprintln(o.out, "leakcheck: Main needs the *testing.M that TestMain receives, got nil")
		o.exit(2)
		return
	}
	o.exit(run(m, o))
}

func run(m runner, o *options) int {
	before := snapshot()
	sockBefore, sockErr := openSockets()
	tmp, restore, tmpErr := privateTempDir()
	if tmpErr != nil && tmpErr != errNested {
		fmt.Fprintf(o.out, "leakcheck: the tests use the shared temporary directory: %v\n", tmpErr)
	}
	code := m.Run()
	for _, f := range o.after {
		f()
	}
	restore()
	if code != 0 || fuzzing() {
		if tmpErr == nil {
			if left, _ := leftovers(tmp); len(left) > 0 {
				fmt.Fprintf(o.out, "leakcheck: the tests' temporary files are kept in %s\n", tmp)
			} else {
				os.RemoveAll(tmp)
			}
		}
		return code
	}
	if leaked := waitGoroutines(before, o); len(leaked) > 0 {
		fmt.Fprintf(o.out, "leakcheck: %d goroutine(s) still running after the tests passed (waited %v):\n\n%s\n", len(leaked), o.wait, formatStacks(leaked))
		code = 1
	}
	if o.sockets && sockErr == nil {
		if extra, err := waitSockets(sockBefore, o.wait); err != nil {
			fmt.Fprintf(o.out, "leakcheck: counting sockets: %v\n", err)
		} else if len(extra) > 0 {
			fmt.Fprintf(o.out, "leakcheck: %d socket(s) still open after the tests passed (waited %v); close every listener, connection and response body, or call CloseIdleConnections on HTTP clients:\n%s\n", len(extra), o.wait, strings.Join(extra, "\n"))
			code = 1
		}
	}
	if tmpErr == nil {
		left, err := leftovers(tmp)
		switch {
		case err != nil:
			fmt.Fprintf(o.out, "leakcheck: listing the tests' temporary directory: %v\n", err)
			code = 1
		case len(left) > 0:
			fmt.Fprintf(o.out, "leakcheck: %d file(s) left in the tests' temporary directory %s after they passed (kept there); use t.TempDir, or remove what os.CreateTemp and os.MkdirTemp made:\n%s\n", len(left), tmp, strings.Join(left, "\n"))
			code = 1
		default:
			os.RemoveAll(tmp)
		}
	}
	if code != 0 {
		fmt.Fprintln(o.out, "FAIL: leak check")
	}
	return code
}

// errNested is privateTempDir's answer in a test binary run by a test
// that Main runs: the parent's directory serves.
var errNested = errors.New("the temporary directory of the test binary that started this one serves")

// nestedEnv names, in the environment of the tests (and so of the
// processes they start), the temporary directory Main gave them. A test
// binary that a test runs again (a child that is killed on purpose, or
// checked from outside) finds it set to its TMPDIR and uses that
// directory as it is: what the child leaves is the parent's leftover.
const nestedEnv = "LEAKCHECK_TMPDIR"

// privateTempDir makes a fresh directory under os.TempDir and points
// TMPDIR at it; restore points TMPDIR back at what it was. Within a
// binary that Main already runs (see nestedEnv) it makes none and
// reports an error that says so.
func privateTempDir() (dir string, restore func(), err error) {
	old, had := os.LookupEnv("TMPDIR")
	if nested := os.Getenv(nestedEnv); nested != "" && had && nested == old {
		return "", func() {}, errNested
	}
	dir, err = os.MkdirTemp("", "leakcheck-"+filepath.Base(os.Args[0])+"-")
	if err != nil {
		return "", func() {}, err
	}
	// Others may pass through it but not list it, as they may pass
	// through the shared /tmp: a test that runs a child process as
	// another user (to check permission errors) reaches its t.TempDir.
	if err := os.Chmod(dir, 0o711); err != nil {
		os.Remove(dir)
		return "", func() {}, err
	}
	if err := os.Setenv("TMPDIR", dir); err != nil {
		os.Remove(dir)
		return "", func() {}, err
	}
	oldNested, hadNested := os.LookupEnv(nestedEnv)
	os.Setenv(nestedEnv, dir)
	return dir, func() {
		if hadNested {
			os.Setenv(nestedEnv, oldNested)
		} else {
			os.Unsetenv(nestedEnv)
		}
		if had {
			os.Setenv("TMPDIR", old)
		} else {
			os.Unsetenv("TMPDIR")
		}
	}, nil
}

// leftovers lists what dir holds, one name a line (a directory's name
// with a trailing slash), sorted.
func leftovers(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	return names, nil
}

// fuzzing reports whether the binary is fuzzing or is a fuzz worker.
func fuzzing() bool {
	for _, arg := range os.Args[1:] {
		name, value, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		switch name {
		case "test.fuzzworker":
			return value != "false"
		case "test.fuzz":
			return value != ""
		}
	}
	return false
}

// Check snapshots the running goroutines and registers a t.Cleanup that fails
// t, listing their stacks, if goroutines started since are still running when
// the test ends (after waiting up to DefaultWait, or WaitFor's duration, for
// them to exit). Goroutines that run tests are not counted. Use it in tests
// that do not run in parallel with others.
func Check(t testing.TB, opts ...Option) {
	t.Helper()
	o := newOptions(opts)
	before := snapshot()
	t.Cleanup(func() {
		if leaked := waitGoroutines(before, o); len(leaked) > 0 {
			t.Errorf("leakcheck: %d goroutine(s) started by %s are still running after it ended (waited %v):\n\n%s", len(leaked), t.Name(), o.wait, formatStacks(leaked))
		}
	})
}

// waitGoroutines waits, with growing sleeps up to o.wait in all, until
// every goroutine not in before is expected, and returns those that are not.
func waitGoroutines(before map[uint64]bool, o *options) []goroutine {
	var leaked []goroutine
	poll(o.wait, func() bool {
		leaked = leaked[:0]
		for _, g := range goroutines() {
			if !before[g.id] && !expected(g, o.ignore) {
				leaked = append(leaked, g)
			}
		}
		return len(leaked) == 0
	})
	return leaked
}

// waitSockets waits until no more sockets are open than in before, and
// returns descriptions of the extra ones.
func waitSockets(before map[string]bool, wait time.Duration) ([]string, error) {
	var extra []string
	var err error
	poll(wait, func() bool {
		var now map[string]bool
		now, err = openSockets()
		if err != nil {
			return true
		}
		extra = extra[:0]
		for s := range now {
			if !before[s] {
				extra = append(extra, s)
			}
		}
		return len(extra) == 0
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(extra)
	return describeSockets(extra), nil
}

// poll calls done until it reports true or wait has passed, sleeping a little
// longer each time (1 ms doubling to 100 ms).
func poll(wait time.Duration, done func() bool) {
	deadline := time.Now().Add(wait)
	sleep := time.Millisecond
	for !done() {
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(sleep)
		sleep = min(2*sleep, 100*time.Millisecond)
	}
}
