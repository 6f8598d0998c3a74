package expr

import (
	"regexp"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/xmldoc"
	"github.com/orchd/orchd/internal/xpath1"
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
	if t.Space != xmldoc.NSXSD {
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

// XNode adapts a node of an instance's variable tree (T set) or of a tree
// an ODE function built (T nil) to xpath2.Node. It is an xpath1.Node (the
// one etree adapter of both XPath evaluators: its kinds, names, string
// values and document boundaries) with the tree it is read in. In the
// instance tree the document boundaries are DocTree's: from a node
// inside a variable or part, the parent and ancestor axes end at its
// document node. A tree without variables (T nil, or T.Vars nil) has no
// document nodes: the top of the tree is its parentless element.
type XNode struct {
	T    *DocTree
	Tok  etree.Token
	Attr int32 // index into Tok's Attr on an attribute, else -1
	// Doc says whether the node is a document node, and which
	// (xpath1.DocAbove, xpath1.DocOf or DocNothing); never
	// xpath1.NamespaceNode: XPath 2.0 has no namespace nodes.
	Doc xpath1.DocKind
}

// DocNothing is the empty document, an expression's context item.
const DocNothing = xpath1.DocEmpty

// node is n as XPath 1.0's node.
func (n XNode) node() xpath1.Node { return xpath1.Node{Tok: n.Tok, Attr: n.Attr, Doc: n.Doc} }

// tree is the xpath1.Tree n is read in.
func (n XNode) tree() xpath1.Tree {
	if n.T == nil || n.T.Vars == nil {
		return bareTree{}
	}
	return n.T
}

// wrap is x, a node of n's tree, as an XNode.
func (n XNode) wrap(x xpath1.Node) XNode { return XNode{T: n.T, Tok: x.Tok, Attr: x.Attr, Doc: x.Doc} }

// bareTree is an xpath1.Tree without document nodes: every element is its
// parent's child, and a parentless element is the top of its tree.
type bareTree struct{}

// Boundary implements xpath1.Tree.
func (bareTree) Boundary(*etree.Element) xpath1.Boundary { return xpath1.Inside }

// Root implements xpath1.Tree.
func (bareTree) Root(n xpath1.Node) xpath1.Node {
	for {
		p, ok := n.Parent(bareTree{})
		if !ok {
			return n
		}
		n = p
	}
}

func (n XNode) elem() (*etree.Element, bool) {
	e, ok := n.Tok.(*etree.Element)
	return e, ok && n.Attr < 0 && n.Doc == xpath1.NotDoc
}

// xp2Kinds maps XPath 1.0's node types to XPath 2.0's (no namespace
// nodes: an XNode is never one).
var xp2Kinds = [...]xpath2.NodeKind{
	xpath1.RootKind:      xpath2.DocumentNode,
	xpath1.ElementKind:   xpath2.ElementNode,
	xpath1.AttributeKind: xpath2.AttributeNode,
	xpath1.NamespaceKind: xpath2.TextNode,
	xpath1.TextKind:      xpath2.TextNode,
	xpath1.CommentKind:   xpath2.CommentNode,
	xpath1.PIKind:        xpath2.PINode,
}

// Kind implements xpath2.Node.
func (n XNode) Kind() xpath2.NodeKind { return xp2Kinds[n.node().Kind()] }

// LocalName implements xpath2.Node.
func (n XNode) LocalName() string { return n.node().LocalName() }

// NamespaceURI implements xpath2.Node.
func (n XNode) NamespaceURI() string { return n.node().NamespaceURI() }

// Prefix implements xpath2.Node.
func (n XNode) Prefix() string {
	e, ok := n.Tok.(*etree.Element)
	if !ok || n.Doc != xpath1.NotDoc {
		return ""
	}
	if n.Attr >= 0 {
		return e.Attr[n.Attr].Space
	}
	return e.Space
}

// StringValue implements xpath2.Node.
func (n XNode) StringValue() string { return n.node().StringValue() }

// Parent implements xpath2.Node; it stops at a variable's or part's
// document node.
func (n XNode) Parent() xpath2.Node {
	p, ok := n.node().Parent(n.tree())
	if !ok {
		return nil
	}
	return n.wrap(p)
}

// Children implements xpath2.Node. It reads the tree as xpath1's child
// axis does, into one slice (no intermediate []xpath1.Node).
func (n XNode) Children() []xpath2.Node {
	switch {
	case n.Attr >= 0 || n.Doc == DocNothing:
		return nil
	case n.Doc == xpath1.DocAbove:
		return []xpath2.Node{XNode{T: n.T, Tok: n.Tok, Attr: -1}}
	}
	e, ok := n.Tok.(*etree.Element)
	if !ok {
		return nil
	}
	out := make([]xpath2.Node, 0, len(e.Child))
	for _, c := range e.Child {
		if xpath1.Navigable(c) {
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
		if xpath1.IsNSDecl(a) {
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
