package voicetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/sebdah/goldie/v2"
)

// compareGoldenFiles compares run res with the golden files in dir; update
// is the command that rewrites them ("" when there is none).
func compareGoldenFiles(res *Result, dir string, opts GoldenOptions, virtual bool, update string) error {
	c := newGoldenComparer(opts, virtual)
	var errs []error
	if err := c.file("transcript", filepath.Join(dir, GoldenTranscriptFile), res.GoldenTranscript(opts), update, c.transcriptDiffs); err != nil {
		errs = append(errs, err)
	}
	if err := c.file("timeline", filepath.Join(dir, GoldenTimelineFile), res.GoldenTimeline(opts), update, c.timelineDiffs); err != nil {
		errs = append(errs, err)
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return errors.Join(errs...)
}

// goldenComparer holds the comparison rules of one scenario.
type goldenComparer struct {
	exact     bool
	normalize bool
	abs       time.Duration
	rel       float64
}

func newGoldenComparer(o GoldenOptions, virtual bool) *goldenComparer {
	c := &goldenComparer{exact: o.exact(virtual), normalize: o.NormalizeText}
	c.abs, c.rel = o.tolerance()
	return c
}

// mode describes the comparison for messages.
func (c *goldenComparer) mode() string {
	var s string
	if c.exact {
		s = "exact"
	} else {
		s = "tolerant: times within " + c.toleranceText()
	}
	if c.normalize {
		s += ", texts normalised"
	}
	return s
}

// toleranceText says the tolerance: "±250ms or 20%".
func (c *goldenComparer) toleranceText() string {
	pct := strconv.FormatFloat(100*c.rel, 'f', -1, 32) // 32 bits: 20, not 20.000000000000004
	return fmt.Sprintf("±%v or %s%%", c.abs, pct)
}

func (c *goldenComparer) sameTiming(x, y timing) bool {
	if c.exact {
		return x == y
	}
	d := absDur(time.Duration(x - y))
	longer := max(absDur(time.Duration(x)), absDur(time.Duration(y)))
	return d <= max(c.abs, time.Duration(c.rel*float64(longer)))
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func (c *goldenComparer) sameSpeech(x, y speech) bool {
	if c.normalize {
		return NormalizeText(string(x)) == NormalizeText(string(y))
	}
	return x == y
}

// sameJSON compares payloads as written when exact, and by value (key
// order, number formatting and white space aside) when tolerant.
func (c *goldenComparer) sameJSON(x, y jsonText) bool {
	if x == y || c.exact {
		return x == y
	}
	var vx, vy any
	if json.Unmarshal([]byte(x), &vx) != nil || json.Unmarshal([]byte(y), &vy) != nil {
		return false
	}
	return reflect.DeepEqual(vx, vy)
}

// file compares one golden file with its actual content.
func (c *goldenComparer) file(kind, path string, actual []byte, update string,
	diffs func(path string, golden, actual []byte) ([]GoldenDiff, error)) error {
	ge := &GoldenError{File: path, Kind: kind, Mode: c.mode(), Update: update}
	golden, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		ge.Missing = true
		return ge
	}
	if err != nil {
		ge.Detail = fmt.Sprintf("  cannot read the golden file: %v", err)
		return ge
	}
	if bytes.Contains(golden, []byte("\r\n")) {
		golden = bytes.ReplaceAll(golden, []byte("\r\n"), []byte("\n"))
	}
	if bytes.Equal(golden, actual) {
		return nil // what -update would write: every comparison passes
	}
	ge.Diffs, err = diffs(path, golden, actual)
	if err != nil {
		ge.Detail = fmt.Sprintf("  cannot parse the golden file: %v\n  fix it, or rewrite it with -update", err)
		return ge
	}
	if len(ge.Diffs) == 0 {
		if !c.exact || c.normalize {
			return nil
		}
		ge.Detail = "  the golden file holds the same entries but not in the form -update writes it:\n" + lineDiff(golden, actual)
		return ge
	}
	if c.exact {
		ge.Detail = lineDiff(golden, actual)
	}
	return ge
}

// lineDiff is a unified diff of the two files, at most maxDiffLines long.
func lineDiff(golden, actual []byte) string {
	const maxDiffLines = 60
	// Each line is cut first (clipLines), so that a huge line costs
	// neither a huge diff nor a huge message.
	d := goldie.Diff(diffEngine, clipLines(actual), clipLines(golden))
	d = strings.Replace(d, "--- Expected", "--- golden", 1)
	d = strings.Replace(d, "+++ Actual", "+++ actual", 1)
	lines := strings.Split(strings.TrimRight(d, "\n"), "\n")
	if len(lines) > maxDiffLines {
		lines = append(lines[:maxDiffLines], fmt.Sprintf("... (%d more lines)", len(lines)-maxDiffLines))
	}
	return "  " + strings.Join(lines, "\n  ")
}

func (c *goldenComparer) transcriptDiffs(path string, golden, actual []byte) ([]GoldenDiff, error) {
	g, err := parseTranscript(golden)
	if err != nil {
		return nil, err
	}
	a, err := parseTranscript(actual)
	if err != nil {
		return nil, fmt.Errorf("voicetest: internal error: the rendered transcript does not parse: %w", err)
	}
	if c.sameMessages(g, a) {
		return nil, nil
	}
	var out []GoldenDiff
	for _, d := range c.diff(g, a) {
		gd := GoldenDiff{File: path, Field: goldenFieldKeys[d.field]}
		var gm, am goldenMessage
		if d.ix >= 0 {
			gm = g[d.ix]
			gd.Line, gd.Entry = gm.Line, gm.Role+" message"
		}
		if d.iy >= 0 {
			am = a[d.iy]
			gd.Index, gd.Entry = d.iy+1, am.Role+" message"
		}
		switch {
		case d.ix < 0:
			gd.Actual = clipValue(am.raw, false)
		case d.iy < 0:
			gd.Golden = clipValue(gm.raw, false)
		case d.field == "Role":
			gd.Golden, gd.Actual = clipPair(gm.Role, am.Role, false)
		default:
			gd.Golden, gd.Actual = clipPair(string(gm.Text), string(am.Text), true)
			if c.normalize {
				gd.Note = normalisedNote(string(gm.Text), string(am.Text))
			}
		}
		out = append(out, gd)
	}
	return out, nil
}

func (c *goldenComparer) timelineDiffs(path string, golden, actual []byte) ([]GoldenDiff, error) {
	g, err := parseTimeline(golden)
	if err != nil {
		return nil, err
	}
	a, err := parseTimeline(actual)
	if err != nil {
		return nil, fmt.Errorf("voicetest: internal error: the rendered timeline does not parse: %w", err)
	}
	if !c.exact {
		// On the real clock a latency can be measured as 0 (which the
		// file leaves out) on one run and 1ms on the next: tolerant
		// comparisons take a missing latency as 0ms.
		zeroLatency(g)
		zeroLatency(a)
	}
	if c.sameEvents(g, a) {
		return nil, nil
	}
	var out []GoldenDiff
	for _, d := range c.diff(g, a) {
		gd := GoldenDiff{File: path, Field: goldenFieldKeys[d.field]}
		var ge, ae goldenEvent
		if d.ix >= 0 {
			ge = g[d.ix]
			gd.Line, gd.Entry = ge.Line, ge.entry()
		}
		if d.iy >= 0 {
			ae = a[d.iy]
			gd.Index = d.iy + 1
			if d.ix < 0 {
				gd.Entry = ae.entry()
			}
		}
		switch {
		case d.ix < 0:
			gd.Actual = clipValue(ae.raw, false)
		case d.iy < 0:
			gd.Golden = clipValue(ge.raw, false)
		default:
			gd.Golden, gd.Actual = valuePair(ge, ae, d.field)
			switch d.field {
			case "Gap", "Latency":
				if !c.exact {
					gd.Note = "tolerance " + c.toleranceText()
				}
			case "Text":
				if c.normalize {
					gd.Note = normalisedNote(string(ge.Text), string(ae.Text))
				}
			}
		}
		out = append(out, gd)
	}
	return out, nil
}

func zeroLatency(evs []goldenEvent) {
	for i := range evs {
		if evs[i].Latency == nil {
			evs[i].Latency = new(timing(0))
		}
	}
}

// sameMessages and sameEvents are diff's verdict without its alignment:
// the common case, a match, needs none. They compare with messageFields
// and eventFields, on a buffer on the stack (no allocation);
// TestSameEventsCoversEveryField keeps those in step with the fields.
func (c *goldenComparer) sameMessages(g, a []goldenMessage) bool {
	if len(g) != len(a) {
		return false
	}
	var buf [goldenMessageLeaves]string
	for i := range g {
		if len(c.messageFields(&g[i], &a[i], buf[:0])) > 0 {
			return false
		}
	}
	return true
}

func (c *goldenComparer) sameEvents(g, a []goldenEvent) bool {
	if len(g) != len(a) {
		return false
	}
	var buf [goldenEventLeaves]string
	for i := range g {
		if len(c.eventFields(&g[i], &a[i], buf[:0])) > 0 {
			return false
		}
	}
	return true
}

// normalisedNote shows two texts as NormalizeText makes them, clipped.
func normalisedNote(golden, actual string) string {
	g, a := clipPair(NormalizeText(golden), NormalizeText(actual), true)
	return "normalised: " + g + " vs " + a
}

// valuePair renders field f of the golden and the actual event as the
// golden file writes it, each clipped around their first difference
// (clipPair).
func valuePair(g, a goldenEvent, f string) (string, string) {
	switch f {
	case "Text":
		if g.Text == "" || a.Text == "" {
			return clipValue(g.value(f), false), clipValue(a.value(f), false)
		}
		return clipPair(string(g.Text), string(a.Text), true)
	case "Args":
		return clipPair(string(g.Args), string(a.Args), false)
	case "Result":
		return clipPair(string(g.Result), string(a.Result), false)
	case "Data":
		return clipPair(string(g.Data), string(a.Data), false)
	case "ArgsRaw":
		return rawPair(g.ArgsRaw, a.ArgsRaw)
	case "ResultRaw":
		return rawPair(g.ResultRaw, a.ResultRaw)
	case "DataRaw":
		return rawPair(g.DataRaw, a.DataRaw)
	case "Tool":
		return clipPair(g.Tool, a.Tool, false)
	case "Type":
		return clipPair(string(g.Type), string(a.Type), false)
	}
	return g.value(f), a.value(f)
}

// rawPair is clipPair for fields written quoted when not empty.
func rawPair(g, a string) (string, string) {
	if g == "" || a == "" {
		return clipValue(quoteNonEmpty(g), false), clipValue(quoteNonEmpty(a), false)
	}
	return clipPair(g, a, true)
}

// value renders field f of e as the golden file writes it; for the gap,
// the offset and the gap. Callers that show it clip it (valuePair).
func (e goldenEvent) value(f string) string {
	switch f {
	case "Gap":
		return fmt.Sprintf("%s (%dms after the previous event)", fmtGoldenOffset(e.At), time.Duration(e.Gap).Milliseconds())
	case "Type":
		return string(e.Type)
	case "Turn":
		return strconv.Itoa(e.Turn)
	case "Text":
		if e.Text == "" {
			return ""
		}
		return strconv.Quote(string(e.Text))
	case "Tool":
		return e.Tool
	case "Args":
		return string(e.Args)
	case "ArgsRaw":
		return quoteNonEmpty(e.ArgsRaw)
	case "Result":
		return string(e.Result)
	case "ResultRaw":
		return quoteNonEmpty(e.ResultRaw)
	case "Data":
		return string(e.Data)
	case "DataRaw":
		return quoteNonEmpty(e.DataRaw)
	case "IsError":
		return strconv.FormatBool(e.IsError)
	case "Latency":
		if e.Latency == nil {
			return ""
		}
		return fmt.Sprintf("%dms", time.Duration(*e.Latency).Milliseconds())
	case "Duration":
		if e.Duration == 0 {
			return ""
		}
		return fmt.Sprintf("%dms", e.Duration.Milliseconds())
	}
	return ""
}

func quoteNonEmpty(s string) string {
	if s == "" {
		return ""
	}
	return strconv.Quote(s)
}

// entryDiff is one difference between golden and actual entries: the
// entries' positions (-1 for none: an entry inserted or removed) and the
// field that differs ("" for a whole entry). An entry changed in several
// fields gives one entryDiff a field, in the fields' order.
type entryDiff struct {
	ix, iy int
	field  string
}

// diff compares golden and actual entries ([]goldenMessage or
// []goldenEvent, both of one type) and returns the differences in order:
// entries aligned by editScript, each changed entry's differing fields
// (Line, At and the unexported fields ignored; timings, speech and JSON
// compared by sameTiming, sameSpeech and sameJSON).
// golden_align_oracle_test.go checks it against go-cmp's cmp.Equal with
// the options the comparison used before.
func (c *goldenComparer) diff(golden, actual any) []entryDiff {
	switch g := golden.(type) {
	case []goldenMessage:
		return diffEntries(g, actual.([]goldenMessage), goldenMessageLeaves, c.messageFields)
	case []goldenEvent:
		return diffEntries(g, actual.([]goldenEvent), goldenEventLeaves, c.eventFields)
	}
	panic(fmt.Sprintf("voicetest: internal error: golden entries of type %T", golden))
}

// diffEntries aligns golden with actual; fields appends the names of the
// fields in which two entries differ, and leaves is how many fields an
// entry's comparison compares (as go-cmp counted them, ignored ones not,
// to judge whether two entries are alike enough to be shown as one
// changed).
func diffEntries[E any](golden, actual []E, leaves int, fields func(x, y *E, out []string) []string) []entryDiff {
	var buf []string
	alike := func(ix, iy int) likeness {
		buf = fields(&golden[ix], &actual[iy], buf[:0])
		return likeness{same: leaves - len(buf), diff: len(buf)}
	}
	var out []entryDiff
	ix, iy := 0, 0
	for _, e := range editScript(len(golden), len(actual), alike) {
		switch e {
		case editSame:
			ix, iy = ix+1, iy+1
		case editRemoved:
			out = append(out, entryDiff{ix: ix, iy: -1})
			ix++
		case editInserted:
			out = append(out, entryDiff{ix: -1, iy: iy})
			iy++
		case editChanged:
			for _, f := range fields(&golden[ix], &actual[iy], buf[:0]) {
				out = append(out, entryDiff{ix: ix, iy: iy, field: f})
			}
			ix, iy = ix+1, iy+1
		}
	}
	return out
}

// goldenMessageLeaves and goldenEventLeaves count the fields that
// messageFields and eventFields compare: all but Line, At and the
// unexported ones (TestSameEventsCoversEveryField pins the structs'
// fields; TestGoldenDiffFixedCases, where entries stop being alike
// enough to be shown as one changed).
const (
	goldenMessageLeaves = 2
	goldenEventLeaves   = 14
)

// messageFields appends the fields in which messages x and y differ.
func (c *goldenComparer) messageFields(x, y *goldenMessage, out []string) []string {
	if x.Role != y.Role {
		out = append(out, "Role")
	}
	if !c.sameSpeech(x.Text, y.Text) {
		out = append(out, "Text")
	}
	return out
}

// eventFields appends the fields in which events x and y differ, in the
// struct's order (Line and At are not compared: Gap is).
func (c *goldenComparer) eventFields(x, y *goldenEvent, out []string) []string {
	if !c.sameTiming(x.Gap, y.Gap) {
		out = append(out, "Gap")
	}
	if x.Type != y.Type {
		out = append(out, "Type")
	}
	if x.Turn != y.Turn {
		out = append(out, "Turn")
	}
	if !c.sameSpeech(x.Text, y.Text) {
		out = append(out, "Text")
	}
	if x.Tool != y.Tool {
		out = append(out, "Tool")
	}
	if !c.sameJSON(x.Args, y.Args) {
		out = append(out, "Args")
	}
	if x.ArgsRaw != y.ArgsRaw {
		out = append(out, "ArgsRaw")
	}
	if !c.sameJSON(x.Result, y.Result) {
		out = append(out, "Result")
	}
	if x.ResultRaw != y.ResultRaw {
		out = append(out, "ResultRaw")
	}
	if x.IsError != y.IsError {
		out = append(out, "IsError")
	}
	if !c.sameJSON(x.Data, y.Data) {
		out = append(out, "Data")
	}
	if x.DataRaw != y.DataRaw {
		out = append(out, "DataRaw")
	}
	if (x.Latency == nil) != (y.Latency == nil) || (x.Latency != nil && !c.sameTiming(*x.Latency, *y.Latency)) {
		out = append(out, "Latency")
	}
	if x.Duration != y.Duration {
		out = append(out, "Duration")
	}
	return out
}
