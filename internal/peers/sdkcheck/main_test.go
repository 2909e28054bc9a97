package sdkcheck_test

import (
	"flag"
	"os"
	"testing"
)

// TestMain makes the package's tests all run at once by default: each
// waits on a Node.js or Chromium process that drives a vendor's SDK
// against a double in real time, for about three times the CPU it uses,
// and -parallel's default (GOMAXPROCS, 2 on a 2-core machine) ran them
// two at a time. A -parallel on the command line still sets it.
func TestMain(m *testing.M) {
	if err := flag.Set("test.parallel", "5"); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}
