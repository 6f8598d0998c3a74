package expr

import (
	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/xpath1"
)

// DocTree is an instance's variable tree as XPath sees it: one etree
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
type DocTree struct {
	Top *etree.Element
	// Vars are the variables by slot (vars[i] owns root.Child[i]), or nil
	// when root is a document of its own.
	Vars []*Var
	// Inst is the instance whose variables these are, which ActiveBPEL's
	// functions read (abx.go); nil for a tree of no instance.
	Inst Instance
}

// Boundary implements xpath1.Tree: the root, an element variable's slot
// and an element part's wrapper stand for document nodes (their children
// are a document's); a type or message variable's slot and a type part's
// wrapper are document elements.
func (t *DocTree) Boundary(e *etree.Element) xpath1.Boundary {
	switch (Navigator{T: t}).Boundary(e) {
	case BRoot, BHolder:
		return xpath1.DocumentOf
	case BDocEl:
		return xpath1.DocumentElement
	}
	return xpath1.Inside
}

// Root implements xpath1.Tree: the compiler's $var paths start at the
// tree's root, and nothing a process author writes compiles to it.
func (t *DocTree) Root(xpath1.Node) xpath1.Node {
	return xpath1.Node{Tok: t.Top, Attr: -1, Doc: xpath1.DocOf}
}

// node is the XPath node an expression's context is when it is ctx: for
// the root of a tree with variables, an empty document (an expression's
// context in BPEL); for the root of a lone part, its document node.
func (t *DocTree) node(ctx *etree.Element) xpath1.Node {
	n := xpath1.NodeOf(ctx)
	if ctx == t.Top {
		n.Doc = xpath1.DocOf
		if t.Vars != nil {
			n.Doc = xpath1.DocEmpty
		}
	}
	return n
}

// Navigator classifies the elements of a variable tree at the document
// boundaries (DocTree.Boundary, which XNode's parent axis reads too).
type Navigator struct {
	T *DocTree
}

// DocRootPath is what an absolute location path's leading '/' compiles
// to: the document node of the context node, the one ancestor-or-self
// without a parent.
const DocRootPath = "ancestor-or-self::node()[not(..)]"

// Kinds of tree elements, for the document boundaries.
const (
	BNone   = iota // inside a variable's value
	BRoot          // the tree's root
	BHolder        // its children are a document's: slot of an element variable, wrapper of an element part
	BDocEl         // a document element: slot of a type or message variable, wrapper of a type part
)

func (n Navigator) Boundary(e *etree.Element) int {
	if e == n.T.Top {
		return BRoot
	}
	if n.T.Vars == nil {
		return BNone
	}
	p := e.Parent()
	if p == nil {
		return BNone
	}
	if p == n.T.Top {
		v := n.SlotVar(e)
		if v != nil && v.Msg == nil && !v.Elem.IsZero() {
			return BHolder
		}
		return BDocEl
	}
	if p.Parent() == n.T.Top {
		if v := n.SlotVar(p); v != nil && v.Msg != nil {
			if i := e.Index(); i < len(v.Msg.Parts) {
				if v.Msg.Parts[i].Element.IsZero() {
					return BDocEl
				}
				return BHolder
			}
		}
	}
	return BNone
}

// SlotVar is the variable whose slot is s (a child of the root).
func (n Navigator) SlotVar(s *etree.Element) *Var {
	if i := s.Index(); i >= 0 && i < len(n.T.Vars) {
		return n.T.Vars[i]
	}
	return nil
}

// StringValue is the XPath string-value of an element: its descendant
// text, concatenated.
func StringValue(e *etree.Element) string { return xpath1.TextOf(e) }
