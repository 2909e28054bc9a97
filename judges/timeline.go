package judges

import (
	"fmt"
	"strings"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
)

// RenderTimeline renders the conversation for a model as a timeline: who
// spoke when (with the words), the pauses and who was to speak, the
// talk-overs and who gave way, the barge-ins and how soon the agent went
// quiet and answered, the response latency of each reply, tool calls and
// their results, handoffs, key presses, silences and hang-ups, one line
// each in time order with its turn, then a summary of the metrics
// (voicetest.Metrics). Times are seconds from the start of the call, to
// the hundredth. It is what CriteriaJudge.WithTimeline shows the judge,
// for criteria about timing ("the agent let the caller finish", "it did
// not leave the caller waiting"); it is bounded by maxBytes like the
// transcript (DefaultMaxTranscript when maxBytes <= 0).
func RenderTimeline(st *voicetest.State, maxBytes int) string {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxTranscript
	}
	text, _ := boundTranscript(timelineLines(st), max(maxBytes, MinMaxTranscript))
	return text + timelineSummary(st.Metrics())
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }

// timelineLines renders the timeline's entries, ordered by time.
func timelineLines(st *voicetest.State) []line {
	m := st.Metrics()
	var ls []line
	add := func(at time.Duration, turn int, format string, args ...any) {
		ls = append(ls, line{at: at, seq: len(ls), turn: turn, text: fmt.Sprintf(format, args...)})
	}
	for _, msg := range st.Transcript() {
		span := secs(msg.Start)
		if msg.End > msg.Start {
			span += "–" + secs(msg.End)
		}
		how := "speaks"
		if msg.Interrupted {
			how = "speaks, cut short"
		}
		s := fmt.Sprintf("%s %s %s: %q", span, msg.Role, how, oneLine(msg.DisplayText()))
		if msg.Latency > 0 {
			s += fmt.Sprintf(" (%s after the user stopped)", secs(msg.Latency))
		}
		if h := msg.Heard; h != nil && h.Errors.Edits() > 0 {
			s += fmt.Sprintf(" (its audio was heard as %q)", oneLine(h.Text))
		}
		add(msg.Start, msg.Turn, "%s", s)
	}
	for _, p := range m.Pauses.Spans {
		who := "after the " + string(p.After)
		switch {
		case p.Unfilled():
			who = "the user stopped and the agent did not answer"
		case p.After == voicetest.RoleUser:
			who = "the user waits for the agent"
		case p.After == voicetest.RoleAgent && p.Before == voicetest.RoleUser:
			who = "the agent waits for the user"
		}
		add(p.Start, p.Turn, "%s–%s silence of %s: %s", secs(p.Start), secs(p.End), secs(p.Duration()), who)
	}
	for _, o := range m.TalkOver.Spans {
		s := fmt.Sprintf("%s–%s both speak for %s", secs(o.Start), secs(o.End), secs(o.Duration()))
		if o.By != "" {
			s += fmt.Sprintf(": the %s spoke over the %s", o.By, other(o.By))
		}
		if o.Yielded != "" {
			s += fmt.Sprintf("; the %s gave way", o.Yielded)
		}
		add(o.Start, o.Turn, "%s", s)
	}
	barge := m.TalkOver.BargeIns
	for _, e := range st.Timeline() {
		switch e.Type {
		case voicetest.EventUserInterrupt:
			s := fmt.Sprintf("%s the user barges in", secs(e.At))
			if len(barge) > 0 {
				b := barge[0]
				barge = barge[1:]
				if b.Quiet {
					s += fmt.Sprintf("; the agent went quiet %s later", secs(b.ToQuiet))
				}
				if b.Answered {
					s += fmt.Sprintf(" and spoke again %s after the barge-in", secs(b.ToAnswer))
				}
			}
			add(e.At, e.Turn, "%s", s)
		case voicetest.EventToolCall, voicetest.EventToolResult:
			if e.Tool == nil {
				continue
			}
			if e.Type == voicetest.EventToolCall {
				add(e.At, e.Turn, "%s agent calls tool %s with %s", secs(e.At), e.Tool.Name, argText(e.Tool.Arguments))
			} else {
				verb := "returned"
				if e.Tool.IsError {
					verb = "failed with"
				}
				add(e.At, e.Turn, "%s tool %s %s %s", secs(e.At), e.Tool.Name, verb, oneLine(string(e.Tool.Result)))
			}
		case voicetest.EventHandoff:
			add(e.At, e.Turn, "%s the conversation passes to agent %q", secs(e.At), e.Text)
		case voicetest.EventData:
			add(e.At, e.Turn, "%s agent sends data %s %s", secs(e.At), e.Text, oneLine(string(e.Data)))
		case voicetest.EventDTMF:
			add(e.At, e.Turn, "%s user presses keys %s", secs(e.At), e.Text)
		case voicetest.EventSilence, voicetest.EventSleep:
			add(e.At, e.Turn, "%s–%s user stays silent", secs(e.At), secs(e.At+e.Duration))
		case voicetest.EventAgentHangUp, voicetest.EventUserHangUp:
			who := "agent"
			if e.Type == voicetest.EventUserHangUp {
				who = "user"
			}
			add(e.At, e.Turn, "%s %s hangs up", secs(e.At), who)
		}
	}
	return finishLines(ls)
}

func other(r voicetest.Role) voicetest.Role {
	if r == voicetest.RoleUser {
		return voicetest.RoleAgent
	}
	return voicetest.RoleUser
}

// timelineSummary sums the metrics up in a few lines.
func timelineSummary(m voicetest.Metrics) string {
	var b strings.Builder
	b.WriteString("Summary:\n")
	if l := m.Latency; l.N > 0 {
		fmt.Fprintf(&b, "- response latency over %d replies: median %s, p90 %s, slowest %s\n", l.N, secs(l.P50), secs(l.P90), secs(l.Max))
	} else {
		b.WriteString("- no response latency was measured\n")
	}
	to := m.TalkOver
	fmt.Fprintf(&b, "- both spoke at once %d times for %s in all (the user over the agent %d, the agent over the user %d)\n",
		to.Count, secs(to.Time), to.ByUser.Count, to.ByAgent.Count)
	p := m.Pauses
	fmt.Fprintf(&b, "- longest silence %s; %s of silence in all; %d times the user stopped and the agent did not answer\n",
		secs(p.Longest.Duration()), secs(p.DeadAir), p.Unfilled)
	if sp := m.Speech; sp.AgentSpeech > 0 {
		fmt.Fprintf(&b, "- the agent spoke %.0f words a minute\n", sp.AgentWPM)
	}
	return b.String()
}
