package cache

import (
	"testing"

	"github.com/voicetest-go/voicetest/internal/testlog"
)

// DefaultDir is where ForTest keeps entries: relative to the test's package
// directory, which is the working directory of a running test.
const DefaultDir = "testdata/voicetest/cache"

// ForTest returns a cache for t under DefaultDir, in the mode chosen by the
// flags and environment (see DefaultMode). Miss errors name t and the
// command that records its entries, new entries are logged to t (at the
// test's line that asked for the cache, whichever goroutine records), and
// the cache is closed when t ends. A bad mode setting fails t at once.
func ForTest(t testing.TB) *Cache {
	t.Helper()
	m, err := DefaultMode()
	if err != nil {
		t.Fatal(err)
	}
	logf := testlog.Logf(t, testlog.Caller(0, "github.com/voicetest-go/voicetest"))
	c, err := Open(DefaultDir, WithMode(m), WithName(t.Name()), WithLogf(logf))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
