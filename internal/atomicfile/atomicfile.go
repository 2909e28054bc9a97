// Package atomicfile writes files so that a reader sees the old file or
// the whole new one, never part of one, and the new file survives a crash
// or power loss once the write returns. The cache, golden files and
// artifacts share it.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// TempMarker is in the name of every temporary file Write creates:
// ".<name>.tmp-<random digits>", hidden and in the target's directory. A
// writer killed before its rename leaves one behind; readers never take it
// for the file, and voicetest-update removes it once it is stale.
const TempMarker = ".tmp-"

// Write writes data to path (its directory must exist): a temporary file
// in the same directory, synced, made 0644, renamed over path, and the
// directory synced where the platform can. On error it leaves no
// temporary file. midWrite, if not nil, is called with the temporary
// file's name once half of data is written (crash tests kill the process
// there).
func Write(path string, data []byte, midWrite func(tmp string)) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+TempMarker+"*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	renamed := false
	defer func() {
		if err != nil && !renamed {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("writing %s: %w", path, err)
		}
	}()
	half := len(data) / 2
	if _, err = f.Write(data[:half]); err != nil {
		return err
	}
	if midWrite != nil {
		midWrite(tmp)
	}
	if _, err = f.Write(data[half:]); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	renamed = true
	// The new file is in place; a failed directory sync says it may not
	// survive a crash yet.
	if serr := SyncDir(dir); serr != nil {
		return fmt.Errorf("writing %s: syncing its directory: %w", path, serr)
	}
	return nil
}

// MkdirAll creates dir and any missing parents (0755), syncing the parent
// of each directory it creates so that the new names survive a crash.
func MkdirAll(dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			break // exists, or MkdirAll reports the error
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		parent := filepath.Dir(missing[i])
		if err := SyncDir(parent); err != nil {
			return fmt.Errorf("syncing %s: %w", parent, err)
		}
	}
	return nil
}
