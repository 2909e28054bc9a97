package judges

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
)

// DefaultMaxTranscript is the default bound, in bytes, of the transcript
// an LLM judge is shown (about 6,000 tokens).
const DefaultMaxTranscript = 24000

// MinMaxTranscript is the smallest transcript bound WithMaxTranscript
// accepts; smaller values are raised to it.
const MinMaxTranscript = 400

// maxLine bounds one rendered line (a long tool result, say).
const maxLine = 2000

// line is one rendered entry of the transcript.
type line struct {
	at   time.Duration
	seq  int // order among lines at the same time
	turn int
	text string
}

// renderLines renders the conversation for an LLM judge: messages, tool
// calls and results, data, key presses, silences and hang-ups, in time
// order, each with its turn. Times are left out so that the same
// conversation gives the same prompt (and cache key) on every run.
func renderLines(st *voicetest.State) []line {
	var ls []line
	// Lines at the same time keep the order in which the agent's items
	// arrived (a tool call before the words that follow it); within a
	// turn user messages come first, timeline-only events last.
	events := st.Events()
	used := make([]bool, len(events))
	for _, m := range st.Transcript() {
		who := string(m.Role)
		if m.Interrupted {
			who += " (interrupted)"
		}
		seq := -1
		if m.Role == voicetest.RoleAgent {
			seq = len(events)
			for i, e := range events {
				if !used[i] && e.Type == voicetest.EventMessage && e.At == m.Start && e.Text == m.Text {
					used[i], seq = true, i
					break
				}
			}
		}
		ls = append(ls, line{at: m.Start, seq: seq, turn: m.Turn, text: fmt.Sprintf("%s: %s", who, oneLine(m.DisplayText()))})
	}
	for i, e := range events {
		var s string
		switch e.Type {
		case voicetest.EventToolCall:
			if e.Tool == nil {
				continue
			}
			s = fmt.Sprintf("agent calls tool %s with %s", e.Tool.Name, argText(e.Tool.Arguments))
		case voicetest.EventToolResult:
			if e.Tool == nil {
				continue
			}
			res := string(e.Tool.Result)
			if res == "" {
				res = "(nothing)"
			}
			if e.Tool.IsError {
				s = fmt.Sprintf("tool %s failed: %s", e.Tool.Name, oneLine(res))
			} else {
				s = fmt.Sprintf("tool %s returned %s", e.Tool.Name, oneLine(res))
			}
		case voicetest.EventData:
			s = fmt.Sprintf("agent sends data %s %s", e.Text, oneLine(string(e.Data)))
		case voicetest.EventHandoff:
			s = fmt.Sprintf("the conversation passes to agent %q", e.Text)
		default:
			continue
		}
		ls = append(ls, line{at: e.At, seq: i, turn: e.Turn, text: s})
	}
	for _, e := range st.Timeline() {
		var s string
		switch e.Type {
		case voicetest.EventDTMF:
			s = fmt.Sprintf("user presses keys %s", e.Text)
		case voicetest.EventSilence:
			s = fmt.Sprintf("user stays silent for %s", e.Duration)
		case voicetest.EventAgentHangUp:
			s = "agent hangs up"
		case voicetest.EventUserHangUp:
			s = "user hangs up"
		default:
			continue
		}
		if e.Text != "" && e.Type != voicetest.EventDTMF {
			s += " (" + oneLine(e.Text) + ")"
		}
		ls = append(ls, line{at: e.At, seq: len(events) + 1, turn: e.Turn, text: s})
	}
	return finishLines(ls)
}

// finishLines orders lines by time (at one instant, by turn, then by
// seq: a greeting and the question after it can share an instant when
// the conversation is paced fast) and prefixes each with its turn,
// bounded to maxLine.
func finishLines(ls []line) []line {
	slices.SortStableFunc(ls, func(a, b line) int {
		if a.at != b.at {
			return cmpDuration(a.at, b.at)
		}
		if a.turn != b.turn {
			return a.turn - b.turn
		}
		return a.seq - b.seq
	})
	for i := range ls {
		ls[i].text = truncate(fmt.Sprintf("[turn %d] %s", ls[i].turn, ls[i].text), maxLine)
	}
	return ls
}

func cmpDuration(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// oneLine folds line breaks so that every entry is one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = " …[cut]"
	cut := max(n-len(mark), 0)
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

// boundTranscript joins the lines, keeping the result within maxBytes:
// when they do not fit, it keeps the first lines (up to a quarter of the
// budget) and the most recent ones, and puts a marker line
// "[… N lines cut (turns A–B) …]" where lines were left out. The last line
// is always kept, shortened if need be.
func boundTranscript(ls []line, maxBytes int) (string, int) {
	total := 0
	for _, l := range ls {
		total += len(l.text) + 1
	}
	if total <= maxBytes {
		var b strings.Builder
		for _, l := range ls {
			b.WriteString(l.text)
			b.WriteByte('\n')
		}
		return b.String(), 0
	}
	const markerRoom = 64
	budget := maxBytes - markerRoom
	head := 0
	used := 0
	for head < len(ls)-1 && used+len(ls[head].text)+1 <= budget/4 {
		used += len(ls[head].text) + 1
		head++
	}
	tail := len(ls)
	for tail-1 > head && used+len(ls[tail-1].text)+1 <= budget {
		used += len(ls[tail-1].text) + 1
		tail--
	}
	var b strings.Builder
	for _, l := range ls[:head] {
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	last := ""
	if tail == len(ls) {
		// Not even the last line fits whole: shorten it.
		tail = len(ls) - 1
		last = truncate(ls[tail].text, max(budget-used-1, 32)) + "\n"
	}
	cut := tail - head
	if cut > 0 {
		fmt.Fprintf(&b, "[… %d lines cut (turns %d–%d) …]\n", cut, ls[head].turn, ls[tail-1].turn)
	}
	if last != "" {
		b.WriteString(last)
		return b.String(), cut
	}
	for _, l := range ls[tail:] {
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	return b.String(), cut
}
