package voicetest

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The bounds of what a golden mismatch message shows, so that a huge line
// (an agent that says 50 MB in one message) makes a short message, not one
// as large as the files: every cut says how many bytes it took out.
const (
	// maxDiffValue bounds, in bytes, each value a GoldenDiff shows (a
	// text, a JSON payload, a whole missing or extra line). For a pair of
	// values that differ, it shows the window around their first
	// difference.
	maxDiffValue = 240
	// maxDiffLine bounds, in bytes, each line of a line diff; a longer
	// line keeps its head and a checksum of the whole, so that two long
	// lines that differ after their head still show as different.
	maxDiffLine = 240
	// maxGoldenMessage bounds, in bytes, the message of a GoldenError.
	maxGoldenMessage = 32 << 10
	// maxReportText bounds, in bytes, each message of the transcript a
	// failure report shows.
	maxReportText = 2000
	// diffContext is how much of a value a window shows before the first
	// difference.
	diffContext = 60
)

// runeStart moves i back to the start of the UTF-8 sequence it is in, so
// that a cut never splits a character.
func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// window returns s[from:to] with both ends moved to character boundaries.
func window(s string, from, to int) (int, int) {
	from = runeStart(s, max(from, 0))
	to = runeStart(s, min(to, len(s)))
	return from, to
}

// render writes s[from:to], quoted when quote is set, with an ellipsis on
// each side that was cut and the count of bytes cut.
func render(s string, from, to int, quote bool) string {
	part := s[from:to]
	if quote {
		part = strconv.Quote(part)
	}
	if from == 0 && to == len(s) {
		return part
	}
	var b strings.Builder
	if from > 0 {
		b.WriteString("…")
	}
	b.WriteString(part)
	if to < len(s) {
		b.WriteString("…")
	}
	fmt.Fprintf(&b, " (%d of %d bytes cut)", len(s)-(to-from), len(s))
	return b.String()
}

// clipValue renders s (quoted when quote is set) with at most
// maxDiffValue bytes of it: its head.
func clipValue(s string, quote bool) string {
	from, to := window(s, 0, maxDiffValue)
	return render(s, from, to, quote)
}

// clipPair renders golden and actual values (quoted when quote is set),
// each cut to at most maxDiffValue bytes around the first byte at which
// they differ, so that two long values show where they part.
func clipPair(golden, actual string, quote bool) (string, string) {
	if len(golden) <= maxDiffValue && len(actual) <= maxDiffValue {
		return render(golden, 0, len(golden), quote), render(actual, 0, len(actual), quote)
	}
	n := min(len(golden), len(actual))
	at := 0
	for at < n && golden[at] == actual[at] {
		at++
	}
	start := max(at-diffContext, 0)
	gf, gt := window(golden, start, start+maxDiffValue)
	af, at2 := window(actual, start, start+maxDiffValue)
	return render(golden, gf, gt, quote), render(actual, af, at2, quote)
}

// excerpt is a quoted and clipped s for an error message.
func excerpt(s string) string { return clipValue(s, true) }

// crc32c is the table of the checksum clipLine shows.
var crc32c = crc32.MakeTable(crc32.Castagnoli)

// clipLine cuts a line of a line diff to maxDiffLine bytes: its head, the
// count of bytes cut and a checksum of the whole line.
func clipLine(l []byte) string {
	if len(l) <= maxDiffLine {
		return string(l)
	}
	to := maxDiffLine
	for to > 0 && !utf8.RuneStart(l[to]) {
		to--
	}
	return fmt.Sprintf("%s… (%d of %d bytes cut; crc32c %08x)", l[:to], len(l)-to, len(l), crc32.Checksum(l, crc32c))
}

// clipLines returns data with each line cut by clipLine.
func clipLines(data []byte) string {
	var b strings.Builder
	for len(data) > 0 {
		line, rest, found := bytes.Cut(data, []byte("\n"))
		b.WriteString(clipLine(line))
		if found {
			b.WriteByte('\n')
		}
		data = rest
	}
	return b.String()
}

// clipMessage cuts msg to maxGoldenMessage bytes, saying how much it cut.
func clipMessage(msg string) string {
	if len(msg) <= maxGoldenMessage {
		return msg
	}
	_, to := window(msg, 0, maxGoldenMessage)
	return fmt.Sprintf("%s\n  ... (%d more bytes of this message cut)", msg[:to], len(msg)-to)
}

// clipReportText cuts a message's text for a failure report to
// maxReportText bytes, saying how much it cut.
func clipReportText(s string) string {
	if len(s) <= maxReportText {
		return s
	}
	_, to := window(s, 0, maxReportText)
	return fmt.Sprintf("%s… (%d of %d bytes cut)", s[:to], len(s)-to, len(s))
}
