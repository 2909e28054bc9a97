package voicetest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// reportScenario runs a conversation with a greeting, tool calls, a
// barge-in, in-band DTMF, a checkpoint and a verdict, and text that needs
// escaping: everything the HTML report shows.
func reportScenario(t *testing.T) *voicetest.Result {
	t.Helper()
	judge := criteriaJudge(func(req voicetest.JudgeRequest) (voicetest.Judgment, error) {
		if !req.Final {
			return voicetest.Judgment{Decided: true, Criteria: []voicetest.CriterionResult{
				{Criterion: "the agent greets the caller", Status: voicetest.StatusPass, Reasoning: "it said hello & welcome"},
			}}, nil
		}
		return voicetest.Judgment{Decided: true, Reasoning: "The booking was made <quickly> and confirmed.", Criteria: []voicetest.CriterionResult{
			{Criterion: "the agent books a table", Status: voicetest.StatusPass, Reasoning: "book was called with party 2 at 19:00"},
			{Criterion: "the agent confirms the time", Status: voicetest.StatusInconclusive, Reasoning: "the confirmation was cut off"},
		}}, nil
	})
	res, err := runVirtual(t, voicetest.Config{
		Name:        "booking <with> \"quotes\"",
		Description: "A caller books a table for two & barges in.",
		Agent: fixtures.Fake(fixtures.FakeConfig{
			Name: "fake-restaurant",
			// The agent hears the barge-in and stops 120 ms later: the
			// two talk over each other for that long.
			BargeIn:     true,
			StopLatency: 120 * time.Millisecond,
			Greeting:    fixtures.Reply{Text: "Hello and welcome to Chez Go", Latency: 200 * time.Millisecond},
			Replies: []fixtures.Reply{
				{Text: "Let me check availability for two", Latency: 450 * time.Millisecond,
					Tools: []voicetest.ToolCall{{Name: "check_availability", Arguments: json.RawMessage(`{"party":2}`), Result: json.RawMessage(`{"free":["19:00"]}`)}}},
				{Text: "We have a table at seven in the evening for two people", Latency: 380 * time.Millisecond},
				{Text: "Booked for seven", Latency: 300 * time.Millisecond,
					Tools: []voicetest.ToolCall{{Name: "book", Arguments: json.RawMessage(`{"party":2,"time":"19:00"}`), Result: json.RawMessage(`{"ok":true}`)}}},
			},
		}),
		UserVoice: &toneTTS{},
		Judge:     judge,
		Script: []voicetest.Step{
			voicetest.AgentTurn(),
			voicetest.Checkpoint("the agent greets the caller"),
			voicetest.UserSays("A table for two please"),
			voicetest.AgentTurn(),
			voicetest.UserSays("What times <script>alert(1)</script> do you have"),
			voicetest.Interrupt("Seven is fine book it", voicetest.AfterWords(3)),
			voicetest.AgentTurn(),
			voicetest.DTMF("1"),
			voicetest.Verdict(),
		},
	})
	if res == nil || res.Status != voicetest.StatusInconclusive || !errors.Is(err, voicetest.ErrFailed) {
		t.Fatalf("scenario: want an inconclusive verdict, got %v", err)
	}
	return res
}

func TestHTMLReportContent(t *testing.T) {
	t.Parallel() // a bubble and a page; no process-wide state
	res := reportScenario(t)
	page, err := res.HTMLReport()
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	for _, want := range []string{
		"<!DOCTYPE html>",
		"booking &lt;with&gt; &#34;quotes&#34;",
		"A caller books a table for two &amp; barges in.",
		"What times &lt;script&gt;alert(1)&lt;/script&gt; do you have",
		"Hello and welcome to Chez Go",
		"The booking was made &lt;quickly&gt; and confirmed.",
		"the confirmation was cut off",
		"check_availability",
		"user_interrupt",
		"DTMF 1",
		`id="mixed"`,
		"Conversation quality",
		"1 times, 120 ms",
		"longest pause",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(html, "<script>alert(1)") {
		t.Error("user text reached the page unescaped")
	}
	// Self-contained: no reference to anything on a network.
	if m := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`).FindString(html); m != "" {
		t.Errorf("the report refers to %q; it must load nothing from the network", m)
	}
	for _, attr := range []string{`src="http`, `href="http`, `src="//`, `href="//`, "url(http", "@import"} {
		if strings.Contains(html, attr) {
			t.Errorf("the report has an external reference %q", attr)
		}
	}
	// One player for the mix and one per segment with audio.
	segs := 0
	for _, s := range res.Recording.Segments {
		if !s.Audio().IsEmpty() {
			segs++
		}
	}
	players := strings.Count(html, "<audio ")
	if players != segs+1 {
		t.Errorf("%d audio players, want %d (the mix and %d segments)", players, segs+1, segs)
	}
	if n := strings.Count(html, `src="data:audio/wav;base64,`); n != players {
		t.Errorf("%d players have inline WAV audio, want all %d", n, players)
	}
	if !strings.Contains(html, `data-audio-count="`+strconv.Itoa(players)+`"`) {
		t.Errorf("data-audio-count does not say %d", players)
	}
	// The waveform data parses and covers both parties.
	m := regexp.MustCompile(`(?s)<script type="application/json" id="vt-data">(.*?)</script>`).FindStringSubmatch(html)
	if m == nil {
		t.Fatal("no waveform data in the report")
	}
	var data struct {
		Duration    float64 `json:"duration"`
		Buckets     int     `json:"buckets"`
		User, Agent []int
		Marks       []struct{ Type string }
		Quality     []struct {
			Start, End float64
			Kind       string
		}
	}
	if err := json.Unmarshal([]byte(m[1]), &data); err != nil {
		t.Fatalf("waveform data: %v", err)
	}
	if data.Buckets == 0 || len(data.User) != 2*data.Buckets || len(data.Agent) != 2*data.Buckets {
		t.Fatalf("waveform data has %d buckets, %d user and %d agent values", data.Buckets, len(data.User), len(data.Agent))
	}
	if data.Duration != res.Duration.Seconds() {
		t.Errorf("waveform spans %vs, the conversation %v", data.Duration, res.Duration)
	}
	if peak(data.User) < 10 || peak(data.Agent) < 10 {
		t.Errorf("waveform peaks user %d agent %d: both should show speech", peak(data.User), peak(data.Agent))
	}
	types := map[string]bool{}
	for _, mk := range data.Marks {
		types[mk.Type] = true
	}
	for _, want := range []string{"tool_call", "user_interrupt", "dtmf", "verdict"} {
		if !types[want] {
			t.Errorf("no %s mark on the waveform", want)
		}
	}
	// The talk-over and every pause are drawn on the time axis.
	kinds := map[string]int{}
	for _, q := range data.Quality {
		kinds[q.Kind]++
	}
	if kinds["talk_over"] != res.Metrics.TalkOver.Count || kinds["pause"]+kinds["unfilled"] != len(res.Metrics.Pauses.Spans) || kinds["talk_over"] == 0 {
		t.Errorf("the time axis has %v, want %d talk-overs and %d pauses", kinds, res.Metrics.TalkOver.Count, len(res.Metrics.Pauses.Spans))
	}
}

func peak(v []int) int {
	p := 0
	for _, x := range v {
		p = max(p, x, -x)
	}
	return p
}

func TestHTMLReportTextOnlyAgent(t *testing.T) {
	res, err := runVirtual(t, voicetest.Config{
		Agent:  fixtures.TextAgent(fixtures.Reply{Text: "Hi there", Latency: 100 * time.Millisecond}),
		Script: []voicetest.Step{voicetest.UserSays("hello"), voicetest.AgentTurn()},
	})
	if err != nil {
		t.Fatal(err)
	}
	page, err := res.HTMLReport()
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	if strings.Contains(html, "<audio ") {
		t.Error("a text-only conversation has audio players")
	}
	for _, want := range []string{"no audio was recorded", "Hi there", `data-audio-count="0"`} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

func TestSaveWritesHTMLReport(t *testing.T) {
	res, err := runVirtual(t, voicetest.Config{
		Agent:     fixtures.ScriptedAgent(fixtures.Reply{Text: "Hello"}),
		UserVoice: &toneTTS{},
		Script:    []voicetest.Step{voicetest.UserSays("hi"), voicetest.AgentTurn()},
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := res.Save(dir); err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	page, err := res.HTMLReport()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(saved, page) {
		t.Error("report.html differs from HTMLReport()")
	}
}

func mustRead(t *testing.T, path string) string { return string(mustReadBytes(t, path)) }

func mustReadBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
