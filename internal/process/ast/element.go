package ast

import (
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/xmldoc"
)

// Node is any node of the tree: a typed construct (*Sequence, *Copy, ...)
// or, for an element the language does not define (documentation's
// content, another namespace's elements, an unknown tag), the bare
// *Element.
type Node interface {
	// Elem is the node's element: its tag, attributes, position, parent
	// and children.
	Elem() *Element
}

// Attr is one attribute as written: Space is its prefix ("" when
// unqualified, "xmlns" for a namespace declaration).
type Attr struct {
	Space, Key, Value string
}

// Element is what every node is made of: an element of the process
// document with its position, its attributes, its parent and its child
// elements in document order. The typed nodes embed it.
type Element struct {
	// Pos is where the element starts.
	Pos xmldoc.Pos
	// Space is the element's namespace URI, Prefix the prefix it was
	// written with, Tag its local name.
	Space, Prefix, Tag string
	// Attrs are its attributes in document order, namespace declarations
	// included.
	Attrs []Attr
	// Src is the element in the positioned XML document, for what needs
	// the XML itself (literal content, extension elements, the namespace
	// context of expressions).
	Src *etree.Element

	parent *Element
	kids   []*Element
	node   Node
}

// Elem returns e itself; it makes *Element a Node.
func (e *Element) Elem() *Element { return e }

// Node is the typed node e belongs to (e itself for an element the
// language does not define, nil for a nil e).
func (e *Element) Node() Node {
	if e == nil {
		return nil
	}
	if e.node == nil {
		return e
	}
	return e.node
}

// Parent is the element e is a child of, nil for the root.
func (e *Element) Parent() *Element { return e.parent }

// Children are e's child elements in document order, in any namespace.
func (e *Element) Children() []*Element { return e.kids }

// IsBPEL reports whether e is in WS-BPEL 2.0's namespace (or the 2004
// draft's, which ODE read as an alias).
func (e *Element) IsBPEL() bool { return e.Space == xmldoc.NSBPEL || e.Space == xmldoc.NSBPEL2004 }

// Is reports whether e is the WS-BPEL element tag.
func (e *Element) Is(tag string) bool { return e.Tag == tag && e.IsBPEL() }

// FullTag is the tag as written, with its prefix.
func (e *Element) FullTag() string {
	if e.Prefix == "" {
		return e.Tag
	}
	return e.Prefix + ":" + e.Tag
}

// Attr is e's unqualified attribute name, "" when absent.
func (e *Element) Attr(name string) string {
	for _, a := range e.Attrs {
		if a.Space == "" && a.Key == name {
			return a.Value
		}
	}
	return ""
}

// HasAttr reports whether e has the unqualified attribute name.
func (e *Element) HasAttr(name string) bool {
	for _, a := range e.Attrs {
		if a.Space == "" && a.Key == name {
			return true
		}
	}
	return false
}

// AttrOr is the value of e's first attribute key, def when there is none.
// As in etree's SelectAttrValue, which the compiler used: key may be
// "prefix:local", and a key without prefix matches the local name under
// any prefix.
func (e *Element) AttrOr(key, def string) string {
	if a := e.lookupAttr(key); a != nil {
		return a.Value
	}
	return def
}

// Has reports whether e has an attribute key, matched as AttrOr does.
func (e *Element) Has(key string) bool { return e.lookupAttr(key) != nil }

func (e *Element) lookupAttr(key string) *Attr {
	space, local := "", key
	if i := strings.IndexByte(key, ':'); i >= 0 {
		space, local = key[:i], key[i+1:]
	}
	for i := range e.Attrs {
		a := &e.Attrs[i]
		if (space == "" || space == a.Space) && a.Key == local {
			return a
		}
	}
	return nil
}

// Text is e's character data before its first child element, as written
// (not trimmed): the text of an expression or query.
func (e *Element) Text() string {
	if e.Src == nil {
		return ""
	}
	return e.Src.Text()
}

// Child is e's first child element in the BPEL namespace named tag.
func (e *Element) Child(tag string) *Element {
	for _, c := range e.kids {
		if c.Tag == tag && c.IsBPEL() {
			return c
		}
	}
	return nil
}

// ChildrenTagged are e's child elements in the BPEL namespace named tag.
func (e *Element) ChildrenTagged(tag string) []*Element {
	var out []*Element
	for _, c := range e.kids {
		if c.Tag == tag && c.IsBPEL() {
			out = append(out, c)
		}
	}
	return out
}

// Select are e's child elements with local name tag in any namespace (as
// etree's SelectElements, which the compiler used).
func (e *Element) Select(tag string) []*Element {
	var out []*Element
	for _, c := range e.kids {
		if c.Tag == tag {
			out = append(out, c)
		}
	}
	return out
}

// Namespaces are the namespace declarations in scope at e, prefix to URI
// ("" the default namespace).
func (e *Element) Namespaces() map[string]string { return xmldoc.Namespaces(e.Src) }

// ResolveQName resolves a prefixed name ("p:local" or "local") in e's
// namespace context; an unprefixed name takes the default namespace when
// useDefault.
func (e *Element) ResolveQName(qname string, useDefault bool) (space, local string, err error) {
	return xmldoc.ResolveQName(e.Src, qname, useDefault)
}

// Within reports whether e is anc or one of its descendants.
func (e *Element) Within(anc *Element) bool {
	for x := e; x != nil; x = x.parent {
		if x == anc {
			return true
		}
	}
	return false
}

// AttrNamespace is the namespace URI of e's attribute a: "" when it is
// unprefixed or its prefix is not declared, else what its prefix is bound
// to where e is.
func (e *Element) AttrNamespace(a Attr) string {
	if a.Space == "" {
		return ""
	}
	for x := e; x != nil; x = x.parent {
		for _, d := range x.Attrs {
			if d.Space == "xmlns" && d.Key == a.Space {
				return d.Value
			}
		}
	}
	return ""
}
