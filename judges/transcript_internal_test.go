package judges

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// renderGreetAndAsk runs cfg with the script greeting, "Two at seven.",
// answer, and returns the judge's rendering of it, line by line.
func renderGreetAndAsk(t *testing.T, cfg voicetest.Config) []string {
	t.Helper()
	cfg.Golden = noGolden()
	cfg.Script = []voicetest.Step{
		voicetest.AgentTurn(),
		voicetest.UserSays("Two at seven."),
		voicetest.AgentTurn(),
	}
	res := voicetest.Scenario(t, cfg)
	require.True(t, res.Success, "%v", res.Err)
	var got []string
	for _, l := range renderLines(res.State) {
		got = append(got, l.text)
	}
	return got
}

func TestRenderLines(t *testing.T) {
	got := renderGreetAndAsk(t, voicetest.Config{
		Agent: fixtures.Fake(fixtures.FakeConfig{
			TextOnly: true,
			Greeting: fixtures.Reply{Text: "Hello, Luigi's."},
			Replies: []fixtures.Reply{{Text: "Booked!\nGoodbye.", Latency: 300 * time.Millisecond, HangUp: true,
				Tools: []voicetest.ToolCall{{ID: "c1", Name: "book", Arguments: []byte(`{"party":2}`), Result: []byte(`{"ok":true}`)}}}},
		}),
	})
	assert.Equal(t, []string{
		"[turn 0] agent: Hello, Luigi's.",
		"[turn 1] user: Two at seven.",
		`[turn 1] agent calls tool book with {"party":2}`,
		`[turn 1] tool book returned {"ok":true}`,
		"[turn 1] agent: Booked! Goodbye.",
		"[turn 1] agent hangs up (goodbye)",
	}, got)
}

// TestRenderLinesKeepsTurnOrderAtOneInstant: paced fast with a fake that
// sends at once, the greeting (turn 0), the question (turn 1) and the
// answer all happen at 0 s; the judge must still read them in the order
// of their turns, not the user's line before the greeting it answers.
func TestRenderLinesKeepsTurnOrderAtOneInstant(t *testing.T) {
	got := renderGreetAndAsk(t, voicetest.Config{
		Agent: fixtures.Fake(fixtures.FakeConfig{
			Burst:    true,
			TextOnly: true,
			Greeting: fixtures.Reply{Text: "Hello, Luigi's."},
			Replies:  []fixtures.Reply{{Text: "Booked."}},
		}),
		Pacing: voicetest.PaceFast,
	})
	assert.Equal(t, []string{
		"[turn 0] agent: Hello, Luigi's.",
		"[turn 1] user: Two at seven.",
		"[turn 1] agent: Booked.",
	}, got)
}

// longState is a conversation of n user turns.
func longState(t *testing.T, n int) *voicetest.State {
	t.Helper()
	var replies []fixtures.Reply
	var steps []voicetest.Step
	for i := 1; i <= n; i++ {
		replies = append(replies, fixtures.Reply{Text: fmt.Sprintf("Answer number %d to your question.", i), Latency: 100 * time.Millisecond})
		steps = append(steps, voicetest.UserSays(fmt.Sprintf("Question number %d?", i)), voicetest.AgentTurn())
	}
	res := voicetest.Scenario(t, voicetest.Config{Golden: noGolden(), Agent: fixtures.TextAgent(replies...), Script: steps, MaxTurns: n})
	require.True(t, res.Success, "%v", res.Err)
	return res.State
}

func TestBoundTranscriptKeepsStartAndEndAndMarksTheCut(t *testing.T) {
	ls := renderLines(longState(t, 40))
	require.Len(t, ls, 80)
	full, cut := boundTranscript(ls, 1<<20)
	assert.Equal(t, 0, cut)
	assert.NotContains(t, full, "cut")
	assert.Equal(t, 80, strings.Count(full, "\n"))

	for _, limit := range []int{400, 1000, 2500} {
		t.Run(strconv.Itoa(limit), func(t *testing.T) {
			text, cut := boundTranscript(ls, limit)
			assert.LessOrEqual(t, len(text), limit)
			assert.Greater(t, cut, 0)
			got := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
			assert.Equal(t, ls[0].text, got[0], "the start is kept")
			assert.Equal(t, ls[len(ls)-1].text, got[len(got)-1], "the most recent line is kept")
			marker := regexp.MustCompile(`^\[… (\d+) lines cut \(turns (\d+)–(\d+)\) …\]$`)
			var markers int
			for i, l := range got {
				m := marker.FindStringSubmatch(l)
				if m == nil {
					continue
				}
				markers++
				n, _ := strconv.Atoi(m[1])
				assert.Equal(t, cut, n)
				assert.Equal(t, len(ls), len(got)-1+n, "kept + cut = all lines")
				// The marker sits where the lines were cut, and names
				// their turns.
				assert.Equal(t, ls[i-1].text, got[i-1])
				assert.Equal(t, ls[i+n].text, got[i+1])
				assert.Equal(t, strconv.Itoa(ls[i].turn), m[2])
				assert.Equal(t, strconv.Itoa(ls[i+n-1].turn), m[3])
			}
			assert.Equal(t, 1, markers)
		})
	}
}

func TestBoundTranscriptShortensAHugeLastLine(t *testing.T) {
	ls := []line{{turn: 0, text: "[turn 0] agent: hi"}, {turn: 1, text: "[turn 1] user: " + strings.Repeat("blah ", 400)}}
	text, cut := boundTranscript(ls, 400)
	assert.LessOrEqual(t, len(text), 400)
	assert.Equal(t, 0, cut)
	assert.True(t, strings.HasPrefix(text, "[turn 0] agent: hi\n[turn 1] user: blah blah"), text)
	assert.True(t, strings.HasSuffix(text, " …[cut]\n"), text)
}

func TestTruncateKeepsRunes(t *testing.T) {
	s := strings.Repeat("é", 100)
	got := truncate(s, 51)
	assert.True(t, strings.HasSuffix(got, " …[cut]"))
	assert.LessOrEqual(t, len(got), 51)
	assert.Equal(t, strings.Repeat("é", 21)+" …[cut]", got)
}

func TestContainsWords(t *testing.T) {
	assert.True(t, containsWords("a table for 2", "table for 2"))
	assert.True(t, containsWords("table for 2", "table for 2"))
	assert.False(t, containsWords("a table for 20", "table for 2"))
	assert.False(t, containsWords("notable for 2", "table for 2"))
}

// BenchmarkBoundTranscript bounds a 1,000-line transcript (about 60 KB) to
// the default 24,000 bytes.
func BenchmarkBoundTranscript(b *testing.B) {
	var ls []line
	total := 0
	for i := range 1000 {
		l := line{turn: i / 2, text: fmt.Sprintf("[turn %d] agent: Sure, table %d is free for two at seven; shall I book it?", i/2, i)}
		ls = append(ls, l)
		total += len(l.text) + 1
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		text, cut := boundTranscript(ls, DefaultMaxTranscript)
		if cut == 0 || len(text) > DefaultMaxTranscript {
			b.Fatalf("cut %d lines, %d bytes", cut, len(text))
		}
	}
}

// noGolden turns golden files off: these scenarios only produce input for
// the transcript renderer, whose output the tests assert.
func noGolden() voicetest.GoldenOptions { return voicetest.GoldenOptions{Disable: true} }
