//go:build !unix

package cache

// syncDir does nothing where Go cannot sync a directory (on Windows a
// directory handle cannot be flushed). The files themselves are still
// synced before their rename, so a crash there may lose a new name but
// never leaves a partial file under it.
func syncDir(dir string) error { return nil }
