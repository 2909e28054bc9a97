package cassette

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/voicetest-go/voicetest/voicetest/cache"
)

// MissError is returned by Connect in replay mode when the test has no
// cassette. It names the test, the cassette that is missing and the
// command that records it.
type MissError struct {
	// Test is the test's name.
	Test string
	// Path is the cassette's index file.
	Path string
	// Command records the cassette when run from the module root, with
	// the agent reachable.
	Command string
}

// Error says what is missing and how to record it.
func (e *MissError) Error() string {
	return "voicetest/cassette: no cassette for test " + e.Test + " in replay mode" +
		"\n\tmissing: " + e.Path +
		"\n\trecord it, with the agent reachable, with: " + e.Command
}

// CorruptError reports a cassette that cannot be replayed: its index does
// not parse or is inconsistent, or a body file is missing or does not
// match the index. Replay never serves a conversation from it.
type CorruptError struct {
	// Path is the cassette's index file.
	Path string
	// Reason says what is wrong.
	Reason string
	// Command records the cassette again.
	Command string
}

// Error says what is wrong and how to record the cassette again.
func (e *CorruptError) Error() string {
	return "voicetest/cassette: cassette " + e.Path + " cannot be replayed: " + e.Reason +
		"\n\trecord it again, with the agent reachable, with: " + e.Command
}

// DivergenceError reports that the caller, in replay, did something else
// than what the cassette recorded: the script, the caller's voice or
// text, or the scenario's settings changed since the recording. The
// conversation cannot go on from the cassette; the agent's answer to what
// was sent was never recorded.
type DivergenceError struct {
	// Path is the cassette's index file.
	Path string
	// Conversation numbers the conversation in the cassette (1 for the
	// first Connect of the test).
	Conversation int
	// Turn is the caller's turn of the cassette where the caller diverged
	// (turn 0 is the connection); Turns is how many it recorded.
	Turn, Turns int
	// Recorded is what the cassette holds at that turn; Sent what the
	// caller did instead.
	Recorded, Sent string
	// Command records the cassette again.
	Command string
}

// Error names the turn, what was recorded and what was sent, and the
// command that re-records.
func (e *DivergenceError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "voicetest/cassette: the caller diverged from the cassette %s at its caller turn %d of %d (conversation %d)", e.Path, e.Turn, e.Turns, e.Conversation)
	b.WriteString("\n\trecorded: " + e.Recorded)
	b.WriteString("\n\tsent:     " + e.Sent)
	b.WriteString("\n\tthe script, the caller or the scenario's settings changed since the recording; record it again, with the agent reachable, with: " + e.Command)
	return b.String()
}

// rerecordCommand returns the command that records the cassette in dir
// (relative to the package directory) again for test: remove it, and run
// the test in record mode.
func rerecordCommand(dir, test string) string {
	return "rm -r " + shellQuote(filepath.ToSlash(moduleRel(dir))) + " && " + cache.RecordCommand(test)
}

// moduleRel returns dir (relative to the working directory, the test's
// package) relative to the module root, as the go test command of
// cache.RecordCommand is; or dir itself when there is no module root.
func moduleRel(dir string) string {
	wd, err := os.Getwd()
	if err != nil || filepath.IsAbs(dir) {
		return dir
	}
	for root := wd; ; {
		if fi, err := os.Stat(filepath.Join(root, "go.mod")); err == nil && !fi.IsDir() {
			if rel, err := filepath.Rel(root, filepath.Join(wd, dir)); err == nil {
				return rel
			}
			return dir
		}
		parent := filepath.Dir(root)
		if parent == root {
			return dir
		}
		root = parent
	}
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=+,~") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
