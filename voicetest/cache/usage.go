package cache

import (
	"fmt"
	"os"
	"path/filepath"
)

// NoteUse records that a test used the file at path, a stored answer kept
// beside the cache (a voicetest/cassette index, say), in the usage file of
// this process when VOICETEST_CACHE_USAGE names a directory, as the cache
// does for its own entries: voicetest-update then keeps the file and prunes
// the ones no test used. Without the variable it does nothing.
func NoteUse(path string) error {
	dir := os.Getenv(EnvUsage)
	if dir == "" {
		return nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("voicetest/cache: recording use of %s: %w", path, err)
	}
	return appendUsage(dir, abs)
}

// RecordCommand returns the go test command that records what the test
// named test (t.Name()) is missing, in the package of the current
// directory, written relative to the module root so that it is the same
// on every machine: go test ./pkg -run '^TestX$' -voicetest.record.
func RecordCommand(test string) string {
	return recordCommand(test, "-voicetest.record")
}
