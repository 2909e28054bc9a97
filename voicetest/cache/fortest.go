package cache

import "testing"

// DefaultDir is where ForTest keeps entries: relative to the test's package
// directory, which is the working directory of a running test.
const DefaultDir = "testdata/voicetest/cache"

// ForTest returns a cache for t under DefaultDir, in the mode chosen by the
// flags and environment (see DefaultMode). Miss errors name t and the
// command that records its entries, new entries are logged with t.Logf, and
// the cache is closed when t ends. A bad mode setting fails t at once.
func ForTest(t testing.TB) *Cache {
	t.Helper()
	m, err := DefaultMode()
	if err != nil {
		t.Fatal(err)
	}
	c, err := Open(DefaultDir, WithMode(m), WithName(t.Name()), WithLogf(t.Logf))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
