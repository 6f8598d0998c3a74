package expr

import (
	"regexp"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/bpel"
	"github.com/orchd/orchd/internal/xpath2"
)

// Namespaces private to the compiler: getVariableProperty calls become
// variables of nsXP2Property, getLinkStatus reads links through
// nsXP2Link.
const (
	NsXP2Property = "urn:orchd:xpath2:property"
	NsXP2Link     = "urn:orchd:xpath2:link"
	PropPrefix    = "orchd_prop"
)

var GetVarProp2RE = regexp.MustCompile(`([A-Za-z_][\w.\-]*):getVariableProperty\s*\(\s*(?:'([^']*)'|"([^"]*)")\s*,\s*(?:'([^']*)'|"([^"]*)")\s*\)`)

// builtinSimple is the built-in atomic type a variable or part declared
// with type t has, or nil: such a variable's or part's value is its typed
// value, as in ODE (WS-BPEL 2.0 section 8.2.2).
func BuiltinSimple(t exchange.QName) *xpath2.Type {
	if t.Space != bpel.NSXSD {
		return nil
	}
	b, ok := xpath2.LookupType(t.Local)
	if !ok || !b.DerivesFrom(xpath2.TAnyAtomic) || b == xpath2.TAnyAtomic || b == xpath2.TQName || b == xpath2.TNOTATION {
		return nil
	}
	return b
}

// fromXPath2 turns an XPath 2.0 result into the values the runtime uses
// for XPath 1.0 ones: []node for nodes (none for the empty sequence), the
// atomic value for one atomic value, the sequence itself otherwise.
func FromXPath2(seq xpath2.Sequence) any {
	if len(seq) == 1 {
		if a, ok := seq[0].(xpath2.Atomic); ok {
			return a
		}
	}
	nodes := make([]Node, 0, len(seq))
	for _, it := range seq {
		n, ok := it.(XNode)
		if !ok {
			// a node an XQuery constructor built
			if nodes, ok = appendBuilt(nodes, it); !ok {
				return seq
			}
			continue
		}
		if n.Doc == DocNothing {
			continue
		}
		nodes = append(nodes, Node{Tok: n.Tok, Attr: int(n.Attr)})
	}
	return nodes
}

// appendBuilt appends the node an XQuery constructor or saxon:parse
// built (an etree token of its own tree) to nodes; a document contributes
// its document element. ok is false for any other item.
func appendBuilt(nodes []Node, it xpath2.Item) ([]Node, bool) {
	n, ok := it.(xpath2.Node)
	if !ok {
		return nodes, false
	}
	tok, attr, ok := xpath2.EtreeToken(n)
	if !ok {
		return nodes, false
	}
	if n.Kind() == xpath2.DocumentNode {
		// its document element; its text when it has none
		d := tok.(*etree.Element)
		if len(d.ChildElements()) == 0 {
			for _, c := range d.Child {
				if _, ok := c.(*etree.CharData); ok {
					nodes = append(nodes, Node{Tok: c, Attr: -1})
				}
			}
			return nodes, true
		}
		for _, c := range d.ChildElements() {
			nodes = append(nodes, Node{Tok: c, Attr: -1})
		}
		return nodes, true
	}
	return append(nodes, Node{Tok: tok, Attr: attr}), true
}

// xnode adapts a node of an instance's variable tree (t set) or of a tree
// an ODE function built (t nil) to xpath2.Node. In the instance tree the
// document boundaries are navigator's: from a node inside a variable or
// part, the parent and ancestor axes end at its document node.
type XNode struct {
	T    *DocTree
	Tok  etree.Token
	Attr int32 // index into tok's Attr on an attribute, else -1
	Doc  xdoc
}

// xdoc says whether an xnode is a document node, and which.
type xdoc uint8

const (
	docNone    xdoc = iota
	docAbove        // the document whose only child is tok (a document element)
	docOf           // the document whose children are tok's (a holder)
	DocNothing      // the empty document, an expression's context item
)

func (n XNode) elem() (*etree.Element, bool) {
	e, ok := n.Tok.(*etree.Element)
	return e, ok && n.Attr < 0 && n.Doc == docNone
}

// Kind implements xpath2.Node.
func (n XNode) Kind() xpath2.NodeKind {
	if n.Doc != docNone {
		return xpath2.DocumentNode
	}
	if n.Attr >= 0 {
		return xpath2.AttributeNode
	}
	switch n.Tok.(type) {
	case *etree.Element:
		return xpath2.ElementNode
	case *etree.Comment:
		return xpath2.CommentNode
	case *etree.ProcInst:
		return xpath2.PINode
	}
	return xpath2.TextNode
}

// LocalName implements xpath2.Node.
func (n XNode) LocalName() string {
	if n.Doc != docNone {
		return ""
	}
	switch t := n.Tok.(type) {
	case *etree.Element:
		if n.Attr >= 0 {
			return t.Attr[n.Attr].Key
		}
		return t.Tag
	case *etree.ProcInst:
		return t.Target
	}
	return ""
}

// NamespaceURI implements xpath2.Node.
func (n XNode) NamespaceURI() string {
	e, ok := n.Tok.(*etree.Element)
	if !ok || n.Doc != docNone {
		return ""
	}
	if n.Attr >= 0 {
		a := e.Attr[n.Attr]
		if a.Space == "" {
			return ""
		}
		return a.NamespaceURI()
	}
	return e.NamespaceURI()
}

// Prefix implements xpath2.Node.
func (n XNode) Prefix() string {
	e, ok := n.Tok.(*etree.Element)
	if !ok || n.Doc != docNone {
		return ""
	}
	if n.Attr >= 0 {
		return e.Attr[n.Attr].Space
	}
	return e.Space
}

// StringValue implements xpath2.Node.
func (n XNode) StringValue() string {
	switch t := n.Tok.(type) {
	case *etree.Element:
		if n.Doc == DocNothing {
			return ""
		}
	case *etree.ProcInst:
		return strings.TrimLeft(t.Inst, " \t\r\n")
	}
	return Node{Tok: n.Tok, Attr: int(n.Attr)}.String()
}

// Parent implements xpath2.Node; it stops at a variable's or part's
// document node.
func (n XNode) Parent() xpath2.Node {
	if n.Doc != docNone {
		return nil
	}
	if n.Attr >= 0 {
		return XNode{T: n.T, Tok: n.Tok, Attr: -1}
	}
	if n.T == nil || n.T.Vars == nil {
		p := n.Tok.Parent()
		if p == nil {
			return nil
		}
		return XNode{T: n.T, Tok: p, Attr: -1}
	}
	nav := Navigator{T: n.T}
	if e, ok := n.Tok.(*etree.Element); ok {
		switch nav.Boundary(e) {
		case BRoot:
			return nil
		case BDocEl:
			return XNode{T: n.T, Tok: e, Attr: -1, Doc: docAbove}
		case BHolder:
			if e.Parent() == n.T.Top {
				return nil
			}
		}
	}
	p := n.Tok.Parent()
	if p == nil || p == n.T.Top {
		return nil
	}
	if nav.Boundary(p) == BHolder {
		return XNode{T: n.T, Tok: p, Attr: -1, Doc: docOf}
	}
	return XNode{T: n.T, Tok: p, Attr: -1}
}

// Children implements xpath2.Node.
func (n XNode) Children() []xpath2.Node {
	if n.Attr >= 0 {
		return nil
	}
	switch n.Doc {
	case DocNothing:
		return nil
	case docAbove:
		return []xpath2.Node{XNode{T: n.T, Tok: n.Tok, Attr: -1}}
	}
	e, ok := n.Tok.(*etree.Element)
	if !ok {
		return nil
	}
	out := make([]xpath2.Node, 0, len(e.Child))
	for _, c := range e.Child {
		switch c.(type) {
		case *etree.Element, *etree.CharData, *etree.Comment, *etree.ProcInst:
			out = append(out, XNode{T: n.T, Tok: c, Attr: -1})
		}
	}
	return out
}

// Attributes implements xpath2.Node.
func (n XNode) Attributes() []xpath2.Node {
	e, ok := n.elem()
	if !ok || len(e.Attr) == 0 {
		return nil
	}
	out := make([]xpath2.Node, 0, len(e.Attr))
	for i, a := range e.Attr {
		if a.Space == "xmlns" || (a.Space == "" && a.Key == "xmlns") {
			continue
		}
		out = append(out, XNode{T: n.T, Tok: e, Attr: int32(i)})
	}
	return out
}

// LookupNamespace implements xpath2.Node.
func (n XNode) LookupNamespace(prefix string) (string, bool) {
	e, ok := n.elem()
	if !ok {
		return "", false
	}
	return xpath2.WrapElement(e).LookupNamespace(prefix)
}

// InScopePrefixes implements xpath2.Node.
func (n XNode) InScopePrefixes() []string {
	e, ok := n.elem()
	if !ok {
		return nil
	}
	return xpath2.WrapElement(e).InScopePrefixes()
}

// Same implements xpath2.Node.
func (n XNode) Same(o xpath2.Node) bool {
	m, ok := o.(XNode)
	return ok && m == n
}
