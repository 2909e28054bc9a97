//go:build !unix

package voicetest

// goldenSyncDir does nothing where Go cannot sync a directory (on Windows a
// directory handle cannot be flushed). The files themselves are still
// synced before their rename, so a crash there may lose a new name but
// never leaves a partial file under it.
func goldenSyncDir(dir string) error { return nil }
