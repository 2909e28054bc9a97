package cache

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// Issue 14, item 7: the lines ForTest's cache logs are the test's,
// attributed to the line that asked for the cache, not to the cache's
// files. Checked in a child test process, whose output is what a user
// sees.
func TestForTestLogLinesAreAttributedToTheTest(t *testing.T) {
	if os.Getenv("VOICETEST_CACHE_LOG_CHILD") == "1" {
		t.Chdir(t.TempDir())
		c := ForTest(t) // the line the log lines name
		if _, err := c.Text(t.Context(), textKey("attributed"), func(context.Context) (string, error) { return "yes", nil }); err != nil {
			t.Fatal(err)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestForTestLogLinesAreAttributedToTheTest$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "VOICETEST_CACHE_LOG_CHILD=1", EnvMode+"=record")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var line string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "voicetest/cache: record ") {
			line = strings.TrimSpace(l)
		}
	}
	if !regexp.MustCompile(`^logattr_test\.go:\d+: voicetest/cache: record testdata/voicetest/cache/llm/`).MatchString(line) {
		t.Errorf("log line %q, want it attributed to logattr_test.go; output:\n%s", line, out)
	}
}
