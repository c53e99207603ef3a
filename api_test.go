package arenaprof_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// publicPackages are the module's packages users import.
var publicPackages = []string{".", "arena", "export", "export/agent", "hooks", "profiler", "report", "report/htmlreport"}

// maxExported bounds the public surface: issue 26's count, 149, and one
// function for each capability added since that no existing name could
// carry: export.RSSHandler (the resident-memory profile, served like the
// other handlers) and arena.ContextWithUsage (a request's exact bytes for
// a tracing module outside the core, without an interface and its
// method), agent.RSSSource (the resident-memory profile as an agent
// source, for an agent.Config written by hand, as each other profile
// has one), arena.NewValue and arena.MakeSliceValue (New and MakeSlice for
// a type known only at run time, as reflect.New and reflect.MakeSlice are
// for new and make: a reflect-driven decoder such as arenajson cannot name
// its types as type parameters, and values with pointers must still reach
// the arena's typed slabs).
const maxExported = 154

// TestAPISurface counts the exported identifiers of the public packages
// (funcs, methods of exported types, types, consts and vars of non-test
// files), keeps them at most maxExported, and checks that each has a doc
// comment.
func TestAPISurface(t *testing.T) {
	perPkg := map[string][]string{}
	total := 0
	for _, dir := range publicPackages {
		names, undocumented := exportedNames(t, dir)
		perPkg[dir] = names
		total += len(names)
		for _, n := range undocumented {
			t.Errorf("%s: %s has no doc comment", dir, n)
		}
	}
	if total > maxExported {
		var b strings.Builder
		for _, dir := range publicPackages {
			b.WriteString("\n" + dir + ": " + strings.Join(perPkg[dir], " "))
		}
		t.Errorf("%d exported identifiers, at most %d:%s", total, maxExported, b.String())
	}
	t.Logf("%d exported identifiers", total)
}

// exportedNames returns the exported identifiers of the package in dir and
// those without a doc comment.
func exportedNames(t *testing.T, dir string) (names, undocumented []string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	types := map[string]bool{}
	add := func(name string, doc ...*ast.CommentGroup) {
		names = append(names, name)
		for _, d := range doc {
			if d != nil && strings.TrimSpace(d.Text()) != "" {
				return
			}
		}
		undocumented = append(undocumented, name)
	}
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, s := range g.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						types[s.Name.Name] = true
						add(s.Name.Name, s.Doc, g.Doc)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							add(n.Name, s.Doc, g.Doc, s.Comment)
						}
					}
				}
			}
		}
	}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !fd.Name.IsExported() {
				continue
			}
			if fd.Recv == nil {
				add(fd.Name.Name, fd.Doc)
				continue
			}
			recv := fd.Recv.List[0].Type
			if star, ok := recv.(*ast.StarExpr); ok {
				recv = star.X
			}
			if ix, ok := recv.(*ast.IndexExpr); ok {
				recv = ix.X
			}
			if id, ok := recv.(*ast.Ident); ok && types[id.Name] {
				add(id.Name+"."+fd.Name.Name, fd.Doc)
			}
		}
	}
	sort.Strings(names)
	return names, undocumented
}
