package xpath2

import (
	"strings"

	"github.com/beevik/etree"
)

// NodeKind is the kind of an XDM node.
type NodeKind int

// The node kinds.
const (
	DocumentNode NodeKind = iota + 1
	ElementNode
	AttributeNode
	TextNode
	CommentNode
	PINode
)

// Node is the tree the evaluator walks. Implementations must return
// values for which Same reports identity; the evaluator never changes a
// tree.
type Node interface {
	Kind() NodeKind
	// LocalName, NamespaceURI and Prefix name elements and attributes (a
	// processing instruction's target is its LocalName).
	LocalName() string
	NamespaceURI() string
	Prefix() string
	// StringValue is the XDM string value.
	StringValue() string
	// Parent is nil for a root.
	Parent() Node
	// Children are the element, text, comment and PI children in document
	// order (none for attributes and leaves).
	Children() []Node
	// Attributes are an element's attributes, without namespace
	// declarations.
	Attributes() []Node
	// LookupNamespace resolves a prefix ("" for the default namespace)
	// among an element's in-scope namespaces.
	LookupNamespace(prefix string) (string, bool)
	// InScopePrefixes lists the prefixes of an element's in-scope namespaces.
	InScopePrefixes() []string
	// Same reports whether the two are the same node.
	Same(Node) bool
}

// etreeNode adapts an etree token (or an element's attribute) to Node.
type etreeNode struct {
	tok  etree.Token
	attr int // index into the element's Attr, or -1
}

// NewDocument wraps a parsed etree document as a document node.
func NewDocument(doc *etree.Document) Node { return etreeNode{&doc.Element, -1} }

// WrapElement wraps an etree element as an element node. Its tree has no
// document node unless the element belongs to a document wrapped with
// NewDocument: the root of an unparented element is the element itself.
func WrapElement(e *etree.Element) Node { return etreeNode{e, -1} }

func isDoc(e *etree.Element) bool { return e.Parent() == nil && e.Tag == "" }

func (n etreeNode) Kind() NodeKind {
	if n.attr >= 0 {
		return AttributeNode
	}
	switch t := n.tok.(type) {
	case *etree.Element:
		if isDoc(t) {
			return DocumentNode
		}
		return ElementNode
	case *etree.CharData:
		return TextNode
	case *etree.Comment:
		return CommentNode
	case *etree.ProcInst:
		return PINode
	}
	return TextNode
}

func (n etreeNode) LocalName() string {
	switch t := n.tok.(type) {
	case *etree.Element:
		if n.attr >= 0 {
			return t.Attr[n.attr].Key
		}
		return t.Tag
	case *etree.ProcInst:
		return t.Target
	}
	return ""
}

func (n etreeNode) NamespaceURI() string {
	e, ok := n.tok.(*etree.Element)
	if !ok {
		return ""
	}
	if n.attr >= 0 {
		a := e.Attr[n.attr]
		if a.Space == "" {
			return ""
		}
		if a.Space == "xml" {
			return "http://www.w3.org/XML/1998/namespace"
		}
		u, _ := lookupNS(e, a.Space)
		return u
	}
	if e.Space == "xml" {
		return "http://www.w3.org/XML/1998/namespace"
	}
	u, _ := lookupNS(e, e.Space)
	return u
}

func (n etreeNode) Prefix() string {
	e, ok := n.tok.(*etree.Element)
	if !ok {
		return ""
	}
	if n.attr >= 0 {
		return e.Attr[n.attr].Space
	}
	return e.Space
}

func lookupNS(e *etree.Element, prefix string) (string, bool) {
	if prefix == "xml" {
		return "http://www.w3.org/XML/1998/namespace", true
	}
	for x := e; x != nil; x = x.Parent() {
		for _, a := range x.Attr {
			if (prefix == "" && a.Space == "" && a.Key == "xmlns") || (prefix != "" && a.Space == "xmlns" && a.Key == prefix) {
				return a.Value, a.Value != "" || prefix == ""
			}
		}
	}
	return "", false
}

func (n etreeNode) LookupNamespace(prefix string) (string, bool) {
	e, ok := n.tok.(*etree.Element)
	if !ok || n.attr >= 0 {
		return "", false
	}
	return lookupNS(e, prefix)
}

func (n etreeNode) InScopePrefixes() []string {
	e, ok := n.tok.(*etree.Element)
	if !ok || n.attr >= 0 {
		return nil
	}
	seen := map[string]bool{}
	out := []string{"xml"}
	for x := e; x != nil; x = x.Parent() {
		for _, a := range x.Attr {
			p := ""
			switch {
			case a.Space == "" && a.Key == "xmlns":
			case a.Space == "xmlns":
				p = a.Key
			default:
				continue
			}
			if !seen[p] {
				seen[p] = true
				if a.Value != "" {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

func (n etreeNode) StringValue() string {
	switch t := n.tok.(type) {
	case *etree.Element:
		if n.attr >= 0 {
			return t.Attr[n.attr].Value
		}
		var b strings.Builder
		textOf(t, &b)
		return b.String()
	case *etree.CharData:
		return t.Data
	case *etree.Comment:
		return t.Data
	case *etree.ProcInst:
		return strings.TrimLeft(t.Inst, " \t\r\n")
	}
	return ""
}

func textOf(e *etree.Element, b *strings.Builder) {
	for _, c := range e.Child {
		switch t := c.(type) {
		case *etree.CharData:
			b.WriteString(t.Data)
		case *etree.Element:
			textOf(t, b)
		}
	}
}

func (n etreeNode) Parent() Node {
	if n.attr >= 0 {
		return etreeNode{n.tok, -1}
	}
	p := n.tok.Parent()
	if p == nil {
		return nil
	}
	return etreeNode{p, -1}
}

func (n etreeNode) Children() []Node {
	e, ok := n.tok.(*etree.Element)
	if !ok || n.attr >= 0 {
		return nil
	}
	out := make([]Node, 0, len(e.Child))
	for _, c := range e.Child {
		switch t := c.(type) {
		case *etree.Directive:
			continue
		case *etree.ProcInst:
			if t.Target == "xml" && isDoc(e) {
				continue
			}
		}
		out = append(out, etreeNode{c, -1})
	}
	return out
}

func (n etreeNode) Attributes() []Node {
	e, ok := n.tok.(*etree.Element)
	if !ok || n.attr >= 0 || len(e.Attr) == 0 {
		return nil
	}
	out := make([]Node, 0, len(e.Attr))
	for i, a := range e.Attr {
		if a.Space == "xmlns" || (a.Space == "" && a.Key == "xmlns") {
			continue
		}
		out = append(out, etreeNode{e, i})
	}
	return out
}

func (n etreeNode) Same(o Node) bool {
	m, ok := o.(etreeNode)
	return ok && m == n
}

// nodeRoot returns the root of n's tree.
func nodeRoot(n Node) Node {
	for {
		p := n.Parent()
		if p == nil {
			return n
		}
		n = p
	}
}

// nodePath returns the positions leading from the root to n; attributes
// sort after their element's namespace-free start and before its children.
func nodePath(n Node) []int {
	var path []int
	for {
		p := n.Parent()
		if p == nil {
			break
		}
		idx := -1
		if en, ok := n.(etreeNode); ok {
			if en.attr >= 0 {
				idx = -1000000 + en.attr
			} else {
				idx = en.tok.Index()
			}
		} else if n.Kind() == AttributeNode {
			for i, a := range p.Attributes() {
				if a.Same(n) {
					idx = i
					break
				}
			}
			idx = -1000000 + idx
		} else {
			for i, c := range p.Children() {
				if c.Same(n) {
					idx = i
					break
				}
			}
		}
		path = append(path, idx)
		n = p
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path
}

// compareOrder returns -1, 0, 1 for document order of a and b. Nodes of
// different trees are ordered arbitrarily but stably within a call.
func compareOrder(a, b Node) int {
	if a.Same(b) {
		return 0
	}
	pa, pb := nodePath(a), nodePath(b)
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if pa[i] != pb[i] {
			if pa[i] < pb[i] {
				return -1
			}
			return 1
		}
	}
	if len(pa) < len(pb) {
		return -1
	}
	if len(pa) > len(pb) {
		return 1
	}
	return 0
}
