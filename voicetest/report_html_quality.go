package voicetest

import (
	"fmt"
	"strings"
	"time"
)

// htmlQuality is the report's conversation-quality card: the metrics as
// rows of label and value, grouped, and the per-turn table.
type htmlQuality struct {
	Groups []htmlQualityGroup
	Turns  []htmlTurnRow
	Heard  []htmlHeard
	Wire   []htmlStat
}

type htmlQualityGroup struct {
	Title string
	Stats []htmlStat
}

type htmlStat struct {
	Label, Value string
	// Class flags a value worth a look ("warn").
	Class string
}

type htmlTurnRow struct {
	Turn                                      int
	Latency, TTFB, FirstEvent, Parts, DeadAir string
	UserWords, AgentWords                     int
}

type htmlHeard struct {
	Turn             int
	Said, Heard, WER string
}

// htmlQSpan is a talk-over or a pause on the time axis, for the script.
type htmlQSpan struct {
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	// Kind is "talk_over", "pause" or "unfilled".
	Kind string `json:"kind"`
	// Label is drawn beside the longest pause and each talk-over.
	Label string `json:"label,omitempty"`
}

func dash(ok bool, d time.Duration) string {
	if !ok {
		return "–"
	}
	return fmtMs(d)
}

func pctRow(label string, p Percentiles) htmlStat {
	if p.N == 0 {
		return htmlStat{Label: label, Value: "not measured"}
	}
	return htmlStat{Label: label, Value: fmt.Sprintf("p50 %s · p90 %s · p95 %s · p99 %s · max %s (n=%d)",
		fmtMs(p.P50), fmtMs(p.P90), fmtMs(p.P95), fmtMs(p.P99), fmtMs(p.Max), p.N)}
}

// addQuality fills the quality card and the talk-over and pause spans of
// the time axis.
func (rep *htmlReport) addQuality(res *Result) {
	m := res.Metrics
	q := &rep.Quality
	to := m.TalkOver
	talk := htmlQualityGroup{Title: "Talk-over"}
	talk.Stats = append(talk.Stats,
		htmlStat{Label: "both speaking", Value: fmt.Sprintf("%d times, %s", to.Count, fmtMs(to.Time)), Class: warnIf(to.Count > 0)},
		htmlStat{Label: "user over agent", Value: fmt.Sprintf("%d, %s", to.ByUser.Count, fmtMs(to.ByUser.Time))},
		htmlStat{Label: "agent over user", Value: fmt.Sprintf("%d, %s", to.ByAgent.Count, fmtMs(to.ByAgent.Time)), Class: warnIf(to.ByAgent.Count > 0)},
		htmlStat{Label: "who gave way", Value: fmt.Sprintf("agent %d, user %d", to.AgentYielded, to.UserYielded)})
	for i, b := range to.BargeIns {
		talk.Stats = append(talk.Stats, htmlStat{Label: fmt.Sprintf("barge-in %d (turn %d, %s)", i+1, b.Turn, fmtOffset(b.At)),
			Value: fmt.Sprintf("quiet after %s, answered after %s", dash(b.Quiet, b.ToQuiet), dash(b.Answered, b.ToAnswer))})
	}
	p := m.Pauses
	pauses := htmlQualityGroup{Title: "Pauses"}
	longest := "none"
	if p.Longest.Duration() > 0 {
		longest = fmt.Sprintf("%s at %s (turn %d, after the %s)", fmtMs(p.Longest.Duration()), fmtOffset(p.Longest.Start), p.Longest.Turn, p.Longest.After)
	}
	pauses.Stats = append(pauses.Stats,
		htmlStat{Label: "longest", Value: longest},
		htmlStat{Label: "dead air", Value: fmtMs(p.DeadAir)},
		htmlStat{Label: "left unfilled by the agent", Value: fmt.Sprintf("%d (longest %s)", p.Unfilled, fmtMs(p.LongestUnfilled)), Class: warnIf(p.Unfilled > 0)})
	timing := htmlQualityGroup{Title: "Timing"}
	timing.Stats = append(timing.Stats, pctRow("response latency", m.Latency), pctRow("first audio byte", m.TTFB),
		pctRow("first event", m.FirstEvent))
	for _, part := range []struct {
		name string
		p    Percentiles
	}{{"speech to text", m.Parts.STT}, {"model", m.Parts.LLM}, {"tools", m.Parts.Tools}, {"text to speech", m.Parts.TTS}} {
		if part.p.N > 0 {
			timing.Stats = append(timing.Stats, pctRow(part.name, part.p))
		}
	}
	if m.LateAudio.Count > 0 {
		timing.Stats = append(timing.Stats, htmlStat{Label: "late agent audio",
			Value: fmt.Sprintf("%d chunks, %s of gaps", m.LateAudio.Count, fmtMs(m.LateAudio.Gap)), Class: "warn"})
	}
	sp := m.Speech
	speech := htmlQualityGroup{Title: "Speech"}
	wpm := "not measured"
	if sp.AgentSpeech > 0 {
		wpm = fmt.Sprintf("%.0f words a minute", sp.AgentWPM)
	}
	speech.Stats = append(speech.Stats,
		htmlStat{Label: "agent rate", Value: wpm},
		htmlStat{Label: "agent words a turn", Value: fmt.Sprintf("%.1f (%d words, %d turns)", sp.AgentWordsPerTurn, sp.AgentWords, sp.AgentTurns)},
		htmlStat{Label: "user words a turn", Value: fmt.Sprintf("%.1f (%d words, %d turns)", sp.UserWordsPerTurn, sp.UserWords, sp.UserTurns)})
	if w := sp.WER; w != nil {
		speech.Stats = append(speech.Stats, htmlStat{Label: "agent word error rate",
			Value: fmt.Sprintf("%.1f%% (%d edits in %d words, %d messages)", 100*w.Rate, w.Errors.Edits(), w.Errors.Words, w.Messages),
			Class: warnIf(w.Rate > 0)})
	}
	q.Groups = []htmlQualityGroup{talk, pauses, timing, speech}

	for _, t := range m.Turns {
		row := htmlTurnRow{Turn: t.Turn, Latency: dash(t.HasLatency, t.Latency), TTFB: dash(t.HasTTFB, t.TTFB),
			FirstEvent: dash(t.HasFirstEvent, t.FirstEvent), DeadAir: fmtMs(t.DeadAir), UserWords: t.UserWords, AgentWords: t.AgentWords}
		if pt := t.Parts; pt != nil {
			var parts []string
			for _, x := range []struct {
				n string
				d time.Duration
			}{{"STT", pt.STT}, {"LLM", pt.LLM}, {"tools", pt.Tools}, {"TTS", pt.TTS}} {
				if x.d > 0 {
					parts = append(parts, x.n+" "+fmtMs(x.d))
				}
			}
			row.Parts = strings.Join(parts, " · ")
		}
		q.Turns = append(q.Turns, row)
	}
	for _, msg := range res.Transcript {
		if h := msg.Heard; h != nil {
			q.Heard = append(q.Heard, htmlHeard{Turn: msg.Turn, Said: msg.Text, Heard: h.Text,
				WER: fmt.Sprintf("%.1f%%", 100*h.Errors.Rate())})
		}
	}
	if w := m.Wire; w != nil {
		q.Wire = []htmlStat{
			{Label: "adapter", Value: w.Adapter},
			{Label: "frames in / out", Value: fmt.Sprintf("%d / %d (%d / %d bytes)", w.FramesIn, w.FramesOut, w.BytesIn, w.BytesOut)},
			{Label: "marks received / echoed", Value: fmt.Sprintf("%d / %d", w.MarksReceived, w.MarksEchoed), Class: warnIf(w.MarksEchoed < w.MarksReceived)},
			{Label: "mark echo delay", Value: pctRow("", w.MarkDelay).Value},
			{Label: "marks sent", Value: fmt.Sprint(w.MarksSent)},
			{Label: "clears / cancels", Value: fmt.Sprintf("%d / %d", w.Clears, w.Cancels)},
			{Label: "frames dropped", Value: fmt.Sprint(w.DroppedFrames), Class: warnIf(w.DroppedFrames > 0)},
		}
	}

	// The time axis: talk-over and pauses.
	rep.Data.Quality = []htmlQSpan{}
	for _, s := range to.Spans {
		rep.Data.Quality = append(rep.Data.Quality, htmlQSpan{Start: s.Start.Seconds(), End: s.End.Seconds(), Kind: "talk_over",
			Label: "talk-over " + fmtMs(s.Duration())})
	}
	for _, s := range p.Spans {
		kind, label := "pause", ""
		if s.Unfilled() {
			kind = "unfilled"
		}
		if s == p.Longest {
			label = "longest pause " + fmtMs(s.Duration())
		}
		rep.Data.Quality = append(rep.Data.Quality, htmlQSpan{Start: s.Start.Seconds(), End: s.End.Seconds(), Kind: kind, Label: label})
	}
}

func warnIf(b bool) string {
	if b {
		return "warn"
	}
	return ""
}
