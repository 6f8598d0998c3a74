package process

import (
	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/xpath1"
)

// docTree is an instance's variable tree as XPath sees it: one etree
// element (root) whose children are the variables' slots. In BPEL every
// variable, and every part of a message variable, is a document of its
// own: from a node inside one, the parent and ancestor axes end at its
// document node, the sibling axes do not leave it, and an absolute path
// the author wrote (which the compiler turns into docRootPath) starts at
// it. docTree implements xpath1.Tree, marking the elements that stand for
// those document nodes (Boundary); a '/' the compiler wrote (a $var path)
// starts at the tree's root (Root).
//
// Without vars (a message part on its own, for correlation) top is the
// one document node, as in a plain XML document.
type docTree struct {
	top *etree.Element
	// vars are the variables by slot (vars[i] owns root.Child[i]), or nil
	// when root is a document of its own.
	vars []*variable
}

// Boundary implements xpath1.Tree: the root, an element variable's slot
// and an element part's wrapper stand for document nodes (their children
// are a document's); a type or message variable's slot and a type part's
// wrapper are document elements.
func (t *docTree) Boundary(e *etree.Element) xpath1.Boundary {
	switch (navigator{t: t}).boundary(e) {
	case bRoot, bHolder:
		return xpath1.DocumentOf
	case bDocEl:
		return xpath1.DocumentElement
	}
	return xpath1.Inside
}

// Root implements xpath1.Tree: the compiler's $var paths start at the
// tree's root, and nothing a process author writes compiles to it.
func (t *docTree) Root(xpath1.Node) xpath1.Node {
	return xpath1.Node{Tok: t.top, Attr: -1, Doc: xpath1.DocOf}
}

// node is the XPath node an expression's context is when it is ctx: for
// the root of a tree with variables, an empty document (an expression's
// context in BPEL); for the root of a lone part, its document node.
func (t *docTree) node(ctx *etree.Element) xpath1.Node {
	n := xpath1.NodeOf(ctx)
	if ctx == t.top {
		n.Doc = xpath1.DocOf
		if t.vars != nil {
			n.Doc = xpath1.DocEmpty
		}
	}
	return n
}

// navigator classifies the elements of a variable tree at the document
// boundaries (docTree.Boundary, and xnode for XPath 2.0).
type navigator struct {
	t *docTree
}

// docRootPath is what an absolute location path's leading '/' compiles
// to: the document node of the context node, the one ancestor-or-self
// without a parent.
const docRootPath = "ancestor-or-self::node()[not(..)]"

// Kinds of tree elements, for the document boundaries.
const (
	bNone   = iota // inside a variable's value
	bRoot          // the tree's root
	bHolder        // its children are a document's: slot of an element variable, wrapper of an element part
	bDocEl         // a document element: slot of a type or message variable, wrapper of a type part
)

func (n navigator) boundary(e *etree.Element) int {
	if e == n.t.top {
		return bRoot
	}
	if n.t.vars == nil {
		return bNone
	}
	p := e.Parent()
	if p == nil {
		return bNone
	}
	if p == n.t.top {
		v := n.slotVar(e)
		if v != nil && v.msg == nil && !v.elem.IsZero() {
			return bHolder
		}
		return bDocEl
	}
	if p.Parent() == n.t.top {
		if v := n.slotVar(p); v != nil && v.msg != nil {
			if i := e.Index(); i < len(v.msg.Parts) {
				if v.msg.Parts[i].Element.IsZero() {
					return bDocEl
				}
				return bHolder
			}
		}
	}
	return bNone
}

// slotVar is the variable whose slot is s (a child of the root).
func (n navigator) slotVar(s *etree.Element) *variable {
	if i := s.Index(); i >= 0 && i < len(n.t.vars) {
		return n.t.vars[i]
	}
	return nil
}

// stringValue is the XPath string-value of an element: its descendant
// text, concatenated.
func stringValue(e *etree.Element) string { return xpath1.TextOf(e) }
