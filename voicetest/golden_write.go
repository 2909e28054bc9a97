package voicetest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// How golden files are written.
//
// Scenario and AssertGolden read goldie's -update and -clean flags (and
// GOLDIE_UPDATE, GOLDIE_CLEAN) but never call goldie to write: goldie's
// own Update truncates the golden file in place with os.WriteFile, so a
// crash in the middle leaves a partial golden file that the next run
// compares against. voicetest writes each golden file itself, with
// writeFileAtomic.

// goldenTempMarker is in the name of every temporary golden file:
// ".<name>.tmp-<random digits>", as the cache names its own. A writer
// killed before its rename leaves one behind; it is hidden, no golden is
// read from it, -clean leaves it (it is not a *.golden file) and
// voicetest-update removes it once it is older than a few minutes.
const goldenTempMarker = ".tmp-"

// writeFileAtomic writes data to path, creating the directory if needed,
// so that a reader sees the old file or the whole new one, never part of
// one, and the new file survives a crash or power loss once it returns:
// it writes a temporary file in the same directory, syncs it, renames it
// over path and syncs the directory (where the platform can). On error it
// leaves no temporary file.
func writeFileAtomic(path string, data []byte) error {
	return writeFileAtomicHook(path, data, nil)
}

// writeFileAtomicHook is writeFileAtomic calling midWrite, if not nil,
// with the temporary file's name once half of data is written (crash
// tests kill the process there).
func writeFileAtomicHook(path string, data []byte, midWrite func(tmp string)) (err error) {
	dir := filepath.Dir(path)
	if err := goldenMkdirAll(dir); err != nil {
		return fmt.Errorf("voicetest: writing %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+goldenTempMarker+"*")
	if err != nil {
		return fmt.Errorf("voicetest: writing %s: %w", path, err)
	}
	tmp := f.Name()
	renamed := false
	defer func() {
		if err != nil && !renamed {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("voicetest: writing %s: %w", path, err)
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
	if serr := goldenSyncDir(dir); serr != nil {
		return fmt.Errorf("voicetest: writing %s: syncing its directory: %w", path, serr)
	}
	return nil
}

// goldenMkdirAll creates dir and any missing parents, syncing the parent
// of each directory it creates so the new names survive a crash.
func goldenMkdirAll(dir string) error {
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
		if err := goldenSyncDir(parent); err != nil {
			return fmt.Errorf("syncing %s: %w", parent, err)
		}
	}
	return nil
}
