package voicetest_test

import (
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// benchGoldenResult is a ten-turn conversation and the directory holding
// its golden files.
func benchGoldenResult(b *testing.B) (*voicetest.Result, string, int64) {
	b.Helper()
	res, err := voicetest.Run(b.Context(), fastTenTurns(&cachedTTS{m: map[string]pcm.Chunk{}}))
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	if err := res.WriteGolden(dir, voicetest.GoldenOptions{}); err != nil {
		b.Fatal(err)
	}
	size := len(res.GoldenTranscript(voicetest.GoldenOptions{})) + len(res.GoldenTimeline(voicetest.GoldenOptions{}))
	return res, dir, int64(size)
}

// BenchmarkGoldenCompare measures the golden comparison of a ten-turn
// scenario (both files, 40 timeline events): exact (render, read, compare
// bytes); tolerant on an identical run (the same byte comparison) and on a
// run whose replies are 100 ms late (parse both sides and compare them
// with go-cmp); and that with text normalisation.
func BenchmarkGoldenCompare(b *testing.B) {
	res, dir, size := benchGoldenResult(b)
	// A remote agent's run: every agent reply 100 ms later than the
	// golden's, within the tolerance, so both files are parsed and compared.
	late := *res
	late.Timeline = append([]voicetest.Event(nil), res.Timeline...)
	for i, e := range late.Timeline {
		if e.Type == voicetest.EventAgentStartSpeaking {
			late.Timeline[i].At += 100 * time.Millisecond
			late.Timeline[i].Latency += 100 * time.Millisecond
		}
	}
	for _, bc := range []struct {
		name string
		res  *voicetest.Result
		opts voicetest.GoldenOptions
	}{
		{"exact", res, voicetest.GoldenOptions{Match: voicetest.GoldenExact}},
		{"tolerant-identical", res, voicetest.GoldenOptions{Match: voicetest.GoldenTolerant}},
		{"tolerant-shifted", &late, voicetest.GoldenOptions{Match: voicetest.GoldenTolerant}},
		{"tolerant-normalized", &late, voicetest.GoldenOptions{Match: voicetest.GoldenTolerant, NormalizeText: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(size)
			for b.Loop() {
				if err := bc.res.CompareGolden(dir, bc.opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGoldenRender measures rendering the two golden files of a
// ten-turn scenario.
func BenchmarkGoldenRender(b *testing.B) {
	res, _, size := benchGoldenResult(b)
	b.ReportAllocs()
	b.SetBytes(size)
	for b.Loop() {
		_ = res.GoldenTranscript(voicetest.GoldenOptions{})
		_ = res.GoldenTimeline(voicetest.GoldenOptions{})
	}
}

// BenchmarkNormalizeText measures NormalizeText on a typical agent reply.
func BenchmarkNormalizeText(b *testing.B) {
	const s = "Booked: a table for twenty-one people on the 21st at seven thirty, that's one hundred and five dollars."
	b.ReportAllocs()
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		_ = voicetest.NormalizeText(s)
	}
}

// BenchmarkGoldenMismatchHugeLine measures the comparison of a scenario
// whose agent said 50 MiB in one message (and one data event) with golden
// files whose line differs at its very end: the time, the heap allocated,
// and the size of the mismatch message (msg-bytes).
func BenchmarkGoldenMismatchHugeLine(b *testing.B) {
	golden, actual := hugeLineResults(50 << 20)
	for _, match := range []voicetest.GoldenMatch{voicetest.GoldenExact, voicetest.GoldenTolerant} {
		b.Run(match.String(), func(b *testing.B) {
			dir, opts := writeGoldenFor(b, golden, match)
			b.ReportAllocs()
			var msg int
			for b.Loop() {
				err := actual.CompareGolden(dir, opts)
				if err == nil {
					b.Fatal("no mismatch")
				}
				msg = len(err.Error())
			}
			b.ReportMetric(float64(msg), "msg-bytes")
		})
	}
}
