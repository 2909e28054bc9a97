package tour_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// TestREADMEShowsTheTour keeps the README's tour true to this package: the
// README says its handler and first scenario are the code of
// examples/tour, so each function it shows must appear in it, in a go
// code block, exactly as in the file (the doc comment aside).
func TestREADMEShowsTheTour(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatalf("reading the README: %v", err)
	}
	blocks := goBlocks(string(b))
	for _, fn := range []struct{ file, name string }{
		{"agent.go", "Greeter"},
		{"tour_test.go", "TestBooking"},
	} {
		src := funcSource(t, fn.file, fn.name)
		found := false
		for _, block := range blocks {
			if strings.Contains(block, src) {
				found = true
			}
		}
		if !found {
			t.Errorf("README.md has no go code block with %s as it is in examples/tour/%s; copy it from there:\n%s", fn.name, fn.file, src)
		}
	}
}

// goBlocks returns the contents of the ```go blocks of a Markdown text.
func goBlocks(md string) []string {
	var out []string
	for {
		_, rest, ok := strings.Cut(md, "```go\n")
		if !ok {
			return out
		}
		block, after, ok := strings.Cut(rest, "```")
		if !ok {
			return out
		}
		out = append(out, block)
		md = after
	}
}

// funcSource returns the source text of the function name in file, from
// func to its closing brace.
func funcSource(t *testing.T, file, name string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, b, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == name && fd.Recv == nil {
			return string(b[fset.Position(fd.Pos()).Offset:fset.Position(fd.End()).Offset])
		}
	}
	t.Fatalf("%s declares no func %s", file, name)
	return ""
}
