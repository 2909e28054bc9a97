//go:build !unix

package atomicfile

// SyncDir does nothing where Go cannot sync a directory (on Windows a
// directory handle cannot be flushed). Files are still synced before
// their rename, so a crash there may lose a new name but never leaves a
// partial file under it.
func SyncDir(dir string) error { return nil }
