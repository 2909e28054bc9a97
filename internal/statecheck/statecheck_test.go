package statecheck

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The check reads every package-level var of the module's Go files
// (product and test code, and the Go sources that tests write out as
// string constants beginning "package ") and reports one that is mutable
// state:
//
//   - declared without a value (then written later: a counter, a mutex, a
//     hook), unless a //go:embed fills it;
//   - initialized by a call that is not known to return an immutable value
//     (a sync.Once*, make, a constructor of a server, a cache, a gate), or
//     by & of a value (one shared pointer);
//   - written anywhere but in its declaration or an init func: assigned,
//     incremented, its address taken, an element or field assigned,
//     delete or clear on it.
//
// What it lets through: sentinel errors, regexps, flag registrations in
// test files, constants, composite literals (lookup tables: a slice, map
// or struct written nowhere), function literals, tables computed by a
// function literal called in place, and the entries of immutable, each
// with its reason (and, logged, those of pending). It cannot see a method with a pointer receiver called on
// a var (x.Add()): such a var is a zero value or made by a call, which the
// first two rules already report. Generated files (protoc's) are skipped.

// immutable lists the package-level vars, by directory and name, that are
// initialized by a call the check does not know but hold no state: tables
// computed once and never written, and test flags registered in init.
var immutable = map[string]string{
	"adapters/wire:base64Pairs":     "base64 decoding table, built once by sync.OnceValue and only read",
	"pcm:hasAVX":                    "CPU feature detection (sync.OnceValue of cpuid), the same answer for the process's life",
	"pcm:hasAVX512":                 "CPU feature detection (sync.OnceValue of cpuid), the same answer for the process's life",
	"pcm:mulawTables":               "µ-law encode/decode lookup tables, built at init and only read",
	"pcm:alawTables":                "A-law encode/decode lookup tables, built at init and only read",
	"examples/restaurant:burstGap":  "a sample count computed from constants (pcm.SamplesFor)",
	"examples/restaurant:maxLead":   "a sample count computed from constants (pcm.SamplesFor)",
	"examples/restaurant:maxTail":   "a sample count computed from constants (pcm.SamplesFor)",
	"adapters/handler:abCaller":     "a function value (a voicetest.UserFunc conversion of a func literal)",
	"voicetest/cassette:benchFrame": "a chunk of silence the benchmarks only read (pcm.Silence)",
	"voicetest/cache:cacheFlag":     "test flag, registered in init only in test binaries (testing.Testing)",
	"voicetest/cache:recordFlag":    "test flag, registered in init only in test binaries (testing.Testing)",
	"personas:leet":                 "a strings.Replacer: safe for concurrent use, its replacements fixed",
	"personas:homoglyph":            "a strings.Replacer: safe for concurrent use, its replacements fixed",
	"personas:Elderly":              "a Persona value; its Effect (pcm.TelephoneBand) keeps its filter state per call",
	"personas:NoisyStreet":          "a Persona value; its Effect (Babble, BrownNoise) seeds its generator per call",
	"personas:BadPhoneLine":         "a Persona value; its Effect (pcm.Chain of effects) keeps its state per call",
	"pcm:speechSpan":                "a Segment of two durations (ms converts milliseconds), only read",
	"pcm:wavFixtures":               "the fixtures' table (cat joins argument lists), only read",
	"personas:takeTurnSpec":         "a ToolSpec built from constants (fmt.Sprintf, Duration.Milliseconds), only read",
	"voicetest:holdOnScript":        "a script of Steps, values whose closures keep their state per run",
}

// pending lists the offenders known and not yet moved, by directory and
// name, with what they are: the test logs them and lets them through, and
// fails once one is gone from the code (then remove it here).
var pending = map[string]string{
	"adapters/livekit:server":      "a shared livekit-server for the package's tests (lkserver.NewShared); helper lk10 works in this package",
	"adapters/livekit:alone":       "a gate the package's tests take turns on; helper lk10 works in this package",
	"adapters/livekit:quiet":       "a gate the package's tests take turns on; helper lk10 works in this package",
	"adapters/livekit:checks":      "a gate the package's tests take turns on; helper lk10 works in this package",
	"adapters/livekit:dialing":     "a latch shared by the package's tests; helper lk10 works in this package",
	"adapters/livekit:heapChecked": "a latch shared by the package's tests; helper lk10 works in this package",
	"adapters/livekit:nodeDone":    "a latch shared by the package's tests; helper lk10 works in this package",
	"adapters/livekit:doubles":     "a channel (semaphore) shared by the package's tests; helper lk10 works in this package",
	"adapters/livekit:nodeEarly":   "a pointer shared by the package's tests (&earlyNode{}); helper lk10 works in this package",
}

// knownImmutable are the calls whose results hold no state.
var knownImmutable = map[string]bool{
	"errors.New": true, "fmt.Errorf": true, "regexp.MustCompile": true,
	"strings.Repeat": true, "filepath.Join": true, "time.Unix": true, "crc32.MakeTable": true,
	"json.RawMessage": true, "math.Inf": true, "fmt.Sprintf": true,
}

// finding is one var the check reports.
type finding struct {
	pos  token.Position
	key  string // dir:name
	why  string
	file string // the file's path, or path#const for a Go source in a string
}

func (f finding) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", f.file, f.pos.Line, f.key[strings.LastIndex(f.key, ":")+1:], f.why)
}

// source is one parsed Go file of a package.
type source struct {
	path string // as reported
	test bool   // a _test.go file (flag registrations allowed)
	f    *ast.File
}

// checkPackage reports the package-level mutable state of one package's
// files (a directory's files of one package clause), keyed by dir.
func checkPackage(fset *token.FileSet, dir string, files []source, importPath string, extTest []source) []finding {
	type decl struct {
		spec *ast.ValueSpec
		name *ast.Ident
		src  source
	}
	vars := map[string]decl{}
	specs := map[*ast.ValueSpec]bool{}
	var out []finding
	report := func(src source, id *ast.Ident, why string) {
		out = append(out, finding{pos: fset.Position(id.Pos()), key: dir + ":" + id.Name, why: why, file: src.path})
	}
	for _, src := range files {
		for _, d := range src.f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			embedded := hasEmbed(g.Doc)
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				specs[vs] = true
				embedded := embedded || hasEmbed(vs.Doc)
				for i, id := range vs.Names {
					if id.Name == "_" {
						continue
					}
					vars[id.Name] = decl{vs, id, src}
					switch {
					case len(vs.Values) == 0 && embedded:
					case len(vs.Values) == 0:
						report(src, id, "declared without a value, so written later: make it a local, a field, or a test's state")
					default:
						v := vs.Values[0]
						if len(vs.Values) > i {
							v = vs.Values[i]
						}
						if why := stateful(v, src.test); why != "" {
							report(src, id, why)
						}
					}
				}
			}
		}
	}
	isVar := func(id *ast.Ident) bool {
		if _, ok := vars[id.Name]; !ok {
			return false
		}
		if id.Obj == nil {
			return true // declared in another file of the package
		}
		vs, ok := id.Obj.Decl.(*ast.ValueSpec)
		return ok && specs[vs]
	}
	written := map[string]bool{}
	scan := func(src source, qualifier string) {
		for _, d := range src.f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil || (fn.Recv == nil && fn.Name.Name == "init") {
				continue
			}
			write := func(e ast.Expr, how string) {
				id := root(e, qualifier)
				if id == nil || written[id.Name] {
					return
				}
				if (qualifier == "" && isVar(id)) || (qualifier != "" && vars[id.Name].spec != nil) {
					written[id.Name] = true
					v := vars[id.Name]
					report(v.src, v.name, fmt.Sprintf("%s in %s (%s:%d): state, not a constant table", how, fn.Name.Name, src.path, fset.Position(e.Pos()).Line))
				}
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.AssignStmt:
					for _, l := range n.Lhs {
						write(l, "written")
					}
				case *ast.RangeStmt:
					if n.Tok == token.ASSIGN {
						for _, l := range []ast.Expr{n.Key, n.Value} {
							if l != nil {
								write(l, "written")
							}
						}
					}
				case *ast.IncDecStmt:
					write(n.X, "written")
				case *ast.UnaryExpr:
					if n.Op == token.AND {
						write(n.X, "its address taken")
					}
				case *ast.CallExpr:
					if id, ok := n.Fun.(*ast.Ident); ok && (id.Name == "delete" || id.Name == "clear") && id.Obj == nil && len(n.Args) > 0 {
						write(n.Args[0], "written ("+id.Name+")")
					}
				}
				return true
			})
		}
	}
	for _, src := range files {
		scan(src, "")
	}
	for _, src := range extTest {
		for _, imp := range src.f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == importPath {
				name := importPath[strings.LastIndex(importPath, "/")+1:]
				if imp.Name != nil {
					name = imp.Name.Name
				}
				scan(src, name)
			}
		}
	}
	return out
}

// root returns the variable an lvalue writes: x of x, x.f, x[i], *x, or,
// with a qualifier, X of qualifier.X...; nil if it is something else.
func root(e ast.Expr, qualifier string) *ast.Ident {
	for {
		switch x := e.(type) {
		case *ast.Ident:
			if qualifier != "" {
				return nil
			}
			return x
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && qualifier != "" && id.Name == qualifier && id.Obj == nil {
				return x.Sel
			}
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		default:
			return nil
		}
	}
}

// stateful says why a var's initializer may make state, or "" if it
// cannot.
func stateful(e ast.Expr, test bool) string {
	var why string
	ast.Inspect(e, func(n ast.Node) bool {
		if why != "" {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return false // code, not state (what it writes is checked where it runs)
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				why = "initialized with & of a value: one pointer every user shares"
				return false
			}
		case *ast.CallExpr:
			switch fun := n.Fun.(type) {
			case *ast.FuncLit:
				return true // a table computed in place: its body is code
			case *ast.Ident:
				switch fun.Name {
				case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
					"float32", "float64", "string", "byte", "rune", "bool":
					return true // a conversion
				}
			case *ast.ArrayType:
				return true // []byte("…")
			case *ast.SelectorExpr:
				if pkg, ok := fun.X.(*ast.Ident); ok {
					name := pkg.Name + "." + fun.Sel.Name
					if knownImmutable[name] || (test && pkg.Name == "flag") {
						return true
					}
				}
			}
			why = fmt.Sprintf("initialized by %s(…), a call that may make state: make it a local of what uses it (a parent test's, a struct's), or list it in immutable with why", exprString(n.Fun))
			return false
		}
		return true
	})
	return why
}

func exprString(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return exprString(x.X) + "." + x.Sel.Name
	case *ast.IndexExpr:
		return exprString(x.X) + "[…]"
	}
	return fmt.Sprintf("%T", e)
}

func hasEmbed(cg *ast.CommentGroup) bool {
	if cg == nil {
		return false
	}
	for _, c := range cg.List {
		if strings.HasPrefix(c.Text, "//go:embed ") {
			return true
		}
	}
	return false
}

// generated reports whether f is generated code ("Code generated … DO NOT
// EDIT." before the package clause).
func generated(f *ast.File) bool {
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "// Code generated ") && strings.HasSuffix(c.Text, " DO NOT EDIT.") {
				return true
			}
		}
	}
	return false
}

// moduleRoot returns the directory of go.mod above the working directory
// and the module's path.
func moduleRoot(t *testing.T) (dir, module string) {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				if m, ok := strings.CutPrefix(l, "module "); ok {
					return dir, strings.TrimSpace(m)
				}
			}
			t.Fatalf("%s/go.mod has no module line", dir)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// pkgFiles are one directory's parsed files, by package clause name.
type pkgFiles map[string][]source

// checkModule runs the check on every Go file under root (not
// node_modules, testdata, vendor or hidden directories) and on the Go
// sources held in string constants of test files.
func checkModule(t *testing.T, root, module string) []finding {
	t.Helper()
	fset := token.NewFileSet()
	dirs := map[string]pkgFiles{}
	var embeddedSrc []finding
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "node_modules" || name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return fmt.Errorf("parsing %s: %w", rel, err)
		}
		if generated(f) {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		if dirs[dir] == nil {
			dirs[dir] = pkgFiles{}
		}
		test := strings.HasSuffix(name, "_test.go")
		dirs[dir][f.Name.Name] = append(dirs[dir][f.Name.Name], source{path: rel, test: test, f: f})
		// Go sources a test writes out (a sample module's test file).
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || (g.Tok != token.CONST && g.Tok != token.VAR) {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					text, err := strconv.Unquote(lit.Value)
					if err != nil || !strings.HasPrefix(text, "package ") {
						continue
					}
					where := rel + "#" + vs.Names[i].Name
					sf, err := parser.ParseFile(fset, where, text, parser.ParseComments)
					if err != nil {
						return fmt.Errorf("parsing the Go source in %s: %w", where, err)
					}
					embeddedSrc = append(embeddedSrc, checkPackage(fset, where, []source{{path: where, test: true, f: sf}}, "", nil)...)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out := embeddedSrc
	for dir, pkgs := range dirs {
		importPath := module
		if dir != "." {
			importPath += "/" + dir
		}
		for name, files := range pkgs {
			if strings.HasSuffix(name, "_test") {
				out = append(out, checkPackage(fset, dir, files, "", nil)...)
				continue
			}
			out = append(out, checkPackage(fset, dir, files, importPath, pkgs[name+"_test"])...)
		}
	}
	slices.SortFunc(out, func(a, b finding) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// TestNoPackageState fails on every package-level var of the module that
// is mutable state (see the check's rules above) and on every entry of
// immutable that no longer names one.
func TestNoPackageState(t *testing.T) {
	root, module := moduleRoot(t)
	used := map[string]bool{}
	for _, f := range checkModule(t, root, module) {
		if _, ok := immutable[f.key]; ok {
			used[f.key] = true
			continue
		}
		if what, ok := pending[f.key]; ok {
			used[f.key] = true
			t.Logf("%s: package-level mutable state, not yet moved (%s)", f, what)
			continue
		}
		t.Errorf("%s: package-level mutable state (the rule: none but test flags, in test code too)", f)
	}
	for name, list := range map[string]map[string]string{"immutable": immutable, "pending": pending} {
		for key := range list {
			if !used[key] {
				t.Errorf("%s lists %s, which the check no longer reports: remove it", name, key)
			}
		}
	}
}

// TestCheckReports: what the check reports and what it lets through, on
// small sources.
func TestCheckReports(t *testing.T) {
	for _, tc := range []struct {
		name, src, ext string // ext: an external test package's file, importing example.com/p
		want           []string
	}{
		{"Once", "package p\nimport \"sync\"\nvar a = sync.OnceValue(func() int { return 1 })", "", []string{"a: initialized by sync.OnceValue(…)"}},
		{"OnceValues", "package p\nimport \"sync\"\nvar c = sync.OnceValues(func() (int, error) { return 1, nil })", "", []string{"c: initialized by sync.OnceValues(…)"}},
		{"counter", "package p\nimport \"sync\"\nvar n struct { sync.Mutex; n int }", "", []string{"n: declared without a value"}},
		{"make", "package p\nvar m = make(map[string]int)", "", []string{"m: initialized by make(…)"}},
		{"pointer", "package p\ntype T struct{}\nvar x = &T{}", "", []string{"x: initialized with & of a value"}},
		{"constructor", "package p\nimport \"os\"\nvar f, _ = os.Create(\"x\")", "", []string{"f: initialized by os.Create(…)"}},
		{"appended", "package p\nvar l = []int{1}\nfunc add() { l = append(l, 2) }", "", []string{"l: written in add"}},
		{"map written", "package p\nvar m = map[string]int{}\nfunc set() { m[\"a\"]++ }", "", []string{"m: written in set"}},
		{"deleted", "package p\nvar m = map[string]int{\"a\": 1}\nfunc del() { delete(m, \"a\") }", "", []string{"m: written (delete) in del"}},
		{"address", "package p\nimport \"flag\"\nvar s = \"x\"\nfunc reg() { flag.StringVar(&s, \"s\", \"\", \"\") }", "", []string{"s: its address taken in reg"}},
		{"field", "package p\ntype T struct{ n int }\nvar x = T{}\nfunc set() { x.n = 2 }", "", []string{"x: written in set"}},
		{"external test", "package p\nvar Hook = func() {}", "package p_test\nimport \"example.com/p\"\nfunc f() { p.Hook = nil }", []string{"Hook: written in f"}},
		// Let through.
		{"tables", "package p\nimport (\"errors\"; \"regexp\")\nvar (\n\tErrX = errors.New(\"x\")\n\tre = regexp.MustCompile(\"a\")\n\tt = []string{\"a\"}\n\tm = map[int]int{1: 2}\n\tb = []byte(\"x\")\n\tk = func() map[int]bool { m := map[int]bool{}; m[1] = true; return m }()\n\t_ = 1\n)\nfunc read() int { return m[1] + len(t) }", "", nil},
		{"local shadows", "package p\nvar t = []int{1}\nfunc f() { t := []int{}; t = append(t, 1); _ = t }", "", nil},
		{"init writes", "package p\nvar n *bool\nfunc init() { n = new(bool) }", "", []string{"n: declared without a value"}},
		{"embed", "package p\nimport _ \"embed\"\n//go:embed x.txt\nvar s string", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fset := token.NewFileSet()
			parse := func(name, src string) source {
				f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
				if err != nil {
					t.Fatal(err)
				}
				return source{path: name, f: f}
			}
			var ext []source
			if tc.ext != "" {
				ext = []source{parse("p_test.go", tc.ext)}
			}
			var got []string
			for _, f := range checkPackage(fset, "p", []source{parse("p.go", tc.src)}, "example.com/p", ext) {
				got = append(got, f.String())
			}
			if len(got) != len(tc.want) {
				t.Fatalf("reported %q, want %d finding(s) %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("finding %d is %q, want it to say %q", i, got[i], w)
				}
			}
		})
	}
}
