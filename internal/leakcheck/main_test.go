package leakcheck

import (
	"os"
	"testing"
)

// TestMain checks this package's own tests for leaks, which also runs Main
// against a real *testing.M.
func TestMain(m *testing.M) {
	o := newOptions(nil)
	os.Exit(run(m, o))
}
