package voicetest

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// The HTML report is written by writeHTMLReport below, not by
// html/template. html/template (through text/template) calls methods by
// name, and a binary that can reach reflect.Value.MethodByName keeps every
// exported method of every type it links: about 10 MB more in every test
// binary that reaches Run or Scenario together with a large SDK, and
// seconds of linking at every `go test`. The writer escapes every value
// for the one context it lands in, the way html/template escaped it, so
// that the page is byte for byte what the template produced; the oracle
// test (report_html_oracle_test.go) keeps the template and compares both
// on fixed reports and on hostile strings in every field.
//
// The contexts, and the escaping each gets:
//   - element text, <title> text and quoted attribute values:
//     writeEscaped (html/template's htmlEscaper, attrEscaper and
//     rcdataEscaper, which are one function for plain strings);
//   - the audio players' src attributes (data: URLs of our own WAV
//     bytes, never user text): writeURL, which percent-encodes what is
//     not a URL character and then escapes as an attribute value;
//   - the latency bar's style attribute: a number we format, escaped as
//     an attribute value;
//   - the JSON the script draws from, in <script type="application/json">:
//     writeJSONData (encoding/json escapes <, >, &, U+2028 and U+2029, so
//     no string in it can end the element);
//   - the style sheet and the script: our own constants, written as they
//     are (TestReportConstantsCannotEndTheirElements checks that neither
//     holds the end tag of its element).

// writeNonEmpty writes open, s escaped and close when s is not empty:
// the template's {{if .X}}open{{.X}}close{{end}}.
func writeNonEmpty(w *bytes.Buffer, open, s, close string) {
	if s != "" {
		w.WriteString(open)
		writeEscaped(w, s)
		w.WriteString(close)
	}
}

// writeEscaped writes s escaped for HTML element text or a quoted
// attribute value: the five characters that matter (& < > " ') and '+'
// (html/template escapes it too) become character references and NUL
// becomes U+FFFD; every other byte, invalid UTF-8 included, is written as
// it is. Every byte it replaces is ASCII, which no byte of a multi-byte
// UTF-8 sequence is, so the byte loop never splits a character.
func writeEscaped(w *bytes.Buffer, s string) {
	written := 0
	for i := 0; i < len(s); i++ {
		var repl string
		switch s[i] {
		case 0:
			repl = "\uFFFD"
		case '"':
			repl = "&#34;"
		case '&':
			repl = "&amp;"
		case '\'':
			repl = "&#39;"
		case '+':
			repl = "&#43;"
		case '<':
			repl = "&lt;"
		case '>':
			repl = "&gt;"
		default:
			continue
		}
		w.WriteString(s[written:i])
		w.WriteString(repl)
		written = i + 1
	}
	w.WriteString(s[written:])
}

// writeInt writes n in decimal (no character of which needs escaping).
func writeInt(w *bytes.Buffer, n int) {
	var b [20]byte
	w.Write(strconv.AppendInt(b[:0], int64(n), 10))
}

// writeURL writes u as a quoted URL attribute's value: every byte that is
// not a URL character (RFC 3986's unreserved and reserved ones, and '%'
// starting an escape) is percent-encoded, then the result is escaped as
// an attribute value. The report's URLs are data: URLs of base64, which
// this leaves as they are but for '+' (&#43;).
func writeURL(w *bytes.Buffer, u string) {
	const hex = "0123456789abcdef"
	var b strings.Builder
	written := 0
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
			continue
		case strings.IndexByte("!#$&*+,/:;=?@[]-._~", c) >= 0:
			continue
		case c == '%' && i+2 < len(u) && isHexDigit(u[i+1]) && isHexDigit(u[i+2]):
			continue
		}
		b.WriteString(u[written:i])
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
		written = i + 1
	}
	if written == 0 {
		writeEscaped(w, u)
		return
	}
	b.WriteString(u[written:])
	writeEscaped(w, b.String())
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// writeJSONData writes d as the JSON inside <script type="application/json">.
// encoding/json escapes <, >, & and U+2028/U+2029 in strings, so the text
// can neither end the element nor break a script that parses it. If d
// cannot be encoded (a NaN, which the report's figures never are), the
// element holds null and a comment naming the error, as html/template
// wrote it.
func writeJSONData(w *bytes.Buffer, d *htmlData) {
	b, err := json.Marshal(d)
	if err != nil {
		msg := strings.ReplaceAll(err.Error(), "*/", "* /")
		msg = strings.ReplaceAll(msg, "<!--", `\x3C!--`)
		msg = replaceScriptTags(msg)
		w.WriteString(" /* " + msg + " */null ")
		return
	}
	w.Write(b)
}

// replaceScriptTags replaces "<script" and "</script", in any case, with
// `\x3Cscript` and `\x3C/script`.
func replaceScriptTags(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		rest := s[i+1:]
		slash := strings.HasPrefix(rest, "/")
		if slash {
			rest = rest[1:]
		}
		if len(rest) >= 6 && strings.EqualFold(rest[:6], "script") {
			b.WriteString(`\x3C`)
			if slash {
				b.WriteByte('/')
			}
			b.WriteString(rest[:6])
			s = rest[6:]
			continue
		}
		b.WriteByte('<')
		s = s[i+1:]
	}
}

// writeHTMLReport writes the report page of d. Its text is the page
// template's, report/report.html.tmpl as it was before the writer
// replaced it (the oracle test holds that template).
func writeHTMLReport(w *bytes.Buffer, d *htmlReport) {
	w.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" content=\"voicetest\">\n<title>")
	writeEscaped(w, d.Name)
	w.WriteString(" · ")
	writeEscaped(w, d.Status)
	w.WriteString(" · voicetest report</title>\n<style>")
	w.WriteString(reportCSS)
	w.WriteString("</style>\n</head>\n<body data-rendered=\"false\" data-audio-count=\"")
	writeInt(w, d.AudioCount)
	w.WriteString("\" data-audio-loaded=\"0\" data-audio-errors=\"0\">\n<header class=\"top ")
	writeEscaped(w, d.StatusClass)
	w.WriteString("\">\n  <div class=\"title\">\n    <span class=\"badge ")
	writeEscaped(w, d.StatusClass)
	w.WriteString("\">")
	writeEscaped(w, d.Status)
	w.WriteString("</span>\n    <h1>")
	writeEscaped(w, d.Name)
	w.WriteString("</h1>\n  </div>\n  ")
	writeNonEmpty(w, "<p class=\"description\">", d.Description, "</p>")
	w.WriteString("\n  <dl class=\"facts\">\n    <div><dt>Duration</dt><dd>")
	writeEscaped(w, d.Duration)
	w.WriteString("</dd></div>\n    <div><dt>User turns</dt><dd>")
	writeInt(w, d.Turns)
	w.WriteString("</dd></div>\n    ")
	writeNonEmpty(w, "<div><dt>Adapter</dt><dd>", d.Adapter, "</dd></div>")
	w.WriteString("\n    ")
	if d.Rate != 0 {
		w.WriteString("<div><dt>Sample rate</dt><dd>")
		writeInt(w, d.Rate)
		w.WriteString(" Hz</dd></div>")
	}
	w.WriteString("\n    ")
	writeNonEmpty(w, "<div><dt>Runs</dt><dd>", d.Runs, "</dd></div>")
	w.WriteString("\n  </dl>\n</header>\n<main>\n")
	if d.Err != "" || d.Reasoning != "" || d.Ended != "" || len(d.Skipped) > 0 {
		w.WriteString("\n<section class=\"card outcome\">\n  <h2>Outcome</h2>\n  ")
		writeNonEmpty(w, "<pre class=\"error\">", d.Err, "</pre>")
		w.WriteString("\n  ")
		writeNonEmpty(w, "<p><strong>Reasoning:</strong> ", d.Reasoning, "</p>")
		w.WriteString("\n  ")
		writeNonEmpty(w, "<p><strong>Ended early:</strong> ", d.Ended, "</p>")
		w.WriteString("\n  ")
		if len(d.Skipped) > 0 {
			w.WriteString("<p><strong>Not run")
			writeNonEmpty(w, " (", d.SkipReason, ")")
			w.WriteString(":</strong> ")
			writeList(w, d.Skipped)
			w.WriteString("</p>")
		}
		w.WriteString("\n</section>\n")
	}
	w.WriteString("\n\n<section class=\"card\">\n  <h2>Conversation</h2>\n  <div class=\"legend\">\n    <span class=\"key user\">user</span>\n    <span class=\"key agent\">agent</span>\n    <span class=\"key interrupt\">interrupt</span>\n    <span class=\"key tool\">tool / data</span>\n    <span class=\"key hangup\">hang-up</span>\n    <span class=\"key judge\">judge</span>\n    <span class=\"key other\">other</span>\n    <span class=\"key talkover\">talk-over</span>\n    <span class=\"key pause\">pause</span>\n    <span class=\"key unfilled\">pause left unfilled</span>\n  </div>\n  <div class=\"wave-wrap\"><canvas id=\"wave\" height=\"290\" aria-label=\"user and agent waveforms on one time axis, with talk-over and pauses\"></canvas></div>\n  ")
	if d.Mixed != "" {
		w.WriteString("\n  <div class=\"player\"><span>Whole conversation</span><audio id=\"mixed\" controls preload=\"metadata\" src=\"")
		writeURL(w, d.Mixed)
		w.WriteString("\"></audio></div>\n  ")
	}
	w.WriteString("\n  ")
	writeNonEmpty(w, "<p class=\"note\">", d.MixedNote, "</p>")
	w.WriteString("\n</section>\n\n<div class=\"grid\">\n<section class=\"card\">\n  <h2>Latency</h2>\n  ")
	if d.HaveLatency {
		w.WriteString("\n  <dl class=\"stats\">\n    <div><dt>p50</dt><dd>")
		writeEscaped(w, d.P50)
		w.WriteString("</dd></div>\n    <div><dt>p90</dt><dd>")
		writeEscaped(w, d.P90)
		w.WriteString("</dd></div>\n    <div><dt>p95</dt><dd>")
		writeEscaped(w, d.P95)
		w.WriteString("</dd></div>\n    <div><dt>p99</dt><dd>")
		writeEscaped(w, d.P99)
		w.WriteString("</dd></div>\n    <div><dt>max</dt><dd>")
		writeEscaped(w, d.Max)
		w.WriteString("</dd></div>\n    <div><dt>mean</dt><dd>")
		writeEscaped(w, d.Mean)
		w.WriteString("</dd></div>\n    <div><dt>first audio</dt><dd>")
		writeEscaped(w, d.TTFB)
		w.WriteString("</dd></div>\n  </dl>\n  <table class=\"bars\">\n    <thead><tr><th>Turn</th><th>Response latency</th></tr></thead>\n    <tbody>\n    ")
		for _, l := range d.LatencyRows {
			w.WriteString("<tr><td>")
			writeInt(w, l.Turn)
			w.WriteString("</td><td><div class=\"bar\" style=\"width: ")
			// A number of ours in a style attribute: digits, '.', and
			// for non-finite values letters and a sign, none of which
			// CSS or HTML gives a meaning here.
			writeEscaped(w, strconv.FormatFloat(l.Percent, 'f', 1, 64))
			w.WriteString("%\"></div><span>")
			writeEscaped(w, l.Label)
			w.WriteString("</span></td></tr>\n    ")
		}
		w.WriteString("\n    </tbody>\n  </table>\n  ")
	} else {
		w.WriteString("\n  <p class=\"note\">No response latency was measured")
		writeNonEmpty(w, " (first agent audio at ", d.TTFB, ")")
		w.WriteString(".</p>\n  ")
	}
	w.WriteString("\n  ")
	if len(d.Interrupts) > 0 {
		w.WriteString("<p><strong>Interrupt response:</strong> ")
		writeList(w, d.Interrupts)
		w.WriteString("</p>")
	}
	w.WriteString("\n</section>\n\n<section class=\"card\">\n  <h2>Verdict</h2>\n  ")
	writeNonEmpty(w, "<p>", d.VerdictReasoning, "</p>")
	w.WriteString("\n  ")
	if len(d.Criteria) > 0 {
		w.WriteString("\n  <table class=\"criteria\">\n    <thead><tr><th>Criterion</th><th>Result</th><th>Reasoning</th></tr></thead>\n    <tbody>\n    ")
		for _, c := range d.Criteria {
			w.WriteString("<tr><td>")
			writeEscaped(w, c.Criterion)
			w.WriteString("</td><td><span class=\"badge small ")
			writeEscaped(w, c.Class)
			w.WriteString("\">")
			writeEscaped(w, c.Status)
			w.WriteString("</span></td><td>")
			writeEscaped(w, c.Reasoning)
			w.WriteString("</td></tr>\n    ")
		}
		w.WriteString("\n    </tbody>\n  </table>\n  ")
	} else {
		w.WriteString("\n  <p class=\"note\">No judge criteria were evaluated.</p>\n  ")
	}
	w.WriteString("\n  <h3>Golden files</h3>\n  <pre class=\"golden ")
	writeEscaped(w, d.GoldenClass)
	w.WriteString("\">")
	writeEscaped(w, d.Golden)
	w.WriteString("</pre>\n</section>\n</div>\n\n<section class=\"card quality\">\n  <h2>Conversation quality</h2>\n  <div class=\"qgrid\">\n  ")
	for _, g := range d.Quality.Groups {
		w.WriteString("\n    <div class=\"qgroup\">\n      <h3>")
		writeEscaped(w, g.Title)
		w.WriteString("</h3>\n      <table class=\"stats-table\"><tbody>\n      ")
		writeStats(w, g.Stats)
		w.WriteString("\n      </tbody></table>\n    </div>\n  ")
	}
	w.WriteString("\n  ")
	if len(d.Quality.Wire) > 0 {
		w.WriteString("\n    <div class=\"qgroup\">\n      <h3>Wire</h3>\n      <table class=\"stats-table\"><tbody>\n      ")
		writeStats(w, d.Quality.Wire)
		w.WriteString("\n      </tbody></table>\n    </div>\n  ")
	}
	w.WriteString("\n  </div>\n  ")
	if len(d.Quality.Turns) > 0 {
		w.WriteString("\n  <h3>Per turn</h3>\n  <table class=\"turns\">\n    <thead><tr><th>Turn</th><th>Latency</th><th>First audio byte</th><th>First event</th><th>Parts</th><th>Dead air</th><th>User words</th><th>Agent words</th></tr></thead>\n    <tbody>\n    ")
		for _, t := range d.Quality.Turns {
			w.WriteString("<tr><td class=\"num\">")
			writeInt(w, t.Turn)
			w.WriteString("</td><td class=\"num\">")
			writeEscaped(w, t.Latency)
			w.WriteString("</td><td class=\"num\">")
			writeEscaped(w, t.TTFB)
			w.WriteString("</td><td class=\"num\">")
			writeEscaped(w, t.FirstEvent)
			w.WriteString("</td><td>")
			writeEscaped(w, t.Parts)
			w.WriteString("</td><td class=\"num\">")
			writeEscaped(w, t.DeadAir)
			w.WriteString("</td><td class=\"num\">")
			writeInt(w, t.UserWords)
			w.WriteString("</td><td class=\"num\">")
			writeInt(w, t.AgentWords)
			w.WriteString("</td></tr>\n    ")
		}
		w.WriteString("\n    </tbody>\n  </table>\n  ")
	}
	w.WriteString("\n  ")
	if len(d.Quality.Heard) > 0 {
		w.WriteString("\n  <h3>What the agent said against what was heard in its audio</h3>\n  <table class=\"heard\">\n    <thead><tr><th>Turn</th><th>Its transcript</th><th>Heard in its audio</th><th>WER</th></tr></thead>\n    <tbody>\n    ")
		for _, h := range d.Quality.Heard {
			w.WriteString("<tr><td class=\"num\">")
			writeInt(w, h.Turn)
			w.WriteString("</td><td>")
			writeEscaped(w, h.Said)
			w.WriteString("</td><td>")
			writeEscaped(w, h.Heard)
			w.WriteString("</td><td class=\"num\">")
			writeEscaped(w, h.WER)
			w.WriteString("</td></tr>\n    ")
		}
		w.WriteString("\n    </tbody>\n  </table>\n  ")
	}
	w.WriteString("\n</section>\n\n<section class=\"card\">\n  <h2>Transcript</h2>\n  <ol class=\"transcript\">\n  ")
	for _, r := range d.Rows {
		w.WriteString("\n    <li class=\"msg ")
		writeEscaped(w, r.Role)
		w.WriteString("\">\n      <div class=\"meta\"><span class=\"turn\">turn ")
		writeInt(w, r.Turn)
		w.WriteString("</span> <span class=\"who\">")
		writeEscaped(w, r.Role)
		w.WriteString("</span> <span class=\"time\">")
		writeEscaped(w, r.Start)
		w.WriteString(" – ")
		writeEscaped(w, r.End)
		w.WriteString("</span>")
		writeNonEmpty(w, " <span class=\"lat\">latency ", r.Latency, "</span>")
		if r.Interrupted {
			w.WriteString(" <span class=\"flag\">interrupted</span>")
		}
		if r.AudioOnly {
			w.WriteString(" <span class=\"flag\">audio only</span>")
		}
		w.WriteString("</div>\n      <div class=\"text\">")
		writeEscaped(w, r.Text)
		w.WriteString("</div>\n      ")
		if r.Audio != "" {
			w.WriteString("<audio controls preload=\"metadata\" src=\"")
			writeURL(w, r.Audio)
			w.WriteString("\"></audio>")
		}
		w.WriteString("\n      ")
		writeNonEmpty(w, "<p class=\"note\">", r.AudioNote, "</p>")
		w.WriteString("\n    </li>\n  ")
	}
	if len(d.Rows) == 0 {
		w.WriteString("\n    <li class=\"note\">(empty)</li>\n  ")
	}
	w.WriteString("\n  </ol>\n</section>\n\n<section class=\"card\">\n  <h2>Timeline</h2>\n  <table class=\"timeline\">\n    <thead><tr><th>Time</th><th>Turn</th><th>Event</th><th>Role</th><th>Detail</th></tr></thead>\n    <tbody>\n    ")
	for _, e := range d.Events {
		w.WriteString("<tr class=\"ev ")
		writeEscaped(w, e.Class)
		w.WriteString("\"><td class=\"num\">")
		writeEscaped(w, e.At)
		w.WriteString("</td><td class=\"num\">")
		writeInt(w, e.Turn)
		w.WriteString("</td><td><span class=\"dot ")
		writeEscaped(w, e.Class)
		w.WriteString("\"></span>")
		writeEscaped(w, e.Type)
		w.WriteString("</td><td>")
		writeEscaped(w, e.Role)
		w.WriteString("</td><td>")
		writeEscaped(w, e.Detail)
		w.WriteString("</td></tr>\n    ")
	}
	w.WriteString("\n    </tbody>\n  </table>\n</section>\n")
	writeSections(w, d.Sections)
	w.WriteString("\n</main>\n<footer>Generated by voicetest. Self-contained: styles, script and audio are inline.</footer>\n<script type=\"application/json\" id=\"vt-data\">")
	writeJSONData(w, &d.Data)
	w.WriteString("</script>\n<script>")
	w.WriteString(reportJS)
	w.WriteString("</script>\n</body>\n</html>\n")
}

// writeList writes items escaped, separated by ", ".
func writeList(w *bytes.Buffer, items []string) {
	for i, s := range items {
		if i > 0 {
			w.WriteString(", ")
		}
		writeEscaped(w, s)
	}
}

// writeStats writes the rows of a quality group's table.
func writeStats(w *bytes.Buffer, stats []htmlStat) {
	for _, s := range stats {
		w.WriteString("<tr class=\"")
		writeEscaped(w, s.Class)
		w.WriteString("\"><th>")
		writeEscaped(w, s.Label)
		w.WriteString("</th><td>")
		writeEscaped(w, s.Value)
		w.WriteString("</td></tr>\n      ")
	}
}
