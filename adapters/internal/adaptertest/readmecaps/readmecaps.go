// Package readmecaps checks the README's table of the adapters'
// capabilities ("A five-minute tour", step 2) against what each adapter's
// Capabilities returns. Each adapter's tests call Check with a Conn they
// connected, so no test binary links every adapter. It imports only the
// standard library and package voicetest, so that the handler's tests,
// which link no wire library, can use it too. Only tests import it.
package readmecaps

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/voicetest"
)

// capsTableHeader opens the README's capabilities table ("A five-minute
// tour", step 2).
const capsTableHeader = "| adapter | wire audio in → out |"

// capsColumn returns the Capabilities field that a boolean column of the
// capabilities table states, and false for a column it does not know.
func capsColumn(col string, c voicetest.Capabilities) (value, known bool) {
	switch col {
	case "agent transcripts":
		return c.StreamingTranscripts, true
	case "end of turn":
		return c.TurnEnd, true
	case "detects end of speech":
		return c.NativeVAD, true
	case "native interrupt":
		return c.NativeInterrupt, true
	case "DTMF":
		return c.DTMF, true
	case "text":
		return c.Text, true
	case "tool events":
		return c.ToolEvents, true
	}
	return false, false
}

// The columns of the capabilities table that are not booleans.
const (
	capsKeyColumn    = "adapter"
	capsFormatColumn = "wire audio in → out"
)

// capsTable is the parsed capabilities table: its header and its rows by
// their first cell, as written ("`pipecat`, protobuf").
type capsTable struct {
	header []string
	rows   map[string][]string
	order  []string
}

// Check checks that the row named row (its first cell as the
// README writes it, e.g. "`pipecat`, protobuf") of the README's
// capabilities table states what caps, the Capabilities of a Conn the
// test connected, returns: each ✓/— cell against its field, the wire
// formats, and that every name the row writes in backticks (an event, an
// option, a mechanism such as `<Play digits>`) appears in the non-test Go
// source of the package under test (the test's working directory).
//
// conds are the conditions the Conn was made under, as the row names them
// ("RTVI", "TurnDetection", "text mode", "CallerMarks"): a cell "with X"
// or "X" is then true only when X is among conds, and "✓ (not with X)" or
// "✓ (not X)" false when it is. A condition the row does not mention is
// an error, so that a test cannot pass one that has no effect.
func Check(t testing.TB, row string, caps voicetest.Capabilities, conds ...string) {
	t.Helper()
	readme, err := readREADME()
	if err != nil {
		t.Fatalf("README capabilities table, row %s: %v", row, err)
	}
	source, err := packageSource(".")
	if err != nil {
		t.Fatalf("README capabilities table, row %s: reading the package's source: %v", row, err)
	}
	for _, p := range checkREADMECaps(readme, source, row, caps, conds) {
		t.Error(p)
	}
}

// checkREADMECaps returns what is wrong with README's row for caps, one
// message per problem, each naming the row, the column, the README's cell
// and the code's value.
func checkREADMECaps(readme []byte, source, row string, caps voicetest.Capabilities, conds []string) []string {
	tab, err := parseCapsTable(readme)
	if err != nil {
		return []string{err.Error()}
	}
	cells, ok := tab.rows[row]
	if !ok {
		return []string{fmt.Sprintf("README.md's capabilities table has no row %s (its rows: %s); add one saying what %s's Capabilities() returns",
			row, strings.Join(tab.order, "; "), caps.Adapter)}
	}
	var probs []string
	bad := func(col, cell, format string, args ...any) {
		probs = append(probs, fmt.Sprintf("README.md capabilities table, row %s, column %q: README says %q, but %s",
			row, col, cell, fmt.Sprintf(format, args...)))
	}
	whole := strings.ReplaceAll(strings.Join(cells, " "), "`", "")
	for _, c := range conds {
		if !strings.Contains(whole, c) {
			probs = append(probs, fmt.Sprintf("README.md capabilities table, row %s: the test passes condition %q, which the row does not mention", row, c))
		}
	}
	for i, col := range tab.header {
		if i == 0 || i >= len(cells) {
			continue
		}
		cell := cells[i]
		if col == capsFormatColumn {
			if msg := checkFormats(cell, caps, conds); msg != "" {
				bad(col, cell, "%s", msg)
			}
		} else {
			want, err := cellValue(cell, conds)
			if err != nil {
				bad(col, cell, "%v", err)
			} else if got, _ := capsColumn(col, caps); got != want {
				bad(col, cell, "Capabilities() returns %v for it (conditions %q)", got, conds)
			}
		}
		for _, name := range backticked(cell) {
			if !strings.Contains(source, name) {
				bad(col, cell, "%q appears nowhere in the package's source", name)
			}
		}
	}
	return probs
}

// parseCapsTable finds and parses the capabilities table.
func parseCapsTable(readme []byte) (capsTable, error) {
	i := bytes.Index(readme, []byte(capsTableHeader))
	if i < 0 {
		return capsTable{}, fmt.Errorf("README.md has no capabilities table (a line starting %q)", capsTableHeader)
	}
	lines := strings.Split(string(readme[i:]), "\n")
	tab := capsTable{header: splitRow(lines[0]), rows: map[string][]string{}}
	if tab.header[0] != capsKeyColumn {
		return capsTable{}, fmt.Errorf("README.md capabilities table: first column %q, want %q", tab.header[0], capsKeyColumn)
	}
	for _, col := range tab.header[1:] {
		if _, ok := capsColumn(col, voicetest.Capabilities{}); !ok && col != capsFormatColumn {
			return capsTable{}, fmt.Errorf("README.md capabilities table: column %q is not one this check knows; teach readmecaps' capsColumn what it states", col)
		}
	}
	for n, line := range lines[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := splitRow(line)
		if len(cells) != len(tab.header) {
			return capsTable{}, fmt.Errorf("README.md capabilities table, row %d (%q): %d cells, the header has %d", n+1, line, len(cells), len(tab.header))
		}
		if _, dup := tab.rows[cells[0]]; dup {
			return capsTable{}, fmt.Errorf("README.md capabilities table: two rows %s", cells[0])
		}
		tab.rows[cells[0]] = cells
		tab.order = append(tab.order, cells[0])
	}
	return tab, nil
}

// splitRow splits a Markdown table row into its trimmed cells.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	cells := strings.Split(line, "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

// cellValue returns what a boolean cell states under conds.
func cellValue(cell string, conds []string) (bool, error) {
	plain := strings.ReplaceAll(cell, "`", "")
	switch {
	case strings.HasPrefix(plain, "✓"):
		// The exception of a ✓ cell: "(not with X)" or "(not X)".
		if m := regexp.MustCompile(`\(not (?:with )?([^)]+)\)`).FindStringSubmatch(plain); m != nil && hasCond(conds, m[1]) {
			return false, nil
		}
		return true, nil
	case strings.HasPrefix(plain, "—"):
		return false, nil
	case strings.HasPrefix(plain, "with "):
		return hasCond(conds, strings.TrimPrefix(plain, "with ")), nil
	case plain == "":
		return false, errors.New("the cell is empty; write ✓, —, or the condition (\"with X\")")
	default:
		return hasCond(conds, plain), nil
	}
}

func hasCond(conds []string, c string) bool {
	for _, x := range conds {
		if x == strings.TrimSpace(c) {
			return true
		}
	}
	return false
}

// encoding returns AudioFormat's name of a wire encoding as the README
// writes it, or "".
func encoding(readme string) string {
	switch readme {
	case "PCM16":
		return "pcm16"
	case "µ-law":
		return "mulaw"
	case "Opus":
		return "opus"
	}
	return ""
}

// checkFormats checks the "wire audio in → out" cell against caps'
// formats, returning what is wrong or "".
func checkFormats(cell string, caps voicetest.Capabilities, conds []string) string {
	got := fmt.Sprintf("Capabilities() returns %s %d Hz → %s %d Hz (Audio %v)",
		caps.InputFormat.Encoding, caps.InputFormat.Rate, caps.OutputFormat.Encoding, caps.OutputFormat.Rate, caps.Audio)
	plain := strings.ReplaceAll(cell, "`", "")
	if m := regexp.MustCompile(`\(([^)]+)\)$`).FindStringSubmatch(plain); m != nil && strings.Contains(m[1], "mode") {
		// "session rate (audio mode)": wire audio only in that mode.
		if on := hasCond(conds, m[1]); on != caps.Audio {
			return fmt.Sprintf("%s under conditions %q", got, conds)
		}
		if !caps.Audio {
			if caps.InputFormat != (voicetest.AudioFormat{}) || caps.OutputFormat != (voicetest.AudioFormat{}) {
				return got + ", formats without audio"
			}
			return ""
		}
		plain = strings.TrimSpace(strings.TrimSuffix(plain, m[0]))
	}
	if !caps.Audio {
		return got + ", no audio at all"
	}
	in, out := caps.InputFormat, caps.OutputFormat
	// "ENC R kHz → [ENC] R kHz", with an optional note in parentheses.
	formatCell := regexp.MustCompile(`^(\S+) (\d+) kHz → (?:(\S+) )?(\d+) kHz(?: \(.*\))?$`)
	if m := formatCell.FindStringSubmatch(plain); m != nil {
		outEnc := m[3]
		if outEnc == "" {
			outEnc = m[1]
		}
		inRate, _ := strconv.Atoi(m[2])
		outRate, _ := strconv.Atoi(m[4])
		if in.Encoding != encoding(m[1]) || in.Rate != inRate*1000 || out.Encoding != encoding(outEnc) || out.Rate != outRate*1000 {
			return got
		}
		return ""
	}
	if plain == "session rate" {
		if in.Encoding != "pcm16" || in != out || in.Rate <= 0 {
			return got + ", not PCM16 at one rate both ways"
		}
		return ""
	}
	// "PCM16 at the codec's rate", "PCM16 or µ-law, as the agent's
	// metadata says": the encodings it names, at rates it does not fix.
	var allowed []string
	for _, w := range strings.FieldsFunc(plain, func(r rune) bool { return r == ' ' || r == ',' }) {
		if e := encoding(w); e != "" {
			allowed = append(allowed, e)
		}
	}
	if len(allowed) == 0 {
		return fmt.Sprintf("the check cannot read it (want \"ENC R kHz → [ENC] R kHz\", \"session rate\" or a note naming the encodings, of PCM16, µ-law, Opus); %s", got)
	}
	if !slices.Contains(allowed, in.Encoding) || !slices.Contains(allowed, out.Encoding) || in.Rate <= 0 || out.Rate <= 0 {
		return got
	}
	return ""
}

// backticked returns the names a cell writes in backticks.
func backticked(cell string) []string {
	var names []string
	parts := strings.Split(cell, "`")
	for i := 1; i < len(parts); i += 2 {
		names = append(names, parts[i])
	}
	return names
}

// readREADME returns the module's README.md, found next to go.mod above
// the working directory.
func readREADME() ([]byte, error) {
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return os.ReadFile(filepath.Join(dir, "README.md"))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, errors.New("no go.mod above the working directory, so no README.md")
		}
		dir = parent
	}
}

// packageSource returns the non-test Go source of the package in dir.
func packageSource(dir string) (string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		b.Write(data)
	}
	if b.Len() == 0 {
		return "", fmt.Errorf("no Go source in %s", dir)
	}
	return b.String(), nil
}
