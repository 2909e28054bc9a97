package voicetest

import (
	"path/filepath"
	"strings"
	"testing"
)

// Test and scenario names come from code and from table data; no name may
// put golden files outside the golden root, and different names must not
// share a directory.
func TestGoldenDirStaysUnderItsRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "testdata", "golden")
	hostile := []string{
		"..", ".", "../..", "../../etc", "/etc/passwd", `..\..\windows`, "a/../../b",
		"nul\x00byte", "...", strings.Repeat("long", 1000), "~root", "CON", "x/./y", "ünïcode/ño",
	}
	seen := map[string]string{}
	for _, test := range []string{"TestX", "TestX/../..", "../TestX", "/abs/TestX"} {
		for _, scenario := range append(hostile, "", test) {
			dir, err := goldenDir(root, test, scenario)
			if err != nil {
				t.Errorf("goldenDir(%q, %q): %v", test, scenario, err)
				continue
			}
			rel, err := filepath.Rel(root, dir)
			if err != nil || !filepath.IsLocal(rel) || strings.ContainsRune(rel, 0) {
				t.Errorf("test %q, scenario %q: golden dir %q is not under %q", test, scenario, dir, root)
			}
			for _, elem := range strings.Split(rel, string(filepath.Separator)) {
				if len(elem) > 100 {
					t.Errorf("test %q, scenario %q: path element of %d bytes", test, scenario, len(elem))
				}
			}
			key := test + "\x00" + scenario
			if scenario == test {
				key = test + "\x00"
			}
			if other, ok := seen[dir]; ok && other != key {
				t.Errorf("%q and %q share the golden dir %s", other, key, dir)
			}
			seen[dir] = key
		}
	}
	if _, err := goldenDir(root, "", "x"); err == nil {
		t.Error("a test without a name got a golden dir")
	}
}
