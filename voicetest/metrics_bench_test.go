package voicetest_test

import (
	"testing"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// BenchmarkMetricsTenTurns measures what the metrics cost at the end of a
// ten-turn scenario (the one of BenchmarkScenarioTenTurns): computing them
// from the State and rendering them as attributes. What the runner notes
// per event while the conversation goes on is BenchmarkNoteEvent's.
func BenchmarkMetricsTenTurns(b *testing.B) {
	res, err := voicetest.Run(b.Context(), fastTenTurns(&cachedTTS{m: map[string]pcm.Chunk{}}))
	if err != nil || res.Turns != 10 {
		b.Fatalf("err %v, turns %d", err, res.Turns)
	}
	b.ReportAllocs()
	for b.Loop() {
		m := res.State.Metrics()
		if m.Latency.N != 10 || len(res.Attrs()) == 0 {
			b.Fatalf("latency over %d turns", m.Latency.N)
		}
	}
}
