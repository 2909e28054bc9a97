// Command voicetest-update refreshes the golden files, the recorded
// voicetest cache and the cassettes of Go packages, and checks them in CI.
//
// Usage:
//
//	voicetest-update [flags] [packages] [-- go test flags]
//	voicetest-update -check [flags] [packages] [-- go test flags]
//
// Packages are as for go test; the default is ./... . Without -check it runs
// go test -json -count=1 on them with golden updates on (GOLDIE_UPDATE=1,
// which goldie's -update flag reads, and which every package tolerates,
// unlike the -update flag itself) and the cache in record mode
// (VOICETEST_CACHE=record), so missing cache entries are recorded, and so
// are missing cassettes (voicetest/cassette follows the cache's mode; the
// agent must then be reachable). It prints progress per package and test as
// the events arrive, then lists the golden files, cache files and cassette
// files that were added, changed and removed, and prunes the cache entries
// and cassettes that no test used (-prune=false keeps them).
//
// Pruning only happens for a package whose tests all ran and passed: not
// with -run or -skip (or -short after --), and not in a package where a test
// failed or was skipped, since such tests may use entries that were not
// touched. The command says when and why it did not prune.
//
// With -check it runs the tests in replay mode (VOICETEST_CACHE=replay,
// golden updates off) and fails when a test fails (a golden would change, a
// cache entry or cassette is missing), when any file under a package's
// testdata changed, or when a cache entry, body file or cassette is unused.
// This is the CI mode.
//
// Temporary files: the cache and golden writers write each file to a
// hidden temporary file next to it (.<name>.tmp-<digits>) and rename it
// into place. A writer killed in between (SIGKILL, a go test -timeout
// panic, power loss) leaves that file behind. It is never read as an entry
// or golden file, never counted as an unused entry, and not listed as a
// changed file. After the tests, the command removes those under each
// package's testdata that are older than ten minutes (younger ones may
// belong to a test still running beside it), with or without -check and
// whether or not the tests passed, and prints how many it removed;
// -prune=false lists them and keeps them.
//
// Use tracking: the command sets VOICETEST_CACHE_USAGE to a temporary
// directory; every test process writes there the cache entries and the
// cassettes it used.
// Tests always run with -count=1, so go test's result cache never hides a
// package's use of its entries.
//
// Flags:
//
//	-check         replay-only run for CI (see above)
//	-prune         remove unused cache entries and cassettes after a complete passing
//	               run, and stale temporary files (default true)
//	-run regexp    run only matching tests (passed to go test; disables pruning)
//	-skip regexp   skip matching tests (passed to go test; disables pruning)
//	-v             print test output as it arrives, not only for failures
//	-race          passed to go test
//	-tags list     passed to go test (and go list)
//	-timeout d     passed to go test
//
// Exit codes:
//
//	0  success: tests passed (and, with -check, nothing changed or unused)
//	1  tests failed, or -check found a changed or unused file
//	2  usage error, or go could not be run or list the packages
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
