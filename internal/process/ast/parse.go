package ast

import (
	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/xmldoc"
)

// Parse builds the syntax tree of the process document d. It never fails:
// what the language does not define (an unknown tag, another namespace's
// element, a missing attribute) is kept as written, as a bare *Element or
// an empty field, for check and compile to report with its position. The
// returned Process's element is d's root whatever its tag; a caller that
// needs a WS-BPEL process checks Process.Is("process").
func Parse(d *xmldoc.Document) *Process {
	p := &Process{Doc: d}
	build(d, d.Root, nil, p)
	return p
}

// build makes the node of src (n when given, else by src's tag), its
// subtree, and then its typed fields.
func build(d *xmldoc.Document, src *etree.Element, parent *Element, n Node) *Element {
	space := src.NamespaceURI()
	bpelNS := space == xmldoc.NSBPEL || space == xmldoc.NSBPEL2004
	if n == nil {
		n = newNode(src.Tag, space)
	}
	e := n.Elem()
	e.Pos, e.Space, e.Prefix, e.Tag, e.Src, e.parent, e.node = d.Pos(src), space, src.Space, src.Tag, src, parent, n
	if len(src.Attr) > 0 {
		e.Attrs = make([]Attr, len(src.Attr))
		for i, a := range src.Attr {
			e.Attrs[i] = Attr{Space: a.Space, Key: a.Key, Value: a.Value}
		}
	}
	kids := src.ChildElements()
	if len(kids) > 0 {
		e.kids = make([]*Element, len(kids))
		for i, c := range kids {
			e.kids[i] = build(d, c, e, nil)
		}
	}
	if bpelNS {
		if f, ok := n.(filler); ok {
			f.fill()
		}
	}
	return e
}

// filler is a node whose typed fields are read from its attributes and
// children once they are built.
type filler interface{ fill() }

// first is the first BPEL child of e whose node is a T, or the zero T.
func first[T Node](e *Element) T {
	for _, c := range e.kids {
		if t, ok := c.Node().(T); ok && c.IsBPEL() {
			return t
		}
	}
	var zero T
	return zero
}

// all are the BPEL children of e whose nodes are T.
func all[T Node](e *Element) []T {
	var out []T
	for _, c := range e.kids {
		if t, ok := c.Node().(T); ok && c.IsBPEL() {
			out = append(out, t)
		}
	}
	return out
}

// firstTagged is the first BPEL child of e named tag whose node is a T.
func firstTagged[T Node](e *Element, tag string) T {
	if c := e.Child(tag); c != nil {
		if t, ok := c.Node().(T); ok {
			return t
		}
	}
	var zero T
	return zero
}

// activities are e's child activities in document order.
func activities(e *Element) []Activity { return all[Activity](e) }

// firstActivity is e's first child activity, nil when it has none.
func firstActivity(e *Element) Activity { return first[Activity](e) }
