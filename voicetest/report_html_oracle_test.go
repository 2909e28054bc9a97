package voicetest

import (
	"bytes"
	_ "embed"
	"errors"
	"html/template"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The oracle: the HTML report as html/template rendered it before
// writeHTMLReport replaced the template (report_html_write.go says why).
// The templates are the ones the report shipped with, kept here only to
// compare: the writer must produce the same bytes for every report, and
// for hostile text in every field.
var (
	//go:embed testdata/htmlreport/report.html.tmpl
	oracleReportTemplate string
	//go:embed testdata/htmlreport/sections.html.tmpl
	oracleSectionsTemplate string
)

// oracleReport is htmlReport as the template wants it: the page's URLs,
// style sheet and script typed as trusted content (html/template would
// refuse a data: URL given as a plain string). The fields here shadow
// htmlReport's; the template reaches every other field through the
// embedded pointer.
type oracleReport struct {
	*htmlReport
	Mixed template.URL
	CSS   template.CSS
	JS    template.JS
	Rows  []oracleRow
}

type oracleRow struct {
	htmlRow
	Audio template.URL
}

// oracleHTMLReport renders d with the template.
func oracleHTMLReport(d *htmlReport) ([]byte, error) {
	t, err := template.New("report").Parse(oracleReportTemplate)
	if err != nil {
		return nil, err
	}
	if _, err := t.New("sections").Parse(oracleSectionsTemplate); err != nil {
		return nil, err
	}
	o := oracleReport{htmlReport: d, Mixed: template.URL(d.Mixed), CSS: template.CSS(reportCSS), JS: template.JS(reportJS)}
	for _, r := range d.Rows {
		o.Rows = append(o.Rows, oracleRow{htmlRow: r, Audio: template.URL(r.Audio)})
	}
	var b bytes.Buffer
	if err := t.Execute(&b, o); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// compareWithOracle renders d both ways and fails, naming the first
// difference, unless the bytes are the same. It returns the page.
func compareWithOracle(t testing.TB, d *htmlReport) []byte {
	t.Helper()
	want, err := oracleHTMLReport(d)
	if err != nil {
		t.Fatalf("the oracle template: %v", err)
	}
	var b bytes.Buffer
	writeHTMLReport(&b, d)
	got := b.Bytes()
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		from := max(i-120, 0)
		t.Fatalf("the writer's page (%d bytes) differs from html/template's (%d bytes) at byte %d:\nwriter:   %q\ntemplate: %q",
			len(got), len(want), i, got[from:min(i+120, len(got))], want[from:min(i+120, len(want))])
	}
	return got
}

// oracleResults are reports of every shape: each optional part present
// and absent, audio, sections, and text that needs escaping.
func oracleResults() map[string]*Result {
	heard := &Hearing{Text: "a table for 70", Errors: WordErrors{Substitutions: 1, Words: 4}}
	segs := []Segment{
		{Role: RoleUser, Turn: 1, Start: 0, End: 400 * time.Millisecond, Text: "book", audio: segmentAudio{whole: tone(16000, 400*time.Millisecond)}},
		{Role: RoleAgent, Turn: 1, Start: time.Second, End: 2600 * time.Millisecond, Text: "a table for 17", audio: segmentAudio{whole: tone(24000, 1600*time.Millisecond)}},
		{Role: RoleUser, Turn: 2, Start: 3 * time.Second, End: 3200 * time.Millisecond, audio: segmentAudio{whole: tone(16000, 200*time.Millisecond)}},
	}
	full := &Result{Name: `dinner <for> "two" & 'more' + 1`, Status: StatusFail, Reasoning: "the agent <b>forgot</b>",
		Err: errors.New("voicetest: step 3: it & that"), Ended: "the user hung up", SkippedSteps: []string{"AgentTurn", "Verdict <x>"},
		SkipReason: "the call ended", Duration: 4 * time.Second, Turns: 2,
		Capabilities: Capabilities{Adapter: "twilio"},
		Runs:         []*Result{{Success: true}, {Success: false}}, PassRate: 0.5,
		GoldenErr: errors.New("golden: transcript differs:\n-  \"a\"\n+  <b>"),
		Transcript: []Message{
			{Turn: 1, Role: RoleUser, Text: "book", Start: 0, End: 400 * time.Millisecond},
			{Turn: 1, Role: RoleAgent, Text: "a table for 17 <script>alert(1)</script>", Start: time.Second, End: 2600 * time.Millisecond,
				Latency: 600 * time.Millisecond, Heard: heard, Interrupted: true},
			{Turn: 2, Role: RoleAgent, Text: "", AudioOnly: true, Start: 2700 * time.Millisecond, End: 2900 * time.Millisecond, Latency: 1500 * time.Microsecond},
		},
		Recording: Recording{Rate: 16000, Segments: segs, Duration: 4 * time.Second},
		Timeline: []Event{
			{At: 0, Type: EventUserStartSpeaking, Role: RoleUser, Turn: 1},
			{At: 500 * time.Millisecond, Type: EventToolCall, Turn: 1, Tool: &ToolCall{Name: "book<", Arguments: []byte(`{"n":"</script>"}`)}},
			{At: 600 * time.Millisecond, Type: EventToolResult, Turn: 1, Tool: &ToolCall{Name: "book", Result: []byte(`"ok" & done`)}},
			{At: 700 * time.Millisecond, Type: EventDTMF, Turn: 1, Text: "1#"},
			{At: 800 * time.Millisecond, Type: EventData, Turn: 1, Data: []byte(`{"x":"\u2028"}`), Latency: 3 * time.Millisecond, Duration: time.Second},
			{At: 3 * time.Second, Type: EventAgentHangUp, Role: RoleAgent, Turn: 2},
		},
		Metrics: Metrics{
			Turns: []TurnMetrics{{Turn: 1, Latency: 600 * time.Millisecond, HasLatency: true,
				Parts: &Timings{STT: 100 * time.Millisecond, LLM: 350 * time.Millisecond}}, {Turn: 2}},
			Parts:  PartMetrics{LLM: SummarizeDurations([]time.Duration{350 * time.Millisecond})},
			Speech: SpeechMetrics{WER: &WERMetrics{Rate: 0.25, Errors: heard.Errors, Messages: 1}, AgentSpeech: time.Second, AgentWPM: 150},
			Wire: &WireStats{Adapter: "twilio", FramesIn: 120, FramesOut: 140, MarksReceived: 3, MarksEchoed: 2, Clears: 1,
				MarkDelay: SummarizeDurations([]time.Duration{600 * time.Millisecond})},
		},
		Sections: []ReportSection{
			{Title: "Red team <crescendo>", Summary: `"summary" & more`, Columns: []string{"turn", "attempt"},
				Rows: []ReportRow{{Cells: []string{"1", "<script>alert(1)</script>"}, Mark: "fail"}, {Cells: []string{"2", "ok"}}}},
			{Title: "Notes only"},
		},
	}
	full.Latency.PerTurn = []time.Duration{600 * time.Millisecond, 1500 * time.Microsecond}
	full.Latency.P50, full.Latency.Max, full.Latency.TTFB = 600*time.Millisecond, 600*time.Millisecond, 200*time.Millisecond
	full.Latency.InterruptResponse = []time.Duration{80 * time.Millisecond, 90 * time.Millisecond}
	full.Verdict = &Judgment{Reasoning: "mostly <fine>"}
	full.Failed = []CriterionResult{{Criterion: "offers a time", Status: StatusFail, Reasoning: "it didn't & it should"}}
	full.Passed = []CriterionResult{{Criterion: "is polite", Status: StatusPass, Reasoning: "yes"}}
	full.Inconclusive = []CriterionResult{{Criterion: "'quotes'", Status: StatusInconclusive}}

	textOnly := &Result{Name: "text only", Status: StatusPass, Success: true, Duration: time.Second, Turns: 1,
		Transcript: []Message{{Turn: 1, Role: RoleUser, Text: "hi"}, {Turn: 1, Role: RoleAgent, Text: "hello"}}}
	ttfbOnly := &Result{Name: "ttfb", Status: StatusInconclusive}
	ttfbOnly.Latency.TTFB = 120 * time.Millisecond
	return map[string]*Result{
		"full":     full,
		"textOnly": textOnly,
		"ttfbOnly": ttfbOnly,
		"empty":    {},
		"long":     longResult(),
	}
}

// longResult has more audio than the report embeds: a cut mix and a
// segment past the budget (at 8 kHz, to keep the test cheap;
// TestHTMLReportAudioBudget covers resampling).
func longResult() *Result {
	const rate = 8000
	seg := 70 * time.Second
	var segs []Segment
	var tr []Message
	for i := range 4 {
		role := RoleUser
		if i%2 == 1 {
			role = RoleAgent
		}
		start := time.Duration(i) * seg
		segs = append(segs, Segment{Role: role, Turn: (i + 1) / 2, Start: start, End: start + seg, Text: "words", audio: segmentAudio{whole: tone(rate, seg)}})
		tr = append(tr, Message{Role: role, Turn: (i + 1) / 2, Start: start, End: start + seg, Text: "words"})
	}
	long := 4 * seg
	return &Result{Name: "long", Status: StatusPass, Success: true, Duration: long, Transcript: tr,
		Recording: Recording{Rate: rate, Segments: segs, Duration: long}}
}

// TestHTMLReportMatchesTemplate: the writer's page is byte for byte
// html/template's, for reports of every shape.
func TestHTMLReportMatchesTemplate(t *testing.T) {
	t.Parallel() // pure: renders pages and compares them with the oracle
	for name, res := range oracleResults() {
		t.Run(name, func(t *testing.T) {
			d, err := res.htmlData()
			if err != nil {
				t.Fatal(err)
			}
			page := compareWithOracle(t, d)
			if name == "full" && !strings.Contains(string(page), `src="data:audio/wav;base64,`) {
				t.Error("the full report embeds no audio; the URL context went untested")
			}
			if name == "long" && (!strings.Contains(string(page), "holds its first 3m0s") || !strings.Contains(string(page), "audio not embedded")) {
				t.Error("the long report's mix was not cut or no segment was left out; its notes went untested")
			}
		})
	}
}

// TestHTMLReportURLsMatchTemplate: the src attributes' normalisation
// (percent-encoding what is not a URL character, keeping valid %XX
// escapes) is html/template's, for URLs no report makes today.
func TestHTMLReportURLsMatchTemplate(t *testing.T) {
	for _, u := range []string{"data:audio/wav;base64,AB+/=", `javascript:alert("x")`, "a b<c>\"'`\x00é\xff", "%41%4", "%zz%", "%", "x%4"} {
		d := &htmlReport{Mixed: u, Rows: []htmlRow{{Audio: u}}}
		compareWithOracle(t, d)
	}
}

// hostileStrings are fed into every string field of the report.
var hostileStrings = []string{
	`<script>alert(1)</script>`, `</script><script>alert(2)</script>`, `</style>`, `"><img src=x onerror=alert(3)>`,
	`' onmouseover='alert(4)`, "javascript:alert(5)", "line\u2028sep\u2029para", "nul\x00byte", "bad\xffutf8\xc3",
	"&amp; &lt; + -- <!-- -->", "\ufdd0\ufffe\uffff", "`backtick` {{.Name}}", "",
}

// fillStrings sets every string field reachable from v (structs, slices
// and pointers followed) to s, and every int to n, so that a field added
// to the report later is fed hostile text without a change here.
func fillStrings(v reflect.Value, s string, n int) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			fillStrings(v.Elem(), s, n)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() || v.Field(i).CanSet() {
				fillStrings(v.Field(i), s, n)
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			fillStrings(v.Index(i), s, n)
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(s)
		}
	case reflect.Int:
		if v.CanSet() {
			v.SetInt(int64(n))
		}
	}
}

// hostileReport is the full report's data with s in every string field
// (the data: URLs included) and n in every int.
func hostileReport(t testing.TB, s string, n int, percent float64) *htmlReport {
	t.Helper()
	d, err := oracleResults()["full"].htmlData()
	if err != nil {
		t.Fatal(err)
	}
	fillStrings(reflect.ValueOf(d), s, n)
	for i := range d.LatencyRows {
		d.LatencyRows[i].Percent = percent
	}
	return d
}

// pageStructure returns the bytes of page that make its structure (<, >,
// " and '), outside the JSON of the script's data, whose strings
// encoding/json escapes.
func pageStructure(page []byte) string {
	const open, end = `<script type="application/json" id="vt-data">`, "</script>\n<script>"
	i := bytes.Index(page, []byte(open))
	j := bytes.Index(page, []byte(end))
	if i < 0 || j < i {
		return "no data script"
	}
	page = append(bytes.Clone(page[:i+len(open)]), page[j:]...)
	var b strings.Builder
	for _, c := range page {
		switch c {
		case '<', '>', '"', '\'':
			b.WriteByte(c)
		}
	}
	return b.String()
}

// TestHTMLReportHostileText: with hostile text in every field, the writer
// still matches the template, and no value adds a tag or an attribute
// quote: the page's structure is that of the same report with plain text.
func TestHTMLReportHostileText(t *testing.T) {
	t.Parallel() // pure: renders pages and compares them with the oracle
	plain := pageStructure(compareWithOracle(t, hostileReport(t, "x", 1, 50)))
	for _, s := range hostileStrings {
		page := compareWithOracle(t, hostileReport(t, s, -3, 100))
		if s != "" && pageStructure(page) != plain {
			t.Errorf("with %q in every field the page's tags and quotes changed", s)
		}
	}
}

// FuzzHTMLReportMatchesTemplate feeds arbitrary text into every field
// (and numbers into every int and the latency bar's width): the writer
// must match html/template byte for byte and keep the page's structure.
func FuzzHTMLReportMatchesTemplate(f *testing.F) {
	for i, s := range hostileStrings {
		f.Add(s, i-3, float64(i)*12.5)
	}
	f.Fuzz(func(t *testing.T, s string, n int, percent float64) {
		page := compareWithOracle(t, hostileReport(t, s, n, percent))
		// The plain page has the same numbers: an int of 0 leaves out
		// what it would show (the sample rate).
		plain := pageStructure(compareWithOracle(t, hostileReport(t, "x", n, percent)))
		if s != "" && pageStructure(page) != plain {
			t.Errorf("with %q in every field the page's tags and quotes changed", s)
		}
	})
}

// TestReportConstantsCannotEndTheirElements: the style sheet and the
// script are written into <style> and <script> as they are, which is
// safe only while neither holds its element's end tag (nor, for the
// script, a comment opener that changes how it ends).
func TestReportConstantsCannotEndTheirElements(t *testing.T) {
	for _, c := range []struct{ name, text, bad string }{
		{"report.css", reportCSS, "</style"}, {"report.js", reportJS, "</script"}, {"report.js", reportJS, "<!--"},
	} {
		if strings.Contains(strings.ToLower(c.text), c.bad) {
			t.Errorf("%s contains %q, which the page writes unescaped", c.name, c.bad)
		}
	}
	if len(reportCSS) < 100 || len(reportJS) < 100 {
		t.Fatalf("the embedded style sheet (%d bytes) or script (%d bytes) is missing", len(reportCSS), len(reportJS))
	}
}
