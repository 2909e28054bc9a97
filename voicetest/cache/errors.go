package cache

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// MissError is returned in Replay mode when no entry is stored for a key.
// Its message names the test, the provider, a summary of the request, the
// entry file that is missing and the exact command that records it.
type MissError struct {
	// Test is the name of the test that asked, if known.
	Test string
	// Kind, Provider and Model come from the key.
	Kind, Provider, Model string
	// Summary is a one-line description of the request.
	Summary string
	// Inputs lists every input of the key, each with the environment
	// variable that chose it, if one did (Key.Env).
	Inputs string
	// Digest is the key's digest.
	Digest string
	// Path is the entry file that was looked for.
	Path string
	// Command records the missing entry when run from the module root.
	Command string
}

// Error implements error.
func (e *MissError) Error() string {
	var b strings.Builder
	b.WriteString("voicetest/cache: no recorded ")
	b.WriteString(e.Kind)
	b.WriteString(" answer from ")
	b.WriteString(e.Provider)
	if e.Model != "" {
		b.WriteString(" (model ")
		b.WriteString(e.Model)
		b.WriteString(")")
	}
	if e.Test != "" {
		b.WriteString(" for test ")
		b.WriteString(e.Test)
	}
	b.WriteString(" in replay mode\n\trequest: ")
	b.WriteString(e.Summary)
	if e.Inputs != "" {
		b.WriteString("\n\tinputs: ")
		b.WriteString(e.Inputs)
	}
	b.WriteString("\n\tmissing: ")
	b.WriteString(e.Path)
	b.WriteString("\n\trecord it with: ")
	b.WriteString(e.Command)
	return b.String()
}

// CorruptError reports an entry or body file that cannot be trusted: it is
// truncated, does not parse, or does not match its recorded size and hash.
// The cache never answers from such an entry.
type CorruptError struct {
	// Path is the damaged file.
	Path string
	// Reason says what is wrong with it.
	Reason string
	// Command re-records the entry, after the file is removed, when run
	// from the module root.
	Command string
	// Err is the underlying error, if any.
	Err error
}

// Error implements error.
func (e *CorruptError) Error() string {
	msg := "voicetest/cache: corrupt cache file " + e.Path + ": " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg + "\n\tremove it (and its entry .json) and re-record with: " + e.Command
}

// Unwrap returns the underlying error.
func (e *CorruptError) Unwrap() error { return e.Err }

// InvalidError reports an answer that its check rejected (DoJSONChecked):
// a fresh one, which is not stored, or one read from an entry recorded
// before the check existed, which is not served. In record mode such an
// entry is recorded again; in replay mode Command does that.
type InvalidError struct {
	// Kind, Provider and Model come from the key.
	Kind, Provider, Model string
	// Path is the entry file.
	Path string
	// Stored reports that the answer was read from Path; otherwise it was
	// just produced, and was not stored.
	Stored bool
	// Err is what the check said.
	Err error
	// Command records the entry again, when run from the module root.
	Command string
}

// Error says what was wrong with which answer, and what to run.
func (e *InvalidError) Error() string {
	what := e.Kind + " answer from " + e.Provider
	if e.Model != "" {
		what += " (model " + e.Model + ")"
	}
	if e.Stored {
		return "voicetest/cache: the recorded " + what + " in " + e.Path + " is not usable: " + e.Err.Error() +
			"\n\trecord it again (record mode replaces an unusable entry) with: " + e.Command
	}
	return "voicetest/cache: the " + what + " is not usable: " + e.Err.Error() +
		"; it was not stored\n\task again with: " + e.Command
}

// Unwrap returns what the check said.
func (e *InvalidError) Unwrap() error { return e.Err }

// recordCommand returns the go test command that records the entries of
// test (all tests of the package when test is "") in the package at dir,
// which is the current directory for ForTest. The package path is relative
// to the module root found by walking up to go.mod, so the command is the
// same on every machine.
func recordCommand(test string, flagArg string) string {
	pkg := "."
	if wd, err := os.Getwd(); err == nil {
		if root := moduleRoot(wd); root != "" {
			if rel, err := filepath.Rel(root, wd); err == nil && rel != "." {
				pkg = "./" + filepath.ToSlash(rel)
			}
		}
	}
	cmd := "go test " + pkg
	if test != "" {
		cmd += " -run '" + runPattern(test) + "'"
	}
	return cmd + " " + flagArg
}

func moduleRoot(dir string) string {
	for {
		if fi, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && !fi.IsDir() {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// runPattern returns the -run pattern that selects exactly test, which may
// be a subtest path "TestX/sub/case".
func runPattern(test string) string {
	parts := strings.Split(test, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.ReplaceAll(strings.Join(parts, "/"), "'", `'\''`)
}
