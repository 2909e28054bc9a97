package voicetest

import (
	"bytes"
	_ "embed"
	"encoding/base64"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
)

// The HTML report's embedded parts: its style sheet and its script. They
// are inlined into every report, so the file needs no network and no
// other file. The page around them is written by writeHTMLReport
// (report_html_write.go).
var (
	//go:embed report/report.css
	reportCSS string
	//go:embed report/report.js
	reportJS string
)

// Size limits of the audio embedded in the HTML report. The report is
// meant to be opened and attached anywhere, so its audio is bounded; the
// WAV files Save writes beside it always hold everything at full quality.
const (
	// ReportMixedRate is the highest sample rate of the report's mixed
	// conversation player; a conversation recorded at a higher rate is
	// resampled to it.
	ReportMixedRate = 16000
	// ReportMaxMixed is the longest mixed conversation the report embeds;
	// a longer one is cut to its first ReportMaxMixed, and the report
	// says so.
	ReportMaxMixed = 3 * time.Minute
	// ReportSegmentBudget bounds the bytes of per-segment WAV audio the
	// report embeds, segments taken in order at the session rate. Past
	// it, a segment gets no player, only a note naming its file under
	// segments/.
	ReportSegmentBudget = 4 << 20
	// reportBuckets is the number of min/max peak pairs per waveform.
	reportBuckets = 1200
)

// htmlReport is the data of the report page.
type htmlReport struct {
	Sections    []ReportSection // report_sections.go
	Name        string
	Description string
	Status      string
	StatusClass string
	Reasoning   string
	Err         string
	Ended       string
	Skipped     []string
	SkipReason  string
	Golden      string
	GoldenClass string
	Duration    string
	Turns       int
	Adapter     string
	Rate        int
	Runs        string

	P50, P90, P95, P99, Max, Mean, TTFB string
	HaveLatency                         bool
	LatencyRows                         []htmlLatency
	Interrupts                          []string

	VerdictReasoning string
	Criteria         []htmlCriterion

	Rows   []htmlRow
	Events []htmlEvent

	Quality htmlQuality

	Mixed      string // a data: URL
	MixedNote  string
	AudioCount int

	Data htmlData
}

type htmlLatency struct {
	Turn    int
	Label   string
	Percent float64
}

type htmlCriterion struct {
	Criterion, Status, Class, Reasoning string
}

type htmlRow struct {
	Turn        int
	Role        string
	Start, End  string
	Latency     string
	Interrupted bool
	AudioOnly   bool
	Text        string
	Audio       string // a data: URL
	AudioNote   string
	start       time.Duration
	order       int
}

type htmlEvent struct {
	At, Type, Role, Detail string
	Turn                   int
	Class                  string
}

// htmlData is the JSON the report's script draws from.
type htmlData struct {
	Duration float64     `json:"duration"`
	Buckets  int         `json:"buckets"`
	User     []int8      `json:"user"`
	Agent    []int8      `json:"agent"`
	Spans    []htmlSpan  `json:"spans"`
	Marks    []htmlMark  `json:"marks"`
	Latency  []htmlLatDP `json:"latency"`
	// Quality holds the talk-over and pause spans of the time axis.
	Quality []htmlQSpan `json:"quality"`
}

type htmlSpan struct {
	Role        string  `json:"role"`
	Start       float64 `json:"start"`
	End         float64 `json:"end"`
	Turn        int     `json:"turn"`
	Interrupted bool    `json:"interrupted,omitempty"`
}

type htmlMark struct {
	T     float64 `json:"t"`
	Type  string  `json:"type"`
	Label string  `json:"label"`
	Class string  `json:"class"`
}

type htmlLatDP struct {
	Turn int     `json:"turn"`
	Ms   float64 `json:"ms"`
}

// HTMLReport renders the scenario as one self-contained HTML page: the
// user's and the agent's waveforms on one time axis with the timeline's
// events marked and the talk-over and pauses drawn on it, a player for
// the whole conversation and one per segment, the transcript with turns
// and latencies, latency per turn, the conversation's quality (Metrics:
// talk-over, barge-ins, pauses, timing and its parts, speaking rate, word
// error rate, wire statistics, a table per turn), the verdict with each
// criterion's reasoning, and the golden comparison's outcome. Styles, script and audio (data: URLs of WAV files) are inline:
// the page loads nothing from the network and needs no other file. All
// text is escaped. Audio is bounded (see ReportMixedRate, ReportMaxMixed
// and ReportSegmentBudget); the waveforms always cover the whole
// conversation.
func (res *Result) HTMLReport() ([]byte, error) {
	d, err := res.htmlData()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	writeHTMLReport(&b, d)
	return b.Bytes(), nil
}

func statusClass(s Status) string {
	switch s {
	case StatusPass:
		return "pass"
	case StatusFail:
		return "fail"
	}
	return "inconclusive"
}

func fmtMs(d time.Duration) string {
	if d%time.Millisecond != 0 && d < 10*time.Millisecond {
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}

// wavURL returns c as a data: URL of a WAV file, and its size.
func wavURL(c pcm.Chunk) (string, int, error) {
	b, err := encodeWAV(c)
	if err != nil {
		return "", 0, err
	}
	// A data: URL of base64 text is safe in a src attribute: base64 has
	// no quote, space or angle bracket.
	return "data:audio/wav;base64," + base64.StdEncoding.EncodeToString(b), len(b), nil
}

func (res *Result) htmlData() (*htmlReport, error) {
	rep := &htmlReport{
		Sections:    res.Sections,
		Name:        res.Name,
		Status:      string(res.Status),
		StatusClass: statusClass(res.Status),
		Reasoning:   res.Reasoning,
		Ended:       res.Ended,
		Skipped:     res.SkippedSteps,
		SkipReason:  res.SkipReason,
		Duration:    fmtOffset(res.Duration),
		Turns:       res.Turns,
		Adapter:     res.Capabilities.Adapter,
		Rate:        res.Recording.Rate,
	}
	if rep.Status == "" {
		rep.Status, rep.StatusClass = "unknown", "inconclusive"
	}
	if res.State != nil {
		rep.Description = res.State.Description()
	}
	if res.Err != nil {
		rep.Err = res.Err.Error()
		if rep.Reasoning == rep.Err {
			rep.Reasoning = ""
		}
	}
	if res.Runs != nil {
		passed := 0
		for _, r := range res.Runs {
			if r.Success {
				passed++
			}
		}
		rep.Runs = fmt.Sprintf("%d of %d runs passed (%.0f%%)", passed, len(res.Runs), 100*res.PassRate)
	}
	switch {
	case res.GoldenErr != nil:
		rep.Golden, rep.GoldenClass = res.GoldenErr.Error(), "fail"
	default:
		rep.Golden, rep.GoldenClass = "no golden failure (the golden files matched, or were not compared)", "pass"
	}

	// Latency.
	l := res.Latency
	rep.HaveLatency = len(l.PerTurn) > 0
	rep.P50, rep.P90, rep.P95, rep.P99, rep.Max, rep.Mean = fmtMs(l.P50), fmtMs(l.P90), fmtMs(l.P95), fmtMs(l.P99), fmtMs(l.Max), fmtMs(l.Mean)
	rep.TTFB = fmtMs(l.TTFB)
	for _, d := range l.InterruptResponse {
		rep.Interrupts = append(rep.Interrupts, fmtMs(d))
	}
	var maxLat time.Duration
	for _, m := range res.Transcript {
		if m.Role == RoleAgent && m.Latency > 0 {
			maxLat = max(maxLat, m.Latency)
		}
	}
	for _, m := range res.Transcript {
		if m.Role == RoleAgent && m.Latency > 0 {
			rep.LatencyRows = append(rep.LatencyRows, htmlLatency{Turn: m.Turn, Label: fmtMs(m.Latency),
				Percent: 100 * float64(m.Latency) / float64(maxLat)})
			rep.Data.Latency = append(rep.Data.Latency, htmlLatDP{Turn: m.Turn, Ms: float64(m.Latency) / float64(time.Millisecond)})
		}
	}

	// Verdict.
	if res.Verdict != nil {
		rep.VerdictReasoning = res.Verdict.Reasoning
	}
	for _, group := range [][]CriterionResult{res.Failed, res.Inconclusive, res.Passed} {
		for _, c := range group {
			rep.Criteria = append(rep.Criteria, htmlCriterion{Criterion: c.Criterion, Status: string(c.Status),
				Class: statusClass(c.Status), Reasoning: c.Reasoning})
		}
	}

	// Audio: the mix, then segments within the budget.
	if err := rep.addMixed(res.Recording); err != nil {
		return nil, err
	}
	if err := rep.addRows(res); err != nil {
		return nil, err
	}

	// Timeline.
	for _, e := range res.Timeline {
		rep.Events = append(rep.Events, htmlEvent{At: fmtOffset(e.At), Turn: e.Turn, Type: string(e.Type),
			Role: string(e.Role), Detail: eventDetail(e), Class: eventClass(e.Type)})
	}
	rep.addQuality(res)
	rep.Data.fill(res)
	return rep, nil
}

// addMixed embeds the mixed conversation, at most ReportMixedRate and
// ReportMaxMixed.
func (rep *htmlReport) addMixed(rec Recording) error {
	has := false
	for _, s := range rec.Segments {
		if s.HasAudio() {
			has = true
			break
		}
	}
	if !has {
		rep.MixedNote = "no audio was recorded (a text-only agent)"
		return nil
	}
	mixed := rec.Mixed()
	if d := mixed.Duration(); d > ReportMaxMixed {
		mixed = mixed.Slice(0, ReportMaxMixed)
		rep.MixedNote = fmt.Sprintf("the conversation lasts %v; this player holds its first %v (conversation.wav has all of it)", d.Round(time.Second), ReportMaxMixed)
	}
	if mixed.Rate > ReportMixedRate {
		var err error
		if mixed, err = pcm.Resample(mixed, ReportMixedRate); err != nil {
			return fmt.Errorf("voicetest: resampling the mixed recording for the HTML report: %w", err)
		}
	}
	u, _, err := wavURL(mixed)
	if err != nil {
		return fmt.Errorf("voicetest: encoding the mixed recording for the HTML report: %w", err)
	}
	rep.Mixed = u
	rep.AudioCount++
	return nil
}

// addRows builds the transcript rows: the messages, each with the audio of
// its segment, and the segments no message describes (in-band DTMF).
func (rep *htmlReport) addRows(res *Result) error {
	type key struct {
		role  Role
		turn  int
		start time.Duration
	}
	segIdx := map[key]int{}
	for i, s := range res.Recording.Segments {
		k := key{s.Role, s.Turn, s.Start}
		if _, dup := segIdx[k]; !dup {
			segIdx[k] = i
		}
	}
	used := map[int]bool{}
	budget := ReportSegmentBudget
	attach := func(row *htmlRow, i int) error {
		s := res.Recording.Segments[i]
		used[i] = true
		if !s.HasAudio() {
			return nil
		}
		need := 44 + 2*s.audio.len()
		if need > budget {
			row.AudioNote = fmt.Sprintf("audio not embedded (over the report's %d MiB budget): %s", ReportSegmentBudget>>20, segmentFile(i, s))
			budget = 0
			return nil
		}
		u, n, err := wavURL(s.Audio())
		if err != nil {
			return fmt.Errorf("voicetest: encoding segment %d for the HTML report: %w", i, err)
		}
		budget -= n
		row.Audio = u
		rep.AudioCount++
		return nil
	}
	for n, m := range res.Transcript {
		row := htmlRow{Turn: m.Turn, Role: string(m.Role), Start: fmtOffset(m.Start), End: fmtOffset(m.End),
			Interrupted: m.Interrupted, AudioOnly: m.AudioOnly, Text: m.DisplayText(), start: m.Start, order: n}
		if m.Latency > 0 {
			row.Latency = fmtMs(m.Latency)
		}
		if i, ok := segIdx[key{m.Role, m.Turn, m.Start}]; ok && !used[i] {
			if err := attach(&row, i); err != nil {
				return err
			}
		}
		rep.Rows = append(rep.Rows, row)
	}
	for i, s := range res.Recording.Segments {
		if used[i] {
			continue
		}
		text := s.Text
		if text == "" {
			text = "(audio)"
		}
		row := htmlRow{Turn: s.Turn, Role: string(s.Role), Start: fmtOffset(s.Start), End: fmtOffset(s.End),
			Interrupted: s.Interrupted, Text: text, start: s.Start, order: len(rep.Rows)}
		if err := attach(&row, i); err != nil {
			return err
		}
		rep.Rows = append(rep.Rows, row)
	}
	sort.SliceStable(rep.Rows, func(a, b int) bool {
		ra, rb := rep.Rows[a], rep.Rows[b]
		if ra.Turn != rb.Turn {
			return ra.Turn < rb.Turn
		}
		if ra.start != rb.start {
			return ra.start < rb.start
		}
		return ra.order < rb.order
	})
	return nil
}

func eventDetail(e Event) string {
	var parts []string
	if e.Tool != nil {
		s := e.Tool.Name
		if e.Type == EventToolCall && len(e.Tool.Arguments) > 0 {
			s += " " + string(e.Tool.Arguments)
		}
		if e.Type == EventToolResult && len(e.Tool.Result) > 0 {
			s += " → " + string(e.Tool.Result)
		}
		parts = append(parts, s)
	} else if e.Text != "" {
		parts = append(parts, e.Text)
	}
	if len(e.Data) > 0 {
		parts = append(parts, string(e.Data))
	}
	if e.Latency != 0 {
		parts = append(parts, "latency "+fmtMs(e.Latency))
	}
	if e.Duration != 0 {
		parts = append(parts, "duration "+fmtMs(e.Duration))
	}
	return strings.Join(parts, " · ")
}

// eventClass groups event types for colour.
func eventClass(t EventType) string {
	switch t {
	case EventUserStartSpeaking, EventUserStopSpeaking, EventUserTranscript, EventDTMF, EventSilence, EventSleep, EventUserWait, EventUserWaitLimit:
		return "user"
	case EventAgentStartSpeaking, EventAgentStopSpeaking, EventAgentLog:
		return "agent"
	case EventUserInterrupt, EventAgentInterrupted, EventMaxTurnAudio:
		return "interrupt"
	case EventToolCall, EventToolResult, EventData:
		return "tool"
	case EventAgentHangUp, EventUserHangUp:
		return "hangup"
	case EventJudgeCheckpoint, EventVerdict:
		return "judge"
	}
	return "other"
}

// markedEvent reports whether an event type is drawn on the waveform:
// speech starts and stops are already the spans.
func markedEvent(t EventType) bool {
	switch t {
	case EventUserStartSpeaking, EventUserStopSpeaking, EventAgentStartSpeaking, EventAgentStopSpeaking, EventAgentLog, EventUserTranscript:
		return false
	}
	return true
}

// fill computes the waveform peaks, speech spans and event marks.
func (d *htmlData) fill(res *Result) {
	end := res.Duration
	for _, s := range res.Recording.Segments {
		end = max(end, s.End, s.Start+s.AudioDuration())
	}
	for _, m := range res.Transcript {
		end = max(end, m.End)
	}
	for _, e := range res.Timeline {
		end = max(end, e.At)
	}
	d.Duration = end.Seconds()
	d.Buckets = reportBuckets
	d.User = peaks(res.Recording.Segments, RoleUser, end, reportBuckets)
	d.Agent = peaks(res.Recording.Segments, RoleAgent, end, reportBuckets)
	d.Spans = []htmlSpan{}
	for _, m := range res.Transcript {
		d.Spans = append(d.Spans, htmlSpan{Role: string(m.Role), Start: m.Start.Seconds(), End: m.End.Seconds(), Turn: m.Turn, Interrupted: m.Interrupted})
	}
	d.Marks = []htmlMark{}
	for _, e := range res.Timeline {
		if !markedEvent(e.Type) {
			continue
		}
		label := strings.ReplaceAll(string(e.Type), "_", " ")
		if e.Tool != nil {
			label += " " + e.Tool.Name
		} else if e.Type == EventDTMF {
			label += " " + e.Text
		}
		d.Marks = append(d.Marks, htmlMark{T: e.At.Seconds(), Type: string(e.Type), Label: label, Class: eventClass(e.Type)})
	}
	if d.Latency == nil {
		d.Latency = []htmlLatDP{}
	}
}

// peaks returns, for n equal stretches of [0, end), the minimum and the
// maximum sample of role's audio there (interleaved, scaled to ±127).
func peaks(segs []Segment, role Role, end time.Duration, n int) []int8 {
	out := make([]int8, 2*n)
	if end <= 0 {
		return out
	}
	lo := make([]int16, n)
	hi := make([]int16, n)
	var scratch []int16 // an agent segment laid out, one at a time
	for _, s := range segs {
		rate := s.audio.rate()
		if s.Role != role || !s.HasAudio() || rate <= 0 {
			continue
		}
		samples := s.audio.whole.Samples
		if s.audio.r != 0 {
			if cap(scratch) < s.audio.len() {
				scratch = make([]int16, s.audio.len())
			}
			scratch = scratch[:cap(scratch)]
			clear(scratch)
			samples = s.audio.layInto(scratch)
		}
		// Bucket k covers samples [k*total/n, (k+1)*total/n) of the
		// conversation, counted at the segment's rate.
		total := int64(pcm.SamplesFor(rate, end))
		off := int64(pcm.SamplesFor(rate, s.Start))
		last := off + int64(len(samples))
		if total <= 0 {
			continue
		}
		for k := max(off*int64(n)/total, 0); k < int64(n); k++ {
			from, to := k*total/int64(n), (k+1)*total/int64(n)
			from, to = max(from, off), min(to, last)
			if from >= last {
				break
			}
			l, h := lo[k], hi[k]
			for _, v := range samples[from-off : to-off] {
				l, h = min(l, v), max(h, v)
			}
			lo[k], hi[k] = l, h
		}
	}
	for i := range n {
		out[2*i] = int8(int(lo[i]) * 127 / 32768)
		out[2*i+1] = int8(int(hi[i]) * 127 / 32767)
	}
	return out
}
