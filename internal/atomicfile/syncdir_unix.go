//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"syscall"
)

// SyncDir flushes dir's entries (names created or renamed in it) to
// stable storage. File systems that cannot sync a directory (EINVAL,
// ENOTSUP) are not an error: there is nothing more to do on them.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	cerr := d.Close()
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
		err = nil
	}
	if err != nil {
		return err
	}
	return cerr
}
