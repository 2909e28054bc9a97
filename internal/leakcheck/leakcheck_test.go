package leakcheck

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeTB records what Check does with a test.
type fakeTB struct {
	testing.TB
	mu       sync.Mutex
	cleanups []func()
	errs     []string
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Name() string      { return "TestFake" }
func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

// end runs the cleanups as the testing package would, last first.
func (f *fakeTB) end() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

//go:noinline
func blockUntilClosed(ch chan struct{}) { <-ch }

func TestCheckReportsALeakedGoroutineWithItsStack(t *testing.T) {
	ft := &fakeTB{}
	Check(ft, WaitFor(50*time.Millisecond))
	release := make(chan struct{})
	done := make(chan struct{})
	go func() { blockUntilClosed(release); close(done) }()
	ft.end()
	close(release)
	<-done
	if len(ft.errs) != 1 {
		t.Fatalf("got %d errors, want 1: %q", len(ft.errs), ft.errs)
	}
	msg := ft.errs[0]
	for _, want := range []string{"1 goroutine(s) started by TestFake", "leakcheck.blockUntilClosed", "started by github.com/voicetest-go/voicetest/internal/leakcheck.TestCheckReportsALeakedGoroutineWithItsStack"} {
		if !strings.Contains(msg, want) {
			t.Errorf("report lacks %q:\n%s", want, msg)
		}
	}
}

func TestCheckWaitsForAGoroutineOnItsWayOut(t *testing.T) {
	ft := &fakeTB{}
	Check(ft)
	release := make(chan struct{})
	go blockUntilClosed(release)
	// The goroutine exits only after the check has started waiting.
	go func() { time.Sleep(20 * time.Millisecond); close(release) }()
	ft.end()
	if len(ft.errs) != 0 {
		t.Fatalf("a goroutine that exits during the wait was reported: %q", ft.errs)
	}
}

func TestCheckIgnoresDeclaredFunctions(t *testing.T) {
	ft := &fakeTB{}
	Check(ft, WaitFor(20*time.Millisecond), IgnoreFunc("github.com/voicetest-go/voicetest/internal/leakcheck.blockUntilClosed"))
	release := make(chan struct{})
	done := make(chan struct{})
	go func() { blockUntilClosed(release); close(done) }()
	ft.end()
	close(release)
	<-done
	if len(ft.errs) != 0 {
		t.Fatalf("an ignored goroutine was reported: %q", ft.errs)
	}
}

// fakeM is a test binary whose Run does what run says.
type fakeM struct{ run func() int }

func (m fakeM) Run() int { return m.run() }

// leakingRun is a test binary whose run opens a listening socket and
// starts a goroutine, leaves both running and exits with code; its stop
// closes them once run has returned, and its addr is the socket's.
type leakingRun struct {
	fakeM
	ln      net.Listener
	release chan struct{}
	done    chan struct{}
}

func newLeakingRun(t *testing.T, code int) *leakingRun {
	l := &leakingRun{release: make(chan struct{}), done: make(chan struct{})}
	l.fakeM = fakeM{run: func() int {
		var err error
		l.ln, err = net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() { blockUntilClosed(l.release); close(l.done) }()
		return code
	}}
	return l
}

func (l *leakingRun) addr() string { return l.ln.Addr().String() }

func (l *leakingRun) stop() {
	l.ln.Close()
	close(l.release)
	<-l.done
}

func TestMainReportsLeakedGoroutinesAndSockets(t *testing.T) {
	m := newLeakingRun(t, 0)
	var out bytes.Buffer
	code := run(m, newOptions([]Option{WaitFor(50 * time.Millisecond), withOutput(&out)}))
	addr := m.addr()
	m.stop()
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	report := out.String()
	wants := []string{"1 goroutine(s) still running after the tests passed", "leakcheck.blockUntilClosed", "FAIL: leak check"}
	if _, err := openSockets(); err == nil {
		wants = append(wants, "1 socket(s) still open", "tcp "+addr+" -> 0.0.0.0:0 LISTEN")
	}
	for _, want := range wants {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
}

func TestMainPassesCleanTestsAndKeepsFailures(t *testing.T) {
	var out bytes.Buffer
	if code := run(fakeM{run: func() int { return 0 }}, newOptions([]Option{withOutput(&out)})); code != 0 || out.Len() != 0 {
		t.Errorf("clean run: code %d, output %q", code, out.String())
	}
	// A failing run keeps its code and is not checked (its leaks are
	// usually the failure's consequence).
	release := make(chan struct{})
	defer close(release)
	code := run(fakeM{run: func() int { go blockUntilClosed(release); return 3 }}, newOptions([]Option{withOutput(&out)}))
	if code != 3 || out.Len() != 0 {
		t.Errorf("failed run: code %d, output %q", code, out.String())
	}
}

// What the tests shared (a server TestMain started for all of them) is
// stopped by AfterRun before the check, so its goroutines and sockets are
// no leak; AfterRun runs after a failing run too.
func TestMainAfterRunStopsWhatTheTestsShared(t *testing.T) {
	for _, code := range []int{0, 3} {
		m := newLeakingRun(t, code)
		stops := 0
		stop := func() {
			stops++
			m.stop()
		}
		var out bytes.Buffer
		got := run(m, newOptions([]Option{WaitFor(50 * time.Millisecond), withOutput(&out), AfterRun(stop)}))
		if got != code || out.Len() != 0 || stops != 1 {
			t.Errorf("run exiting %d: code %d, %d AfterRun calls, output %q; want code %d, one call, no report", code, got, stops, out.String(), code)
		}
	}
}

func TestMainExits(t *testing.T) {
	got := -1
	var out bytes.Buffer
	Main(nil, withExit(func(c int) { got = c }), withOutput(&out))
	if got != 2 || !strings.Contains(out.String(), "needs the *testing.M") {
		t.Fatalf("Main with a nil *testing.M exited %d saying %q; want 2 and a clear message", got, out.String())
	}
}

func TestParseDump(t *testing.T) {
	const d = `goroutine 7 [chan receive]:
net/http.(*persistConn).readLoop(0xc000123)
	/usr/lib/go/src/net/http/transport.go:2200 +0x1
created by net/http.(*Transport).dialConn in goroutine 6
	/usr/lib/go/src/net/http/transport.go:1900 +0x2

goroutine 1 [running]:
main.main()
	/x/main.go:3 +0x1

garbage`
	gs := parseDump([]byte(d))
	if len(gs) != 3 {
		t.Fatalf("parsed %d goroutines, want 3", len(gs))
	}
	if gs[0].id != 7 || strings.Join(gs[0].funcs, ",") != "net/http.(*persistConn).readLoop,net/http.(*Transport).dialConn" {
		t.Errorf("first goroutine: id %d, funcs %q", gs[0].id, gs[0].funcs)
	}
	if gs[1].id != 1 || len(gs[1].funcs) != 1 || gs[1].funcs[0] != "main.main" {
		t.Errorf("second goroutine: id %d, funcs %q", gs[1].id, gs[1].funcs)
	}
	if gs[2].id != 0 || expected(gs[2], nil) {
		t.Errorf("an unparsable entry must be kept and reported: %+v", gs[2])
	}
	if !expected(gs[0], []string{"net/http."}) || expected(gs[0], []string{"net/http.(*Transport).dialConn"}) {
		t.Error("ignore patterns must match frames (prefix with a trailing dot), not the creator")
	}
}

func TestProcAddr(t *testing.T) {
	for in, want := range map[string]string{
		"0100007F:1F90":                         "127.0.0.1:8080",
		"00000000000000000000000001000000:0050": "[::1]:80",
		"0000000000000000FFFF00000100007F:0016": "127.0.0.1:22",
		"zz:1":                                  "zz:1",
	} {
		if got := procAddr(in); got != want {
			t.Errorf("procAddr(%q) = %q, want %q", in, got, want)
		}
	}
}

// Main gives the tests a temporary directory of their own (TMPDIR while
// they run, restored after) and removes it once they passed clean.
func TestMainGivesTheTestsTheirOwnTempDir(t *testing.T) {
	// Whatever run does with TMPDIR stays inside this test's directory.
	t.Setenv("TMPDIR", t.TempDir())
	outer := os.TempDir()
	var inside string
	var out bytes.Buffer
	code := run(fakeM{run: func() int {
		inside = os.TempDir()
		f, err := os.CreateTemp("", "removed-")
		if err != nil {
			t.Error(err)
			return 1
		}
		f.Close()
		os.Remove(f.Name())
		return 0
	}}, newOptions([]Option{withOutput(&out)}))
	if code != 0 || out.Len() != 0 {
		t.Fatalf("clean run: code %d, output %q", code, out.String())
	}
	if inside == outer || filepath.Dir(inside) != outer {
		t.Errorf("TMPDIR while the tests ran = %q, want a fresh directory in %q", inside, outer)
	}
	if got := os.TempDir(); got != outer {
		t.Errorf("TMPDIR after the run = %q, want %q back", got, outer)
	}
	if _, err := os.Stat(inside); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the tests' directory %s after a clean run: %v, want it removed", inside, err)
	}
}

// What a passing run leaves in its temporary directory is reported by
// name and fails the binary; a failing run's files are kept and the
// directory named, without a failure of its own.
func TestMainReportsLeftoverTempFiles(t *testing.T) {
	for _, exit := range []int{0, 3} {
		// Each run's directory, kept, goes with this test's own.
		outer := t.TempDir()
		t.Setenv("TMPDIR", outer)
		var dir string
		var out bytes.Buffer
		code := run(fakeM{run: func() int {
			d, err := os.MkdirTemp("", "artifacts-")
			if err != nil {
				t.Error(err)
			}
			f, err := os.CreateTemp("", "left-")
			if err != nil {
				t.Error(err)
			}
			f.Close()
			dir = filepath.Dir(d)
			if filepath.Dir(dir) != outer {
				t.Errorf("MkdirTemp made %s, want it in a directory of run's own in %s", d, outer)
			}
			return exit
		}}, newOptions([]Option{withOutput(&out), WaitFor(time.Millisecond)}))
		report := out.String()
		if exit == 0 {
			if code != 1 {
				t.Errorf("passing run with leftovers: code %d, want 1", code)
			}
			for _, want := range []string{"2 file(s) left in the tests' temporary directory " + dir, "\nartifacts-", "/\nleft-", "FAIL: leak check"} {
				if !strings.Contains(report, want) {
					t.Errorf("report lacks %q:\n%s", want, report)
				}
			}
		} else if code != exit || report != "leakcheck: the tests' temporary files are kept in "+dir+"\n" {
			t.Errorf("failing run: code %d, output %q; want %d and the directory named", code, report, exit)
		}
		if left, err := leftovers(dir); err != nil || len(left) != 2 {
			t.Errorf("the directory %s holds %q (%v), want the two leftovers kept", dir, left, err)
		}
	}
}

// A test binary run again by a test that Main runs uses its parent's
// directory as it is: what it leaves there is the parent's to report.
func TestMainInAChildUsesItsParentsTempDir(t *testing.T) {
	parent := t.TempDir()
	t.Setenv("TMPDIR", parent)
	t.Setenv(nestedEnv, parent)
	var inside string
	var out bytes.Buffer
	code := run(fakeM{run: func() int {
		inside = os.TempDir()
		if _, err := os.MkdirTemp("", "child-"); err != nil {
			t.Error(err)
		}
		return 0
	}}, newOptions([]Option{withOutput(&out)}))
	if code != 0 || out.Len() != 0 || inside != parent {
		t.Errorf("child run: code %d, output %q, TMPDIR %q; want 0, nothing, the parent's %q", code, out.String(), inside, parent)
	}
	if left, err := leftovers(parent); err != nil || len(left) != 1 || !strings.HasPrefix(left[0], "child-") {
		t.Errorf("the parent's directory holds %q (%v), want the child's leftover, for the parent to report", left, err)
	}
}
