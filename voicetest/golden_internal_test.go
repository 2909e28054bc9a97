package voicetest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestNormalizeText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Hello, World!", "hello world"},
		{"  many   spaces\tand\nlines ", "many spaces and lines"},
		{"Don't stop — I’m here.", "dont stop im here"},
		{"twenty one", "21"},
		{"Twenty-One", "21"},
		{"21", "21"},
		{"one hundred and five", "105"},
		{"a hundred", "100"},
		{"a thousand and one nights", "1001 nights"},
		{"two thousand twenty four", "2024"},
		{"one million two hundred thousand", "1200000"},
		{"fifteen hundred", "1500"},
		{"1,000 and 1,234,567", "1000 and 1234567"},
		{"seven thirty", "7 30"},
		{"7:30", "7 30"},
		{"nineteen eighty four", "19 84"},
		{"one two three", "1 2 3"},
		{"zero", "0"},
		{"zero zero seven", "0 0 7"},
		{"three point one four", "3.14"},
		{"3.14", "3.14"},
		{"the end. Then", "the end then"},
		{"twenty first", "21st"},
		{"the 21st", "the 21st"},
		{"second", "2nd"},
		{"eleventh hour", "11th hour"},
		{"one hundredth", "100th"},
		{"fifty %", "50 percent"},
		{"50%", "50 percent"},
		{"salt & pepper", "salt and pepper"},
		{"hundred", "hundred"},
		{"a table for two", "a table for 2"},
		{"for to", "for to"},
		{"one hundred and", "100 and"},
		{"thousand million", "thousand million"},
		{"Café AU lait", "café au lait"},
		{"", ""},
	} {
		if got := NormalizeText(tc.in); got != tc.want {
			t.Errorf("NormalizeText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestGoldenDir(t *testing.T) {
	root := filepath.Join("testdata", "golden")
	for _, tc := range []struct {
		test, scenario string
		want           []string
	}{
		{"TestBook", "TestBook", []string{"TestBook"}},
		{"TestBook/party_of_2", "TestBook/party_of_2", []string{"TestBook", "party_of_2"}},
		{"TestBook/x", "", []string{"TestBook", "x"}},
		{"TestBook", "booking", []string{"TestBook", "booking"}},
		{"TestBook", "booking: two/people", []string{"TestBook", "booking__two_people~" + hashOf("booking: two/people")}},
		{"TestBook/../..", "TestBook/../..", []string{"TestBook", "__~" + hashOf(".."), "__~" + hashOf("..")}},
		{"TestBook/.", "", []string{"TestBook", "_~" + hashOf(".")}},
		{"TestBook//etc", "", []string{"TestBook", "_~" + hashOf(""), "etc"}},
		{"TestBook/CON", "", []string{"TestBook", "_CON~" + hashOf("CON")}},
		{"TestBook/a:b", "", []string{"TestBook", "a_b~" + hashOf("a:b")}},
		{"TestBook/a?b", "", []string{"TestBook", "a_b~" + hashOf("a?b")}},
		{"TestBook/.hidden", "", []string{"TestBook", "_hidden~" + hashOf(".hidden")}},
		{"TestBook/v1.2", "", []string{"TestBook", "v1.2"}},
		{`TestBook/C:\x`, "", []string{"TestBook", "C__x~" + hashOf(`C:\x`)}},
	} {
		got, err := goldenDir(root, tc.test, tc.scenario)
		want := filepath.Join(append([]string{root}, tc.want...)...)
		if err != nil || got != want {
			t.Errorf("goldenDir(%q, %q) = %q, %v; want %q", tc.test, tc.scenario, got, err, want)
		}
		if rel, err := filepath.Rel(root, got); err != nil || !filepath.IsLocal(rel) {
			t.Errorf("goldenDir(%q) = %q leaves %s", tc.test, got, root)
		}
	}
	long := strings.Repeat("x", 300)
	got, _ := goldenDir(root, "TestBook/"+long, "")
	if base := filepath.Base(got); len(base) != 80+1+8 || !strings.HasPrefix(base, strings.Repeat("x", 80)+"~") {
		t.Errorf("a long name became %q", base)
	}
	if _, err := goldenDir(root, "", ""); err == nil {
		t.Error("a test with no name got a golden directory")
	}
}

// hashOf is the hash goldenPathElem appends to a name it changed.
func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

func TestTimelineRoundTrip(t *testing.T) {
	res := &Result{Timeline: []Event{
		{At: 0, Type: EventUserStartSpeaking, Turn: 1},
		{At: 1500 * time.Millisecond, Type: EventUserInterrupt, Turn: 1, Text: "quote \" backslash \\ newline \n tab \t unicode é"},
		{At: 1700 * time.Millisecond, Type: EventToolCall, Turn: 1, Tool: &ToolCall{ID: "x", Name: "my tool", Arguments: json.RawMessage(`{"b":[1,2.50,"s p a c e"],"a":{"z":null,"y":true}}`)}},
		{At: 1700 * time.Millisecond, Type: EventToolResult, Turn: 1, Tool: &ToolCall{Name: "my tool", Result: json.RawMessage(`not json`), IsError: true}},
		{At: 1800 * time.Millisecond, Type: EventData, Turn: 1, Text: "ui", Data: json.RawMessage(`"just a string"`)},
		{At: 1900 * time.Millisecond, Type: EventData, Turn: 1, Data: json.RawMessage(`{"html":"<b>&</b>"}`)},
		{At: 2 * time.Second, Type: EventAgentStartSpeaking, Turn: 1, Latency: 1234 * time.Millisecond},
		{At: 1000 * time.Second, Type: EventSleep, Turn: 2, Duration: 3 * time.Second},
	}}
	text := res.GoldenTimeline(GoldenOptions{})
	for _, want := range []string{
		`+001500ms user_interrupt turn=1 text="quote \" backslash \\ newline \n tab \t unicode é"`,
		`+001700ms tool_call turn=1 tool="my tool" args={"a":{"y":true,"z":null},"b":[1,2.50,"s p a c e"]}`,
		`+001700ms tool_result turn=1 tool="my tool" result_raw="not json" error=true`,
		`+001800ms data turn=1 text="ui" data="just a string"`,
		`+001900ms data turn=1 data={"html":"<b>&</b>"}`,
		`+1000000ms sleep turn=2 duration=3000ms`,
	} {
		if !strings.Contains(string(text), want+"\n") {
			t.Errorf("timeline lacks %s:\n%s", want, text)
		}
	}
	evs, err := parseTimeline(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != len(res.Timeline) {
		t.Fatalf("%d events parsed, want %d", len(evs), len(res.Timeline))
	}
	if e := evs[1]; string(e.Text) != res.Timeline[1].Text || e.Gap != timing(1500*time.Millisecond) {
		t.Errorf("interrupt parsed as %+v", e)
	}
	if e := evs[2]; e.Tool != "my tool" || e.Args != `{"a":{"y":true,"z":null},"b":[1,2.50,"s p a c e"]}` || e.Gap != timing(200*time.Millisecond) {
		t.Errorf("tool call parsed as %+v", e)
	}
	if e := evs[3]; e.ResultRaw != "not json" || !e.IsError || e.Gap != 0 {
		t.Errorf("tool result parsed as %+v", e)
	}
	if e := evs[6]; e.Latency == nil || *e.Latency != timing(1234*time.Millisecond) {
		t.Errorf("latency parsed as %+v", e)
	}
	if e := evs[7]; e.At != 1000*time.Second || e.Duration != 3*time.Second || e.Turn != 2 {
		t.Errorf("sleep parsed as %+v", e)
	}
	// Rendering what was parsed gives the same file: nothing is lost.
	c := newGoldenComparer(GoldenOptions{Match: GoldenExact}, true)
	if diffs := c.diff(evs, mustParse(t, res.GoldenTimeline(GoldenOptions{}))); len(diffs) != 0 {
		t.Errorf("a timeline differs from itself: %+v", diffs)
	}
}

func mustParse(t *testing.T, b []byte) []goldenEvent {
	t.Helper()
	evs, err := parseTimeline(b)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func TestTranscriptEscapes(t *testing.T) {
	res := &Result{Transcript: []Message{
		{Role: RoleAgent, Text: "line one\nline two \\n literally"},
		{Role: RoleAgent, AudioOnly: true},
		{Role: RoleUser},
		{Role: RoleUser, Text: "colon: inside"},
	}}
	text := string(res.GoldenTranscript(GoldenOptions{}))
	want := "agent: line one\\nline two \\\\n literally\nagent: (audio only)\nuser: (silence)\nuser: colon: inside\n"
	if text != want {
		t.Fatalf("transcript %q, want %q", text, want)
	}
	msgs, err := parseTranscript([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if string(msgs[0].Text) != res.Transcript[0].Text || string(msgs[3].Text) != "colon: inside" {
		t.Errorf("parsed %+v", msgs)
	}
	for _, bad := range []string{"no colon here\n", "agent: trailing \\\n", "agent: \\x\n"} {
		if _, err := parseTranscript([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestPackageArg(t *testing.T) {
	// go test runs in the package directory, voicetest/ of the module.
	if got := packageArg(); got != "./voicetest" {
		t.Errorf("packageArg() = %q", got)
	}
	if got := updateCommand("TestX/party_of_(2)"); got != `go test ./voicetest -run '^TestX$/^party_of_\(2\)$' -update` {
		t.Errorf("updateCommand = %s", got)
	}
}

func TestWriteFileAtomicLeavesNoTemporaryFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	for range 3 {
		if err := writeFileAtomic(filepath.Join(dir, "x.golden"), []byte("data\n")); err != nil {
			t.Fatal(err)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 1 || ents[0].Name() != "x.golden" {
		t.Fatalf("directory holds %v, %v", ents, err)
	}
	if fi, _ := ents[0].Info(); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
	// A directory in the way is an error, not a panic or a silent skip.
	if err := writeFileAtomic(filepath.Join(dir, "x.golden", "y.golden"), nil); err == nil {
		t.Error("writing under a file succeeded")
	}
}

// TestSameEventsCoversEveryField fails when goldenEvent or goldenMessage
// gains a field: sameEvents and sameMessages (the fast paths) and
// eventFields and messageFields (the diff) must then compare it too, and
// this count be updated.
func TestSameEventsCoversEveryField(t *testing.T) {
	if n := reflect.TypeFor[goldenEvent]().NumField(); n != 17 {
		t.Errorf("goldenEvent has %d fields; update sameEvents, eventFields, goldenEventLeaves, goldenEvent.value, goldenFieldKeys and this test", n)
	}
	if n := reflect.TypeFor[goldenMessage]().NumField(); n != 4 {
		t.Errorf("goldenMessage has %d fields; update sameMessages, messageFields, goldenMessageLeaves and this test", n)
	}
	// And each field, changed alone, makes the events differ both ways.
	base := goldenEvent{Type: "x", Turn: 1, Text: "a", Tool: "t", Args: "1", ArgsRaw: "r", Result: "2", ResultRaw: "r",
		Data: "3", DataRaw: "r", Latency: new(timing(5)), Duration: 7, Gap: 9}
	changes := map[string]func(e *goldenEvent){
		"Gap": func(e *goldenEvent) { e.Gap++ }, "Type": func(e *goldenEvent) { e.Type = "y" },
		"Turn": func(e *goldenEvent) { e.Turn++ }, "Text": func(e *goldenEvent) { e.Text = "b" },
		"Tool": func(e *goldenEvent) { e.Tool = "u" }, "Args": func(e *goldenEvent) { e.Args = "4" },
		"ArgsRaw": func(e *goldenEvent) { e.ArgsRaw = "s" }, "Result": func(e *goldenEvent) { e.Result = "4" },
		"ResultRaw": func(e *goldenEvent) { e.ResultRaw = "s" }, "IsError": func(e *goldenEvent) { e.IsError = true },
		"Data": func(e *goldenEvent) { e.Data = "4" }, "DataRaw": func(e *goldenEvent) { e.DataRaw = "s" },
		"Latency": func(e *goldenEvent) { e.Latency = new(timing(6)) }, "Duration": func(e *goldenEvent) { e.Duration++ },
	}
	c := newGoldenComparer(GoldenOptions{Match: GoldenExact}, true)
	for field, change := range changes {
		changed := base
		change(&changed)
		if c.sameEvents([]goldenEvent{base}, []goldenEvent{changed}) {
			t.Errorf("sameEvents ignores %s", field)
		}
		if d := c.diff([]goldenEvent{base}, []goldenEvent{changed}); len(d) != 1 || d[0].field != field {
			t.Errorf("diff reports %+v for a change of %s", d, field)
		}
	}
	noLatency := base
	noLatency.Latency = nil
	if c.sameEvents([]goldenEvent{base}, []goldenEvent{noLatency}) {
		t.Error("sameEvents ignores a missing latency")
	}
}

// FuzzParseTimeline checks that no golden file, however damaged, panics
// the parser, and that every file it accepts equals itself under both
// comparisons (the comparers are reflexive).
func FuzzParseTimeline(f *testing.F) {
	f.Add([]byte("+000000ms user_start_speaking turn=1\n+001450ms agent_start_speaking turn=1 latency=250ms\n"))
	f.Add([]byte(`+001700ms tool_call turn=1 tool="my tool" args={"a":[1,2]} result_raw="x" error=true` + "\n"))
	f.Add([]byte(`-000010ms data turn=0 text="\u00e9" data="s" duration=5ms` + "\r\n"))
	exact := newGoldenComparer(GoldenOptions{Match: GoldenExact}, true)
	tolerant := newGoldenComparer(GoldenOptions{Match: GoldenTolerant, NormalizeText: true}, false)
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, err := parseTimeline(data)
		if err != nil {
			return
		}
		for i, e := range evs {
			if e.Line != i+1 {
				t.Fatalf("event %d has line %d", i, e.Line)
			}
		}
		if d := exact.diff(evs, evs); len(d) != 0 {
			t.Fatalf("exact: a timeline differs from itself: %+v", d)
		}
		if d := tolerant.diff(evs, evs); len(d) != 0 {
			t.Fatalf("tolerant: a timeline differs from itself: %+v", d)
		}
	})
}

func TestScrubberPrefersTheLongestDirectory(t *testing.T) {
	tmp := t.TempDir()
	mod := filepath.Join(tmp, "work", "mod")
	pkg := filepath.Join(mod, "pkg")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/mod\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	t.Chdir(pkg)
	s := newScrubber(GoldenOptions{})
	for in, want := range map[string]string{
		filepath.Join(pkg, "testdata", "a.wav") + " was read":   "<pwd>/testdata/a.wav was read",
		filepath.Join(mod, "README.md"):                         "<module>/README.md",
		"saved " + filepath.Join(tmp, "x123", "y.wav") + ", ok": "saved <tmp>, ok",
		"at 2026-01-02T03:04:05+0100 and 2026-01-02 03:04":      "at <time> and <time>",
		"id 123e4567-e89b-12d3-a456-426614174000.":              "id <uuid>.",
		"nothing to scrub in 2026 or 12:30":                     "nothing to scrub in 2026 or 12:30",
	} {
		if got := s.text(in); got != filepath.FromSlash(want) && got != want {
			t.Errorf("scrub(%q) = %q, want %q", in, got, want)
		}
	}
}
