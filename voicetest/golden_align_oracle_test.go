package voicetest

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The golden comparison's oracle: go-cmp, which the comparison used until
// golden_align.go replaced it (go-cmp turns the linker's dead-method
// elimination off in every binary that links it; tests may). goCmpOptions
// and goCmpDiff are that code as it was.
//
// Where the two may differ: the alignment. go-cmp's search is greedy and
// starts from the front or from the back at random, once per process (so
// a report could change from run to run); ours keeps the most equal
// entries there are, the same way every run. So the oracle checks the
// verdict, that our report is correct on its own, and that it keeps no
// fewer entries as equal than go-cmp's; the fixed cases pin reports.

// goCmpOptions are the options the golden comparison gave go-cmp.
func goCmpOptions(c *goldenComparer) cmp.Options {
	return cmp.Options{
		cmpopts.IgnoreFields(goldenEvent{}, "Line", "At"),
		cmpopts.IgnoreFields(goldenMessage{}, "Line"),
		cmpopts.IgnoreUnexported(goldenEvent{}, goldenMessage{}),
		cmp.Comparer(c.sameTiming),
		cmp.Comparer(c.sameSpeech),
		cmp.Comparer(c.sameJSON),
	}
}

// goCmpDiff is the comparison's diff as go-cmp made it.
func goCmpDiff(c *goldenComparer, golden, actual any) []entryDiff {
	d, _ := goCmpCompare(c, golden, actual)
	return d
}

// goCmpCompare is goCmpDiff and go-cmp's verdict.
func goCmpCompare(c *goldenComparer, golden, actual any) ([]entryDiff, bool) {
	r := &entryReporter{}
	equal := cmp.Equal(golden, actual, goCmpOptions(c), cmp.Reporter(r))
	return r.diffs, equal
}

// entryReporter is a cmp.Reporter that records which entry (slice
// element) and which of its fields differ.
type entryReporter struct {
	path  cmp.Path
	diffs []entryDiff
}

func (r *entryReporter) PushStep(ps cmp.PathStep) { r.path = append(r.path, ps) }

func (r *entryReporter) PopStep() { r.path = r.path[:len(r.path)-1] }

func (r *entryReporter) Report(res cmp.Result) {
	if res.Equal() {
		return
	}
	d := entryDiff{ix: -1, iy: -1}
	at := -1
	for i, ps := range r.path {
		if si, ok := ps.(cmp.SliceIndex); ok {
			d.ix, d.iy = si.SplitKeys()
			at = i
			break
		}
	}
	if at >= 0 {
		for _, ps := range r.path[at+1:] {
			if sf, ok := ps.(cmp.StructField); ok {
				d.field = sf.Name()
				break
			}
		}
	}
	r.diffs = append(r.diffs, d)
}

// oracleComparers are the comparisons the oracle checks: exact, tolerant
// with normalised texts and the default tolerance, tolerant with a small
// tolerance of its own.
func oracleComparers() map[string]*goldenComparer {
	return map[string]*goldenComparer{
		"exact":    newGoldenComparer(GoldenOptions{Match: GoldenExact}, true),
		"tolerant": newGoldenComparer(GoldenOptions{Match: GoldenTolerant, NormalizeText: true}, false),
		"tight":    newGoldenComparer(GoldenOptions{Match: GoldenTolerant, TimeTolerance: 10 * time.Millisecond, RelativeTolerance: 0.1}, false),
	}
}

// checkOracle's check compares ours with go-cmp on one pair: the same
// verdict; a correct report (checkReport); and at least as many entries
// kept as equal as go-cmp's report keeps (ours keeps the most there are;
// go-cmp's search is greedy), where the pair fits maxAlignCells.
func checkAgainstGoCmp(t *testing.T, name string, c *goldenComparer, golden, actual any) {
	t.Helper()
	want, equal := goCmpCompare(c, golden, actual)
	got := c.diff(golden, actual)
	if (len(got) == 0) != equal {
		t.Fatalf("%s: go-cmp says equal=%v, ours reports %v\ngolden %+v\nactual %+v", name, equal, got, golden, actual)
	}
	var same bool
	nx := 0
	switch g := golden.(type) {
	case []goldenEvent:
		same = c.sameEvents(g, actual.([]goldenEvent))
		nx = len(g)
	case []goldenMessage:
		same = c.sameMessages(g, actual.([]goldenMessage))
		nx = len(g)
	}
	if same != equal {
		t.Fatalf("%s: go-cmp says equal=%v, the fast path %v", name, equal, same)
	}
	if err := checkReport(c, golden, actual, got); err != nil {
		t.Fatalf("%s: report %v: %v\ngolden %+v\nactual %+v", name, got, err, golden, actual)
	}
	if k, kc := keptEqual(nx, got), keptEqual(nx, want); k < kc {
		t.Fatalf("%s: ours keeps %d entries as equal, go-cmp's report %d\nours   %v\ngo-cmp %v\ngolden %+v\nactual %+v", name, k, kc, got, want, golden, actual)
	}
}

// keptEqual counts the golden entries a report leaves as equal: those
// neither removed nor changed.
func keptEqual(nx int, diffs []entryDiff) int {
	touched := map[int]bool{}
	for _, d := range diffs {
		if d.ix >= 0 {
			touched[d.ix] = true
		}
	}
	return nx - len(touched)
}

// checkReport checks a report on its own: the entries not reported are
// equal pairs, in order; every entry reported changed differs in exactly
// the fields reported; and golden, with the removed entries dropped, the
// inserted ones added and the changed fields set from the actual, is the
// actual.
func checkReport(c *goldenComparer, golden, actual any, diffs []entryDiff) error {
	switch g := golden.(type) {
	case []goldenEvent:
		return applyReport(g, actual.([]goldenEvent), diffs, c.eventFields, c.sameEvents)
	case []goldenMessage:
		return applyReport(g, actual.([]goldenMessage), diffs, c.messageFields, c.sameMessages)
	}
	return fmt.Errorf("entries of type %T", golden)
}

func applyReport[E any](golden, actual []E, diffs []entryDiff, fields func(x, y *E, out []string) []string, same func(g, a []E) bool) error {
	var edited []E
	gi, ai := 0, 0
	keep := func(n int) error { // n pairs not reported: they must be equal
		for ; n > 0; n-- {
			if gi >= len(golden) || ai >= len(actual) {
				return fmt.Errorf("entries %d/%d not reported run past the end", gi, ai)
			}
			if f := fields(&golden[gi], &actual[ai], nil); len(f) > 0 {
				return fmt.Errorf("entries %d and %d differ in %v but are not reported", gi, ai, f)
			}
			edited = append(edited, golden[gi])
			gi, ai = gi+1, ai+1
		}
		return nil
	}
	for i := 0; i < len(diffs); {
		d := diffs[i]
		var err error
		switch {
		case d.ix >= 0 && d.iy < 0:
			if d.field != "" || d.ix-gi < 0 {
				return fmt.Errorf("removal %+v out of order", d)
			}
			err = keep(d.ix - gi)
			gi++
			i++
		case d.ix < 0 && d.iy >= 0:
			if d.field != "" || d.iy-ai < 0 {
				return fmt.Errorf("insertion %+v out of order", d)
			}
			if err = keep(d.iy - ai); err == nil {
				edited = append(edited, actual[ai])
			}
			ai++
			i++
		case d.ix >= 0 && d.iy >= 0:
			if d.ix-gi != d.iy-ai || d.ix-gi < 0 {
				return fmt.Errorf("change %+v out of step with %d/%d", d, gi, ai)
			}
			if err = keep(d.ix - gi); err != nil {
				break
			}
			var reported []string
			for ; i < len(diffs) && diffs[i].ix == d.ix && diffs[i].iy == d.iy; i++ {
				reported = append(reported, diffs[i].field)
			}
			if f := fields(&golden[gi], &actual[ai], nil); !slices.Equal(f, reported) {
				return fmt.Errorf("entries %d and %d differ in %v, reported %v", gi, ai, f, reported)
			}
			e := golden[gi]
			ev, av := reflect.ValueOf(&e).Elem(), reflect.ValueOf(actual[ai])
			for _, f := range reported {
				ev.FieldByName(f).Set(av.FieldByName(f))
			}
			edited = append(edited, e)
			gi, ai = gi+1, ai+1
		default:
			return fmt.Errorf("diff %+v names no entry", d)
		}
		if err != nil {
			return err
		}
	}
	if len(golden)-gi != len(actual)-ai {
		return fmt.Errorf("%d golden and %d actual entries left unreported", len(golden)-gi, len(actual)-ai)
	}
	if err := keep(len(golden) - gi); err != nil {
		return err
	}
	if !same(edited, actual) {
		return fmt.Errorf("the golden with the report applied is %+v", edited)
	}
	return nil
}

// Values the generator draws from: few, so that entries often coincide,
// and with the comparisons' edges — texts equal once normalised, JSON
// equal by value, times at the tolerances and one nanosecond past them.
var (
	oracleTypes = []EventType{EventUserStartSpeaking, EventAgentStartSpeaking, EventToolCall, EventData}
	oracleTexts = []speech{"", "hello", "Hello!", "hello there", "HELLO  there.", "bye"}
	oracleJSON  = []jsonText{"", `{"a":1}`, `{ "a" : 1.0 }`, `{"a":2}`, `[1,"x"]`, `not json`}
	oracleRaw   = []string{"", "x", "y"}
	oracleTimes = []time.Duration{0, time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond,
		250 * time.Millisecond, 251 * time.Millisecond, time.Second, 1250 * time.Millisecond, 2 * time.Second}
)

func pick[T any](r *rand.Rand, s []T) T { return s[r.IntN(len(s))] }

// oracleTiming is a time near t: t, or t moved by exactly a tolerance,
// or by one nanosecond more.
func oracleTiming(r *rand.Rand, t time.Duration) timing {
	switch r.IntN(6) {
	case 0:
		return timing(pick(r, oracleTimes))
	case 1:
		return timing(t + 250*time.Millisecond + time.Duration(r.IntN(2)))
	case 2:
		return timing(t - 10*time.Millisecond - time.Duration(r.IntN(2)))
	case 3:
		// 20 % (the default) or 10 % of the longer of the two.
		return timing(float64(t) * (1 + 0.1*float64(1+r.IntN(2))))
	case 4:
		return timing(t + time.Duration(r.IntN(3)) - 1)
	}
	return timing(t)
}

func randomEvent(r *rand.Rand) goldenEvent {
	e := goldenEvent{Line: r.IntN(50), At: time.Duration(r.IntN(5000)) * time.Millisecond,
		Gap: timing(pick(r, oracleTimes)), Type: pick(r, oracleTypes), Turn: r.IntN(3), raw: fmt.Sprint(r.IntN(9))}
	for i := r.IntN(4); i > 0; i-- {
		mutateEvent(r, &e)
	}
	return e
}

// mutateEvent changes one field of e (perhaps to an equal value, or one
// equal under a tolerant comparison).
func mutateEvent(r *rand.Rand, e *goldenEvent) {
	switch r.IntN(15) {
	case 0:
		e.Gap = oracleTiming(r, time.Duration(e.Gap))
	case 1:
		e.Type = pick(r, oracleTypes)
	case 2:
		e.Turn = r.IntN(3)
	case 3:
		e.Text = pick(r, oracleTexts)
	case 4:
		e.Tool = pick(r, []string{"", "book"})
	case 5:
		e.Args = pick(r, oracleJSON)
	case 6:
		e.ArgsRaw = pick(r, oracleRaw)
	case 7:
		e.Result = pick(r, oracleJSON)
	case 8:
		e.ResultRaw = pick(r, oracleRaw)
	case 9:
		e.IsError = !e.IsError
	case 10:
		e.Data = pick(r, oracleJSON)
	case 11:
		e.DataRaw = pick(r, oracleRaw)
	case 12:
		switch {
		case r.IntN(3) == 0:
			e.Latency = nil
		case e.Latency != nil:
			e.Latency = new(oracleTiming(r, time.Duration(*e.Latency)))
		default:
			e.Latency = new(timing(pick(r, oracleTimes)))
		}
	case 13:
		e.Duration = pick(r, oracleTimes)
	default: // fields no comparison looks at
		e.Line, e.At, e.raw = r.IntN(50), time.Duration(r.IntN(5000))*time.Millisecond, fmt.Sprint(r.IntN(9))
	}
}

func randomMessage(r *rand.Rand) goldenMessage {
	return goldenMessage{Line: r.IntN(50), Role: pick(r, []string{"user", "agent"}), Text: pick(r, oracleTexts), raw: fmt.Sprint(r.IntN(9))}
}

func mutateMessage(r *rand.Rand, m *goldenMessage) {
	switch r.IntN(3) {
	case 0:
		m.Role = pick(r, []string{"user", "agent", "system"})
	case 1:
		m.Text = pick(r, oracleTexts)
	default:
		m.Line, m.raw = r.IntN(50), fmt.Sprint(r.IntN(9))
	}
}

// editedPair is a golden list of n entries and an actual one made from it
// by removing, inserting and changing entries; or, now and then, one made
// afresh.
func editedPair[E any](r *rand.Rand, n int, random func(*rand.Rand) E, mutate func(*rand.Rand, *E)) (golden, actual []E) {
	golden, actual = []E{}, []E{} // never nil, as the parsers return them
	for range n {
		golden = append(golden, random(r))
	}
	if r.IntN(10) == 0 {
		for range r.IntN(n + 3) {
			actual = append(actual, random(r))
		}
		return golden, actual
	}
	rate := 1 + r.IntN(4) // in 8: how often an entry is edited
	for _, e := range golden {
		if r.IntN(8) < rate && r.IntN(3) == 0 {
			actual = append(actual, random(r)) // inserted
		}
		switch {
		case r.IntN(8) >= rate:
			actual = append(actual, e)
		case r.IntN(3) == 0: // removed
		default:
			for i := 1 + r.IntN(3); i > 0; i-- {
				mutate(r, &e)
			}
			actual = append(actual, e)
		}
	}
	for r.IntN(8) < rate && r.IntN(2) == 0 {
		actual = append(actual, random(r))
	}
	return golden, actual
}

// checkOracle builds pairs of events and messages from seed and checks
// each under every comparison.
func checkOracle(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, seed>>32|1))
	comparers := oracleComparers()
	for _, name := range []string{"exact", "tolerant", "tight"} {
		c := comparers[name]
		n := r.IntN(12)
		ge, ae := editedPair(r, n, randomEvent, mutateEvent)
		checkAgainstGoCmp(t, fmt.Sprintf("seed %d, %s, events", seed, name), c, ge, ae)
		gm, am := editedPair(r, n, randomMessage, mutateMessage)
		checkAgainstGoCmp(t, fmt.Sprintf("seed %d, %s, messages", seed, name), c, gm, am)
	}
}

// TestGoldenDiffMatchesGoCmp checks the comparison against go-cmp on
// random golden and actual lists: the same verdict always, a correct
// report, and no fewer entries kept as equal.
func TestGoldenDiffMatchesGoCmp(t *testing.T) {
	t.Parallel()
	for seed := range uint64(300) {
		checkOracle(t, seed)
	}
}

// FuzzGoldenDiffMatchesGoCmp is TestGoldenDiffMatchesGoCmp from fuzzed
// seeds.
func FuzzGoldenDiffMatchesGoCmp(f *testing.F) {
	for _, s := range []uint64{0, 1, 7, 42, 1 << 40, 1<<63 + 5} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		checkOracle(t, seed)
	})
}

// TestGoldenDiffFixedCases pins the report on fixed cases, and checks
// each against go-cmp's verdict.
func TestGoldenDiffFixedCases(t *testing.T) {
	ev := func(typ EventType, turn int, gap time.Duration) goldenEvent {
		return goldenEvent{Type: typ, Turn: turn, Gap: timing(gap)}
	}
	a := ev(EventUserStartSpeaking, 1, 0)
	b := ev(EventAgentStartSpeaking, 1, time.Second)
	cc := ev(EventToolCall, 1, 2*time.Second)
	cc.Tool, cc.Args = "book", `{"party":2}`
	d := ev(EventUserStartSpeaking, 2, 3*time.Second)
	changed := func(e goldenEvent, f func(*goldenEvent)) goldenEvent { f(&e); return e }
	// Every field but Turn and Gap differs: too unlike to be one changed
	// entry (go-cmp's similarity: equal fields + 1 >= differing ones).
	unlike := goldenEvent{Type: EventData, Turn: 1, Gap: timing(time.Second), Text: "x", Tool: "t", Args: "1", ArgsRaw: "r",
		Result: "2", ResultRaw: "r", IsError: true, Data: "3", DataRaw: "r", Latency: new(timing(5)), Duration: 7}
	exact := newGoldenComparer(GoldenOptions{Match: GoldenExact}, true)
	tolerant := newGoldenComparer(GoldenOptions{Match: GoldenTolerant, NormalizeText: true}, false)
	for _, tc := range []struct {
		name           string
		c              *goldenComparer
		golden, actual []goldenEvent
		want           string
	}{
		{"equal", exact, []goldenEvent{a, b, cc}, []goldenEvent{a, b, cc}, ""},
		{"removed", exact, []goldenEvent{a, b, cc, d}, []goldenEvent{a, cc, d}, "-1"},
		{"inserted", exact, []goldenEvent{a, cc, d}, []goldenEvent{a, b, cc, d}, "+1"},
		{"removed last", exact, []goldenEvent{a, b, cc}, []goldenEvent{a, b}, "-2"},
		{"inserted first", exact, []goldenEvent{b, cc}, []goldenEvent{a, b, cc}, "+0"},
		{"changed", exact, []goldenEvent{a, b, cc, d},
			[]goldenEvent{a, b, changed(cc, func(e *goldenEvent) { e.Gap++; e.Args = `{"party":3}` }), d}, "2/2:Gap 2/2:Args"},
		{"changed latency", exact, []goldenEvent{a, changed(b, func(e *goldenEvent) { e.Latency = new(timing(0)) })},
			[]goldenEvent{a, b}, "1/1:Latency"},
		{"too unlike to be changed", exact, []goldenEvent{a, b, d}, []goldenEvent{a, unlike, d}, "-1 +1"},
		// Not the shortest report (-1 2/1:Turn): between two kept pairs
		// entries are paired in order while they are alike (b and the
		// changed cc differ in 5 of 14 fields), as go-cmp did too.
		{"removed and changed", exact, []goldenEvent{a, b, cc, d},
			[]goldenEvent{a, changed(cc, func(e *goldenEvent) { e.Turn = 3 }), d}, "1/1:Gap 1/1:Type 1/1:Turn 1/1:Tool 1/1:Args -2"},
		// go-cmp's greedy search from the back, failing to match d with
		// the changed d, paired b with cc and cc with d as changes (a
		// worse report, in about half the processes); cc is kept here.
		{"removed and changed, cc kept", exact, []goldenEvent{a, b, cc, d},
			[]goldenEvent{a, cc, changed(d, func(e *goldenEvent) { e.Turn = 3 })}, "-1 3/2:Turn"},
		{"within the tolerance", tolerant, []goldenEvent{a, b, cc},
			[]goldenEvent{a, changed(b, func(e *goldenEvent) { e.Gap += timing(DefaultGoldenTolerance) }),
				changed(cc, func(e *goldenEvent) { e.Args = `{ "party": 2.0 }` })}, ""},
		{"one nanosecond past the tolerance", tolerant, []goldenEvent{a, b, cc},
			[]goldenEvent{a, changed(b, func(e *goldenEvent) { e.Gap += timing(DefaultGoldenTolerance + 1) }), cc}, "1/1:Gap"},
		{"relative tolerance", tolerant, []goldenEvent{a, changed(b, func(e *goldenEvent) { e.Gap = timing(4 * time.Second) })},
			[]goldenEvent{a, changed(b, func(e *goldenEvent) { e.Gap = timing(5 * time.Second) })}, ""},
		{"texts equal normalised", tolerant, []goldenEvent{changed(a, func(e *goldenEvent) { e.Text = "Hello, there!" })},
			[]goldenEvent{changed(a, func(e *goldenEvent) { e.Text = "hello there" })}, ""},
		{"texts not equal exact", exact, []goldenEvent{changed(a, func(e *goldenEvent) { e.Text = "Hello, there!" })},
			[]goldenEvent{changed(a, func(e *goldenEvent) { e.Text = "hello there" })}, "0/0:Text"},
	} {
		if got := showDiffs(tc.c.diff(tc.golden, tc.actual)); got != tc.want {
			t.Errorf("%s: report %q, want %q", tc.name, got, tc.want)
		}
		if _, equal := goCmpCompare(tc.c, tc.golden, tc.actual); equal != (tc.want == "") {
			t.Errorf("%s: go-cmp says equal=%v", tc.name, equal)
		}
		if err := checkReport(tc.c, tc.golden, tc.actual, tc.c.diff(tc.golden, tc.actual)); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	m := func(role string, text speech) goldenMessage { return goldenMessage{Role: role, Text: text} }
	g := []goldenMessage{m("user", "hi"), m("agent", "hello"), m("user", "bye")}
	ac := []goldenMessage{m("user", "hi"), m("agent", "Hello!"), m("user", "bye"), m("agent", "bye")}
	for _, tc := range []struct {
		c    *goldenComparer
		want string
	}{{exact, "1/1:Text +3"}, {tolerant, "+3"}} {
		got := [2]string{showDiffs(tc.c.diff(g, ac)), showDiffs(goCmpDiff(tc.c, g, ac))}
		if got != [2]string{tc.want, tc.want} {
			t.Errorf("messages, %s: reports %q, want %q", tc.c.mode(), got, tc.want)
		}
	}
}

// showDiffs writes a report short: -3 (golden entry 3 removed), +3
// (actual entry 3 inserted), 3/4:Gap (golden entry 3 changed into actual
// entry 4, its Gap differs).
func showDiffs(diffs []entryDiff) string {
	var b strings.Builder
	for i, d := range diffs {
		if i > 0 {
			b.WriteByte(' ')
		}
		switch {
		case d.iy < 0:
			fmt.Fprintf(&b, "-%d", d.ix)
		case d.ix < 0:
			fmt.Fprintf(&b, "+%d", d.iy)
		default:
			fmt.Fprintf(&b, "%d/%d:%s", d.ix, d.iy, d.field)
		}
	}
	return b.String()
}

// TestGoldenDiffLongListsAreBounded: the actual is the golden with one
// entry inserted at the front and the last one gone. Under maxAlignCells
// the lists are aligned (+0 and the last removed); past it they are not
// (the table would be too large) but paired in order, every entry shown
// changed, and the report is still correct.
func TestGoldenDiffLongListsAreBounded(t *testing.T) {
	t.Parallel() // pure
	c := newGoldenComparer(GoldenOptions{Match: GoldenExact}, true)
	for _, n := range []int{1000, 1500} {
		golden := make([]goldenEvent, n)
		for i := range golden {
			golden[i] = goldenEvent{Type: EventUserStartSpeaking, Turn: i + 1, Gap: timing(time.Duration(i) * time.Millisecond)}
		}
		actual := append([]goldenEvent{{Type: EventAgentStartSpeaking}}, golden[:n-1]...)
		aligned := n*n <= maxAlignCells
		if aligned != (n == 1000) {
			t.Fatalf("n=%d: the test's sizes no longer straddle maxAlignCells (%d)", n, maxAlignCells)
		}
		got := c.diff(golden, actual)
		if err := checkReport(c, golden, actual, got); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		switch first := got[0]; {
		case aligned && (len(got) != 2 || first != entryDiff{ix: -1, iy: 0} || got[1] != entryDiff{ix: n - 1, iy: -1}):
			t.Errorf("n=%d: report starts %v (%d differences), want +0 and -%d", n, got[:min(3, len(got))], len(got), n-1)
		case !aligned && (first.ix != 0 || first.iy != 0 || keptEqual(n, got) != 0):
			t.Errorf("n=%d (past the bound): report starts %v, want every entry paired in order as changed", n, got[:min(3, len(got))])
		}
	}
}
