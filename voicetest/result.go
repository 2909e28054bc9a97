package voicetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
)

// Result is the outcome of a scenario.
type Result struct {
	// Name is the scenario's name.
	Name string
	// Success reports whether the scenario passed: no error, no failed
	// check or criterion, and a passing verdict when a final verdict was
	// asked. Under Repeat it reports whether the pass rate was met.
	Success bool
	// Status is the outcome as one word: Pass, Fail, or Inconclusive when
	// the final verdict was inconclusive.
	Status Status
	// Verdict is the judge's final verdict, nil when none was asked.
	Verdict *Judgment
	// Reasoning explains the outcome: the verdict's reasoning, the reason
	// given to Succeed, or the error.
	Reasoning string
	// Passed, Failed and Inconclusive are the criteria the judge answered,
	// at checkpoints and in the final verdict, by outcome.
	Passed, Failed, Inconclusive []CriterionResult
	// Err is the first error, nil on success. It wraps a *StepError
	// naming the step, and errors.Is/As find the typed cause
	// (*TimeoutError, *TransportClosedError, *UnsupportedError,
	// ErrFailed, ErrExpectation).
	Err error
	// Ended says why the conversation ended before the script did ("the
	// agent hung up"), empty when the script ran to its end.
	Ended string
	// SkippedSteps lists the steps not run, as "step N Name()": the
	// steps after the one that failed or after Succeed, and the steps
	// that need the line after the user hung up or the judge gave its
	// final verdict (steps that only read the conversation still run).
	// SkipReason says why; the report always lists them.
	SkippedSteps []string
	// SkipReason says why SkippedSteps were not run ("step 3 failed",
	// "the user hung up at 4.200s", ...); empty when none were skipped.
	SkipReason string

	// State is the conversation at the end: transcript, timeline, the
	// agent's items and tool calls.
	State *State
	// Transcript is State.Transcript(), for convenience.
	Transcript []Message
	// Timeline is State.Timeline(), for convenience.
	Timeline []Event
	// Recording holds the audio of the conversation.
	Recording Recording
	// Latency summarises the agent's response times.
	Latency Latency
	// Metrics measures the conversation as a caller hears it: talk-over,
	// pauses, latency per turn and its parts, speaking rate, word error
	// rate, wire statistics. Under Repeat it is the reported run's.
	Metrics Metrics
	// Duration is the conversation's length (virtual time for in-process
	// agents).
	Duration time.Duration
	// Turns is the number of user turns.
	Turns int
	// Capabilities are the adapter's.
	Capabilities Capabilities

	// Runs holds every run under Repeat (nil for a single run); the other
	// fields then describe the first failed run, or the last run if all
	// passed, except Success, Latency (over all runs) and PassRate.
	Runs []*Result
	// PassRate is the fraction of runs that passed (1 or 0 for one run).
	PassRate float64

	// Sections are the report's extra sections from the User and the
	// Judge (a red-team attacker's attempts); see SectionReporter.
	Sections []ReportSection

	// GoldenErr is the golden comparison's failure under Scenario: a
	// *GoldenError, or several joined (errors.Is ErrGoldenMismatch or
	// ErrGoldenMissing); nil when the golden files matched or were not
	// compared. A golden failure fails the scenario: Success is false,
	// and Err is GoldenErr when nothing failed before.
	GoldenErr error

	// EventsNotKept counts the agent's events that the timeline does not
	// hold: log lines, data, tool calls and results, and the agent's
	// transcripts of the user past the runner's bound of 10 000 such
	// events (or 16 MiB of them) per scenario, which keeps an agent that
	// floods them from growing the result without bound.
	EventsNotKept int

	// virtualTime records that Scenario ran the scenario in a synctest
	// bubble, so that GoldenAuto compares exactly.
	virtualTime bool
	// strays names the callees (user code, adapter methods) the run
	// stopped waiting for at their bound that had not returned when it
	// ended (see call).
	strays []string
}

// Latency summarises response times. Per turn, latency is the time from the
// end of the user's speech to the agent's first audio (or first spoken
// text, for text-only agents).
type Latency struct {
	// PerTurn holds one latency per agent reply that followed user speech.
	PerTurn []time.Duration `json:"per_turn"`
	// Mean is the mean of PerTurn; zero when it is empty.
	Mean time.Duration `json:"mean"`
	// P50 is the median of PerTurn (the mean of the two middle values for
	// an even count).
	P50 time.Duration `json:"p50"`
	// P90, P95 and P99 are sorted(PerTurn)[min(n-1, ceil(p·(n-1)))] for p
	// 0.90, 0.95 and 0.99 (see Percentiles).
	P90 time.Duration `json:"p90"`
	P95 time.Duration `json:"p95"`
	P99 time.Duration `json:"p99"`
	// Max is the slowest reply.
	Max time.Duration `json:"max"`
	// TTFB is the time from the start of the conversation to the agent's
	// first audio (its greeting, or its first reply); zero if it never
	// spoke.
	TTFB time.Duration `json:"ttfb"`
	// InterruptResponse holds, per Interrupt, the time from the barge-in to
	// the agent's audio stopping.
	InterruptResponse []time.Duration `json:"interrupt_response,omitempty"`
}

// Summarize fills Mean, P50, P90, P95, P99 and Max from PerTurn.
func (l *Latency) Summarize() {
	p := SummarizeDurations(l.PerTurn)
	l.Mean, l.P50, l.P90, l.P95, l.P99, l.Max = p.Mean, p.P50, p.P90, p.P95, p.P99, p.Max
}

// Segment is one stretch of speech.
type Segment struct {
	// Role is who speaks.
	Role Role
	// Turn is the user turn the speech belongs to (0 before the first).
	Turn int
	// Start and End are offsets from the start of the scenario.
	Start, End time.Duration
	// Text is the transcript ("" if unknown).
	Text string
	// AudioOnly marks agent audio with no transcript.
	AudioOnly bool
	// Interrupted marks agent speech cut short by a barge-in.
	Interrupted bool
	// audio is the speech (see Audio).
	audio segmentAudio
}

// Audio returns the segment's speech, at the session rate: what the user
// sent (after effects), or the agent's audio as it played, from Start,
// with silence where the agent paused. It is empty for text-only agents.
//
// The runner keeps the agent's frames as they came and lays them out
// only here: each call for an agent segment returns a new buffer (call it
// once and keep the result, rather than in a loop). A user segment
// returns the audio that was sent, shared with the Result: do not modify
// it (or a new buffer, when a TTS of this module gave the speech as
// shared pieces, which the runner keeps as they are).
func (s Segment) Audio() pcm.Chunk { return s.audio.chunk() }

// HasAudio reports whether Audio is not empty, without laying the audio
// out.
func (s Segment) HasAudio() bool { return s.audio.len() > 0 }

// AudioDuration returns how long Audio plays (Audio().Duration()),
// without laying the audio out.
func (s Segment) AudioDuration() time.Duration { return pcm.DurationOf(s.audio.len(), s.audio.rate()) }

// WithAudio returns a copy of s whose Audio is c (shared, not copied):
// how a test or a tool builds a Segment with speech.
func (s Segment) WithAudio(c pcm.Chunk) Segment {
	s.audio = segmentAudio{whole: c}
	return s
}

// segmentAudio is a segment's speech: one chunk (whole), or the agent's
// frames as they came (pieces, each placed at its time from start) on n
// samples at rate, laid out on demand.
type segmentAudio struct {
	whole  pcm.Chunk
	pieces []piece
	start  time.Duration
	n      int
	r      int
}

// placedAudio returns the speech of pieces, frames placed from start, cut
// at n samples at rate (see layInto). It keeps the pieces that reach into
// the n samples, in the same backing array.
func placedAudio(rate, n int, start time.Duration, pieces []piece) segmentAudio {
	kept := pieces[:0]
	for _, p := range pieces {
		if !p.c.IsEmpty() && pcm.SamplesFor(rate, p.at-start) < n {
			kept = append(kept, p)
		}
	}
	clear(pieces[len(kept):]) // frames cut off are not kept alive
	return segmentAudio{pieces: kept, start: start, n: n, r: rate}
}

func (a segmentAudio) len() int {
	if a.r == 0 {
		return len(a.whole.Samples)
	}
	return a.n
}

func (a segmentAudio) rate() int {
	if a.r == 0 {
		return a.whole.Rate
	}
	return a.r
}

// chunk returns the speech as one Chunk: whole, or the pieces laid out
// on a new buffer.
func (a segmentAudio) chunk() pcm.Chunk {
	if a.r == 0 {
		return a.whole
	}
	return pcm.Chunk{Rate: a.r, Samples: a.layInto(make([]int16, a.n))}
}

// layInto lays the speech on dst (at least len() samples, all zero where
// no piece lands) and returns dst[:len()]: each piece copied at its
// offset from start, a later piece over an earlier one where rounding
// makes them meet, the last cut at the end.
func (a segmentAudio) layInto(dst []int16) []int16 {
	if a.r == 0 {
		return dst[:copy(dst, a.whole.Samples)]
	}
	out := dst[:a.n]
	for _, p := range a.pieces {
		if off := pcm.SamplesFor(a.r, p.at-a.start); off < a.n {
			copy(out[off:], p.c.Samples)
		}
	}
	return out
}

// Recording is the conversation's audio, segment by segment.
type Recording struct {
	// Rate is the sample rate of every segment.
	Rate int
	// Segments are ordered by start time.
	Segments []Segment
	// Duration is the conversation's length.
	Duration time.Duration
}

// Mixed returns the whole conversation on one time axis: every segment
// placed at its start, overlapping speech (a barge-in) summed and
// saturated.
func (rec Recording) Mixed() pcm.Chunk {
	end := rec.Duration
	longest := 0
	for _, s := range rec.Segments {
		end = max(end, s.Start+s.AudioDuration())
		if s.audio.r != 0 {
			longest = max(longest, s.audio.len())
		}
	}
	rate := rec.Rate
	if rate <= 0 {
		rate = pcm.DefaultRate
	}
	out := pcm.Silence(rate, end)
	var scratch []int16 // an agent segment laid out, one at a time
	for _, s := range rec.Segments {
		if !s.HasAudio() || s.audio.rate() != rate {
			continue // the runner records every segment at the session rate
		}
		off := pcm.SamplesFor(rate, s.Start)
		if off >= len(out.Samples) {
			continue
		}
		samples := s.audio.whole.Samples
		if s.audio.r != 0 {
			if scratch == nil {
				scratch = make([]int16, longest)
			}
			clear(scratch)
			samples = s.audio.layInto(scratch)
		}
		pcm.MixInto(out.Samples[off:], samples, 1)
	}
	return out
}

// MixedWAV returns Mixed as a WAV file.
func (rec Recording) MixedWAV() ([]byte, error) { return encodeWAV(rec.Mixed()) }

// Manifest returns manifest.json as Save writes it: a JSON description of
// the call, its segments and its timeline. Times, durations and latencies
// are in seconds, except inside "metrics" (Metrics' durations are in
// nanoseconds, as encoding/json writes a time.Duration). Its members:
//
//   - "name", "duration", "rate" (the recording's sample rate),
//     "segment_count";
//   - "segments": one per Recording segment, in order: "idx", "file" (the
//     segment's WAV under segments/, named NN-<role>-<start ms>ms.wav;
//     absent for a segment without audio), "role", "turn", "start_time",
//     "end_time", "duration", "transcript", and "audio_only" and
//     "interrupted" when true;
//   - "events": the Timeline in order: "time", "type", "turn", and when
//     set "latency", "name", "args", "result" (a tool call's), "text",
//     "data", "duration";
//   - "latency": "measurements" (per turn), "avg", "p50", "p95",
//     "time_to_first_byte", and "interrupt_response_time" when measured;
//   - "status", "criteria" (passed, then failed, then inconclusive; absent
//     when there are none) and "metrics" (Metrics).
//
// It borrows the segments' and events' member names and the segment file
// names from LangWatch Scenario's save_segments manifest, but is not that
// layout: it has no "generated_at" (a deterministic scenario writes the same
// manifest on every run), events carry "turn", "text", "data" and
// "duration" instead of "metadata", the mix is conversation.wav (not
// full.wav), and "name", "rate", "latency", "status", "criteria" and
// "metrics" are voicetest's own. TestManifestLayout pins it.
func (res *Result) Manifest() ([]byte, error) {
	type seg struct {
		Idx         int     `json:"idx"`
		File        string  `json:"file,omitempty"`
		Role        Role    `json:"role"`
		Turn        int     `json:"turn"`
		StartTime   float64 `json:"start_time"`
		EndTime     float64 `json:"end_time"`
		Duration    float64 `json:"duration"`
		Transcript  string  `json:"transcript"`
		AudioOnly   bool    `json:"audio_only,omitempty"`
		Interrupted bool    `json:"interrupted,omitempty"`
	}
	type ev struct {
		Time     float64         `json:"time"`
		Type     EventType       `json:"type"`
		Turn     int             `json:"turn"`
		Latency  *float64        `json:"latency,omitempty"`
		Name     string          `json:"name,omitempty"`
		Args     json.RawMessage `json:"args,omitempty"`
		Result   json.RawMessage `json:"result,omitempty"`
		Text     string          `json:"text,omitempty"`
		Data     json.RawMessage `json:"data,omitempty"`
		Duration float64         `json:"duration,omitempty"`
	}
	m := struct {
		Name         string            `json:"name"`
		Duration     float64           `json:"duration"`
		Rate         int               `json:"rate"`
		SegmentCount int               `json:"segment_count"`
		Segments     []seg             `json:"segments"`
		Events       []ev              `json:"events"`
		Latency      manifestLatency   `json:"latency"`
		Status       Status            `json:"status"`
		Criteria     []CriterionResult `json:"criteria,omitempty"`
		Metrics      Metrics           `json:"metrics"`
	}{Name: res.Name, Duration: res.Duration.Seconds(), Rate: res.Recording.Rate,
		SegmentCount: len(res.Recording.Segments), Latency: newManifestLatency(res.Latency), Status: res.Status,
		Segments: []seg{}, Events: []ev{}, Metrics: res.Metrics}
	for i, s := range res.Recording.Segments {
		e := seg{Idx: i, Role: s.Role, Turn: s.Turn, StartTime: s.Start.Seconds(), EndTime: s.End.Seconds(),
			Duration: (s.End - s.Start).Seconds(), Transcript: s.Text, AudioOnly: s.AudioOnly, Interrupted: s.Interrupted}
		if s.HasAudio() {
			e.File = segmentFile(i, s)
		}
		m.Segments = append(m.Segments, e)
	}
	for _, t := range res.Timeline {
		e := ev{Time: t.At.Seconds(), Type: t.Type, Turn: t.Turn, Text: t.Text, Data: t.Data, Duration: t.Duration.Seconds()}
		if t.Latency != 0 {
			l := t.Latency.Seconds()
			e.Latency = &l
		}
		if t.Tool != nil {
			e.Name, e.Args, e.Result = t.Tool.Name, t.Tool.Arguments, t.Tool.Result
		}
		m.Events = append(m.Events, e)
	}
	m.Criteria = append(append(append(m.Criteria, res.Passed...), res.Failed...), res.Inconclusive...)
	return json.MarshalIndent(m, "", "  ")
}

// manifestLatency is Latency in seconds, as the manifest gives times.
type manifestLatency struct {
	PerTurn           []float64 `json:"measurements"`
	Mean              float64   `json:"avg"`
	P50               float64   `json:"p50"`
	P95               float64   `json:"p95"`
	TTFB              float64   `json:"time_to_first_byte"`
	InterruptResponse []float64 `json:"interrupt_response_time,omitempty"`
}

func newManifestLatency(l Latency) manifestLatency {
	secs := func(ds []time.Duration) []float64 {
		out := make([]float64, len(ds))
		for i, d := range ds {
			out[i] = d.Seconds()
		}
		return out
	}
	return manifestLatency{PerTurn: secs(l.PerTurn), Mean: l.Mean.Seconds(), P50: l.P50.Seconds(), P95: l.P95.Seconds(),
		TTFB: l.TTFB.Seconds(), InterruptResponse: secs(l.InterruptResponse)}
}

func segmentFile(i int, s Segment) string {
	return fmt.Sprintf("segments/%02d-%s-%dms.wav", i, s.Role, s.Start.Milliseconds())
}

// Save writes the artifacts to dir (created if needed): one WAV per
// segment under segments/, conversation.wav (the mix), manifest.json,
// transcript.txt, timeline.txt and report.html (HTMLReport: one
// self-contained page to open in a browser). It replaces what an earlier
// Save wrote there: it first removes manifest.json and segments/, and
// writes manifest.json last (atomically), so an interrupted Save leaves no
// manifest and the artifacts of two runs are never mixed. Only the
// manifest is synced to disk.
func (res *Result) Save(dir string) error {
	if err := os.Remove(filepath.Join(dir, "manifest.json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("voicetest: saving artifacts: removing the old manifest: %w", err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "segments")); err != nil {
		return fmt.Errorf("voicetest: saving artifacts: removing the old segments: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "segments"), 0o755); err != nil {
		return fmt.Errorf("voicetest: saving artifacts: %w", err)
	}
	write := func(name string, b []byte) error {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return fmt.Errorf("voicetest: saving artifact %s: %w", name, err)
		}
		return nil
	}
	man, err := res.Manifest()
	if err != nil {
		return fmt.Errorf("voicetest: encoding the manifest: %w", err)
	}
	if err := write("transcript.txt", []byte(res.TranscriptText())); err != nil {
		return err
	}
	if err := write("timeline.txt", []byte(res.TimelineText())); err != nil {
		return err
	}
	for i, s := range res.Recording.Segments {
		if !s.HasAudio() {
			continue
		}
		b, err := encodeWAV(s.Audio())
		if err != nil {
			return fmt.Errorf("voicetest: encoding segment %d: %w", i, err)
		}
		if err := write(segmentFile(i, s), b); err != nil {
			return err
		}
	}
	mixed, err := res.Recording.MixedWAV()
	if err != nil {
		return fmt.Errorf("voicetest: encoding the mixed recording: %w", err)
	}
	if err := write("conversation.wav", mixed); err != nil {
		return err
	}
	page, err := res.HTMLReport()
	if err != nil {
		return err
	}
	if err := write("report.html", page); err != nil {
		return err
	}
	// Last, and whole or not at all: the manifest marks a complete set.
	return writeFileAtomic(filepath.Join(dir, "manifest.json"), man)
}

// TranscriptText renders the transcript as "role: text" lines, one per
// message, in order; deterministic. Golden files use GoldenTranscript,
// which also scrubs and escapes the texts.
func (res *Result) TranscriptText() string {
	var b strings.Builder
	for _, m := range res.Transcript {
		fmt.Fprintf(&b, "%s: %s\n", m.Role, m.DisplayText())
	}
	return b.String()
}

// TimelineText renders the timeline as one line per event, with the offset
// in milliseconds: "  1234ms turn 1 agent_start_speaking latency=350ms".
// Deterministic for in-process agents; it is the artifacts' timeline.txt.
// Golden files use GoldenTimeline, a format that parses back.
func (res *Result) TimelineText() string {
	var b strings.Builder
	for _, e := range res.Timeline {
		fmt.Fprintf(&b, "%7dms turn %d %s", e.At.Milliseconds(), e.Turn, e.Type)
		if e.Tool != nil {
			fmt.Fprintf(&b, " %s", e.Tool.Name)
			if e.Type == EventToolCall && len(e.Tool.Arguments) > 0 {
				fmt.Fprintf(&b, " %s", e.Tool.Arguments)
			}
			if e.Type == EventToolResult && len(e.Tool.Result) > 0 {
				fmt.Fprintf(&b, " %s", e.Tool.Result)
			}
		} else if e.Text != "" {
			fmt.Fprintf(&b, " %q", e.Text)
		}
		if e.Latency != 0 {
			fmt.Fprintf(&b, " latency=%dms", e.Latency.Milliseconds())
		}
		if e.Duration != 0 {
			fmt.Fprintf(&b, " duration=%dms", e.Duration.Milliseconds())
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// report renders the failure report: what failed, then the transcript
// with turns and latencies.
func (res *Result) report() string {
	var b strings.Builder
	switch {
	case res.Runs != nil:
		passed := 0
		for _, r := range res.Runs {
			if r.Success {
				passed++
			}
		}
		fmt.Fprintf(&b, "voicetest: scenario %q passed %d of %d runs (%.0f%%), below the required pass rate\n", res.Name, passed, len(res.Runs), 100*res.PassRate)
		fmt.Fprintf(&b, "first failed run:\n")
	}
	if res.Err != nil {
		fmt.Fprintf(&b, "voicetest: scenario %q failed: %v\n", res.Name, res.Err)
	} else {
		fmt.Fprintf(&b, "voicetest: scenario %q: verdict %s\n", res.Name, res.Status)
	}
	if stack := panicStack(res.Err); stack != "" {
		fmt.Fprintf(&b, "  panic stack:\n%s", stack)
	}
	for _, c := range res.Failed {
		fmt.Fprintf(&b, "  %s\n", criterionLine("FAIL", c))
	}
	for _, c := range res.Inconclusive {
		fmt.Fprintf(&b, "  %s\n", criterionLine("INCONCLUSIVE", c))
	}
	if res.GoldenErr != nil && res.GoldenErr != res.Err {
		fmt.Fprintf(&b, "%v\n", res.GoldenErr)
	}
	if res.Reasoning != "" && (res.Err == nil || res.Verdict != nil) {
		fmt.Fprintf(&b, "  judge reasoning: %s\n", res.Reasoning)
	}
	if res.Ended != "" {
		early := ""
		if len(res.SkippedSteps) > 0 {
			early = " early"
		}
		fmt.Fprintf(&b, "  the conversation ended%s: %s\n", early, res.Ended)
	}
	if len(res.SkippedSteps) > 0 {
		fmt.Fprintf(&b, "  %s\n", res.skippedLine())
	}
	if res.EventsNotKept > 0 {
		fmt.Fprintf(&b, "  %d agent events not kept (the timeline holds at most %d log lines, data, tool calls and results and transcripts of the user per scenario)\n", res.EventsNotKept, maxSideEvents)
	}
	b.WriteString("transcript:\n")
	if len(res.Transcript) == 0 {
		b.WriteString("  (empty)\n")
	}
	for _, m := range res.Transcript {
		fmt.Fprintf(&b, "  [turn %d %s] %s", m.Turn, fmtOffset(m.Start), m.Role)
		if m.Latency != 0 {
			fmt.Fprintf(&b, " (latency %dms)", m.Latency.Milliseconds())
		}
		if m.Interrupted {
			b.WriteString(" (interrupted)")
		}
		fmt.Fprintf(&b, ": %s\n", clipReportText(m.DisplayText()))
	}
	if n := len(res.Latency.PerTurn); n > 0 {
		fmt.Fprintf(&b, "latency: p50 %dms, p95 %dms, mean %dms over %d turns\n",
			res.Latency.P50.Milliseconds(), res.Latency.P95.Milliseconds(), res.Latency.Mean.Milliseconds(), n)
	}
	return b.String()
}

// maxStackLines bounds the panic stack a report prints.
const maxStackLines = 60

// panicStack returns the stack of a panic that err carries (an error with
// a PanicStack() []byte method, such as handler.Error), indented
// for the report, or "".
func panicStack(err error) string {
	var p interface{ PanicStack() []byte }
	if !errors.As(err, &p) {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(p.PanicStack()), "\n"), "\n")
	if len(lines) == 0 || lines[0] == "" {
		return ""
	}
	if len(lines) > maxStackLines {
		lines = append(lines[:maxStackLines], fmt.Sprintf("... (%d more lines)", len(lines)-maxStackLines))
	}
	return "    " + strings.Join(lines, "\n    ") + "\n"
}

// skippedLine says which steps did not run and why, on one line.
func (res *Result) skippedLine() string {
	why := res.SkipReason
	if why == "" {
		why = "no reason recorded"
	}
	return fmt.Sprintf("not run (%s): %s", why, strings.Join(res.SkippedSteps, ", "))
}

func fmtOffset(d time.Duration) string {
	return fmt.Sprintf("%d.%03ds", d/time.Second, (d%time.Second)/time.Millisecond)
}

// criterionLine renders one judged criterion on one line, as CI logs show
// it: `LABEL criterion "…": reasoning`.
func criterionLine(label string, c CriterionResult) string {
	line := label + " criterion " + strconv.Quote(c.Criterion)
	if r := strings.Join(strings.Fields(c.Reasoning), " "); r != "" {
		line += ": " + r
	}
	return line
}
