package voicetest_test

import (
	"testing"

	"github.com/voicetest-go/voicetest/voicetest"
)

// BenchmarkGoldenWrite measures what -update does per scenario: render
// and write both golden files of a ten-turn scenario over the existing
// ones, each through a synced temporary file, a rename and a sync of the
// directory.
func BenchmarkGoldenWrite(b *testing.B) {
	res, dir, size := benchGoldenResult(b)
	opts := voicetest.GoldenOptions{}
	b.ReportAllocs()
	b.SetBytes(size)
	for b.Loop() {
		if err := res.WriteGolden(dir, opts); err != nil {
			b.Fatal(err)
		}
	}
}
