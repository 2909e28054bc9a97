package adapters_test

import (
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The dependency rule of the adapters (see the package comment), checked
// on the module's real import graph as `go list -deps` reports it, so
// that it holds for every package under adapters/, including protocols
// added later.

const module = "github.com/voicetest-go/voicetest"

// inProcess are the adapters a test of an in-process agent imports: they
// must compile without any wire library or SDK.
var inProcess = []string{module + "/adapters/handler", module + "/adapters/composable"}

// openaiGo is the OpenAI SDK's module. No package of the module imports
// it (violations); tests use it as an oracle.
const openaiGo = "github.com/openai/openai-go/v3"

// notInProcess are modules that an in-process adapter must not pull in,
// besides every protocol's SDK: the WebSocket library and the OpenAI SDK.
var notInProcess = []string{"github.com/coder/websocket", openaiGo}

// pkgNode is one package of the build graph.
type pkgNode struct {
	module  string   // module path; "" for the standard library
	imports []string // direct imports of its non-test code
}

// goList runs the go command with args in the module and returns its
// output.
func goList(t *testing.T, args ...string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the dependency rule is checked with `go list`, but no go command is on PATH: %v", err)
	}
	out, err := exec.Command(goBin, append([]string{"list"}, args...)...).Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg += ": " + string(ee.Stderr)
		}
		t.Fatalf("go list %s: %s", strings.Join(args, " "), msg)
	}
	return string(out)
}

// loadModule returns every package the module's non-test code builds, with
// its module and direct imports, and every test binary of the module
// ("<package>.test") with its dependencies: one `go list -deps -test` for
// all the checks of this file.
func loadModule(t *testing.T) (g map[string]pkgNode, testDeps map[string][]string) {
	t.Helper()
	out := goList(t, "-deps", "-test", "-f", "{{.ImportPath}}\t{{if .Module}}{{.Module.Path}}{{end}}\t{{join .Imports \",\"}}\t{{if eq .Name \"main\"}}{{join .Deps \",\"}}{{end}}", module+"/...")
	g, testDeps = map[string]pkgNode{}, map[string][]string{}
	for line := range strings.SplitSeq(strings.TrimRight(out, "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			t.Fatalf("go list printed %q, want four tab-separated fields", line)
		}
		switch {
		case strings.HasSuffix(f[0], ".test"):
			testDeps[f[0]] = strings.Split(f[3], ",")
			continue
		case strings.Contains(f[0], " ["), strings.HasSuffix(f[0], "_test"):
			continue // a package compiled for a test binary, or an external test package
		}
		var imports []string
		if f[2] != "" {
			imports = strings.Split(f[2], ",")
		}
		g[f[0]] = pkgNode{module: f[1], imports: imports}
	}
	if _, ok := g[module+"/adapters/handler"]; !ok {
		t.Fatalf("go list found no %s/adapters/handler among %d packages", module, len(g))
	}
	if _, ok := testDeps[module+"/adapters/handler.test"]; !ok {
		t.Fatalf("go list found no test binary of %s/adapters/handler among %d", module, len(testDeps))
	}
	return g, testDeps
}

// closure returns pkg and every package it imports, directly or not.
func closure(g map[string]pkgNode, pkg string) map[string]bool {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		for _, q := range g[p].imports {
			walk(q)
		}
	}
	walk(pkg)
	return seen
}

// adapterKind says what a package of the module is to the rule: "wire",
// "protocol" (adapters/<protocol>, in-process ones included), or "" for
// everything else (adapters' internal helpers included).
func adapterKind(pkg string) string {
	rest, ok := strings.CutPrefix(pkg, module+"/adapters/")
	switch {
	case !ok || strings.HasPrefix(rest, "internal/") || rest == "internal":
		return ""
	case rest == "wire":
		return "wire"
	case strings.Contains(rest, "/"):
		return "" // a sub-package belongs to its protocol's room
	}
	return "protocol"
}

// room returns the adapters/<name> a package lives in, or "".
func room(pkg string) string {
	rest, ok := strings.CutPrefix(pkg, module+"/adapters/")
	if !ok || strings.HasPrefix(rest, "internal") {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return module + "/adapters/" + name
}

// exempt reports whether pkg may import protocols' SDKs although it is
// not a protocol's package: the loopback test doubles (which speak the
// protocols) and the examples (which may import anything).
func exempt(pkg string) bool {
	return strings.HasPrefix(pkg, module+"/internal/peers/") || strings.HasPrefix(pkg, module+"/examples/") || pkg == module+"/examples"
}

// sdks returns, for each protocol package, the modules it imports beyond
// the module itself, the standard library and what adapters/wire imports:
// the protocol's own SDKs.
func sdks(g map[string]pkgNode) map[string][]string {
	shared := map[string]bool{}
	for _, q := range g[module+"/adapters/wire"].imports {
		shared[g[q].module] = true
	}
	out := map[string][]string{}
	for p := range g {
		if adapterKind(p) != "protocol" {
			continue
		}
		for _, q := range g[p].imports {
			m := g[q].module
			if m != "" && m != module && !shared[m] && !slices.Contains(out[p], m) {
				out[p] = append(out[p], m)
			}
		}
	}
	return out
}

// violations returns every breach of the rule in g, sorted.
func violations(g map[string]pkgNode) []string {
	var bad []string
	sdk := sdks(g)
	owner := map[string][]string{} // SDK module → the protocols that use it
	for p, ms := range sdk {
		for _, m := range ms {
			owner[m] = append(owner[m], p)
		}
	}
	for p, n := range g {
		if n.module != module {
			continue
		}
		kind := adapterKind(p)
		// No adapter package imports a protocol package but its own
		// room's: what protocols share belongs in adapters/wire.
		if kind != "" {
			for q := range closure(g, p) {
				if adapterKind(q) == "protocol" && room(q) != room(p) {
					bad = append(bad, fmt.Sprintf("%s imports %s: a protocol package must not import another (move what they share to adapters/wire)", p, q))
				}
			}
		}
		// A protocol's SDK is imported only from its own room.
		if !exempt(p) {
			for _, q := range n.imports {
				owners := owner[g[q].module]
				if len(owners) > 0 && !slices.Contains(owners, room(p)) {
					bad = append(bad, fmt.Sprintf("%s imports %s, the SDK of %s: only adapters/<protocol> may import a protocol's SDK", p, q, strings.Join(owners, ", ")))
				}
			}
		}
	}
	// No package of the module reaches openai-go: the model clients
	// (voicetest/llm, voicetest/speech's OpenAI engines) send their
	// requests themselves, openai-go is their tests' oracle only.
	for p, n := range g {
		if n.module != module {
			continue
		}
		for q := range closure(g, p) {
			for _, imp := range g[q].imports {
				if g[imp].module == openaiGo && g[q].module != openaiGo {
					bad = append(bad, fmt.Sprintf("%s reaches %s (imported by %s): no package of the module links openai-go; send the request as voicetest/llm and voicetest/speech do (voicetest/internal/openaihttp) and keep openai-go to tests, as their oracle", p, imp, q))
				}
			}
		}
	}
	// In-process adapters compile without any wire library or SDK.
	for _, p := range inProcess {
		if _, ok := g[p]; !ok {
			bad = append(bad, fmt.Sprintf("%s is not in the build graph; update inProcess in deps_test.go", p))
			continue
		}
		forbidden := slices.Clone(notInProcess)
		for m := range owner {
			forbidden = append(forbidden, m)
		}
		for q := range closure(g, p) {
			if q == module+"/adapters/wire" || slices.Contains(forbidden, g[q].module) {
				bad = append(bad, fmt.Sprintf("the in-process adapter %s pulls in %s", p, q))
			}
		}
	}
	sort.Strings(bad)
	return slices.Compact(bad)
}

// TestDependencyRule checks the rule on the module as it is: no protocol
// package imports another, only adapters/<protocol> imports a protocol's
// SDK, the in-process adapters pull in neither coder/websocket nor
// openai-go, no package of the module reaches openai-go at all, and no
// template engine is linked (checkNoTemplateEngine).
//
// Its subtests check the test binaries on the same `go list`:
// HandlerTestLinksNoWireLibrary and TestBinariesLinkSDKsOnlyWhereNeeded.
// It runs in parallel with the package's other tests: the go command it
// runs is most of this package's test time.
func TestDependencyRule(t *testing.T) {
	t.Parallel()
	g, testDeps := loadModule(t)
	for _, v := range violations(g) {
		t.Error(v)
	}
	t.Run("NoTemplateEngine", func(t *testing.T) { checkNoTemplateEngine(t, g) })
	t.Run("HandlerTestLinksNoWireLibrary", func(t *testing.T) { checkHandlerTestLinksNoWireLibrary(t, testDeps) })
	t.Run("TestBinariesLinkSDKsOnlyWhereNeeded", func(t *testing.T) { checkTestBinariesLinkSDKsOnlyWhereNeeded(t, testDeps) })
	var protocols []string
	for p := range g {
		if adapterKind(p) == "protocol" {
			protocols = append(protocols, strings.TrimPrefix(p, module+"/"))
		}
	}
	sort.Strings(protocols)
	// The rule is checked over every protocol package found, not a list;
	// this guards against the graph quietly losing them.
	want := []string{"adapters/composable", "adapters/elevenlabs", "adapters/gemini", "adapters/handler", "adapters/layercode", "adapters/livekit", "adapters/pipecat", "adapters/realtime", "adapters/twilio", "adapters/twiliophone", "adapters/vapi", "adapters/webrtc", "adapters/wscodec"}
	for _, w := range want {
		if !slices.Contains(protocols, w) {
			t.Errorf("protocol package %s not found in the build graph (found %v)", w, protocols)
		}
	}
	t.Logf("checked %d packages; protocol packages: %s; their SDKs: %v", len(g), strings.Join(protocols, " "), sdks(g))
}

// checkHandlerTestLinksNoWireLibrary: the test binary of adapters/handler,
// which imports only the handler adapter, voicetest and its fixtures,
// links neither coder/websocket nor openai-go.
func checkHandlerTestLinksNoWireLibrary(t *testing.T, testDeps map[string][]string) {
	var deps []string
	for _, d := range testDeps[module+"/adapters/handler.test"] {
		d, _, _ = strings.Cut(d, " [") // "p [p.test]": p compiled with its tests
		deps = append(deps, d)
	}
	if !slices.Contains(deps, module+"/adapters/handler") {
		t.Fatalf("go list -deps -test of adapters/handler does not list the package itself: %v", deps)
	}
	for _, d := range deps {
		for _, m := range notInProcess {
			if d == m || strings.HasPrefix(d, m+"/") {
				t.Errorf("the adapters/handler test binary links %s", d)
			}
		}
	}
}

// sdkTestBinaries are the modules whose objects are so large that a test
// binary linking one spends seconds more in the linker at every
// `go test ./...` (openai-go's ~330 MB, genai's ~120 MB; the linker loads
// every package of the binary, used or not), each with the only packages
// whose test binaries may link it. No package of the module imports
// openai-go (TestDependencyRule): it is the oracle of voicetest/llm's and
// voicetest/speech's requests, in one package of its own so that one test
// binary links it, not two. genai is adapters/gemini's SDK: the live test
// and the Gemini double's SDK check live there (TestLiveGemini,
// TestPeerSDKTurn), not in package adapters or internal/peers/geminipeer.
var sdkTestBinaries = map[string][]string{
	openaiGo:                  {"voicetest/internal/openaioracle"},
	"google.golang.org/genai": {"adapters/gemini"},
}

// sdkLinkViolations returns, sorted, every test binary of testDeps (its
// import path "<package>.test" → its dependencies) that links a module of
// rule without being allowed to, and every allowed package whose test
// binary is missing from testDeps or links no such module (the rule is
// stale).
func sdkLinkViolations(testDeps map[string][]string, rule map[string][]string) []string {
	links := map[string]map[string]bool{} // test binary's package → modules of rule it links
	for bin, deps := range testDeps {
		pkg := strings.TrimPrefix(strings.TrimSuffix(bin, ".test"), module+"/")
		links[pkg] = map[string]bool{}
		for _, d := range deps {
			d, _, _ = strings.Cut(d, " [")
			for m := range rule {
				if d == m || strings.HasPrefix(d, m+"/") {
					links[pkg][m] = true
				}
			}
		}
	}
	var bad []string
	for pkg, mods := range links {
		for m := range mods {
			if !slices.Contains(rule[m], pkg) {
				bad = append(bad, fmt.Sprintf("the test binary of %s links %s; only %s may (move the test that needs it there, see sdkTestBinaries)", pkg, m, strings.Join(rule[m], ", ")))
			}
		}
	}
	for m, pkgs := range rule {
		for _, pkg := range pkgs {
			if mods, ok := links[pkg]; !ok || !mods[m] {
				bad = append(bad, fmt.Sprintf("%s is allowed to link %s in its test binary, but its test binary does not (or it has none): update sdkTestBinaries", pkg, m))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// checkTestBinariesLinkSDKsOnlyWhereNeeded: of every test binary of the
// module (go list -deps -test reports each one's dependencies as those of
// its "<package>.test"), only those of sdkTestBinaries link openai-go or
// genai.
func checkTestBinariesLinkSDKsOnlyWhereNeeded(t *testing.T, testDeps map[string][]string) {
	for _, v := range sdkLinkViolations(testDeps, sdkTestBinaries) {
		t.Error(v)
	}
	if len(testDeps) < 40 {
		t.Errorf("go list -test listed %d test binaries of the module, want the module's ~45", len(testDeps))
	}
}

// TestSDKLinkRuleCatches: the rule flags a test binary that links an SDK
// it may not (directly or through a sub-package), and an allowed package
// whose test binary no longer links it or is gone.
func TestSDKLinkRuleCatches(t *testing.T) {
	rule := map[string][]string{openaiGo: {"voicetest/internal/openaioracle"}}
	base := func() map[string][]string {
		return map[string][]string{
			module + "/voicetest/internal/openaioracle.test": {"fmt", openaiGo, openaiGo + "/option"},
			module + "/voicetest/llm.test":                   {"fmt"},
		}
	}
	if bad := sdkLinkViolations(base(), rule); len(bad) != 0 {
		t.Fatalf("a module that keeps the rule: %q", bad)
	}
	for _, tc := range []struct {
		name   string
		mutate func(map[string][]string)
		want   string
	}{
		{"speech links openai-go", func(m map[string][]string) {
			m[module+"/voicetest/speech.test"] = []string{openaiGo + "/option"}
		}, "the test binary of voicetest/speech links " + openaiGo},
		{"the oracle links it no more", func(m map[string][]string) {
			m[module+"/voicetest/internal/openaioracle.test"] = []string{"fmt"}
		}, "voicetest/internal/openaioracle is allowed to link " + openaiGo + " in its test binary, but its test binary does not"},
		{"the oracle has no test binary", func(m map[string][]string) {
			delete(m, module+"/voicetest/internal/openaioracle.test")
		}, "voicetest/internal/openaioracle is allowed to link " + openaiGo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := base()
			tc.mutate(m)
			bad := sdkLinkViolations(m, rule)
			if !slices.ContainsFunc(bad, func(s string) bool { return strings.Contains(s, tc.want) }) {
				t.Errorf("violations %q, want one containing %q", bad, tc.want)
			}
		})
	}
}

// templateAllowed are the packages outside the module that may import
// text/template in the dependencies of the module's packages, each with
// the reason the linker still leaves the template engine out.
var templateAllowed = map[string]string{
	"github.com/sebdah/goldie/v2": "voicetest calls only goldie.Diff; goldie's templates (golden files as templates) are unreachable from it, so the linker drops them",
}

// templateExempt are the module's packages that may link a template
// engine or go-cmp, each with the reason: a protocol's SDK that uses one.
var templateExempt = map[string]string{
	module + "/adapters/gemini":  "genai → grpc → golang.org/x/net/trace, which renders its debug pages with html/template; genai imports go-cmp",
	module + "/adapters/livekit": "livekit/protocol's logger and cel-go use text/template",
}

// goCmp is go-cmp's module: it names types through reflect.Type.Method
// (cmp/internal/value.appendTypeName), which turns the linker's
// dead-method elimination off as text/template does. Tests may use it;
// the module's packages may not (the golden comparison aligns entries
// itself, voicetest/golden_align.go, with go-cmp as its test's oracle).
const goCmp = "github.com/google/go-cmp"

// templateViolations returns, sorted, every package of the module (but
// the exempt ones and the test doubles and examples) that reaches
// html/template, text/template through a package not in templateAllowed,
// or go-cmp (goCmp). text/template calls methods by name
// (reflect.Value.MethodByName), and a binary that can reach that keeps
// every exported method of every type it links: the HTML report is
// written without it (voicetest/report_html_write.go) so that a user's
// test binary, which reaches voicetest.Run, stays ~10 MB smaller when it
// also links an SDK such as openai-go, and links faster.
func templateViolations(g map[string]pkgNode) []string {
	var bad []string
	for p, n := range g {
		if n.module != module || exempt(p) || templateExempt[p] != "" {
			continue
		}
		for q := range closure(g, p) {
			for _, imp := range g[q].imports {
				switch {
				case imp == "html/template" && q != "text/template":
					bad = append(bad, fmt.Sprintf("%s reaches html/template (imported by %s)", p, q))
				case imp == "text/template" && q != "html/template" && templateAllowed[q] == "":
					bad = append(bad, fmt.Sprintf("%s reaches text/template (imported by %s)", p, q))
				case (imp == goCmp || strings.HasPrefix(imp, goCmp+"/")) && g[q].module != goCmp:
					bad = append(bad, fmt.Sprintf("%s reaches go-cmp (%s imported by %s)", p, imp, q))
				}
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// checkNoTemplateEngine: no package of the module (see
// templateViolations for the exceptions) depends on html/template, on
// text/template but through templateAllowed, or on go-cmp; voicetest
// among them, so every binary that reaches voicetest.Run keeps the
// linker's dead-method elimination. It runs inside TestDependencyRule, on the same graph (one
// `go list` for both).
func checkNoTemplateEngine(t *testing.T, g map[string]pkgNode) {
	for _, v := range templateViolations(g) {
		t.Error(v)
	}
	if !closure(g, module+"/voicetest")["github.com/sebdah/goldie/v2"] {
		t.Log("voicetest no longer imports goldie: drop it from templateAllowed")
	}
	for p := range templateExempt {
		if _, ok := g[p]; !ok {
			t.Errorf("%s is not in the build graph; update templateExempt", p)
		}
	}
}

// TestNoTemplateEngineCatches: the template rule flags voicetest using
// html/template, text/template or go-cmp itself, or through a new
// dependency.
func TestNoTemplateEngineCatches(t *testing.T) {
	base := func() map[string]pkgNode {
		return map[string]pkgNode{
			module + "/voicetest":           {module: module, imports: []string{"github.com/sebdah/goldie/v2", "encoding/json"}},
			module + "/adapters/handler":    {module: module, imports: []string{module + "/voicetest"}},
			module + "/adapters/gemini":     {module: module, imports: []string{"golang.org/x/net/trace"}},
			module + "/examples/x":          {module: module, imports: []string{"html/template"}},
			"github.com/sebdah/goldie/v2":   {module: "github.com/sebdah/goldie/v2", imports: []string{"text/template"}},
			"golang.org/x/net/trace":        {module: "golang.org/x/net", imports: []string{"html/template"}},
			"github.com/example/templating": {module: "github.com/example/templating", imports: []string{"text/template"}},
			"html/template":                 {imports: []string{"text/template"}},
			"text/template":                 {},
			"encoding/json":                 {},
			goCmp + "/cmp":                  {module: goCmp, imports: []string{goCmp + "/cmp/internal/value"}},
			goCmp + "/cmp/cmpopts":          {module: goCmp, imports: []string{goCmp + "/cmp"}},
			goCmp + "/cmp/internal/value":   {module: goCmp},
			"github.com/example/comparing":  {module: "github.com/example/comparing", imports: []string{goCmp + "/cmp"}},
		}
	}
	if v := templateViolations(base()); len(v) != 0 {
		t.Fatalf("a graph that keeps the rule has violations: %q", v)
	}
	for _, tc := range []struct{ name, imp, want string }{
		{"html/template in voicetest", "html/template", module + "/voicetest reaches html/template (imported by " + module + "/voicetest)"},
		{"text/template in voicetest", "text/template", module + "/voicetest reaches text/template (imported by " + module + "/voicetest)"},
		{"a dependency using text/template", "github.com/example/templating", module + "/adapters/handler reaches text/template (imported by github.com/example/templating)"},
		{"go-cmp in voicetest", goCmp + "/cmp", module + "/voicetest reaches go-cmp (" + goCmp + "/cmp imported by " + module + "/voicetest)"},
		{"cmpopts in voicetest", goCmp + "/cmp/cmpopts", module + "/adapters/handler reaches go-cmp (" + goCmp + "/cmp/cmpopts imported by " + module + "/voicetest)"},
		{"a dependency using go-cmp", "github.com/example/comparing", module + "/adapters/handler reaches go-cmp (" + goCmp + "/cmp imported by github.com/example/comparing)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := base()
			n := g[module+"/voicetest"]
			n.imports = append(n.imports, tc.imp)
			g[module+"/voicetest"] = n
			if v := templateViolations(g); !slices.Contains(v, tc.want) {
				t.Errorf("violations %q, want one %q", v, tc.want)
			}
		})
	}
}

// TestDependencyRuleCatches feeds the checker graphs that break each part
// of the rule, so that a green TestDependencyRule means something.
func TestDependencyRuleCatches(t *testing.T) {
	const a = module + "/adapters/"
	base := func() map[string]pkgNode {
		return map[string]pkgNode{
			a + "wire":                       {module: module, imports: []string{"github.com/coder/websocket"}},
			a + "twilio":                     {module: module, imports: []string{a + "wire", "github.com/coder/websocket"}},
			a + "webrtc":                     {module: module, imports: []string{a + "wire", "github.com/pion/webrtc/v4"}},
			a + "handler":                    {module: module, imports: []string{module + "/voicetest"}},
			a + "composable":                 {module: module, imports: []string{module + "/voicetest"}},
			module + "/voicetest":            {module: module},
			module + "/judges":               {module: module, imports: []string{module + "/voicetest"}},
			module + "/examples/x":           {module: module, imports: []string{"github.com/pion/webrtc/v4"}},
			"github.com/coder/websocket":     {module: "github.com/coder/websocket"},
			"github.com/pion/webrtc/v4":      {module: "github.com/pion/webrtc/v4"},
			"github.com/openai/openai-go/v3": {module: "github.com/openai/openai-go/v3"},
		}
	}
	if v := violations(base()); len(v) != 0 {
		t.Fatalf("a graph that keeps the rule has violations: %q", v)
	}
	for _, tc := range []struct {
		name   string
		mutate func(g map[string]pkgNode)
		want   string
	}{
		{"protocol imports protocol", func(g map[string]pkgNode) {
			n := g[a+"twilio"]
			n.imports = append(n.imports, a+"webrtc")
			g[a+"twilio"] = n
		}, "adapters/twilio imports " + a + "webrtc"},
		{"wire imports a protocol", func(g map[string]pkgNode) {
			n := g[a+"wire"]
			n.imports = append(n.imports, a+"twilio")
			g[a+"wire"] = n
		}, "adapters/wire imports " + a + "twilio"},
		{"SDK outside its room", func(g map[string]pkgNode) {
			n := g[module+"/judges"]
			n.imports = append(n.imports, "github.com/pion/webrtc/v4")
			g[module+"/judges"] = n
		}, "judges imports github.com/pion/webrtc/v4, the SDK of " + a + "webrtc"},
		{"handler pulls the wire", func(g map[string]pkgNode) {
			n := g[a+"handler"]
			n.imports = append(n.imports, a+"wire")
			g[a+"handler"] = n
		}, "in-process adapter " + a + "handler pulls in " + a + "wire"},
		{"speech imports openai-go", func(g map[string]pkgNode) {
			g[module+"/voicetest/speech"] = pkgNode{module: module, imports: []string{openaiGo + "/option"}}
			g[openaiGo+"/option"] = pkgNode{module: openaiGo, imports: []string{openaiGo}}
		}, module + "/voicetest/speech reaches " + openaiGo + "/option (imported by " + module + "/voicetest/speech)"},
		{"an example reaches openai-go through a dependency", func(g map[string]pkgNode) {
			g["github.com/example/sdk"] = pkgNode{module: "github.com/example/sdk", imports: []string{openaiGo}}
			n := g[module+"/examples/x"]
			n.imports = append(n.imports, "github.com/example/sdk")
			g[module+"/examples/x"] = n
		}, module + "/examples/x reaches " + openaiGo + " (imported by github.com/example/sdk)"},
		{"composable pulls openai-go through voicetest", func(g map[string]pkgNode) {
			n := g[module+"/voicetest"]
			n.imports = append(n.imports, "github.com/openai/openai-go/v3")
			g[module+"/voicetest"] = n
		}, "in-process adapter " + a + "composable pulls in github.com/openai/openai-go/v3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := base()
			tc.mutate(g)
			v := violations(g)
			if !slices.ContainsFunc(v, func(s string) bool { return strings.Contains(s, tc.want) }) {
				t.Errorf("violations %q, want one containing %q", v, tc.want)
			}
		})
	}
}
