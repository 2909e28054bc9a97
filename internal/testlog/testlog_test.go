package testlog

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// TestCallerIsTheTestLine: Caller names the line of the _test.go file
// that called it (through code of the libraries it skips).
func TestCallerIsTheTestLine(t *testing.T) {
	_, _, line, _ := runtime.Caller(0)
	got := Caller(0, "github.com/voicetest-go/voicetest")
	if want := "testlog_test.go:" + strconv.Itoa(line+1); got != want {
		t.Errorf("Caller = %q, want %q", got, want)
	}
}

// TestInLibs: a function is in a library when its name continues the
// library's path with "." (a function of the package) or "/" (a package
// under it), not when it merely starts with the same letters.
func TestInLibs(t *testing.T) {
	libs := []string{"example.com/lib"}
	for fn, want := range map[string]bool{
		"example.com/lib.Run":         true,
		"example.com/lib/sub.Run":     true,
		"example.com/lib.(*T).Method": true,
		"example.com/library.Run":     false,
		"example.com/lib":             false,
		"example.com/other.Run":       false,
	} {
		if got := inLibs(fn, libs); got != want {
			t.Errorf("inLibs(%q) = %v, want %v", fn, got, want)
		}
	}
}

// TestCallStackIsCallersLine: a Stack names the line Caller would have
// named where it was taken, when it is looked up later on another
// goroutine (whose own stack does not reach the test).
func TestCallStackIsCallersLine(t *testing.T) {
	_, _, line, _ := runtime.Caller(0)
	s := CallStack(0, "github.com/voicetest-go/voicetest")
	got := make(chan string)
	go func() { got <- s.Location() }()
	if want := "testlog_test.go:" + strconv.Itoa(line+1); <-got != want || s.Location() != want {
		t.Errorf("Location = %q, want %q", s.Location(), want)
	}
}

// TestStdout: what f prints is returned, and os.Stdout is the process's
// again afterwards.
func TestStdout(t *testing.T) {
	before := os.Stdout
	if got := Stdout(t, func() { fmt.Print("one\ntwo\n") }); got != "one\ntwo\n" {
		t.Errorf("Stdout = %q, want %q", got, "one\ntwo\n")
	}
	if os.Stdout != before {
		t.Error("os.Stdout not restored")
	}
}
