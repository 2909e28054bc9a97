package voicetest

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sebdah/goldie/v2"
)

// Golden files.
//
// Scenario compares every scenario's transcript and timeline with two
// golden files under the test package's testdata/golden directory:
//
//	testdata/golden/<TestName>/<subtest>/.../transcript.golden
//	testdata/golden/<TestName>/<subtest>/.../timeline.golden
//
// A scenario whose Config.Name differs from the test's name gets a further
// directory named after it. go test -update (goldie's flag, or
// GOLDIE_UPDATE=1) writes them; see GoldenOptions for how they compare.

// The golden file names inside a scenario's golden directory.
const (
	GoldenTranscriptFile = "transcript.golden"
	GoldenTimelineFile   = "timeline.golden"
)

// Golden comparison defaults.
const (
	// DefaultGoldenDir is where Scenario keeps golden files, relative to
	// the test package's directory (go test's working directory).
	DefaultGoldenDir = "testdata/golden"
	// DefaultGoldenTolerance is the absolute time tolerance of tolerant
	// comparisons. Remote agents vary by tens of milliseconds on loopback
	// and by a few hundred over the internet (network jitter, model
	// queueing); 250 ms is about the smallest change a caller notices in a
	// conversation's rhythm, so a golden catches what a user would hear
	// while a run-to-run wobble passes.
	DefaultGoldenTolerance = 250 * time.Millisecond
	// DefaultGoldenRelativeTolerance is the relative time tolerance of
	// tolerant comparisons: long stretches (a six-second answer, a slow
	// tool) vary in proportion to their length, so a gap may differ by
	// this fraction of itself when that is more than the absolute
	// tolerance.
	DefaultGoldenRelativeTolerance = 0.2
)

// ErrGoldenMismatch matches every *GoldenError that reports a difference
// (or a golden file that cannot be read or parsed), with errors.Is.
var ErrGoldenMismatch = errors.New("voicetest: golden mismatch")

// ErrGoldenMissing matches every *GoldenError that reports a missing
// golden file, with errors.Is.
var ErrGoldenMissing = errors.New("voicetest: golden file missing")

// ErrGoldenNotUpdated matches, with errors.Is, the golden error of a
// scenario run with -update that failed for another reason (a check, a
// verdict, a timeout, a cache miss, a transport error): its golden files
// are not written, since they would record a conversation that went wrong.
var ErrGoldenNotUpdated = errors.New("voicetest: goldens not updated")

// GoldenMatch says how strictly a golden comparison treats times.
type GoldenMatch int

const (
	// GoldenAuto compares exactly when the scenario ran on virtual time
	// (Scenario ran it in a synctest bubble) and tolerantly otherwise.
	// Under Run, whose caller Scenario cannot see, Auto is tolerant.
	GoldenAuto GoldenMatch = iota
	// GoldenExact requires the golden files to be byte-identical to what
	// -update would write.
	GoldenExact
	// GoldenTolerant requires the same events in the same order with the
	// same turns, types and fields, and lets times differ within
	// GoldenOptions.TimeTolerance / RelativeTolerance.
	GoldenTolerant
)

// String names the match mode.
func (m GoldenMatch) String() string {
	switch m {
	case GoldenAuto:
		return "auto"
	case GoldenExact:
		return "exact"
	case GoldenTolerant:
		return "tolerant"
	}
	return fmt.Sprintf("GoldenMatch(%d)", int(m))
}

// GoldenOptions configures the golden comparison of a scenario
// (Config.Golden) or of Result.CompareGolden. The zero value compares
// both files, exactly on virtual time and tolerantly on the real clock.
//
// Exact comparison: the files must be byte-identical to what -update
// writes. Tolerant comparison: each file is parsed back; messages must
// have the same roles and texts in the same order; events must have the
// same types, turns and fields in the same order, and each event's time
// since the previous event, and each latency, may differ from the golden
// by up to max(TimeTolerance, RelativeTolerance × the longer of the two);
// JSON payloads compare by value (key order and number form aside).
// Comparing the gap since the previous event rather than the offset from
// the start keeps one slow turn from failing every event after it. With
// NormalizeText, texts compare after NormalizeText in both modes.
//
// Every text and JSON payload is scrubbed before it is written or
// compared: ISO 8601 date-times become <time>, UUIDs <uuid>, paths under
// the temporary directory <tmp>, and the working directory, the module's
// root and the home directory <pwd>, <module> and <home>; then Scrub
// runs. Tool-call ids are never written.
type GoldenOptions struct {
	// Disable turns golden comparison off for the scenario. With -update
	// -clean, its existing golden files are removed.
	Disable bool
	// Dir is the root of the golden files (default DefaultGoldenDir).
	// Scenario adds the test's name and, when it differs, the
	// scenario's; Result.CompareGolden and WriteGolden use Dir itself.
	Dir string
	// Match chooses exact or tolerant comparison (default GoldenAuto).
	Match GoldenMatch
	// TimeTolerance is the absolute tolerance of tolerant comparisons
	// (default DefaultGoldenTolerance). It does not apply to exact ones.
	TimeTolerance time.Duration
	// RelativeTolerance is the relative tolerance of tolerant comparisons,
	// a fraction in [0, 1) (0 means DefaultGoldenRelativeTolerance; set
	// a tiny value such as 1e-9 to rely on TimeTolerance alone).
	RelativeTolerance float64
	// NormalizeText compares texts after NormalizeText (case,
	// punctuation, numbers in words or digits), for agents whose words
	// come from speech-to-text. The golden files keep the original text.
	NormalizeText bool
	// Ignore lists event types left out of the timeline golden (for
	// example EventAgentLog for an agent whose log lines vary).
	Ignore []EventType
	// Scrub, when set, rewrites every text and JSON string value after the
	// built-in scrubbing, to remove what varies between runs of the agent
	// (order numbers, request ids). It must be deterministic.
	Scrub func(string) string
}

// validate checks o, naming the first invalid field.
func (o GoldenOptions) validate() error {
	switch {
	case o.Match < GoldenAuto || o.Match > GoldenTolerant:
		return fmt.Errorf("voicetest: Config.Golden.Match is %v; use GoldenAuto, GoldenExact or GoldenTolerant", o.Match)
	case o.TimeTolerance < 0:
		return fmt.Errorf("voicetest: Config.Golden.TimeTolerance is %v; use a positive duration or 0 for the default %v", o.TimeTolerance, DefaultGoldenTolerance)
	case o.RelativeTolerance < 0 || o.RelativeTolerance >= 1 || o.RelativeTolerance != o.RelativeTolerance:
		return fmt.Errorf("voicetest: Config.Golden.RelativeTolerance is %v; use a fraction in [0, 1), 0 for the default %v", o.RelativeTolerance, DefaultGoldenRelativeTolerance)
	}
	return nil
}

func (o GoldenOptions) dir() string {
	if o.Dir == "" {
		return DefaultGoldenDir
	}
	return o.Dir
}

func (o GoldenOptions) tolerance() (time.Duration, float64) {
	abs, rel := o.TimeTolerance, o.RelativeTolerance
	if abs == 0 {
		abs = DefaultGoldenTolerance
	}
	if rel == 0 {
		rel = DefaultGoldenRelativeTolerance
	}
	return abs, rel
}

// exact reports whether the comparison is exact for a run on virtual time
// (or not).
func (o GoldenOptions) exact(virtual bool) bool {
	switch o.Match {
	case GoldenExact:
		return true
	case GoldenTolerant:
		return false
	}
	return virtual
}

// GoldenDiff is one difference between a golden file and a scenario.
type GoldenDiff struct {
	// File is the golden file.
	File string
	// Line is the line of the golden file (1-based) that differs, or 0 for
	// an entry only the scenario has.
	Line int
	// Index is the entry's position in the scenario (1-based), or 0 for
	// an entry only the golden file has.
	Index int
	// Entry names the message or event: "agent message", or the event's
	// type and turn ("agent_start_speaking turn=2").
	Entry string
	// Field names what differs, as the file writes it ("text", "latency",
	// "time", "args"); "" when the whole entry is missing or extra.
	Field string
	// Golden and Actual are the field's values as the file writes them
	// ("" when absent); for a missing or extra entry, the whole line.
	Golden, Actual string
	// Note adds context, such as the tolerance that was exceeded.
	Note string
}

// String renders the difference on one line.
func (d GoldenDiff) String() string {
	var b strings.Builder
	switch {
	case d.Line == 0 && d.Index == 0:
		b.WriteString("the entries differ")
	case d.Line == 0:
		fmt.Fprintf(&b, "entry %d (%s): not in the golden file: %s", d.Index, d.Entry, d.Actual)
	case d.Index == 0:
		fmt.Fprintf(&b, "line %d (%s): missing from the scenario: %s", d.Line, d.Entry, d.Golden)
	default:
		fmt.Fprintf(&b, "line %d (%s): %s: golden %s, actual %s", d.Line, d.Entry, d.Field, orNone(d.Golden), orNone(d.Actual))
	}
	if d.Note != "" {
		fmt.Fprintf(&b, " (%s)", d.Note)
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// GoldenError reports that a golden file is missing or differs from the
// scenario. errors.Is matches ErrGoldenMissing or ErrGoldenMismatch.
type GoldenError struct {
	// File is the golden file.
	File string
	// Kind is "transcript" or "timeline".
	Kind string
	// Missing reports that the file does not exist.
	Missing bool
	// Mode describes the comparison ("exact", or the tolerance).
	Mode string
	// Diffs lists the differences, in file order.
	Diffs []GoldenDiff
	// Detail holds what Diffs cannot say: a read or parse error, or a
	// line diff of a file that is not in canonical form.
	Detail string
	// Update is the command that writes the golden file ("" under Run).
	Update string

	// failedRun is set when the scenario also failed for another
	// reason: -update would write no golden file of it, so the message
	// says to fix that failure first rather than offer Update.
	failedRun bool
}

// maxGoldenDiffs bounds the differences an error message lists.
const maxGoldenDiffs = 20

func (e *GoldenError) Error() string {
	var b strings.Builder
	if e.Missing {
		fmt.Fprintf(&b, "voicetest: golden %s file %s does not exist", e.Kind, e.File)
		if e.failedRun {
			b.WriteString("; the scenario failed, and -update writes no golden file of a failed run: fix that failure first")
			if e.Update != "" {
				fmt.Fprintf(&b, ", then create it with: %s", e.Update)
			}
		} else if e.Update != "" {
			fmt.Fprintf(&b, "; create it with: %s", e.Update)
		} else {
			b.WriteString("; write it with Result.WriteGolden, or run the test with -update")
		}
		return b.String()
	}
	fmt.Fprintf(&b, "voicetest: golden %s mismatch: %s (%s comparison)", e.Kind, e.File, e.Mode)
	for i, d := range e.Diffs {
		if i == maxGoldenDiffs {
			fmt.Fprintf(&b, "\n  ... and %d more differences", len(e.Diffs)-i)
			break
		}
		b.WriteString("\n  ")
		b.WriteString(d.String())
	}
	if e.Detail != "" {
		b.WriteString("\n")
		b.WriteString(strings.TrimRight(e.Detail, "\n"))
	}
	msg := clipMessage(b.String())
	switch {
	case e.failedRun:
		msg += "\n  the scenario also failed for another reason, which may be what changed it: fix that first (-update writes no golden file of a failed run)"
	case e.Update != "":
		msg += fmt.Sprintf("\n  if the new %s is right, update the golden file: %s", e.Kind, e.Update)
	}
	return msg
}

// markFailedRun sets failedRun on every *GoldenError in err, one or
// joined.
func markFailedRun(err error) {
	switch e := err.(type) {
	case *GoldenError:
		e.failedRun = true
	case interface{ Unwrap() []error }:
		for _, err := range e.Unwrap() {
			markFailedRun(err)
		}
	}
}

// Is reports whether target is ErrGoldenMissing (for a missing file) or
// ErrGoldenMismatch (otherwise).
func (e *GoldenError) Is(target error) bool {
	if e.Missing {
		return target == ErrGoldenMissing
	}
	return target == ErrGoldenMismatch
}

// goldenRun returns the run whose transcript and timeline are golden: the
// first one under Repeat (documented on Config.Golden), else res.
func goldenRun(res *Result) *Result {
	if len(res.Runs) > 0 && res.Runs[0] != nil {
		return res.Runs[0]
	}
	return res
}

// GoldenTranscript returns the transcript as its golden file holds it: one
// "role: text" line per message, in order, scrubbed as GoldenOptions
// describes, with backslashes and line breaks inside a text escaped (\\,
// \n, \r). Under Repeat it is the first run's.
func (res *Result) GoldenTranscript(opts GoldenOptions) []byte {
	return renderTranscript(goldenRun(res), newScrubber(opts))
}

// GoldenTimeline returns the timeline as its golden file holds it: one
// event per line, in order, as
//
//	+001450ms agent_start_speaking turn=1 latency=250ms
//
// an offset in milliseconds from the start of the scenario (six digits or
// more), the event type, the turn, then the event's fields among, in this
// order: text="..." (a Go-quoted string), tool=name (quoted when it is
// not a plain word), args=JSON, args_raw="..." (arguments that are not
// valid JSON), result=JSON, result_raw="...", error=true, data=JSON,
// data_raw="...", latency=Nms, duration=Nms. JSON is compact with its
// object keys sorted. Events of the types in opts.Ignore are left out,
// and texts are scrubbed as GoldenOptions describes. Under Repeat it is
// the first run's.
func (res *Result) GoldenTimeline(opts GoldenOptions) []byte {
	return renderTimeline(goldenRun(res), opts, newScrubber(opts))
}

// WriteGolden writes the golden transcript and timeline files of res into
// dir (created if needed), atomically; it is what -update does, for
// results of Run.
//
// Each file is written to a temporary file in dir, synced, and renamed
// over the golden file, and dir is synced (where the platform can), so a
// crash leaves every golden file whole: the old one or the new one. A
// crash between the two files can leave a new transcript beside the old
// timeline; the next comparison reports that as a mismatch.
func (res *Result) WriteGolden(dir string, opts GoldenOptions) error {
	return res.writeGolden(dir, opts, nil)
}

// writeGolden is WriteGolden with a crash-test hook (see
// writeFileAtomicHook).
func (res *Result) writeGolden(dir string, opts GoldenOptions, midWrite func(tmp string)) error {
	if err := opts.validate(); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{
		{GoldenTranscriptFile, res.GoldenTranscript(opts)},
		{GoldenTimelineFile, res.GoldenTimeline(opts)},
	} {
		if err := writeFileAtomicHook(filepath.Join(dir, f.name), f.data, midWrite); err != nil {
			return fmt.Errorf("updating the golden files: %w", err)
		}
	}
	return nil
}

// CompareGolden compares res with the golden files in dir and returns nil
// when they match, else an error joining one *GoldenError per file that is
// missing or differs. Run never compares goldens itself; this is how to
// check a Run result. Under Run, GoldenAuto is tolerant; set opts.Match to
// GoldenExact for a Run made inside a synctest bubble.
func (res *Result) CompareGolden(dir string, opts GoldenOptions) error {
	if err := opts.validate(); err != nil {
		return err
	}
	return compareGoldenFiles(res, dir, opts, res.virtualTime, "")
}

// AssertGolden compares res with its golden files as Scenario does, and
// reports a difference with t.Error: the files are under opts.Dir, then
// t's name, then res.Name when it differs from t's name; go test -update
// writes them first (and -clean removes stale ones). Use it for a result
// of Run made in a test; Scenario calls it itself. Only results made by
// Scenario know whether they ran on virtual time, so under GoldenAuto
// other results compare tolerantly.
func AssertGolden(t testing.TB, res *Result, opts GoldenOptions) {
	t.Helper()
	if err := checkGolden(t, res, opts, goldenFlagsFromCommandLine()); err != nil {
		t.Error(err)
	}
}

// goldenFlags are goldie's -update and -clean.
type goldenFlags struct{ update, clean bool }

// goldenFlagsFromCommandLine reads goldie's flags, which goldie registers
// on the default flag set when this package is imported; the environment
// variables goldie reads serve when the flags are missing (a program that
// replaced flag.CommandLine).
func goldenFlagsFromCommandLine() goldenFlags {
	return goldenFlags{update: boolFlag("update", "GOLDIE_UPDATE"), clean: boolFlag("clean", "GOLDIE_CLEAN")}
}

func boolFlag(name, env string) bool {
	if f := flag.Lookup(name); f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			if b, ok := g.Get().(bool); ok {
				return b
			}
		}
	}
	switch strings.ToLower(os.Getenv(env)) {
	case "1", "true", "t":
		return true
	}
	return false
}

// checkGolden is AssertGolden with the flags given and the error returned.
func checkGolden(t testing.TB, res *Result, opts GoldenOptions, fl goldenFlags) error {
	if err := opts.validate(); err != nil {
		return err
	}
	dir, err := goldenDir(opts.dir(), t.Name(), res.Name)
	if err != nil {
		return err
	}
	if opts.Disable {
		if fl.update && fl.clean {
			for _, f := range []string{GoldenTranscriptFile, GoldenTimelineFile} {
				if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return fmt.Errorf("voicetest: -clean: removing the golden file of a scenario with Golden.Disable: %w", err)
				}
			}
		}
		return nil
	}
	if fl.update {
		if err := notUpdatable(res); err != nil {
			return err
		}
		if fl.clean {
			if err := cleanGoldenDir(dir); err != nil {
				return err
			}
		}
		if err := res.updateGolden(dir, opts); err != nil {
			return fmt.Errorf("voicetest: -update: %w", err)
		}
	}
	err = compareGoldenFiles(res, dir, opts, res.virtualTime, updateCommand(t.Name()))
	if err != nil && notUpdatable(res) != nil {
		markFailedRun(err)
	}
	return err
}

// notUpdatable says why -update must not write the goldens of res: the
// run failed for another reason. Under Repeat the goldens are the first
// run's, which must have passed too.
func notUpdatable(res *Result) error {
	switch g := goldenRun(res); {
	case res.Err != nil:
		return fmt.Errorf("%w: the scenario failed: %v; fix that, then run -update again", ErrGoldenNotUpdated, res.Err)
	case !res.Success:
		return fmt.Errorf("%w: the scenario failed (%s); fix that, then run -update again", ErrGoldenNotUpdated, res.Status)
	case g != res && g.Err != nil:
		return fmt.Errorf("%w: the first run, which the golden files record, failed: %v; run -update again when it passes", ErrGoldenNotUpdated, g.Err)
	}
	return nil
}

// updateGolden is what -update does: it writes each golden file of res
// that the run does not already match (as the comparison would judge it),
// so a rerun whose times moved within the tolerance leaves the files, and
// their diffs, alone.
func (res *Result) updateGolden(dir string, opts GoldenOptions) error {
	c := newGoldenComparer(opts, res.virtualTime)
	for _, f := range []struct {
		kind, name string
		data       []byte
		diffs      func(path string, golden, actual []byte) ([]GoldenDiff, error)
	}{
		{"transcript", GoldenTranscriptFile, res.GoldenTranscript(opts), c.transcriptDiffs},
		{"timeline", GoldenTimelineFile, res.GoldenTimeline(opts), c.timelineDiffs},
	} {
		path := filepath.Join(dir, f.name)
		if c.file(f.kind, path, f.data, "", f.diffs) == nil {
			continue
		}
		if err := writeFileAtomicHook(path, f.data, nil); err != nil {
			return fmt.Errorf("updating the golden files: %w", err)
		}
	}
	return nil
}

// cleanGoldenDir removes the *.golden files directly in dir that a
// scenario does not write: what -clean does before -update rewrites the
// others. Subdirectories (subtests, other scenarios) are left alone.
func cleanGoldenDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("voicetest: -clean: %w", err)
	}
	for _, e := range ents {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasSuffix(n, ".golden") && n != GoldenTranscriptFile && n != GoldenTimelineFile {
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				return fmt.Errorf("voicetest: -clean: %w", err)
			}
		}
	}
	return nil
}

// updateCommand returns the go test command that rewrites the golden files
// of the test named name.
func updateCommand(name string) string {
	return fmt.Sprintf("go test %s -run '^%s$' -update", packageArg(), runPattern(name))
}

// packageArg returns the test package's directory relative to its module
// root ("./voicetest"), or "." when the module root cannot be found.
func packageArg() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	root := moduleRoot(wd)
	if root == "" {
		return "."
	}
	rel, err := filepath.Rel(root, wd)
	if err != nil || rel == "." {
		return "."
	}
	return "./" + filepath.ToSlash(rel)
}

// moduleRoot returns the nearest directory at or above dir that holds a
// go.mod, or "".
func moduleRoot(dir string) string {
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// diffEngine renders the line diff of a file that differs only in form.
const diffEngine = goldie.ClassicDiff
