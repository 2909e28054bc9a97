package voicetest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// goldenDir returns the golden directory of the scenario named scenario in
// the test named testName, under root: one sanitised path element per
// element of the test's name, and one more for a scenario not named after
// the test.
func goldenDir(root, testName, scenario string) (string, error) {
	if testName == "" {
		return "", errors.New("voicetest: golden files are named after the test, and this test has no name")
	}
	var elems []string
	for _, part := range strings.Split(testName, "/") {
		elems = append(elems, goldenPathElem(part))
	}
	if scenario != "" && scenario != testName {
		elems = append(elems, goldenPathElem(scenario))
	}
	rel := filepath.Join(elems...)
	if !filepath.IsLocal(rel) {
		// goldenPathElem cannot produce such an element; this guards it.
		return "", fmt.Errorf("voicetest: the golden path %q for test %q escapes %s", rel, testName, root)
	}
	return filepath.Join(root, rel), nil
}

// goldenPathElem turns one element of a test or scenario name into a file
// name that is the same on every system and cannot leave its directory:
// characters other than ASCII letters, digits, '_', '-', '.', '=', '+' and
// ',' become '_', leading and trailing dots become '_', Windows device
// names are avoided, and long names are cut. A name that had to change
// gets a short hash of the original, so that different names stay
// different.
func goldenPathElem(s string) string {
	const maxLen = 80
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9',
			r == '_', r == '-', r == '.', r == '=', r == '+', r == ',':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := []byte(b.String())
	for i := 0; i < len(out) && out[i] == '.'; i++ {
		out[i] = '_'
	}
	for i := len(out) - 1; i >= 0 && out[i] == '.'; i-- {
		out[i] = '_'
	}
	name := string(out)
	if len(name) > maxLen {
		name = name[:maxLen]
	}
	base, _, _ := strings.Cut(strings.ToUpper(name), ".")
	switch base {
	case "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9",
		"LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9":
		name = "_" + name
	}
	if name == "" {
		name = "_"
	}
	if name != s {
		sum := sha256.Sum256([]byte(s))
		name += "~" + hex.EncodeToString(sum[:4])
	}
	return name
}

// scrubber removes what varies between runs from golden texts.
type scrubber struct {
	prefixes []prefixRule
	user     func(string) string
}

// prefixRule replaces the directory from with to; with collapse, the
// whole path under it too (temporary paths hold random names).
type prefixRule struct {
	from, to string
	collapse bool
}

var (
	isoDateTime = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?`)
	uuidPattern = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
)

func newScrubber(opts GoldenOptions) *scrubber {
	s := &scrubber{user: opts.Scrub}
	if tmp := filepath.Clean(os.TempDir()); len(tmp) > 1 {
		s.prefixes = append(s.prefixes, prefixRule{from: tmp, to: "<tmp>", collapse: true})
	}
	if wd, err := os.Getwd(); err == nil && len(wd) > 1 {
		s.prefixes = append(s.prefixes, prefixRule{from: wd, to: "<pwd>"})
		if root := moduleRoot(wd); root != "" && root != wd && len(root) > 1 {
			s.prefixes = append(s.prefixes, prefixRule{from: root, to: "<module>"})
		}
	}
	if home, err := os.UserHomeDir(); err == nil && len(filepath.Clean(home)) > 1 {
		s.prefixes = append(s.prefixes, prefixRule{from: filepath.Clean(home), to: "<home>"})
	}
	// The longest prefix first: the working directory is often under
	// home, and may be under the temporary directory.
	slices.SortStableFunc(s.prefixes, func(a, b prefixRule) int { return len(b.from) - len(a.from) })
	return s
}

// text scrubs one string.
func (s *scrubber) text(v string) string {
	for _, p := range s.prefixes {
		switch {
		case !strings.Contains(v, p.from):
		case p.collapse:
			v = collapsePaths(v, p.from, p.to)
		default:
			v = strings.ReplaceAll(v, p.from, p.to)
		}
	}
	// Both patterns hold a '-': most texts have none, and need no regexp
	// (slow on a long text). ReplaceAllString copies v even when nothing
	// matches: look first.
	if strings.IndexByte(v, '-') >= 0 {
		if isoDateTime.MatchString(v) {
			v = isoDateTime.ReplaceAllString(v, "<time>")
		}
		if uuidPattern.MatchString(v) {
			v = uuidPattern.ReplaceAllString(v, "<uuid>")
		}
	}
	if s.user != nil {
		v = s.user(v)
	}
	return v
}

// collapsePaths replaces every path under dir in v, whole, with repl:
// temporary paths hold random names.
func collapsePaths(v, dir, repl string) string {
	var b strings.Builder
	for {
		i := strings.Index(v, dir)
		if i < 0 {
			b.WriteString(v)
			return b.String()
		}
		b.WriteString(v[:i])
		b.WriteString(repl)
		j := i + len(dir)
		for j < len(v) && !strings.ContainsRune(" \t\r\n\"'`<>|,;()[]{}", rune(v[j])) {
			j++
		}
		v = v[j:]
	}
}

// json renders a JSON payload canonically: compact, object keys sorted,
// numbers as written, string values scrubbed, no HTML escaping. ok is
// false when raw is not valid JSON.
func (s *scrubber) json(raw []byte) (string, bool) {
	if !json.Valid(raw) {
		return "", false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", false
	}
	v = s.jsonValue(v)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", false
	}
	return strings.TrimSuffix(b.String(), "\n"), true
}

func (s *scrubber) jsonValue(v any) any {
	switch v := v.(type) {
	case string:
		return s.text(v)
	case []any:
		for i := range v {
			v[i] = s.jsonValue(v[i])
		}
	case map[string]any:
		for k, e := range v {
			v[k] = s.jsonValue(e)
		}
	}
	return v
}

// escapeLine escapes backslashes and line breaks so that a text stays on
// one line of a golden file.
func escapeLine(s string) string {
	if !strings.ContainsAny(s, "\\\n\r") {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\r", `\r`)
	return r.Replace(s)
}

// unescapeLine undoes escapeLine.
func unescapeLine(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 == len(s) {
			return "", errors.New(`a lone \ at the end of the line (write \\ for a backslash)`)
		}
		i++
		switch s[i] {
		case '\\':
			b.WriteByte('\\')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		default:
			return "", fmt.Errorf(`unknown escape \%c (only \\, \n and \r are used)`, s[i])
		}
	}
	return b.String(), nil
}

func renderTranscript(res *Result, sc *scrubber) []byte {
	var b bytes.Buffer
	for _, m := range res.Transcript {
		b.WriteString(escapeLine(sc.text(string(m.Role))))
		b.WriteString(": ")
		b.WriteString(escapeLine(sc.text(m.DisplayText())))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// plainToken matches the values written without quotes.
var plainToken = regexp.MustCompile(`^[A-Za-z0-9_.:/@+-]+$`)

func renderTimeline(res *Result, opts GoldenOptions, sc *scrubber) []byte {
	var b bytes.Buffer
	for _, e := range res.Timeline {
		if slices.Contains(opts.Ignore, e.Type) {
			continue
		}
		b.WriteString(fmtGoldenOffset(e.At))
		b.WriteByte(' ')
		b.WriteString(string(e.Type))
		fmt.Fprintf(&b, " turn=%d", e.Turn)
		if e.Tool != nil {
			// The tool's name is the event's Text; its id is left out.
			name := sc.text(e.Tool.Name)
			if plainToken.MatchString(name) {
				fmt.Fprintf(&b, " tool=%s", name)
			} else {
				fmt.Fprintf(&b, " tool=%s", strconv.Quote(name))
			}
			// A call shows its arguments, a result its output.
			if e.Type != EventToolResult {
				writeJSONField(&b, sc, "args", e.Tool.Arguments)
			}
			if e.Type != EventToolCall {
				writeJSONField(&b, sc, "result", e.Tool.Result)
			}
			if e.Tool.IsError {
				b.WriteString(" error=true")
			}
		} else if e.Text != "" {
			b.WriteString(" text=")
			b.WriteString(strconv.Quote(sc.text(e.Text)))
		}
		writeJSONField(&b, sc, "data", e.Data)
		if e.Latency != 0 {
			fmt.Fprintf(&b, " latency=%dms", e.Latency.Milliseconds())
		}
		if e.Duration != 0 {
			fmt.Fprintf(&b, " duration=%dms", e.Duration.Milliseconds())
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func writeJSONField(b *bytes.Buffer, sc *scrubber, key string, raw json.RawMessage) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return
	}
	if js, ok := sc.json(raw); ok {
		fmt.Fprintf(b, " %s=%s", key, js)
		return
	}
	fmt.Fprintf(b, " %s_raw=%s", key, strconv.Quote(sc.text(string(raw))))
}

func fmtGoldenOffset(d time.Duration) string {
	ms := d.Milliseconds()
	if ms < 0 {
		return fmt.Sprintf("-%06dms", -ms)
	}
	return fmt.Sprintf("+%06dms", ms)
}

// The parsed forms of golden files, compared field by field
// (goldenComparer.eventFields and messageFields). Their field types name
// the comparison rules: timing within the tolerance, speech
// after NormalizeText when asked, jsonText by value when tolerant.

type (
	timing   time.Duration
	speech   string
	jsonText string
)

// goldenMessage is one line of a transcript golden.
type goldenMessage struct {
	Line int // ignored by the comparison
	Role string
	Text speech
	raw  string
}

// goldenEvent is one line of a timeline golden.
type goldenEvent struct {
	Line int           // ignored by the comparison
	At   time.Duration // ignored: Gap is compared
	// Gap is the time since the previous event (since the start for the
	// first).
	Gap       timing
	Type      EventType
	Turn      int
	Text      speech
	Tool      string
	Args      jsonText
	ArgsRaw   string
	Result    jsonText
	ResultRaw string
	IsError   bool
	Data      jsonText
	DataRaw   string
	Latency   *timing
	Duration  time.Duration
	raw       string
}

// goldenFieldKeys maps goldenEvent fields to the keys the file uses.
var goldenFieldKeys = map[string]string{
	"Gap": "time", "Type": "type", "Turn": "turn", "Text": "text", "Tool": "tool",
	"Args": "args", "ArgsRaw": "args_raw", "Result": "result", "ResultRaw": "result_raw",
	"IsError": "error", "Data": "data", "DataRaw": "data_raw", "Latency": "latency", "Duration": "duration",
	"Role": "role",
}

// entry names the event in a GoldenDiff.
func (e goldenEvent) entry() string { return fmt.Sprintf("%s turn=%d", e.Type, e.Turn) }

// parseLines splits a golden file into lines, accepting CRLF line ends.
func parseLines(data []byte) []string {
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func parseTranscript(data []byte) ([]goldenMessage, error) {
	out := []goldenMessage{} // never nil, like every parsed file (the oracle test compares with go-cmp, which tells nil from empty)
	for i, line := range parseLines(data) {
		role, text, ok := strings.Cut(line, ": ")
		if !ok {
			return nil, fmt.Errorf("line %d: %s is not a \"role: text\" line", i+1, excerpt(line))
		}
		r, err := unescapeLine(role)
		if err == nil {
			text, err = unescapeLine(text)
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		out = append(out, goldenMessage{Line: i + 1, Role: r, Text: speech(text), raw: line})
	}
	return out, nil
}

func parseTimeline(data []byte) ([]goldenEvent, error) {
	out := []goldenEvent{} // never nil, like every parsed file (the oracle test compares with go-cmp, which tells nil from empty)
	var prev time.Duration
	for i, line := range parseLines(data) {
		e, err := parseEvent(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w in %s", i+1, err, excerpt(line))
		}
		e.Line = i + 1
		e.Gap = timing(e.At - prev)
		prev = e.At
		out = append(out, e)
	}
	return out, nil
}

var offsetPattern = regexp.MustCompile(`^([+-])(\d+)ms$`)

// parseEvent parses one timeline line.
func parseEvent(line string) (goldenEvent, error) {
	e := goldenEvent{raw: line}
	off, rest, _ := strings.Cut(line, " ")
	m := offsetPattern.FindStringSubmatch(off)
	if m == nil {
		return e, fmt.Errorf("the line does not start with an offset such as +001234ms")
	}
	ms, err := strconv.ParseInt(m[2], 10, 64)
	if err != nil || ms > int64(time.Duration(1<<62)/time.Millisecond) {
		return e, fmt.Errorf("offset %s is out of range", excerpt(off))
	}
	e.At = time.Duration(ms) * time.Millisecond
	if m[1] == "-" {
		e.At = -e.At
	}
	typ, rest, _ := strings.Cut(rest, " ")
	if typ == "" || strings.Contains(typ, "=") {
		return e, errors.New("an event type must follow the offset")
	}
	e.Type = EventType(typ)
	seen := map[string]bool{}
	for rest != "" {
		key, after, ok := strings.Cut(rest, "=")
		if !ok || key == "" || strings.Contains(key, " ") {
			return e, fmt.Errorf("expected key=value at %s", excerpt(rest))
		}
		if seen[key] {
			return e, fmt.Errorf("field %s appears twice", key)
		}
		seen[key] = true
		var val string
		switch key {
		case "text", "args_raw", "result_raw", "data_raw":
			val, after, err = quotedValue(after)
		case "tool":
			if strings.HasPrefix(after, `"`) {
				val, after, err = quotedValue(after)
			} else {
				val, after = plainValue(after)
			}
		case "args", "result", "data":
			val, after, err = jsonValue(after)
		case "turn", "latency", "duration", "error":
			val, after = plainValue(after)
		default:
			return e, fmt.Errorf("unknown field %s", excerpt(key))
		}
		if err != nil {
			return e, fmt.Errorf("field %s: %w", key, err)
		}
		if err := e.set(key, val); err != nil {
			return e, fmt.Errorf("field %s: %w", key, err)
		}
		if after != "" && !strings.HasPrefix(after, " ") {
			return e, fmt.Errorf("field %s: expected a space after its value, found %s", key, excerpt(after))
		}
		rest = strings.TrimPrefix(after, " ")
	}
	if !seen["turn"] {
		return e, errors.New("the turn= field is missing")
	}
	return e, nil
}

func (e *goldenEvent) set(key, val string) error {
	var err error
	switch key {
	case "turn":
		if e.Turn, err = strconv.Atoi(val); err != nil {
			// strconv's error quotes the whole value.
			err = fmt.Errorf("%s is not a turn number", excerpt(val))
		}
	case "text":
		e.Text = speech(val)
	case "tool":
		e.Tool = val
	case "args":
		e.Args = jsonText(val)
	case "args_raw":
		e.ArgsRaw = val
	case "result":
		e.Result = jsonText(val)
	case "result_raw":
		e.ResultRaw = val
	case "data":
		e.Data = jsonText(val)
	case "data_raw":
		e.DataRaw = val
	case "error":
		if val != "true" {
			return fmt.Errorf("%s: only error=true is written", excerpt(val))
		}
		e.IsError = true
	case "latency", "duration":
		var d time.Duration
		d, err = parseMillis(val)
		if key == "latency" {
			t := timing(d)
			e.Latency = &t
		} else {
			e.Duration = d
		}
	}
	return err
}

func parseMillis(s string) (time.Duration, error) {
	n, ok := strings.CutSuffix(s, "ms")
	if !ok {
		return 0, fmt.Errorf("%s is not a number of milliseconds such as 250ms", excerpt(s))
	}
	ms, err := strconv.ParseInt(n, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s is not a number of milliseconds such as 250ms", excerpt(s))
	}
	return time.Duration(ms) * time.Millisecond, nil
}

func plainValue(s string) (val, rest string) {
	i := strings.IndexByte(s, ' ')
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

func quotedValue(s string) (val, rest string, err error) {
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", s, fmt.Errorf("expected a Go-quoted string: %w", err)
	}
	val, err = strconv.Unquote(q)
	return val, s[len(q):], err
}

func jsonValue(s string) (val, rest string, err error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return "", s, fmt.Errorf("invalid JSON: %w", err)
	}
	n := int(dec.InputOffset())
	return strings.TrimSpace(s[:n]), s[n:], nil
}
