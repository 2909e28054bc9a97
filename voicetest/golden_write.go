package voicetest

import (
	"fmt"
	"path/filepath"

	"github.com/voicetest-go/voicetest/internal/atomicfile"
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
const goldenTempMarker = atomicfile.TempMarker

// writeFileAtomic writes data to path, creating the directory if needed,
// so that a reader sees the old file or the whole new one, never part of
// one, and the new file survives a crash or power loss once it returns
// (atomicfile.Write). On error it leaves no temporary file.
func writeFileAtomic(path string, data []byte) error {
	return writeFileAtomicHook(path, data, nil)
}

// writeFileAtomicHook is writeFileAtomic calling midWrite, if not nil,
// with the temporary file's name once half of data is written (crash
// tests kill the process there).
func writeFileAtomicHook(path string, data []byte, midWrite func(tmp string)) error {
	if err := goldenMkdirAll(filepath.Dir(path)); err != nil {
		return fmt.Errorf("voicetest: writing %s: %w", path, err)
	}
	if err := atomicfile.Write(path, data, midWrite); err != nil {
		return fmt.Errorf("voicetest: %w", err)
	}
	return nil
}

// goldenMkdirAll creates dir and any missing parents, syncing the parent
// of each directory it creates so the new names survive a crash.
func goldenMkdirAll(dir string) error { return atomicfile.MkdirAll(dir) }
