package voicetest_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// richConfig is an in-process scenario whose timeline has every kind of
// key field: a greeting, tool calls with arguments and results, a data
// payload, latencies, a barge-in, DTMF, silence and judge events.
func richConfig() voicetest.Config {
	agent := fixtures.Fake(fixtures.FakeConfig{
		Name:     "rich",
		Greeting: fixtures.Reply{Text: "Welcome to Luigi's", Latency: 150 * time.Millisecond},
		Replies: []fixtures.Reply{
			{Text: "Let me check that for you", Latency: 300 * time.Millisecond,
				Tools: []voicetest.ToolCall{{ID: "call_8f2a", Name: "check_availability",
					Arguments: []byte(`{"time": "19:00", "party": 2}`), Result: []byte(`{"free":true}`)}},
				Data: []byte(`{"screen":"availability","slots":[19,20]}`), DataName: "ui"},
			{Text: "one two three four five six", Latency: 250 * time.Millisecond},
			{Text: "Booked for eight", Latency: 400 * time.Millisecond,
				Tools: []voicetest.ToolCall{{Name: "book", Arguments: []byte(`{"party":2,"time":"20:00"}`), Result: []byte(`{"ok":false}`), IsError: true}}},
			{Text: "You pressed one", Latency: 200 * time.Millisecond},
		},
		BargeIn:     true,
		StopLatency: 120 * time.Millisecond,
		DTMF:        true,
	})
	return voicetest.Config{
		Agent:     agent,
		UserVoice: &toneTTS{},
		Judge:     criteriaJudge(allPass),
		Script: []voicetest.Step{
			voicetest.AgentTurn(),
			voicetest.UserSays("A table for two at seven"),
			voicetest.AgentTurn(),
			voicetest.UserSays("Is it quiet"),
			voicetest.Interrupt("Make it eight", voicetest.AfterWords(2)),
			voicetest.AgentTurn(),
			voicetest.Checkpoint("the agent books a table"),
			voicetest.Silence(time.Second),
			voicetest.DTMF("1"),
			voicetest.AgentTurn(),
			voicetest.Verdict(),
		},
	}
}

func TestGoldenRichScenario(t *testing.T) {
	res := voicetest.Scenario(t, richConfig())
	if !res.Success {
		t.Fatalf("scenario failed: %v", res.Err)
	}
	tl := string(res.GoldenTimeline(voicetest.GoldenOptions{}))
	for _, want := range []string{
		` tool_call turn=1 tool=check_availability args={"party":2,"time":"19:00"}`,
		` tool_result turn=1 tool=check_availability result={"free":true}`,
		` data turn=1 text="ui" data={"screen":"availability","slots":[19,20]}`,
		` tool_result turn=3 tool=book result={"ok":false} error=true`,
		` user_interrupt turn=2 text="Make it eight"`,
		` agent_interrupted turn=3 latency=120ms`,
		` dtmf turn=3 text="1"`,
		` silence turn=3 duration=1000ms`,
		` judge_checkpoint turn=3 text="pass: \"the agent books a table\"=pass"`,
		` agent_start_speaking turn=1 latency=300ms`,
	} {
		if !strings.Contains(tl, want) {
			t.Errorf("golden timeline lacks %q:\n%s", want, tl)
		}
	}
	if strings.Contains(tl, "call_8f2a") {
		t.Errorf("the golden timeline holds a tool-call id:\n%s", tl)
	}
}

// TestGoldenHundredRunsAreByteIdentical runs the same in-process scenario
// 20 times on virtual time, writes its golden files to a fresh directory
// each time, and requires every file to be byte-identical, and identical
// to the committed goldens of TestGoldenRichScenario.
//
// Twenty runs (it was 100, the name kept) catch what this test is for:
// anything a golden file takes from map iteration order (Go picks a new
// random order at every range, so with two keys 19 comparisons all agree
// with probability 2^-19), state carried from one run to the next (the
// second run differs), and the directory's depth (i%3). A scheduling race
// of one run in hundreds is beyond either count (100 runs caught a
// 1-in-200 race 40 % of the time); TestSameInstantEventsOnTheSessionClock
// runs 200 for that.
func TestGoldenHundredRunsAreByteIdentical(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var first map[string][]byte
	for i := range 20 {
		cfg := richConfig()
		cfg.Golden.Disable = true // written below, to a fresh directory
		res := voicetest.Scenario(t, cfg)
		if !res.Success {
			t.Fatalf("run %d failed: %v", i, res.Err)
		}
		dir := filepath.Join(root, strings.Repeat("x", 1+i%3), time.Duration(i).String())
		if err := res.WriteGolden(dir, voicetest.GoldenOptions{}); err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
		for _, name := range []string{voicetest.GoldenTranscriptFile, voicetest.GoldenTimelineFile} {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			files[name] = b
		}
		if first == nil {
			first = files
			continue
		}
		for name, b := range files {
			if !bytes.Equal(b, first[name]) {
				t.Fatalf("run %d: %s differs from run 0:\n%s\nrun 0:\n%s", i, name, b, first[name])
			}
		}
	}
	for name, b := range first {
		committed, err := os.ReadFile(filepath.Join("testdata", "golden", "TestGoldenRichScenario", name))
		if err != nil {
			t.Fatalf("the committed golden: %v (run go test ./voicetest -run '^TestGoldenRichScenario$' -update)", err)
		}
		if !bytes.Equal(b, committed) {
			t.Errorf("%s differs from the committed golden:\n%s\ncommitted:\n%s", name, b, committed)
		}
	}
}

// goldenResult builds a Result by hand: two turns with a tool call.
func goldenResult() *voicetest.Result {
	return &voicetest.Result{
		Name: "hand-made",
		Transcript: []voicetest.Message{
			{Turn: 1, Role: voicetest.RoleUser, Text: "A table for twenty-one at 7:30, please."},
			{Turn: 1, Role: voicetest.RoleAgent, Text: "Booked: 21 people at seven thirty."},
		},
		Timeline: []voicetest.Event{
			{At: 0, Type: voicetest.EventUserStartSpeaking, Turn: 1},
			{At: 2400 * time.Millisecond, Type: voicetest.EventUserStopSpeaking, Turn: 1},
			{At: 2700 * time.Millisecond, Type: voicetest.EventToolCall, Turn: 1, Text: "book",
				Tool: &voicetest.ToolCall{ID: "call_1", Name: "book", Arguments: []byte(`{"party":21,"time":"19:30"}`)}},
			{At: 3000 * time.Millisecond, Type: voicetest.EventAgentStartSpeaking, Turn: 1, Latency: 600 * time.Millisecond},
			{At: 9000 * time.Millisecond, Type: voicetest.EventAgentStopSpeaking, Turn: 1},
			{At: 9000 * time.Millisecond, Type: voicetest.EventAgentHangUp, Turn: 1, Text: "goodbye"},
		},
	}
}

// shifted returns a copy of res with the events from index from on moved
// by d and the agent's latency changed by dl.
func shifted(res *voicetest.Result, from int, d, dl time.Duration) *voicetest.Result {
	out := *res
	out.Timeline = append([]voicetest.Event(nil), res.Timeline...)
	for i := from; i < len(out.Timeline); i++ {
		out.Timeline[i].At += d
		if out.Timeline[i].Latency != 0 {
			out.Timeline[i].Latency += dl
		}
	}
	return &out
}

func goldenErr(t *testing.T, err error) *voicetest.GoldenError {
	t.Helper()
	var ge *voicetest.GoldenError
	if !errors.As(err, &ge) {
		t.Fatalf("error %v is not a *GoldenError", err)
	}
	return ge
}

func TestGoldenExactMatch(t *testing.T) {
	dir := t.TempDir()
	res := goldenResult()
	exact := voicetest.GoldenOptions{Match: voicetest.GoldenExact}
	if err := res.WriteGolden(dir, exact); err != nil {
		t.Fatal(err)
	}
	if err := res.CompareGolden(dir, exact); err != nil {
		t.Fatalf("a result differs from its own golden: %v", err)
	}
	// One millisecond of latency is a difference on virtual time.
	err := shifted(res, 3, time.Millisecond, time.Millisecond).CompareGolden(dir, exact)
	if !errors.Is(err, voicetest.ErrGoldenMismatch) {
		t.Fatalf("a 1 ms shift passed the exact comparison: %v", err)
	}
	ge := goldenErr(t, err)
	if ge.Kind != "timeline" || len(ge.Diffs) != 2 {
		t.Fatalf("diffs %v, want the time and the latency of line 4", ge.Diffs)
	}
	d := ge.Diffs[0]
	if d.Line != 4 || d.Index != 4 || d.Entry != "agent_start_speaking turn=1" || d.Field != "time" ||
		d.Golden != "+003000ms (300ms after the previous event)" || d.Actual != "+003001ms (301ms after the previous event)" {
		t.Errorf("first diff %+v", d)
	}
	if d := ge.Diffs[1]; d.Field != "latency" || d.Golden != "600ms" || d.Actual != "601ms" {
		t.Errorf("second diff %+v", d)
	}
	// Only the event that moved is reported, not every event after it.
	msg := err.Error()
	for _, want := range []string{
		"voicetest: golden timeline mismatch: " + filepath.Join(dir, "timeline.golden") + " (exact comparison)",
		"line 4 (agent_start_speaking turn=1): time: golden +003000ms (300ms after the previous event), actual +003001ms (301ms after the previous event)",
		"line 4 (agent_start_speaking turn=1): latency: golden 600ms, actual 601ms",
		"--- golden",
		"-+003000ms agent_start_speaking turn=1 latency=600ms",
		"++003001ms agent_start_speaking turn=1 latency=601ms",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
}

func TestGoldenToleranceAcceptsAndRejects(t *testing.T) {
	dir := t.TempDir()
	res := goldenResult()
	if err := res.WriteGolden(dir, voicetest.GoldenOptions{}); err != nil {
		t.Fatal(err)
	}
	tolerant := voicetest.GoldenOptions{Match: voicetest.GoldenTolerant}
	// A remote agent 200 ms slower on its first reply: within 250 ms.
	if err := shifted(res, 3, 200*time.Millisecond, 200*time.Millisecond).CompareGolden(dir, tolerant); err != nil {
		t.Errorf("a 200 ms wobble failed the tolerant comparison: %v", err)
	}
	// Under Run, GoldenAuto is tolerant.
	if err := shifted(res, 3, 200*time.Millisecond, 200*time.Millisecond).CompareGolden(dir, voicetest.GoldenOptions{}); err != nil {
		t.Errorf("GoldenAuto under Run: %v", err)
	}
	// The six-second answer takes one second longer: within 20% of it.
	if err := shifted(res, 4, time.Second, 0).CompareGolden(dir, tolerant); err != nil {
		t.Errorf("a 1 s longer 6 s answer failed the relative tolerance: %v", err)
	}
	absOnly := tolerant
	absOnly.RelativeTolerance = 1e-9
	if err := shifted(res, 4, time.Second, 0).CompareGolden(dir, absOnly); err == nil {
		t.Error("a 1 s longer answer passed with only the 250 ms absolute tolerance")
	}
	// 400 ms slower: rejected, naming the event, the field, both values
	// and the tolerance.
	err := shifted(res, 3, 400*time.Millisecond, 400*time.Millisecond).CompareGolden(dir, tolerant)
	ge := goldenErr(t, err)
	if len(ge.Diffs) != 2 {
		t.Fatalf("diffs %v, want the gap and the latency of line 4 only", ge.Diffs)
	}
	want := `line 4 (agent_start_speaking turn=1): latency: golden 600ms, actual 1000ms (tolerance ±250ms or 20%)`
	if got := ge.Diffs[1].String(); got != want {
		t.Errorf("diff\n got %s\nwant %s", got, want)
	}
	if !strings.Contains(err.Error(), "(tolerant: times within ±250ms or 20% comparison)") {
		t.Errorf("message does not say the tolerance: %v", err)
	}
	// A wider tolerance accepts it.
	wide := tolerant
	wide.TimeTolerance = 500 * time.Millisecond
	if err := shifted(res, 3, 400*time.Millisecond, 400*time.Millisecond).CompareGolden(dir, wide); err != nil {
		t.Errorf("a 400 ms shift failed a 500 ms tolerance: %v", err)
	}
	// A latency measured as 0 (left out of the file) on one run and as a
	// few milliseconds on the next is within the tolerance, not a
	// missing field; on virtual time it is a difference.
	zero := shifted(res, 0, 0, 0)
	zero.Timeline[3].Latency = 0
	zeroDir := t.TempDir()
	if err := zero.WriteGolden(zeroDir, voicetest.GoldenOptions{}); err != nil {
		t.Fatal(err)
	}
	zero.Timeline[3].Latency = 2 * time.Millisecond
	if err := zero.CompareGolden(zeroDir, tolerant); err != nil {
		t.Errorf("a missing latency against 2ms: %v", err)
	}
	ge = goldenErr(t, zero.CompareGolden(zeroDir, voicetest.GoldenOptions{Match: voicetest.GoldenExact}))
	if len(ge.Diffs) != 1 || ge.Diffs[0].Field != "latency" || ge.Diffs[0].Golden != "" || ge.Diffs[0].Actual != "2ms" {
		t.Errorf("exact: a missing latency against 2ms: %+v", ge.Diffs)
	}
	// Order, types and fields stay exact under tolerance.
	swapped := shifted(res, 0, 0, 0)
	swapped.Timeline[2], swapped.Timeline[3] = swapped.Timeline[3], swapped.Timeline[2]
	if err := swapped.CompareGolden(dir, wide); !errors.Is(err, voicetest.ErrGoldenMismatch) {
		t.Errorf("events in another order passed: %v", err)
	}
	args := shifted(res, 0, 0, 0)
	args.Timeline[2].Tool = &voicetest.ToolCall{Name: "book", Arguments: []byte(`{"party":20,"time":"19:30"}`)}
	ge = goldenErr(t, args.CompareGolden(dir, wide))
	if len(ge.Diffs) != 1 || ge.Diffs[0].Field != "args" || ge.Diffs[0].Golden != `{"party":21,"time":"19:30"}` ||
		ge.Diffs[0].Actual != `{"party":20,"time":"19:30"}` || ge.Diffs[0].Entry != "tool_call turn=1" {
		t.Errorf("tool arguments diff %+v", ge.Diffs)
	}
	// Key order and white space of a JSON payload do not matter.
	reordered := shifted(res, 0, 0, 0)
	reordered.Timeline[2].Tool = &voicetest.ToolCall{Name: "book", Arguments: []byte(`{ "time": "19:30", "party": 21 }`)}
	if err := reordered.CompareGolden(dir, voicetest.GoldenOptions{Match: voicetest.GoldenExact}); err != nil {
		t.Errorf("reordered JSON keys: %v", err)
	}
	// A missing and an extra event.
	short := shifted(res, 0, 0, 0)
	short.Timeline = short.Timeline[:5]
	ge = goldenErr(t, short.CompareGolden(dir, tolerant))
	if len(ge.Diffs) != 1 || ge.Diffs[0].Line != 6 || ge.Diffs[0].Index != 0 || ge.Diffs[0].Golden != `+009000ms agent_hang_up turn=1 text="goodbye"` {
		t.Errorf("missing event diff %+v", ge.Diffs)
	}
	long := shifted(res, 0, 0, 0)
	long.Timeline = append(long.Timeline, voicetest.Event{At: 9500 * time.Millisecond, Type: voicetest.EventAgentLog, Turn: 1, Text: "bye"})
	ge = goldenErr(t, long.CompareGolden(dir, tolerant))
	if len(ge.Diffs) != 1 || ge.Diffs[0].Line != 0 || ge.Diffs[0].Index != 7 ||
		ge.Diffs[0].String() != `entry 7 (agent_log turn=1): not in the golden file: +009500ms agent_log turn=1 text="bye"` {
		t.Errorf("extra event diff %+v", ge.Diffs)
	}
	// Ignore leaves event types out of the golden.
	if err := long.CompareGolden(dir, voicetest.GoldenOptions{Ignore: []voicetest.EventType{voicetest.EventAgentLog}}); err != nil {
		t.Errorf("an ignored event type was compared: %v", err)
	}
}

func TestGoldenTextNormalisation(t *testing.T) {
	dir := t.TempDir()
	res := goldenResult()
	if err := res.WriteGolden(dir, voicetest.GoldenOptions{}); err != nil {
		t.Fatal(err)
	}
	// What STT heard on another run: case, punctuation and numbers differ.
	heard := shifted(res, 0, 0, 0)
	heard.Transcript = []voicetest.Message{
		{Turn: 1, Role: voicetest.RoleUser, Text: "A table for twenty-one at 7:30, please."},
		{Turn: 1, Role: voicetest.RoleAgent, Text: "booked twenty one people at 7:30"},
	}
	norm := voicetest.GoldenOptions{NormalizeText: true}
	if err := heard.CompareGolden(dir, norm); err != nil {
		t.Errorf("normalised texts differ: %v", err)
	}
	ge := goldenErr(t, heard.CompareGolden(dir, voicetest.GoldenOptions{}))
	if ge.Kind != "transcript" || len(ge.Diffs) != 1 || ge.Diffs[0].Line != 2 || ge.Diffs[0].Field != "text" ||
		ge.Diffs[0].Golden != `"Booked: 21 people at seven thirty."` || ge.Diffs[0].Actual != `"booked twenty one people at 7:30"` {
		t.Errorf("diffs without normalisation: %+v", ge.Diffs)
	}
	// Different words still differ, and the note shows the normal forms.
	wrong := shifted(heard, 0, 0, 0)
	wrong.Transcript = append([]voicetest.Message(nil), heard.Transcript...)
	wrong.Transcript[1].Text = "booked twenty two people at 7:30"
	ge = goldenErr(t, wrong.CompareGolden(dir, norm))
	if len(ge.Diffs) != 1 || ge.Diffs[0].Note != `normalised: "booked 21 people at 7 30" vs "booked 22 people at 7 30"` {
		t.Errorf("diffs %+v", ge.Diffs)
	}
	if !strings.Contains(ge.Error(), "texts normalised") {
		t.Errorf("message: %v", ge)
	}
	// The golden keeps the original text.
	b, _ := os.ReadFile(filepath.Join(dir, voicetest.GoldenTranscriptFile))
	if string(b) != "user: A table for twenty-one at 7:30, please.\nagent: Booked: 21 people at seven thirty.\n" {
		t.Errorf("golden transcript %q", b)
	}
}

func TestGoldenMissing(t *testing.T) {
	compareMode(t)
	dir := t.TempDir()
	err := goldenResult().CompareGolden(dir, voicetest.GoldenOptions{})
	if !errors.Is(err, voicetest.ErrGoldenMissing) || errors.Is(err, voicetest.ErrGoldenMismatch) {
		t.Fatalf("err = %v, want ErrGoldenMissing only", err)
	}
	if !strings.Contains(err.Error(), "transcript.golden does not exist; write it with Result.WriteGolden") {
		t.Errorf("message: %v", err)
	}
	// Under Scenario: the test fails with the command that creates it.
	synctest.Test(t, func(t *testing.T) {
		ftb := newFakeTB(t)
		res := voicetest.Scenario(ftb, voicetest.Config{
			Agent:     fixtures.ScriptedAgent(fixtures.Reply{Text: "hello", Latency: 100 * time.Millisecond}),
			UserVoice: &toneTTS{}, Golden: voicetest.GoldenOptions{Dir: dir},
			Script: []voicetest.Step{voicetest.UserSays("hi"), voicetest.AgentTurn()},
		})
		if res.Success || !errors.Is(res.GoldenErr, voicetest.ErrGoldenMissing) || !errors.Is(res.Err, voicetest.ErrGoldenMissing) {
			t.Fatalf("success %v, golden error %v, error %v", res.Success, res.GoldenErr, res.Err)
		}
		msg := ftb.errorText()
		for _, want := range []string{
			"voicetest: golden transcript file " + filepath.Join(dir, "TestGoldenMissing", "transcript.golden") +
				" does not exist; create it with: go test ./voicetest -run '^TestGoldenMissing$' -update",
			"voicetest: golden timeline file " + filepath.Join(dir, "TestGoldenMissing", "timeline.golden") + " does not exist",
			"transcript:",
		} {
			if !strings.Contains(msg, want) {
				t.Errorf("report lacks %q:\n%s", want, msg)
			}
		}
		if ftb.attrs["voicetest.verdict"] != "fail" {
			t.Errorf("verdict attr %q", ftb.attrs["voicetest.verdict"])
		}
	})
}

// withFlags runs f with command-line flags set, then restores them.
func withFlags(t *testing.T, flags map[string]string, f func()) {
	t.Helper()
	for name, value := range flags {
		fl := flag.Lookup(name)
		if fl == nil {
			t.Fatalf("flag -%s is not registered", name)
		}
		old := fl.Value.String()
		if err := flag.Set(name, value); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = flag.Set(name, old) }()
	}
	f()
}

// compareMode turns goldie's -update and -clean off until t ends,
// whatever the command line or GOLDIE_UPDATE chose (voicetest-update and
// `GOLDIE_UPDATE=1 go test ./...` run every package with it on), for a
// test that checks what a comparison reports. It sets the flags, so its
// test must not run in parallel with other scenarios.
func compareMode(t *testing.T) {
	t.Helper()
	for _, name := range []string{"update", "clean"} {
		fl := flag.Lookup(name)
		if fl == nil {
			t.Fatalf("flag -%s is not registered", name)
		}
		old := fl.Value.String()
		if err := flag.Set(name, "false"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = flag.Set(name, old) })
	}
}

// TestGoldenUpdateRoundTrip sets goldie's -update and -clean flags
// itself, so it must not run in parallel with other scenarios.
func TestGoldenUpdateRoundTrip(t *testing.T) {
	compareMode(t)
	dir := t.TempDir()
	scenario := func(reply string) (*voicetest.Result, *fakeTB) {
		var res *voicetest.Result
		var ftb *fakeTB
		synctest.Test(t, func(t *testing.T) {
			ftb = newFakeTB(t)
			res = voicetest.Scenario(ftb, voicetest.Config{
				Agent:     fixtures.ScriptedAgent(fixtures.Reply{Text: reply, Latency: 100 * time.Millisecond}),
				UserVoice: &toneTTS{}, Golden: voicetest.GoldenOptions{Dir: dir},
				Script: []voicetest.Step{voicetest.UserSays("hi"), voicetest.AgentTurn()},
			})
		})
		return res, ftb
	}
	update := map[string]string{"update": "true"}
	golden := filepath.Join(dir, "TestGoldenUpdateRoundTrip", voicetest.GoldenTranscriptFile)
	stale := filepath.Join(dir, "TestGoldenUpdateRoundTrip", "old.golden")
	sub := filepath.Join(dir, "TestGoldenUpdateRoundTrip", "sub", voicetest.GoldenTimelineFile)
	for _, f := range []string{stale, sub} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	withFlags(t, update, func() {
		if res, ftb := scenario("hello there"); !res.Success || len(ftb.errs) != 0 {
			t.Fatalf("-update: %v %v", res.Err, ftb.errs)
		}
	})
	if b, err := os.ReadFile(golden); err != nil || string(b) != "user: hi\nagent: hello there\n" {
		t.Fatalf("after -update: %q, %v", b, err)
	}
	if _, err := os.Stat(stale); err != nil {
		t.Errorf("-update without -clean removed a stale golden: %v", err)
	}
	if res, ftb := scenario("hello there"); !res.Success || len(ftb.errs) != 0 {
		t.Fatalf("after -update: %v %v", res.Err, ftb.errs)
	}
	res, ftb := scenario("hello friend")
	if res.Success || !errors.Is(res.GoldenErr, voicetest.ErrGoldenMismatch) {
		t.Fatalf("a changed reply passed: %v", res.Err)
	}
	if msg := ftb.errorText(); !strings.Contains(msg, `line 2 (agent message): text: golden "hello there", actual "hello friend"`) ||
		!strings.Contains(msg, "update the golden file: go test ./voicetest -run '^TestGoldenUpdateRoundTrip$' -update") {
		t.Errorf("report:\n%s", msg)
	}
	withFlags(t, map[string]string{"update": "true", "clean": "true"}, func() {
		if res, ftb := scenario("hello friend"); !res.Success || len(ftb.errs) != 0 {
			t.Fatalf("-update -clean: %v %v", res.Err, ftb.errs)
		}
	})
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("-clean left the stale golden: %v", err)
	}
	if _, err := os.Stat(sub); err != nil {
		t.Errorf("-clean removed a subtest's golden: %v", err)
	}
	if res, ftb := scenario("hello friend"); !res.Success || len(ftb.errs) != 0 {
		t.Fatalf("after the second -update: %v %v", res.Err, ftb.errs)
	}
}

func TestGoldenSubtestNaming(t *testing.T) {
	for _, tc := range []struct{ name, dir string }{
		{"party of 2", "party_of_2"},
		{"../../escape", "escape"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := voicetest.Scenario(t, voicetest.Config{
				Agent:     fixtures.ScriptedAgent(fixtures.Reply{Text: "hi " + tc.dir, Latency: 50 * time.Millisecond}),
				UserVoice: &toneTTS{},
				Script:    []voicetest.Step{voicetest.UserSays("hello"), voicetest.AgentTurn()},
			})
			if !res.Success {
				t.Fatal(res.Err)
			}
		})
	}
	if _, err := os.Stat(filepath.Join("testdata", "golden", "TestGoldenSubtestNaming", "party_of_2", "transcript.golden")); err != nil {
		t.Errorf("subtest golden: %v", err)
	}
	// "../../escape" is three elements: "..", "..", "escape". Each ".."
	// becomes a directory of its own, named with a hash of the original,
	// never the parent directory.
	sum := sha256.Sum256([]byte(".."))
	dots := "__~" + hex.EncodeToString(sum[:4])
	if _, err := os.Stat(filepath.Join("testdata", "golden", "TestGoldenSubtestNaming", dots, dots, "escape", "timeline.golden")); err != nil {
		t.Errorf("the golden of subtest ../../escape: %v", err)
	}
	if _, err := os.Stat(filepath.Join("testdata", "escape")); err == nil {
		t.Error("a subtest named ../../escape wrote outside testdata/golden")
	}
}

func TestGoldenRepeatComparesTheFirstRun(t *testing.T) {
	first, second := goldenResult(), goldenResult()
	second.Transcript = second.Transcript[:1]
	agg := *second
	agg.Runs = []*voicetest.Result{first, second}
	if got, want := agg.GoldenTranscript(voicetest.GoldenOptions{}), first.GoldenTranscript(voicetest.GoldenOptions{}); !bytes.Equal(got, want) {
		t.Errorf("golden transcript of a repeated scenario:\n%s\nwant the first run's:\n%s", got, want)
	}
}

func TestGoldenScrubbing(t *testing.T) {
	tmp := filepath.Join(os.TempDir(), "voicetest-123", "call.wav")
	wd, _ := os.Getwd()
	root := filepath.Dir(wd) // the module's root: this package is ./voicetest
	res := &voicetest.Result{
		Transcript: []voicetest.Message{{Role: voicetest.RoleAgent, Text: "Saved to " + tmp + " at 2026-11-21T06:51:47.123Z.\nOrder A-1234."}},
		Timeline: []voicetest.Event{{Type: voicetest.EventData, Turn: 1, Text: "trace",
			Data: []byte(`{"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","at":"2026-11-21 06:51:47+01:00","file":"` + filepath.Join(wd, "testdata", "x.wav") + `","readme":"` + filepath.Join(root, "README.md") + `","n":1.50}`)}},
	}
	opts := voicetest.GoldenOptions{Scrub: func(s string) string { return strings.ReplaceAll(s, "A-1234", "<order>") }}
	if got, want := string(res.GoldenTranscript(opts)), `agent: Saved to <tmp> at <time>.\nOrder <order>.`+"\n"; got != want {
		t.Errorf("transcript\n got %q\nwant %q", got, want)
	}
	if got, want := string(res.GoldenTimeline(opts)),
		`+000000ms data turn=1 text="trace" data={"at":"<time>","file":"<pwd>/testdata/x.wav","id":"<uuid>","n":1.50,"readme":"<module>/README.md"}`+"\n"; got != want {
		t.Errorf("timeline\n got %s\nwant %s", got, want)
	}
}

func TestGoldenInvalidFiles(t *testing.T) {
	dir := t.TempDir()
	res := goldenResult()
	if err := res.WriteGolden(dir, voicetest.GoldenOptions{}); err != nil {
		t.Fatal(err)
	}
	tl := filepath.Join(dir, voicetest.GoldenTimelineFile)
	for _, tc := range []struct{ content, want string }{
		{"+000000ms user_start_speaking\n", "line 1: the turn= field is missing"},
		{"0ms user_start_speaking turn=1\n", "line 1: the line does not start with an offset"},
		{"+000000ms user_start_speaking turn=1 colour=red\n", `line 1: unknown field "colour"`},
		{"+000000ms tool_call turn=1 tool=x args={\"a\":\n", "line 1: field args: invalid JSON"},
		{"+000000ms user_interrupt turn=1 text=\"unterminated\n", "line 1: field text: expected a Go-quoted string"},
		{"+000000ms agent_start_speaking turn=1 latency=fast\n", `line 1: field latency: "fast" is not a number of milliseconds`},
	} {
		if err := os.WriteFile(tl, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		err := res.CompareGolden(dir, voicetest.GoldenOptions{Match: voicetest.GoldenTolerant})
		if !errors.Is(err, voicetest.ErrGoldenMismatch) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "rewrite it with -update") {
			t.Errorf("%q: %v, want %q", tc.content, err, tc.want)
		}
	}
	// CRLF line ends (a Windows checkout) still match exactly.
	if err := res.WriteGolden(dir, voicetest.GoldenOptions{}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(tl)
	if err := os.WriteFile(tl, bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := res.CompareGolden(dir, voicetest.GoldenOptions{Match: voicetest.GoldenExact}); err != nil {
		t.Errorf("CRLF golden: %v", err)
	}
	// A hand-edited golden with the same events in another form fails the
	// exact comparison with a line diff.
	if err := os.WriteFile(tl, bytes.ReplaceAll(b, []byte("+000000ms"), []byte("+0ms")), 0o644); err != nil {
		t.Fatal(err)
	}
	err := res.CompareGolden(dir, voicetest.GoldenOptions{Match: voicetest.GoldenExact})
	if err == nil || !strings.Contains(err.Error(), "not in the form -update writes it") {
		t.Errorf("non-canonical golden: %v", err)
	}
}

func TestGoldenOptionsValidation(t *testing.T) {
	for _, tc := range []struct {
		opts voicetest.GoldenOptions
		want string
	}{
		{voicetest.GoldenOptions{TimeTolerance: -time.Second}, "Config.Golden.TimeTolerance is -1s"},
		{voicetest.GoldenOptions{RelativeTolerance: 1.5}, "Config.Golden.RelativeTolerance is 1.5"},
		{voicetest.GoldenOptions{Match: 7}, "Config.Golden.Match is GoldenMatch(7)"},
	} {
		_, err := voicetest.Run(t.Context(), voicetest.Config{Agent: fixtures.SilentAgent(), Golden: tc.opts})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.opts, err, tc.want)
		}
		if err := goldenResult().CompareGolden(t.TempDir(), tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CompareGolden %+v: %v", tc.opts, err)
		}
	}
}

func TestGoldenDisable(t *testing.T) {
	res := voicetest.Scenario(t, voicetest.Config{
		Agent:     fixtures.ScriptedAgent(fixtures.Reply{Text: "no golden for me"}),
		UserVoice: &toneTTS{}, Golden: voicetest.GoldenOptions{Disable: true},
		Script: []voicetest.Step{voicetest.UserSays("hi"), voicetest.AgentTurn()},
	})
	if !res.Success || res.GoldenErr != nil {
		t.Fatalf("%v %v", res.Err, res.GoldenErr)
	}
	if _, err := os.Stat(filepath.Join("testdata", "golden", t.Name())); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a scenario with Golden.Disable has golden files: %v", err)
	}
}

// AssertGolden checks a Run result as Scenario checks its own: under the
// test's name, reporting through t.
func TestAssertGoldenOnARunResult(t *testing.T) {
	compareMode(t)
	dir := t.TempDir()
	var res *voicetest.Result
	synctest.Test(t, func(t *testing.T) {
		var err error
		res, err = voicetest.Run(t.Context(), voicetest.Config{
			Name:      "booking",
			Agent:     fixtures.ScriptedAgent(fixtures.Reply{Text: "hello", Latency: 100 * time.Millisecond}),
			UserVoice: &toneTTS{},
			Script:    []voicetest.Step{voicetest.UserSays("hi"), voicetest.AgentTurn()},
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	opts := voicetest.GoldenOptions{Dir: dir, Match: voicetest.GoldenExact}
	ftb := newFakeTB(t)
	voicetest.AssertGolden(ftb, res, opts)
	if msg := ftb.errorText(); !strings.Contains(msg, filepath.Join(dir, "TestAssertGoldenOnARunResult", "booking", "transcript.golden")+" does not exist; create it with: go test ./voicetest -run '^TestAssertGoldenOnARunResult$' -update") {
		t.Fatalf("errors: %s", msg)
	}
	if err := res.WriteGolden(filepath.Join(dir, "TestAssertGoldenOnARunResult", "booking"), opts); err != nil {
		t.Fatal(err)
	}
	ftb = newFakeTB(t)
	voicetest.AssertGolden(ftb, res, opts)
	if len(ftb.errs) != 0 {
		t.Fatalf("errors after WriteGolden: %v", ftb.errs)
	}
}
