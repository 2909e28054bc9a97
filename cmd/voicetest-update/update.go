package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// cacheSubdir is where voicetest/cache keeps a package's entries
// (cache.DefaultDir), and cassetteSubdir where voicetest/cassette keeps its
// cassettes (cassette.DefaultDir), with forward slashes.
const (
	cacheSubdir    = "testdata/voicetest/cache"
	cassetteSubdir = "testdata/voicetest/cassettes"
)

const usageText = `usage: voicetest-update [flags] [packages] [-- go test flags]
       voicetest-update -check [flags] [packages] [-- go test flags]

Refresh golden files and record missing voicetest cache entries and
cassettes by running go test with GOLDIE_UPDATE=1 and VOICETEST_CACHE=record;
then list what changed and prune cache entries and cassettes no test used.
With -check, run in replay mode and fail if a test fails, a file under
testdata changes, or an entry or cassette is unused (for CI). Either way, remove temporary files older than 10m that
interrupted writers left under testdata. Packages default to ./... .

Exit codes: 0 ok; 1 tests failed or check failed; 2 usage or setup error.

Flags:
`

type options struct {
	check   bool
	prune   bool
	run     string
	skip    string
	verbose bool
	race    bool
	tags    string
	timeout string
	pkgs    []string
	extra   []string // go test flags after --
}

func parseArgs(args []string, help io.Writer) (*options, error) {
	var o options
	fset := flag.NewFlagSet("voicetest-update", flag.ContinueOnError)
	fset.SetOutput(io.Discard) // run prints errors and usage itself
	fset.Usage = func() {}
	fset.BoolVar(&o.check, "check", false, "replay-only run for CI: fail if a test fails, a testdata file changes or a cache entry or cassette is unused")
	fset.BoolVar(&o.prune, "prune", true, "remove cache entries and cassettes no test used (only after a complete passing run) and stale temporary files")
	fset.StringVar(&o.run, "run", "", "run only tests matching `regexp` (disables pruning)")
	fset.StringVar(&o.skip, "skip", "", "skip tests matching `regexp` (disables pruning)")
	fset.BoolVar(&o.verbose, "v", false, "print test output as it arrives")
	fset.BoolVar(&o.race, "race", false, "enable the race detector")
	fset.StringVar(&o.tags, "tags", "", "build `tags` for go list and go test")
	fset.StringVar(&o.timeout, "timeout", "", "go test -timeout `duration`")
	if i := slices.Index(args, "--"); i >= 0 {
		o.extra = args[i+1:]
		args = args[:i]
	}
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(help, usageText)
			fset.SetOutput(help)
			fset.PrintDefaults()
		}
		return nil, err
	}
	o.pkgs = fset.Args()
	for _, p := range o.pkgs {
		if strings.HasPrefix(p, "-") {
			return nil, fmt.Errorf("flag %s after the packages: put voicetest-update flags first and go test flags after --", p)
		}
	}
	if len(o.pkgs) == 0 {
		o.pkgs = []string{"./..."}
	}
	for _, re := range []string{o.run, o.skip} {
		if _, err := regexp.Compile(strings.ReplaceAll(re, "/", "|")); re != "" && err != nil {
			return nil, fmt.Errorf("bad test pattern %q: %w", re, err)
		}
	}
	if o.timeout != "" {
		if _, err := time.ParseDuration(o.timeout); err != nil {
			return nil, fmt.Errorf("bad -timeout %q: %w", o.timeout, err)
		}
	}
	return &o, nil
}

// filtered reports whether not every test of the packages runs.
func (o *options) filtered() bool {
	if o.run != "" || o.skip != "" {
		return true
	}
	for _, a := range o.extra {
		name := strings.TrimLeft(strings.SplitN(a, "=", 2)[0], "-")
		switch name {
		case "run", "skip", "short", "test.run", "test.skip", "test.short", "failfast", "test.failfast":
			return true
		}
	}
	return false
}

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseArgs(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "voicetest-update: %v\nRun voicetest-update -h for usage.\n", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	pkgs, err := listPackages(ctx, o)
	if err != nil {
		fmt.Fprintf(stderr, "voicetest-update: %v\n", err)
		return exitUsage
	}
	before, err := snapshot(pkgs)
	if err != nil {
		fmt.Fprintf(stderr, "voicetest-update: %v\n", err)
		return exitUsage
	}
	usageDir, err := os.MkdirTemp("", "voicetest-usage-")
	if err != nil {
		fmt.Fprintf(stderr, "voicetest-update: %v\n", err)
		return exitUsage
	}
	defer os.RemoveAll(usageDir)

	mode := "record"
	if o.check {
		mode = "replay"
	}
	fmt.Fprintf(stdout, "voicetest-update: go test %s (cache %s, goldens %s)\n", strings.Join(o.pkgs, " "),
		mode, map[bool]string{true: "compared", false: "updated"}[o.check])
	res, err := runTests(ctx, o, usageDir, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "voicetest-update: %v\n", err)
		return exitUsage
	}
	after, err := snapshot(pkgs)
	if err != nil {
		fmt.Fprintf(stderr, "voicetest-update: %v\n", err)
		return exitUsage
	}
	used, err := readUsage(usageDir)
	if err != nil {
		fmt.Fprintf(stderr, "voicetest-update: %v\n", err)
		return exitUsage
	}

	code := exitOK
	if !res.ok {
		code = exitFail
	}
	changes := diff(before, after)
	fmt.Fprintln(stdout)
	printChanges(stdout, "golden and testdata files", changes, func(p string) bool { return !inCache(p) && !inCassettes(p) })
	printChanges(stdout, "cache files", changes, inCache)
	printChanges(stdout, "cassette files", changes, inCassettes)
	if o.check && len(changes) > 0 {
		fmt.Fprintf(stdout, "check: %d testdata file(s) changed in replay mode; run voicetest-update and commit the result\n", len(changes))
		code = exitFail
	}

	// Unused cache entries and cassettes, per package, where we can tell.
	for _, st := range stores {
		if !pruneStore(o, st, pkgs, used, res, stdout, stderr, &code) {
			return exitUsage
		}
	}

	// Temporary files left by killed writers are never entries or golden
	// files, so they go whether or not the tests all ran; only stale ones,
	// as a test process beside this one may be writing the fresh ones.
	stale, fresh, err := tempFiles(pkgs, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "voicetest-update: %v\n", err)
		return exitUsage
	}
	switch {
	case len(stale) > 0 && !o.prune:
		fmt.Fprintf(stdout, "%d stale temporary file(s) left by interrupted writers kept (-prune=false):\n", len(stale))
		for _, f := range stale {
			fmt.Fprintf(stdout, "  ? %s\n", rel(f))
		}
	case len(stale) > 0:
		if _, ok := removeTemps(stdout, stderr, stale); !ok {
			code = exitFail
		}
	}
	if fresh > 0 {
		fmt.Fprintf(stdout, "%d temporary file(s) newer than %v kept: a writer may still be running\n", fresh, staleTempAge)
	}
	if code == exitOK {
		fmt.Fprintln(stdout, "voicetest-update: ok")
	} else {
		fmt.Fprintln(stdout, "voicetest-update: FAIL")
	}
	return code
}

// store is a kind of recorded answers kept under a package's testdata
// that tests report using: cache entries and cassettes.
type store struct {
	what   string // "cache", "cassette"
	subdir string
	unused func(dir string, used map[string]bool) ([]string, error)
}

var stores = []store{
	{"cache", cacheSubdir, unusedFiles},
	{"cassette", cassetteSubdir, unusedCassetteFiles},
}

// pruneStore lists, checks or prunes the files of st that no test used,
// and reports false on an error that makes the run a usage failure.
func pruneStore(o *options, st store, pkgs []pkgInfo, used map[string]bool, res *results, stdout, stderr io.Writer, code *int) bool {
	var unused []string
	for _, p := range pkgs {
		dir := filepath.Join(p.Dir, filepath.FromSlash(st.subdir))
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		files, err := st.unused(dir, used)
		if err != nil {
			fmt.Fprintf(stderr, "voicetest-update: %v\n", err)
			return false
		}
		if len(files) == 0 {
			continue
		}
		if why := res.incomplete(o, p.ImportPath); why != "" {
			fmt.Fprintf(stdout, "%s: %d %s file(s) not used, but not pruned or checked: %s\n", p.ImportPath, len(files), st.what, why)
			continue
		}
		unused = append(unused, files...)
	}
	switch {
	case len(unused) == 0:
	case o.check:
		fmt.Fprintf(stdout, "check: %d %s file(s) unused by any test:\n", len(unused), st.what)
		for _, f := range unused {
			fmt.Fprintf(stdout, "  ? %s\n", rel(f))
		}
		fmt.Fprintln(stdout, "run voicetest-update to prune them and commit the result")
		*code = exitFail
	case !o.prune:
		fmt.Fprintf(stdout, "%d unused %s file(s) kept (-prune=false):\n", len(unused), st.what)
		for _, f := range unused {
			fmt.Fprintf(stdout, "  ? %s\n", rel(f))
		}
	default:
		fmt.Fprintf(stdout, "pruned %d unused %s file(s):\n", len(unused), st.what)
		for _, f := range unused {
			if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(stderr, "voicetest-update: %v\n", err)
				*code = exitFail
				continue
			}
			fmt.Fprintf(stdout, "  - %s\n", rel(f))
			if st.subdir == cassetteSubdir {
				// A pruned cassette leaves its directory empty.
				_ = os.Remove(filepath.Dir(f))
			}
		}
	}
	return true
}

type pkgInfo struct {
	ImportPath string
	Dir        string
}

func goCmd() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

// listPackages resolves the package patterns with go list.
func listPackages(ctx context.Context, o *options) ([]pkgInfo, error) {
	args := []string{"list", "-e", "-json=ImportPath,Dir,Error"}
	if o.tags != "" {
		args = append(args, "-tags", o.tags)
	}
	args = append(args, o.pkgs...)
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, goCmd(), args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w\n%s", strings.Join(o.pkgs, " "), err, stderr.String())
	}
	var pkgs []pkgInfo
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			pkgInfo
			Error *struct{ Err string }
		}
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("reading go list output: %w", err)
		}
		if p.Error != nil && p.Dir == "" {
			return nil, fmt.Errorf("package %s: %s", p.ImportPath, p.Error.Err)
		}
		if dir, err := filepath.EvalSymlinks(p.Dir); err == nil {
			p.Dir = dir
		}
		pkgs = append(pkgs, p.pkgInfo)
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("no packages match %s", strings.Join(o.pkgs, " "))
	}
	return pkgs, nil
}

// snapshot hashes every file under each package's testdata directory.
func snapshot(pkgs []pkgInfo) (map[string]string, error) {
	sums := map[string]string{}
	for _, p := range pkgs {
		root := filepath.Join(p.Dir, "testdata")
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) && path == root {
				return nil
			}
			if err != nil {
				return err
			}
			if d.IsDir() || !d.Type().IsRegular() || isTemp(d.Name()) {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			sums[path] = hex.EncodeToString(sum[:])
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", root, err)
		}
	}
	return sums, nil
}

// tempName matches the temporary files voicetest's atomic writers create
// next to the file they replace: ".<name>.tmp-<digits>" (cache entries and
// bodies, golden files), ".tmp-<name>-<digits>" (golden files of earlier
// versions) and ".<name>.<digits>.tmp" (pcm.WriteWAVFile). A writer
// renames its file into place within milliseconds; one killed before that
// (SIGKILL, a go test -timeout panic, power loss) leaves it behind.
var tempName = regexp.MustCompile(`^\.(?:.+\.tmp-[0-9]+|tmp-.+-[0-9]+|.+\.[0-9]+\.tmp)$`)

func isTemp(name string) bool { return tempName.MatchString(name) }

// staleTempAge is how old a temporary file must be before it is removed:
// far longer than any write takes, so the live temporary file of a test
// process running beside voicetest-update is never removed.
const staleTempAge = 10 * time.Minute

// tempFiles lists the temporary files under each package's testdata
// directory: stale ones (last modified more than staleTempAge before now)
// and the number of fresh ones.
func tempFiles(pkgs []pkgInfo, now time.Time) (stale []string, fresh int, err error) {
	for _, p := range pkgs {
		root := filepath.Join(p.Dir, "testdata")
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) && path == root {
				return nil
			}
			if err != nil {
				return err
			}
			if d.IsDir() || !d.Type().IsRegular() || !isTemp(d.Name()) {
				return nil
			}
			info, err := d.Info()
			if errors.Is(err, fs.ErrNotExist) {
				return nil // renamed into place meanwhile
			}
			if err != nil {
				return err
			}
			if now.Sub(info.ModTime()) > staleTempAge {
				stale = append(stale, path)
			} else {
				fresh++
			}
			return nil
		})
		if err != nil {
			return nil, 0, fmt.Errorf("looking for temporary files in %s: %w", root, err)
		}
	}
	slices.Sort(stale)
	return stale, fresh, nil
}

// removeTemps removes stale temporary files, printing each, and returns
// how many it removed; a file already gone counts as removed. It reports
// files it could not remove on stderr and returns false then.
func removeTemps(stdout, stderr io.Writer, stale []string) (removed int, ok bool) {
	ok = true
	var lines []string
	for _, f := range stale {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(stderr, "voicetest-update: removing a stale temporary file: %v\n", err)
			ok = false
			continue
		}
		removed++
		lines = append(lines, "  - "+rel(f))
	}
	if removed > 0 {
		fmt.Fprintf(stdout, "removed %d stale temporary file(s) left by interrupted writers (older than %v):\n", removed, staleTempAge)
		for _, l := range lines {
			fmt.Fprintln(stdout, l)
		}
	}
	return removed, ok
}

type change struct {
	path string
	op   byte // '+', '~', '-'
}

func diff(before, after map[string]string) []change {
	var out []change
	for p, sum := range after {
		if old, ok := before[p]; !ok {
			out = append(out, change{p, '+'})
		} else if old != sum {
			out = append(out, change{p, '~'})
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, change{p, '-'})
		}
	}
	slices.SortFunc(out, func(a, b change) int { return strings.Compare(a.path, b.path) })
	return out
}

func inCache(path string) bool {
	sep := string(filepath.Separator)
	return strings.Contains(path, sep+filepath.FromSlash(cacheSubdir)+sep)
}

func inCassettes(path string) bool {
	sep := string(filepath.Separator)
	return strings.Contains(path, sep+filepath.FromSlash(cassetteSubdir)+sep)
}

func printChanges(w io.Writer, what string, changes []change, keep func(string) bool) {
	var n [3]int
	var lines []string
	for _, c := range changes {
		if !keep(c.path) {
			continue
		}
		n[strings.IndexByte("+~-", c.op)]++
		lines = append(lines, fmt.Sprintf("  %c %s", c.op, rel(c.path)))
	}
	fmt.Fprintf(w, "%s: %d added, %d changed, %d removed\n", what, n[0], n[1], n[2])
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// rel shows path relative to the working directory when it is below it.
func rel(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	if wd, err := filepath.EvalSymlinks(wd); err == nil {
		if r, err := filepath.Rel(wd, path); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
	}
	return path
}

// readUsage returns the entry files the test processes reported using.
func readUsage(dir string) (map[string]bool, error) {
	used := map[string]bool{}
	files, err := filepath.Glob(filepath.Join(dir, "usage-*.txt"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading cache usage: %w", err)
		}
		for line := range strings.Lines(string(data)) {
			p := strings.TrimSpace(line)
			if p == "" {
				continue
			}
			if r, err := filepath.EvalSymlinks(p); err == nil {
				p = r
			}
			used[p] = true
		}
	}
	return used, nil
}

var (
	entryName = regexp.MustCompile(`^[0-9a-f]{64}\.json$`)
	bodyName  = regexp.MustCompile(`^([0-9a-f]{64})\.[0-9a-f]{12}\.[a-z0-9]{1,8}$`)
)

// unusedFiles lists the files of a cache directory that no test needs:
// entries not in used, their bodies, and bodies no entry points to (left
// by concurrent writers, refreshes or a writer killed between a body and
// its entry). Temporary files are not entries and are not listed (see
// tempFiles); other files (a README, say) are left alone.
func unusedFiles(cacheDir string, used map[string]bool) ([]string, error) {
	keep := map[string]bool{}
	var bodies, out []string
	err := filepath.WalkDir(cacheDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := d.Name()
		switch {
		case isTemp(name):
			// Never an entry, used or not: tempFiles deals with them.
		case entryName.MatchString(name):
			if !used[path] {
				out = append(out, path)
				return nil
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			var e struct {
				Body struct{ File string } `json:"body"`
			}
			if err := json.Unmarshal(raw, &e); err == nil && e.Body.File != "" {
				keep[filepath.Join(filepath.Dir(path), filepath.Base(e.Body.File))] = true
			}
		case bodyName.MatchString(name):
			bodies = append(bodies, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading cache directory %s: %w", cacheDir, err)
	}
	for _, b := range bodies {
		if !keep[b] {
			out = append(out, b)
		}
	}
	slices.SortFunc(out, pruneOrder)
	return out, nil
}

// pruneOrder sorts files by directory, each directory's entries before
// its bodies: pruning removes in this order, so an interrupted prune
// leaves an orphan body (pruned next time) rather than an entry whose
// body is gone.
func pruneOrder(a, b string) int {
	if c := strings.Compare(filepath.Dir(a), filepath.Dir(b)); c != 0 {
		return c
	}
	ea, eb := entryName.MatchString(filepath.Base(a)), entryName.MatchString(filepath.Base(b))
	switch {
	case ea && !eb:
		return -1
	case eb && !ea:
		return 1
	}
	return strings.Compare(a, b)
}

// testEvent is one line of go test -json (cmd/test2json).
type testEvent struct {
	Action      string
	Package     string
	ImportPath  string
	Test        string
	Elapsed     float64
	Output      string
	FailedBuild string
}

// results is what the test run told us per package.
type results struct {
	ok      bool
	ran     map[string]bool
	failed  map[string]bool
	skipped map[string][]string
}

// incomplete says why the tests of pkg may not have used all their
// entries, or "" if they all ran and passed.
func (r *results) incomplete(o *options, pkg string) string {
	switch {
	case o.filtered():
		return "only some tests ran (-run, -skip, -short or -failfast)"
	case !r.ran[pkg]:
		return "its tests did not run"
	case r.failed[pkg]:
		return "its tests failed"
	case len(r.skipped[pkg]) > 0:
		s := r.skipped[pkg]
		if len(s) > 3 {
			s = append(s[:3:3], "…")
		}
		return fmt.Sprintf("%d test(s) skipped (%s)", len(r.skipped[pkg]), strings.Join(s, ", "))
	}
	return ""
}

// runTests runs go test -json and prints progress as events arrive.
func runTests(ctx context.Context, o *options, usageDir string, stdout, stderr io.Writer) (*results, error) {
	args := []string{"test", "-json", "-count=1"}
	if o.run != "" {
		args = append(args, "-run", o.run)
	}
	if o.skip != "" {
		args = append(args, "-skip", o.skip)
	}
	if o.race {
		args = append(args, "-race")
	}
	if o.tags != "" {
		args = append(args, "-tags", o.tags)
	}
	if o.timeout != "" {
		args = append(args, "-timeout", o.timeout)
	}
	args = append(args, o.pkgs...)
	args = append(args, o.extra...)

	cmd := exec.CommandContext(ctx, goCmd(), args...)
	cmd.Stderr = stderr
	env := []string{}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "VOICETEST_CACHE", "VOICETEST_RECORD", "VOICETEST_CACHE_USAGE", "GOLDIE_UPDATE":
			continue
		}
		env = append(env, kv)
	}
	if o.check {
		env = append(env, "VOICETEST_CACHE=replay", "GOLDIE_UPDATE=0")
	} else {
		env = append(env, "VOICETEST_CACHE=record", "GOLDIE_UPDATE=1")
	}
	cmd.Env = append(env, "VOICETEST_CACHE_USAGE="+usageDir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting go test: %w", err)
	}
	res := &results{ran: map[string]bool{}, failed: map[string]bool{}, skipped: map[string][]string{}}
	p := &progress{w: stdout, verbose: o.verbose, output: map[string][]string{}}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var ev testEvent
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			fmt.Fprintf(stdout, "%s\n", line)
			continue
		}
		p.event(ev, res)
	}
	scanErr := sc.Err()
	waitErr := cmd.Wait()
	if scanErr != nil {
		return nil, fmt.Errorf("reading go test output: %w", scanErr)
	}
	var exitErr *exec.ExitError
	switch {
	case waitErr == nil:
		res.ok = len(res.failed) == 0
	case errors.As(waitErr, &exitErr):
		res.ok = false
	default:
		return nil, fmt.Errorf("go test: %w", waitErr)
	}
	return res, nil
}

// progress prints test events as they arrive.
type progress struct {
	w       io.Writer
	verbose bool
	output  map[string][]string // package + "\x00" + test → output lines
}

func (p *progress) event(ev testEvent, res *results) {
	pkg := ev.Package
	id := pkg + "\x00" + ev.Test
	depth := strings.Count(ev.Test, "/")
	indent := strings.Repeat("  ", depth+1)
	switch ev.Action {
	case "build-output":
		fmt.Fprint(p.w, ev.Output)
	case "start":
		fmt.Fprintf(p.w, "=== %s\n", pkg)
	case "output":
		if p.verbose {
			if ev.Test != "" && !strings.HasPrefix(ev.Output, "=== ") && !strings.HasPrefix(strings.TrimSpace(ev.Output), "--- ") {
				fmt.Fprintf(p.w, "%s  | %s", indent, ev.Output)
			}
			return
		}
		p.output[id] = append(p.output[id], ev.Output)
	case "run":
		res.ran[pkg] = true
	case "pass", "fail", "skip":
		lines := p.output[id]
		delete(p.output, id)
		if ev.Test == "" {
			p.packageDone(ev, lines, res)
			return
		}
		switch ev.Action {
		case "pass":
			fmt.Fprintf(p.w, "%sok   %s (%.2fs)\n", indent, ev.Test, ev.Elapsed)
		case "skip":
			res.skipped[pkg] = append(res.skipped[pkg], ev.Test)
			fmt.Fprintf(p.w, "%sskip %s\n", indent, ev.Test)
			for _, l := range lines {
				if !strings.HasPrefix(l, "=== ") && !strings.Contains(l, "--- SKIP") {
					fmt.Fprintf(p.w, "%s  | %s", indent, l)
				}
			}
		case "fail":
			res.failed[pkg] = true
			fmt.Fprintf(p.w, "%sFAIL %s (%.2fs)\n", indent, ev.Test, ev.Elapsed)
			for _, l := range lines {
				if !strings.HasPrefix(l, "=== ") && !strings.Contains(l, "--- FAIL") {
					fmt.Fprintf(p.w, "%s  | %s", indent, l)
				}
			}
		}
	}
}

func (p *progress) packageDone(ev testEvent, lines []string, res *results) {
	switch ev.Action {
	case "pass":
		fmt.Fprintf(p.w, "ok   %s %.2fs\n", ev.Package, ev.Elapsed)
	case "skip":
		fmt.Fprintf(p.w, "?    %s [no test files]\n", ev.Package)
	case "fail":
		res.failed[ev.Package] = true
		if ev.FailedBuild != "" {
			fmt.Fprintf(p.w, "FAIL %s [build failed]\n", ev.Package)
			return
		}
		for _, l := range lines {
			if l != "FAIL\n" && !strings.HasPrefix(l, "FAIL\t") {
				fmt.Fprintf(p.w, "  | %s", l)
			}
		}
		fmt.Fprintf(p.w, "FAIL %s %.2fs\n", ev.Package, ev.Elapsed)
	}
}
