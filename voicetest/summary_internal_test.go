package voicetest

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestWriteSummary(t *testing.T) {
	var b strings.Builder
	writeSummary(&b, nil)
	if got := b.String(); got != "voicetest summary: no scenarios ran\n" {
		t.Errorf("empty summary = %q", got)
	}
	b.Reset()
	writeSummary(&b, []summaryRecord{
		{Test: "TestA", Name: "TestA", Status: StatusPass, Success: true, Turns: 2, Duration: 1500 * time.Millisecond,
			Latencies: []time.Duration{100 * time.Millisecond, 300 * time.Millisecond}},
		{Test: "TestB", Name: "maybe", Status: StatusInconclusive, Turns: 1, Duration: time.Second,
			Reason: "final verdict inconclusive"},
		{Test: "TestC", Name: "TestC", Status: StatusFail, Turns: 3, Runs: 4, PassRate: 0.5,
			Reason: "2 of 4 runs passed"},
	})
	want := `voicetest summary: 3 scenarios, 1 passed, 1 failed, 1 inconclusive (pass rate 33.3%)
  user turns: 6; conversation time: 2.5s
  response latency over 2 turns: p50 200ms, p90 300ms, p95 300ms, p99 300ms, max 300ms, mean 200ms
  INCONCLUSIVE TestB ("maybe"): final verdict inconclusive
  FAIL TestC: 50% of 4 runs passed: 2 of 4 runs passed
`
	if got := b.String(); got != want {
		t.Errorf("summary:\n%s\nwant:\n%s", got, want)
	}
	b.Reset()
	writeSummary(&b, []summaryRecord{{Test: "TestT", Status: StatusPass, Success: true}})
	if got := b.String(); !strings.HasPrefix(got, "voicetest summary: 1 scenario, 1 passed") || !strings.Contains(got, "response latency: not measured") {
		t.Errorf("one text-only scenario:\n%s", got)
	}
}

func TestWriteSummaryQuality(t *testing.T) {
	var b strings.Builder
	writeSummary(&b, []summaryRecord{
		{Test: "TestA", Status: StatusPass, Success: true, Quality: summaryQuality{
			TTFB: []time.Duration{100 * time.Millisecond, 300 * time.Millisecond}, TalkOvers: 2, TalkOver: 350 * time.Millisecond,
			UserOvers: 1, AgentOvers: 1, LongestPause: 900 * time.Millisecond, PauseTurn: 2, DeadAir: 1500 * time.Millisecond,
			Unfilled: 1, AgentWords: 30, AgentRated: 30, AgentSpeech: 12 * time.Second, AgentTurns: 3,
			WEREdits: 2, WERWords: 20, WERMessages: 2}},
		{Test: "TestB", Status: StatusPass, Success: true, Quality: summaryQuality{
			TTFB: []time.Duration{500 * time.Millisecond}, LongestPause: 400 * time.Millisecond, DeadAir: 400 * time.Millisecond,
			AgentWords: 10, AgentRated: 10, AgentSpeech: 3 * time.Second, AgentTurns: 1, LateAudio: 2, DroppedFrames: 5}},
	})
	for _, want := range []string{
		"  first audio after the user stopped, over 3 turns: p50 300ms, p95 500ms, max 500ms\n",
		"  talk-over: 2 (1 by the user, 1 by the agent), 350ms in all; dead air 1900ms; 1 unfilled gaps; longest pause 900ms (TestA, turn 2)\n",
		// 40 words in 4 turns; 40 words in 15 s; 2 edits in 20 words.
		"  agent speech: 10.0 words a turn, 160 words a minute, word error rate 10.0% (2 edits in 20 words of 2 messages)\n",
		"  agent audio: 2 late chunks, 5 frames dropped by the adapters\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the summary lacks %q:\n%s", want, b.String())
		}
	}
}

func TestSummaryDirIsPerProcess(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(summaryEnv, strconv.Itoa(os.Getpid())+":"+dir)
	if got := summaryDir(); got != dir {
		t.Errorf("summaryDir() = %q, want %q", got, dir)
	}
	// A parent process's directory is not this process's.
	t.Setenv(summaryEnv, strconv.Itoa(os.Getppid())+":"+dir)
	if got := summaryDir(); got != "" {
		t.Errorf("summaryDir() = %q for another process's variable, want none", got)
	}
	t.Setenv(summaryEnv, "garbage")
	if got := summaryDir(); got != "" {
		t.Errorf("summaryDir() = %q for a malformed variable, want none", got)
	}
}

func TestRecordSummaryRoundTrip(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(summaryEnv, strconv.Itoa(os.Getpid())+":"+dir)
	res := &Result{Name: "n", Status: StatusFail, Turns: 2, Duration: time.Second,
		Err:     errTest("first line\nsecond line"),
		Latency: Latency{PerTurn: []time.Duration{250 * time.Millisecond}}}
	recordSummary(t, res)
	recordSummary(t, &Result{Name: "m", Status: StatusPass, Success: true})
	recs, err := readSummaryRecords(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	r := recs[0]
	if r.Name != "n" {
		r = recs[1]
	}
	if r.Name != "n" || r.Test != t.Name() || r.Turns != 2 || r.Reason != "first line" || len(r.Latencies) != 1 || r.Latencies[0] != 250*time.Millisecond {
		t.Errorf("record = %+v", r)
	}
	if err := os.WriteFile(dir+"/scenario-bad.json", []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readSummaryRecords(dir); err == nil || !strings.Contains(err.Error(), "scenario-bad.json") {
		t.Errorf("a corrupt record gave %v, want an error naming it", err)
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }
