package leakcheck

import (
	"bytes"
	"fmt"
	"net"
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
