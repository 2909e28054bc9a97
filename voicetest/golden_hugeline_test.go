package voicetest_test

import (
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/voicetest"
)

// allocated returns the bytes allocated on the heap so far.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// Issue #15, item 5: a golden mismatch message carried the whole
// mismatching line: a 50 MB line made a 100-433 MiB message, 1.5 GiB of
// heap and 30 s (here: a 419 MB message and 3325 MiB allocated comparing
// exactly, 210 MB and 1625 MiB tolerantly). The message is bounded, per
// line and overall, and says how much it cut; the comparison allocates a
// small multiple of the files it reads. The test uses a 1 MiB line (2 s
// of CPU at 12 MiB, 0.6 s at 3 MiB, 0.2 s now): both bounds hold whatever
// the size (the message's is fixed, the allocation's a multiple of the
// files: 11 MiB here, as 32 MiB at 3 MiB), and the unbounded message was
// several times the line (here 4-8 MiB, over two orders of magnitude over
// the 16 KiB bound), the unbounded allocation 21 to 59 times the files
// (21-59 MiB here, against a bound of 16);
// BenchmarkGoldenMismatchHugeLine keeps the 50 MiB of the report.
func TestGoldenMismatchOfHugeLineIsBounded(t *testing.T) {
	const size = 1 << 20
	golden, actual := hugeLineResults(size)
	for _, match := range []voicetest.GoldenMatch{voicetest.GoldenExact, voicetest.GoldenTolerant} {
		t.Run(match.String(), func(t *testing.T) {
			dir, opts := writeGoldenFor(t, golden, match)
			runtime.GC()
			before := allocated()
			err := actual.CompareGolden(dir, opts)
			alloc := float64(allocated()-before) / (1 << 20)
			if err == nil {
				t.Fatal("CompareGolden: nil, want a mismatch")
			}
			msg := err.Error()
			t.Logf("%s: message %d bytes, %.0f MiB allocated comparing two files of %d MiB:\n%s", match, len(msg), alloc, size>>20, msg)
			if len(msg) > 16<<10 {
				t.Errorf("the message is %d bytes, want at most 16 KiB", len(msg))
			}
			for _, want := range []string{"transcript.golden", "timeline.golden", "bytes cut"} {
				if !strings.Contains(msg, want) {
					t.Errorf("the message does not say %q:\n%s", want, msg)
				}
			}
			// Four files of size bytes are compared (two golden, two
			// rendered): parsing them is linear, the message is not.
			if limit := 4 * 4 * size >> 20; alloc > float64(limit) {
				t.Errorf("comparing allocated %.0f MiB, want at most %d MiB (4 times the files compared)", alloc, limit)
			}
		})
	}
}

// hugeLineResults returns two results whose agent said size bytes in one
// message and one data event, the same but for their last bytes.
func hugeLineResults(size int) (golden, actual *voicetest.Result) {
	huge := strings.Repeat("x", size)
	result := func(tail string) *voicetest.Result {
		return &voicetest.Result{Transcript: []voicetest.Message{{Role: voicetest.RoleAgent, Text: huge + tail}},
			Timeline: []voicetest.Event{{Type: voicetest.EventData, Role: voicetest.RoleAgent, Turn: 1, Text: huge + tail}}}
	}
	return result("golden"), result("actual")
}

// writeGoldenFor writes res's golden files for match into a temporary
// directory and returns it with the options.
func writeGoldenFor(tb testing.TB, res *voicetest.Result, match voicetest.GoldenMatch) (string, voicetest.GoldenOptions) {
	tb.Helper()
	dir := tb.TempDir()
	opts := voicetest.GoldenOptions{Match: match}
	if err := res.WriteGolden(dir, opts); err != nil {
		tb.Fatal(err)
	}
	return dir, opts
}
