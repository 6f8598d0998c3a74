package xpath1

import (
	"slices"
	"strings"

	"github.com/beevik/etree"
)

// Node is a node of XPath's data model over an etree tree: an element, a
// text node (*etree.CharData), a comment, a processing instruction, an
// attribute of an element, a namespace node of an element, or a document
// node. It is a comparable value: two Nodes are the same node exactly when
// they are ==.
type Node struct {
	// Tok is the node's token; for an attribute or namespace node, its
	// element; for a document node, the element that stands for it (see
	// Doc).
	Tok etree.Token
	// Attr is the index into Tok's Attr of an attribute node, the index
	// into Tok's in-scope namespaces of a namespace node (Doc
	// NamespaceNode), else -1.
	Attr int32
	Doc  DocKind
}

// DocKind says whether a Node is a document node, and which.
type DocKind uint8

const (
	// NotDoc: the node is Tok itself (or its attribute).
	NotDoc DocKind = iota
	// DocAbove: the document node whose only child is the element Tok.
	DocAbove
	// DocOf: the document node whose children are Tok's children (Tok is
	// not a node of that document).
	DocOf
	// DocEmpty: a document node with no children.
	DocEmpty
	// NamespaceNode: not a document: a namespace node of the element
	// Tok, Attr its index among Tok's in-scope namespaces.
	NamespaceNode
)

// NodeOf is the node of an element, text, comment or processing
// instruction token.
func NodeOf(t etree.Token) Node { return Node{Tok: t, Attr: -1} }

// Boundary is where an element stands in a tree that holds documents.
type Boundary uint8

const (
	// Inside: an ordinary element, its parent's child.
	Inside Boundary = iota
	// DocumentOf: the element stands for a document node: its children
	// are the document's, and it is no node of the document itself.
	DocumentOf
	// DocumentElement: the element is a document element; above it is a
	// document node whose only child it is, and it has no siblings.
	DocumentElement
)

// Tree is what an expression reads: etree tokens, with the elements that
// stand for document nodes marked.
type Tree interface {
	// Boundary says where element e stands.
	Boundary(e *etree.Element) Boundary
	// Root is the node a location path starting with '/' starts at, for
	// context node n.
	Root(n Node) Node
}

// Plain is a Tree of ordinary etree documents: an element without a
// parent (an etree.Document's, or a detached element) stands for its
// document node, and '/' climbs to it.
type Plain struct{}

// Boundary implements Tree.
func (Plain) Boundary(e *etree.Element) Boundary {
	if e.Parent() == nil {
		return DocumentOf
	}
	return Inside
}

// Root implements Tree.
func (Plain) Root(n Node) Node { return rootOf(Plain{}, n) }

// rootOf climbs from n to the node with no parent.
func rootOf(t Tree, n Node) Node {
	for {
		p, ok := parent(t, n)
		if !ok {
			return n
		}
		n = p
	}
}

// Kind is a node's type (section 5).
type Kind uint8

// The seven node types.
const (
	RootKind Kind = iota
	ElementKind
	AttributeKind
	NamespaceKind
	TextKind
	CommentKind
	PIKind
)

// Kind is n's node type.
func (n Node) Kind() Kind {
	switch {
	case n.Doc == NamespaceNode:
		return NamespaceKind
	case n.Doc != NotDoc:
		return RootKind
	case n.Attr >= 0:
		return AttributeKind
	}
	switch n.Tok.(type) {
	case *etree.Element:
		return ElementKind
	case *etree.Comment:
		return CommentKind
	case *etree.ProcInst:
		return PIKind
	}
	return TextKind
}

// elem is n's element when n is an element node.
func (n Node) elem() (*etree.Element, bool) {
	e, ok := n.Tok.(*etree.Element)
	return e, ok && n.Attr < 0 && n.Doc == NotDoc
}

// StringValue is n's string-value (section 5).
func (n Node) StringValue() string {
	switch t := n.Tok.(type) {
	case *etree.Element:
		switch {
		case n.Doc == DocEmpty:
			return ""
		case n.Doc == NamespaceNode:
			return inScope(t)[n.Attr].uri
		case n.Attr >= 0:
			return t.Attr[n.Attr].Value
		}
		return TextOf(t)
	case *etree.CharData:
		return t.Data
	case *etree.Comment:
		return t.Data
	case *etree.ProcInst:
		return strings.TrimLeft(t.Inst, " \t\r\n")
	}
	return ""
}

// TextOf is the string-value of an element: its descendant text,
// concatenated.
func TextOf(e *etree.Element) string {
	if len(e.Child) == 1 {
		if cd, ok := e.Child[0].(*etree.CharData); ok {
			return cd.Data
		}
	}
	var b strings.Builder
	appendText(&b, e)
	return b.String()
}

func appendText(b *strings.Builder, e *etree.Element) {
	for _, c := range e.Child {
		switch t := c.(type) {
		case *etree.CharData:
			b.WriteString(t.Data)
		case *etree.Element:
			appendText(b, t)
		}
	}
}

// LocalName is the local part of n's expanded name ("" for nodes without
// one).
func (n Node) LocalName() string {
	switch n.Kind() {
	case ElementKind:
		return n.Tok.(*etree.Element).Tag
	case AttributeKind:
		return n.Tok.(*etree.Element).Attr[n.Attr].Key
	case NamespaceKind:
		return inScope(n.Tok.(*etree.Element))[n.Attr].prefix
	case PIKind:
		return n.Tok.(*etree.ProcInst).Target
	}
	return ""
}

// NamespaceURI is the namespace URI of n's expanded name.
func (n Node) NamespaceURI() string {
	switch n.Kind() {
	case ElementKind:
		return n.Tok.(*etree.Element).NamespaceURI()
	case AttributeKind:
		a := &n.Tok.(*etree.Element).Attr[n.Attr]
		return attrSpace(a)
	}
	return ""
}

// Name is n's QName as written (prefix:local).
func (n Node) Name() string {
	prefix := ""
	switch n.Kind() {
	case ElementKind:
		prefix = n.Tok.(*etree.Element).Space
	case AttributeKind:
		prefix = n.Tok.(*etree.Element).Attr[n.Attr].Space
	}
	if prefix != "" {
		return prefix + ":" + n.LocalName()
	}
	return n.LocalName()
}

const nsXML = "http://www.w3.org/XML/1998/namespace"

func attrSpace(a *etree.Attr) string {
	switch a.Space {
	case "":
		return ""
	case "xml":
		return nsXML
	}
	return a.NamespaceURI()
}

// IsNSDecl reports whether a is a namespace declaration (xmlns or
// xmlns:p), which is no attribute node.
func IsNSDecl(a etree.Attr) bool {
	return a.Space == "xmlns" || a.Space == "" && a.Key == "xmlns"
}

type nsBinding struct{ prefix, uri string }

// inScope is e's in-scope namespaces, sorted by prefix ("" for the
// default namespace), xml first.
func inScope(e *etree.Element) []nsBinding {
	seen := map[string]bool{}
	out := []nsBinding{{"xml", nsXML}}
	seen["xml"] = true
	for x := e; x != nil; x = x.Parent() {
		for _, a := range x.Attr {
			if !IsNSDecl(a) {
				continue
			}
			p := a.Key
			if a.Space == "" {
				p = ""
			}
			if seen[p] {
				continue
			}
			seen[p] = true
			if a.Value != "" {
				out = append(out, nsBinding{p, a.Value})
			}
		}
	}
	slices.SortFunc(out[1:], func(a, b nsBinding) int { return strings.Compare(a.prefix, b.prefix) })
	return out
}

// Parent is n's parent in t; ok is false for a node without one (a
// document node, or the top of a tree).
func (n Node) Parent(t Tree) (p Node, ok bool) { return parent(t, n) }

// parent is n's parent in t.
func parent(t Tree, n Node) (Node, bool) {
	switch {
	case n.Doc == NamespaceNode || n.Attr >= 0:
		return NodeOf(n.Tok), true
	case n.Doc != NotDoc:
		return Node{}, false
	}
	if e, ok := n.Tok.(*etree.Element); ok {
		switch t.Boundary(e) {
		case DocumentElement:
			return Node{Tok: e, Attr: -1, Doc: DocAbove}, true
		case DocumentOf:
			if p := e.Parent(); p == nil || t.Boundary(p) == DocumentOf {
				return Node{}, false
			}
		}
	}
	p := n.Tok.Parent()
	if p == nil {
		return Node{}, false
	}
	if t.Boundary(p) == DocumentOf {
		return Node{Tok: p, Attr: -1, Doc: DocOf}, true
	}
	return NodeOf(p), true
}

// Navigable reports whether t is a node XPath sees (an element, text, a
// comment or a processing instruction), not a directive.
func Navigable(t etree.Token) bool { return navigable(t) }

func navigable(t etree.Token) bool {
	switch t.(type) {
	case *etree.Element, *etree.CharData, *etree.Comment, *etree.ProcInst:
		return true
	}
	return false
}

// children appends n's children to out.
func children(n Node, out []Node) []Node {
	if n.Attr >= 0 || n.Doc == DocEmpty || n.Doc == NamespaceNode {
		return out
	}
	if n.Doc == DocAbove {
		return append(out, NodeOf(n.Tok))
	}
	e, ok := n.Tok.(*etree.Element)
	if !ok {
		return out
	}
	for _, c := range e.Child {
		if navigable(c) {
			out = append(out, NodeOf(c))
		}
	}
	return out
}

// siblings is the list n is one of (its parent's children) and n's index
// in it; none for document nodes, attributes, namespace nodes and the
// elements at a document's boundary.
func siblings(t Tree, n Node) ([]etree.Token, int) {
	if n.Doc != NotDoc || n.Attr >= 0 {
		return nil, -1
	}
	if e, ok := n.Tok.(*etree.Element); ok && t.Boundary(e) != Inside {
		return nil, -1
	}
	p := n.Tok.Parent()
	if p == nil {
		return nil, -1
	}
	return p.Child, n.Tok.Index()
}

// orderKey is n's place in document order: the path of child indices
// from the top of its etree tree (each 2i+1, so that a DocAbove node, at
// 2i, comes just before its element), then attributes and namespace nodes
// (negative, so before the children, after the element). top numbers the
// trees in the order first seen.
func orderKey(n Node, top map[etree.Token]int, key []int) []int {
	key = key[:0]
	switch {
	case n.Doc == NamespaceNode:
		key = append(key, -(1<<40)+int(n.Attr))
	case n.Attr >= 0:
		key = append(key, -(1<<39)+int(n.Attr))
	}
	var tok etree.Token = n.Tok
	first := true
	for {
		i := 2*tok.Index() + 1
		if first && n.Doc == DocAbove {
			i--
		}
		first = false
		p := tok.Parent()
		if p == nil {
			k, ok := top[tok]
			if !ok {
				k = len(top)
				top[tok] = k
			}
			key = append(key, k)
			break
		}
		key = append(key, i)
		tok = p
	}
	slices.Reverse(key)
	return key
}

// sortNodes sorts ns into document order and removes duplicates.
func sortNodes(ns []Node) []Node {
	if len(ns) < 2 {
		return ns
	}
	type keyed struct {
		n   Node
		key []int
	}
	top := map[etree.Token]int{}
	ks := make([]keyed, len(ns))
	for i, n := range ns {
		ks[i] = keyed{n, orderKey(n, top, nil)}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int {
		if c := slices.Compare(a.key, b.key); c != 0 {
			return c
		}
		return int(a.n.Doc) - int(b.n.Doc)
	})
	out := ns[:0]
	for i, k := range ks {
		if i > 0 && k.n == ks[i-1].n {
			continue
		}
		out = append(out, k.n)
	}
	return out
}
