package ast

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/xmldoc"
)

// FuzzParse: Parse never panics on a document xmldoc.Parse accepts, every
// node of the tree is its element's node, has the element's line and its
// parent, and the tree has the document's elements, no more, no fewer.
func FuzzParse(f *testing.F) {
	for _, glob := range []string{"../../../deploy/*/*.bpel", "../check/testdata/*.bpel"} {
		files, _ := filepath.Glob(glob)
		for _, fn := range files {
			b, err := os.ReadFile(fn)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add([]byte(head + "<sequence><frob/><o:x xmlns:o='urn:o'/></sequence></process>"))
	f.Add([]byte("<a/>"))
	f.Add([]byte(head + "<if><then><empty/></then><else/></if><forEach><scope/></forEach></process>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := xmldoc.Parse("f.bpel", data)
		if err != nil {
			return
		}
		p := Parse(d)
		if p.Src != d.Root {
			t.Fatalf("root is not the document's")
		}
		n := 0
		Inspect(p, func(x Node) bool {
			e := x.Elem()
			n++
			if e.Node() != x {
				t.Errorf("<%s>: node %T is not its element's (%T)", e.Tag, x, e.Node())
			}
			if e.Pos != d.Pos(e.Src) {
				t.Errorf("<%s>: position %v, document says %v", e.Tag, e.Pos, d.Pos(e.Src))
			}
			for _, c := range e.Children() {
				if c.Parent() != e {
					t.Errorf("<%s>'s child <%s> has another parent", e.Tag, c.Tag)
				}
			}
			if a, ok := x.(Activity); ok && a.Base().Elem() != e {
				t.Errorf("<%s>: activity base is another element", e.Tag)
			}
			return true
		})
		want := 0
		var count func(*etree.Element)
		count = func(e *etree.Element) {
			want++
			for _, c := range e.ChildElements() {
				count(c)
			}
		}
		count(d.Root)
		if n != want {
			t.Errorf("tree has %d nodes, the document %d elements", n, want)
		}
	})
}
