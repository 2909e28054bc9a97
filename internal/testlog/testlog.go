// Package testlog writes a library's log lines to a test's output as if
// the test had logged them at its own line: not attributed to the
// library's files, as t.Logf called inside a library attributes them, nor
// lost when the library logs from a goroutine of its own.
package testlog

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Caller returns "file.go:line" of the code that called into the
// library: the first frame above skip frames of the caller of Caller that
// is in a _test.go file, or else the first that is not in a package whose
// import path starts with one of libs. It returns "" when there is none.
func Caller(skip int, libs ...string) string {
	var pcs [64]uintptr
	n := runtime.Callers(skip+2, pcs[:])
	return callerIn(pcs[:n], libs)
}

// callerIn is Caller over the call stack pcs.
func callerIn(pcs []uintptr, libs []string) string {
	frames := runtime.CallersFrames(pcs)
	outside := ""
	for {
		f, more := frames.Next()
		// (The location is put together only for a frame it returns.)
		if strings.HasSuffix(f.File, "_test.go") {
			return location(f)
		}
		if outside == "" && f.Function != "" && !inLibs(f.Function, libs) && !strings.HasPrefix(f.Function, "runtime.") && !strings.HasPrefix(f.Function, "testing.") {
			outside = location(f)
		}
		if !more {
			return outside
		}
	}
}

// location is "file.go:line" for f.
func location(f runtime.Frame) string {
	return filepath.Base(f.File) + ":" + strconv.Itoa(f.Line)
}

func inLibs(function string, libs []string) bool {
	for _, l := range libs {
		if rest, ok := strings.CutPrefix(function, l); ok && rest != "" && (rest[0] == '.' || rest[0] == '/') {
			return true
		}
	}
	return false
}

// Logf returns a printf-like function that writes each message to
// tb.Output() prefixed with loc, as tb.Logf does with the line it was
// called at. With loc empty it is tb.Logf.
func Logf(tb testing.TB, loc string) func(format string, args ...any) {
	if loc == "" {
		return tb.Logf
	}
	return func(format string, args ...any) { write(tb, loc, format, args...) }
}

// write writes one message to tb.Output() prefixed with loc.
func write(tb testing.TB, loc, format string, args ...any) {
	msg := strings.TrimSuffix(fmt.Sprintf(format, args...), "\n")
	msg = strings.ReplaceAll(msg, "\n", "\n    ")
	fmt.Fprintf(tb.Output(), "%s: %s\n", loc, msg)
}

// Stack is the call stack of the code that called into a library, kept
// so that the caller's line (Caller's answer) is looked up when a line is
// first logged, not before: a run that logs nothing (a passing scenario,
// most often) pays only for the copy of the stack. The copy is taken when
// the library is called, since a line may come later from a goroutine of
// the library's own, whose stack does not reach the test.
type Stack struct {
	lib  string
	once sync.Once
	loc  string
	n    int
	pcs  [64]uintptr
}

// CallStack copies the call stack above skip frames of the caller of
// CallStack, for Caller(skip, lib) to be looked up later (Stack.Location).
func CallStack(skip int, lib string) *Stack {
	s := &Stack{lib: lib}
	s.n = runtime.Callers(skip+2, s.pcs[:])
	return s
}

// Location is what Caller would have returned where CallStack was called.
// It is safe to call from any goroutine.
func (s *Stack) Location() string {
	s.once.Do(func() { s.loc = callerIn(s.pcs[:s.n], []string{s.lib}) })
	return s.loc
}

// Logf is Logf(tb, s.Location()), with the location looked up by the
// first line it writes.
func (s *Stack) Logf(tb testing.TB) func(format string, args ...any) {
	return func(format string, args ...any) {
		loc := s.Location()
		if loc == "" {
			tb.Logf(format, args...)
			return
		}
		write(tb, loc, format, args...)
	}
}

// Stdout runs f with os.Stdout redirected to a pipe and returns what f
// wrote there (up to 1 MiB): an example's output, for a test that runs
// the example itself (on virtual time, say) where go test would only
// compile it. The test must not run in parallel with others (os.Stdout is
// the process's).
func Stdout(t testing.TB, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(r, 1<<20))
		_, _ = io.Copy(io.Discard, r)
		r.Close()
		out <- string(b)
	}()
	stdout := os.Stdout
	os.Stdout = w
	restored := false
	defer func() { // f panicked or called runtime.Goexit
		if !restored {
			os.Stdout = stdout
			w.Close()
		}
	}()
	f()
	os.Stdout = stdout
	restored = true
	w.Close()
	return <-out
}
