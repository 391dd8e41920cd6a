package cuda

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestStubInStep: the stub (the files built without the cuda tag) declares
// the same exported constants, variables, types, functions and methods as
// the files built with it, so that every caller builds either way.
func TestStubInStep(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]map[string]bool{"cuda": {}, "!cuda": {}}
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		tag := ""
		for _, g := range f.Comments {
			if g.Pos() > f.Package {
				break
			}
			for _, c := range g.List {
				if x, err := constraint.Parse(c.Text); err == nil {
					tag = x.String()
				}
			}
		}
		set, ok := names[tag]
		if !ok {
			continue // built both ways
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				name := d.Name.Name
				if d.Recv != nil {
					typ := d.Recv.List[0].Type
					if s, ok := typ.(*ast.StarExpr); ok {
						typ = s.X
					}
					name = typ.(*ast.Ident).Name + "." + name
					if !ast.IsExported(typ.(*ast.Ident).Name) {
						continue
					}
				}
				if d.Name.IsExported() {
					set["func "+name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							set["type "+s.Name.Name] = true
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								set[d.Tok.String()+" "+n.Name] = true
							}
						}
					}
				}
			}
		}
	}
	for _, c := range []struct{ have, lack string }{{"cuda", "!cuda"}, {"!cuda", "cuda"}} {
		var missing []string
		for name := range names[c.have] {
			if !names[c.lack][name] {
				missing = append(missing, name)
			}
		}
		slices.Sort(missing)
		for _, name := range missing {
			t.Errorf("%s is declared with the build tag %q, not with %q", name, c.have, c.lack)
		}
	}
	if len(names["cuda"]) < 20 {
		t.Errorf("only %d exported names found with the cuda tag: %v", len(names["cuda"]), names["cuda"])
	}
}
