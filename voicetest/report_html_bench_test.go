package voicetest

import (
	"fmt"
	"testing"
	"time"
)

// benchResult is a one-minute conversation at 16 kHz: ten alternating
// six-second segments, each a message with a latency.
func benchResult() *Result {
	const rate = 16000
	seg := 6 * time.Second
	res := &Result{Name: "bench", Status: StatusPass, Success: true, Duration: time.Minute}
	res.Recording = Recording{Rate: rate, Duration: time.Minute}
	for i := range 10 {
		role := RoleUser
		if i%2 == 1 {
			role = RoleAgent
		}
		start := time.Duration(i) * seg
		res.Recording.Segments = append(res.Recording.Segments, Segment{Role: role, Turn: (i + 2) / 2, Start: start,
			End: start + seg, Text: fmt.Sprintf("segment %d", i)}.WithAudio(tone(rate, seg)))
		m := Message{Role: role, Turn: (i + 2) / 2, Start: start, End: start + seg, Text: fmt.Sprintf("segment %d", i)}
		if role == RoleAgent {
			m.Latency = 400 * time.Millisecond
			res.Latency.PerTurn = append(res.Latency.PerTurn, m.Latency)
		}
		res.Transcript = append(res.Transcript, m)
		res.Timeline = append(res.Timeline, Event{At: start, Type: EventUserStartSpeaking, Turn: m.Turn, Role: role})
	}
	res.Latency.Summarize()
	return res
}

// BenchmarkHTMLReport renders the report of a one-minute conversation;
// bytes/s counts the conversation's 16 kHz audio.
func BenchmarkHTMLReport(b *testing.B) {
	res := benchResult()
	b.SetBytes(int64(2 * 16000 * 60))
	b.ReportAllocs()
	var size int
	for b.Loop() {
		page, err := res.HTMLReport()
		if err != nil {
			b.Fatal(err)
		}
		size = len(page)
	}
	b.ReportMetric(float64(size)/(1<<20), "MiB/report")
}

// BenchmarkPeaks computes one role's waveform peaks over a one-minute
// conversation.
func BenchmarkPeaks(b *testing.B) {
	res := benchResult()
	b.SetBytes(int64(2 * 16000 * 30))
	b.ReportAllocs()
	for b.Loop() {
		_ = peaks(res.Recording.Segments, RoleAgent, time.Minute, reportBuckets)
	}
}
