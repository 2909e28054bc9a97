package leakcheck

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
)

// goroutine is one goroutine of a runtime.Stack dump.
type goroutine struct {
	id    uint64
	stack string   // the goroutine's whole entry in the dump
	funcs []string // the functions of its frames, innermost first, and its creator last
}

// alwaysExpected are frames of goroutines that belong to the testing
// framework or the runtime's signal handling, never to the code under test.
var alwaysExpected = []string{
	"testing.tRunner",
	"testing.(*M).",
	"testing.runTests",
	"testing.runFuzzTests",
	"testing.runFuzzing",
	"testing.(*F).Fuzz",
	"os/signal.signal_recv",
	"os/signal.loop",
	"runtime.ensureSigM",
}

// dump returns runtime.Stack of every goroutine, growing its buffer until
// the dump fits.
func dump() []byte {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

// goroutines parses the current goroutine dump.
func goroutines() []goroutine {
	return parseDump(dump())
}

// parseDump splits a runtime.Stack dump into goroutines. Entries it cannot
// parse are kept with id 0, so they are reported rather than lost.
func parseDump(b []byte) []goroutine {
	var gs []goroutine
	for _, entry := range bytes.Split(bytes.TrimSpace(b), []byte("\n\n")) {
		text := string(entry)
		lines := strings.Split(text, "\n")
		g := goroutine{stack: text}
		header, ok := strings.CutPrefix(lines[0], "goroutine ")
		if ok {
			idText, _, _ := strings.Cut(header, " ")
			g.id, _ = strconv.ParseUint(idText, 10, 64)
		}
		for _, line := range lines[1:] {
			if line == "" || line[0] == '\t' {
				continue
			}
			if created, ok := strings.CutPrefix(line, "created by "); ok {
				name, _, _ := strings.Cut(created, " in goroutine ")
				g.funcs = append(g.funcs, name)
				continue
			}
			if i := strings.LastIndexByte(line, '('); i > 0 {
				line = line[:i]
			}
			g.funcs = append(g.funcs, line)
		}
		gs = append(gs, g)
	}
	return gs
}

// snapshot returns the ids of the goroutines running now.
func snapshot() map[uint64]bool {
	ids := map[uint64]bool{}
	for _, g := range goroutines() {
		ids[g.id] = true
	}
	return ids
}

// expected reports whether g may outlive the tests: it runs a test or
// the testing framework, or has a frame that ignore names.
func expected(g goroutine, ignore []string) bool {
	if g.id == 0 {
		return false
	}
	// The creator line is the last entry of funcs when the goroutine was
	// started by another; it does not make a goroutine expected (a
	// goroutine a test started is created by the test's function, which
	// is what a leak looks like), so match frames only.
	frames := g.funcs
	if strings.Contains(g.stack, "\ncreated by ") && len(frames) > 0 {
		frames = frames[:len(frames)-1]
	}
	for _, f := range frames {
		if matchAny(f, alwaysExpected) || matchAny(f, ignore) {
			return true
		}
	}
	return false
}

// matchAny reports whether the function name fn is one of patterns, or
// starts with a pattern that ends in ".".
func matchAny(fn string, patterns []string) bool {
	for _, p := range patterns {
		if fn == p || strings.HasSuffix(p, ".") && strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// formatStacks renders leaked goroutines for a report, the function that
// started each one first.
func formatStacks(gs []goroutine) string {
	var b strings.Builder
	for i, g := range gs {
		if i > 0 {
			b.WriteString("\n\n")
		}
		if idx := strings.Index(g.stack, "\ncreated by "); idx >= 0 {
			creator, _, _ := strings.Cut(g.stack[idx+len("\ncreated by "):], "\n")
			b.WriteString("started by " + creator + ":\n")
		}
		b.WriteString(g.stack)
	}
	return b.String()
}
