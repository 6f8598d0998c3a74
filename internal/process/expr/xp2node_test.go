package expr

import (
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/xpath2"
)

// TestXNodeBoundaries walks an instance tree as XPath 2.0 sees it: an
// element variable's value and a type variable's value are documents of
// their own, the parent axis ends at their document nodes, and a tree
// without variables has none.
func TestXNodeBoundaries(t *testing.T) {
	el := &Var{Name: "el", Slot: 1, Elem: exchange.QName{Space: "urn:x", Local: "order"}}
	ty := &Var{Name: "ty", Slot: 2, Typ: exchange.QName{Space: "urn:x", Local: "T"}}
	vars := []*Var{el, ty}
	root := NewSlots(vars)
	order := etree.NewElement("x:order")
	order.CreateAttr("xmlns:x", "urn:x")
	order.CreateAttr("xml:lang", "en")
	order.CreateAttr("id", "7")
	order.CreateElement("x:item").SetText("a")
	root.Child[0].(*etree.Element).AddChild(order)
	tyText := etree.NewText("t")
	root.Child[1].(*etree.Element).AddChild(tyText)
	tree := &DocTree{Top: root, Vars: vars}

	item := XNode{T: tree, Tok: order.ChildElements()[0], Attr: -1}
	if item.Kind() != xpath2.ElementNode || item.LocalName() != "item" || item.NamespaceURI() != "urn:x" || item.Prefix() != "x" || item.StringValue() != "a" {
		t.Errorf("item: kind %d, {%s}%s (prefix %s), value %q", item.Kind(), item.NamespaceURI(), item.LocalName(), item.Prefix(), item.StringValue())
	}
	up := item.Parent()
	if up == nil || !up.Same(XNode{T: tree, Tok: order, Attr: -1}) {
		t.Fatalf("parent of item: %#v", up)
	}
	doc := up.Parent()
	if doc == nil || doc.Kind() != xpath2.DocumentNode || doc.StringValue() != "a" {
		t.Fatalf("parent of the element variable's document element: %#v", doc)
	}
	if p := doc.Parent(); p != nil {
		t.Errorf("the element variable's document node has parent %#v", p)
	}
	if kids := doc.Children(); len(kids) != 1 || !kids[0].Same(up) {
		t.Errorf("children of the element variable's document: %#v", kids)
	}

	// A type variable's slot is a document element, under a document
	// node of its own.
	tyDoc := XNode{T: tree, Tok: tyText, Attr: -1}.Parent().Parent()
	if tyDoc == nil || tyDoc.Kind() != xpath2.DocumentNode || tyDoc.Parent() != nil {
		t.Errorf("document of the type variable: %#v", tyDoc)
	}

	var attrs []string
	for _, a := range up.Attributes() {
		attrs = append(attrs, "{"+a.NamespaceURI()+"}"+a.LocalName()+"="+a.StringValue())
		if p := a.Parent(); p == nil || !p.Same(up) {
			t.Errorf("parent of attribute %s: %#v", a.LocalName(), p)
		}
	}
	want := []string{"{http://www.w3.org/XML/1998/namespace}lang=en", "{}id=7"}
	if len(attrs) != len(want) || attrs[0] != want[0] || attrs[1] != want[1] {
		t.Errorf("attributes %q, want %q (no namespace declarations; xml: is the XML namespace)", attrs, want)
	}

	// Without variables (a tree an ODE function built), no document
	// nodes: the parentless element is the top.
	built := etree.NewElement("built")
	bare := XNode{Tok: built.CreateElement("kid"), Attr: -1}.Parent()
	if bare == nil || bare.Kind() != xpath2.ElementNode || bare.LocalName() != "built" || bare.Parent() != nil {
		t.Errorf("a tree without variables: parent %#v", bare)
	}
}

// BenchmarkXNodeWalk evaluates XPath 2.0 over an element variable of
// an instance tree: paths down, up and along the document boundaries,
// as an XPath 2.0 process's expressions walk it.
func BenchmarkXNodeWalk(b *testing.B) {
	v := &Var{Name: "po", Slot: 1, Elem: exchange.QName{Space: "urn:x", Local: "order"}}
	vars := []*Var{v}
	root := NewSlots(vars)
	order := etree.NewElement("x:order")
	order.CreateAttr("xmlns:x", "urn:x")
	order.CreateAttr("id", "7")
	for range 50 {
		it := order.CreateElement("x:item")
		it.CreateAttr("sku", "A")
		it.CreateElement("x:qty").SetText("2")
	}
	root.Child[0].(*etree.Element).AddChild(order)
	tree := &DocTree{Top: root, Vars: vars}
	sc := &xpath2.StaticContext{Namespaces: map[string]string{"x": "urn:x"}}
	var es []*xpath2.Expr
	for _, src := range []string{
		"count(//x:item)",
		"sum(/x:order/x:item/x:qty)",
		"string(//x:item[last()]/../@id)",
		"count(//x:qty/ancestor::node())",
	} {
		e, err := xpath2.Compile(src, sc)
		if err != nil {
			b.Fatal(err)
		}
		es = append(es, e)
	}
	dc := &xpath2.DynamicContext{Item: XNode{T: tree, Tok: order, Attr: -1}}
	b.ReportAllocs()
	for b.Loop() {
		for _, e := range es {
			if _, err := e.Evaluate(dc); err != nil {
				b.Fatal(err)
			}
		}
	}
}
