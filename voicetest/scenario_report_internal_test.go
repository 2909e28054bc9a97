package voicetest

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode"
)

// TestPassedLineIsTheSprintfLine: the line a passing scenario logs is,
// byte for byte, the fmt.Sprintf line it was before passedLine wrote it
// without fmt: names with quotes, line breaks and other scripts, and
// durations from zero to hours.
func TestPassedLineIsTheSprintfLine(t *testing.T) {
	for _, name := range []string{"TestBook", `quote "me" \ please`, "line\nbreak\ttab", "réservation — 予約", "\x00\xff", ""} {
		for _, d := range []time.Duration{0, 499 * time.Microsecond, 500 * time.Microsecond, 300 * time.Millisecond, 31 * time.Second, 90*time.Minute + 1500*time.Microsecond, -2 * time.Second} {
			res := &Result{Name: name, Turns: 10, Duration: d, Latency: Latency{P50: d / 3, P95: d + time.Millisecond}}
			want := fmt.Sprintf("voicetest: %q passed: %d turns, %v, latency p50 %v p95 %v",
				res.Name, res.Turns, res.Duration.Round(time.Millisecond), res.Latency.P50.Round(time.Millisecond), res.Latency.P95.Round(time.Millisecond))
			if got := passedLine(res); got != want {
				t.Errorf("passedLine = %q, want %q", got, want)
			}
		}
	}
}

// TestAttrsAreValidTestAttributes: no key of Result.Attrs has white space
// and no value a line break, for every attribute it can publish (a Result
// with every metric measured) and every verdict. testing's Attr reports
// such an attribute as an error even without -v, where it prints nothing:
// Scenario skips the attributes there (attrsRecorded), which is the same
// only as long as this holds.
func TestAttrsAreValidTestAttributes(t *testing.T) {
	p := Percentiles{N: 3, P50: 2 * time.Millisecond, P95: 3 * time.Millisecond, Max: 4 * time.Millisecond}
	for _, st := range []Status{StatusPass, StatusFail, StatusInconclusive} {
		res := &Result{Status: st, Turns: 3, Runs: []*Result{{}}, PassRate: 0.5, Verdict: &Judgment{},
			Transcript: []Message{{Role: RoleUser, Text: "hi"}}}
		res.Latency = Latency{PerTurn: []time.Duration{time.Millisecond}, TTFB: time.Millisecond}
		res.Latency.Summarize()
		m := &res.Metrics
		m.TTFB = p
		m.Parts = PartMetrics{STT: p, LLM: p, Tools: p, TTS: p}
		m.TalkOver.BargeIns = []BargeIn{{Quiet: true, ToQuiet: time.Millisecond, Answered: true, ToAnswer: time.Millisecond}}
		m.Speech.AgentSpeech, m.Speech.AgentTurns, m.Speech.UserTurns = time.Second, 1, 1
		m.Speech.AgentWPM, m.Speech.AgentWordsPerTurn, m.Speech.UserWordsPerTurn = 150.5, 4, 3
		m.Speech.WER = &WERMetrics{Rate: 0.125}
		m.Waits.Count = 1
		m.Wire = &WireStats{FramesIn: 1, MarkDelay: p}
		attrs := res.Attrs()
		if len(attrs) < 55 {
			t.Fatalf("%d attributes: the Result does not measure everything Attrs publishes", len(attrs))
		}
		for _, a := range attrs {
			if strings.ContainsFunc(a.Key, unicode.IsSpace) || a.Key == "" {
				t.Errorf("attribute key %q: testing's Attr refuses it", a.Key)
			}
			if strings.ContainsAny(a.Value, "\r\n") {
				t.Errorf("attribute %s = %q: testing's Attr refuses a line break", a.Key, a.Value)
			}
		}
	}
}
