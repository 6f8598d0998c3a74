package xmldoc

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/beevik/etree"
)

// FuzzParse: Parse never panics, and a document it accepts has a root and
// a line (>= 1) for every element, in non-decreasing document order.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../../../deploy/purchase-order/*")
	if len(files) == 0 {
		f.Fatal("no example bundle files")
	}
	for _, fn := range files {
		b, err := os.ReadFile(fn)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		"",
		"   ",
		"<a/>",
		"<?xml version=\"1.0\"?>\n<a>\n  <b x='1'/>\n  <c>text</c>\n</a>",
		"<a><b></a>",
		"<a>\n<b>\n</c>\n</a>",
		"<a x=1/>",
		"<a xmlns:p='urn:p'><p:b/><q:c/></a>",
		"<!-- only a comment -->",
		"<a>&undefined;</a>",
		"<a><![CDATA[<b/>]]></a>",
		"<a\n\n  attr='v'\n><b/><c\n/></a>",
		"<?xml version=\"1.0\"?><!DOCTYPE a [<!ELEMENT a ANY>]><a/>",
		"\xff\xfe<a/>",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Parse("f.xml", data)
		if err != nil {
			if d != nil {
				t.Errorf("Parse returned a document with error %v", err)
			}
			return
		}
		if d.Root == nil || d.Doc == nil {
			t.Fatalf("Parse succeeded without a root")
		}
		if d.Doc.Root() != d.Root {
			t.Errorf("Root is not the document's root element")
		}
		last := 0
		var walk func(e *etree.Element)
		walk = func(e *etree.Element) {
			p := d.Pos(e)
			if p.File != "f.xml" {
				t.Errorf("<%s>: file %q", e.FullTag(), p.File)
			}
			if p.Line < 1 {
				t.Errorf("<%s> has line %d in %q", e.FullTag(), p.Line, data)
			}
			if p.Line < last {
				t.Errorf("<%s> has line %d after an element on line %d in %q", e.FullTag(), p.Line, last, data)
			}
			last = p.Line
			for _, c := range e.ChildElements() {
				walk(c)
			}
		}
		// Documents with several top-level elements are accepted today
		// (see TestParseNotWellFormed); the lines are checked for the
		// root's subtree, which is what Pos documents.
		walk(d.Root)
		// The namespace helpers must not panic on what Parse accepts.
		_ = Namespaces(d.Root)
		_, _, _ = ResolveQName(d.Root, d.Root.FullTag(), true)
	})
}
