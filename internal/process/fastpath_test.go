package process

import (
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/expr"
)

// TestSimplePathNamespaces: the walk's namespace shortcut (a child with
// its parent's prefix and no declaration of its own has its parent's
// namespace) must give what etree's full lookup gives, also where a
// child redeclares its parent's prefix or the default namespace.
func TestSimplePathNamespaces(t *testing.T) {
	doc := etree.NewDocument()
	if err := doc.ReadFromString(`<p:a xmlns:p="u1" xmlns="d1">
  <p:b><p:c xmlns:p="u2"><p:e/></p:c><p:c><p:e/></p:c></p:b>
  <x><y xmlns="d2"><z/></y><y><z/></y></x>
</p:a>`); err != nil {
		t.Fatal(err)
	}
	root := doc.Root()
	step := func(space, local string) expr.PathStep { return expr.PathStep{Space: space, Local: local} }
	tests := []struct {
		name  string
		steps []expr.PathStep
		want  int // matches (evalAll)
	}{
		{"same prefix, inherited", []expr.PathStep{step("u1", "b"), step("u1", "c")}, 1},
		{"same prefix, redeclared", []expr.PathStep{step("u1", "b"), step("u2", "c")}, 1},
		{"below a redeclaration", []expr.PathStep{step("u1", "b"), step("u2", "c"), step("u2", "e")}, 1},
		{"below the inherited one", []expr.PathStep{step("u1", "b"), step("u1", "c"), step("u1", "e")}, 1},
		{"after a wildcard", []expr.PathStep{step("u1", "b"), {Local: "*"}, step("u2", "e")}, 1},
		{"default, inherited", []expr.PathStep{step("d1", "x"), step("d1", "y"), step("d1", "z")}, 1},
		{"default, redeclared", []expr.PathStep{step("d1", "x"), step("d2", "y"), step("d2", "z")}, 1},
		{"wrong namespace", []expr.PathStep{step("u2", "b")}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &expr.SimplePath{Part: -1, Steps: tt.steps}
			if got := len(p.EvalAll(root, root)); got != tt.want {
				t.Errorf("evalAll: %d matches, want %d", got, tt.want)
			}
			got := p.Eval(root, root)
			if len(got) != tt.want {
				t.Fatalf("eval: %d matches, want %d", len(got), tt.want)
			}
			if tt.want == 1 {
				e := got[0].Tok.(*etree.Element)
				if e.NamespaceURI() != tt.steps[len(tt.steps)-1].Space && tt.steps[len(tt.steps)-1].Local != "*" {
					t.Errorf("eval found %s in %s", e.Tag, e.NamespaceURI())
				}
			}
		})
	}
}
