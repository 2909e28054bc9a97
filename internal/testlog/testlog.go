// Package testlog writes a library's log lines to a test's output as if
// the test had logged them at its own line: not attributed to the
// library's files, as t.Logf called inside a library attributes them, nor
// lost when the library logs from a goroutine of its own.
package testlog

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// Caller returns "file.go:line" of the code that called into the
// library: the first frame above skip frames of the caller of Caller that
// is in a _test.go file, or else the first that is not in a package whose
// import path starts with one of libs. It returns "" when there is none.
func Caller(skip int, libs ...string) string {
	var pcs [64]uintptr
	n := runtime.Callers(skip+2, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
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
	return func(format string, args ...any) {
		msg := strings.TrimSuffix(fmt.Sprintf(format, args...), "\n")
		msg = strings.ReplaceAll(msg, "\n", "\n    ")
		fmt.Fprintf(tb.Output(), "%s: %s\n", loc, msg)
	}
}
