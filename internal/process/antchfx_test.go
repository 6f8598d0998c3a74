package process

import (
	"fmt"

	"github.com/antchfx/xpath"
	"github.com/beevik/etree"
)

// antchfxValue is src (rewritten) evaluated by antchfx/xpath over the
// variable tree at ctx, the way orchd evaluated XPath 1.0 before
// internal/xpath1: the differential oracle. antchfx reports some errors by
// panicking; they are returned.
func antchfxValue(text string, ns map[string]string, t *docTree, ctx *etree.Element) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("antchfx panicked: %v", r)
		}
	}()
	x, err := xpath.CompileWithNS(text, ns)
	if err != nil {
		return nil, err
	}
	nav := &antNav{t: t, cur: ctx, attr: -1}
	if t.vars != nil && ctx == t.root {
		nav.pos = onNothing
	}
	v = x.Evaluate(nav)
	if it, ok := v.(*xpath.NodeIterator); ok {
		var out []node
		for it.MoveNext() {
			n := it.Current().(*antNav)
			out = append(out, node{tok: n.cur, attr: int(n.attr)})
		}
		v = out
	}
	return v, nil
}

// antNav, the navigator orchd gave antchfx before internal/xpath1, implements xpath.NodeNavigator over an instance's variable
// tree. The tree is one etree element (root) whose children are the
// variables' slots, but in BPEL every variable, and every part of a
// message variable, is a document of its own: from a node inside one, the
// parent and ancestor axes end at its document node, the sibling axes do
// not leave it, and an absolute path (which the compiler turns into
// docRootPath) starts at it. The tree has no element for some of those
// document nodes, so a antNav stands either on a node or on a document
// node (pos). MoveToRoot alone reaches the tree's root: the compiler's
// $var paths start there, and nothing a process author writes compiles to
// it.
//
// Without vars (a message part on its own, for correlation) root is the
// one document node, as in a plain XML document.
//
// antchfx copies antNavs at every step: keep it at 32 bytes.
type antNav struct {
	t    *docTree
	cur  etree.Token // *etree.Element or *etree.CharData or *etree.Comment
	attr int32       // index into cur's Attr when on an attribute, else -1
	pos  navPos
	// down is true while the antNav walks the slots and message parts
	// from the root (a $var path), where siblings are other variables or
	// parts; on any node reached otherwise they are not visible.
	down bool
}

// navPos is where a antNav stands: on cur, or on a document node.
type navPos uint8

const (
	onNode navPos = iota
	// onDocOf: the document node whose children are cur's (cur is an
	// element variable's slot or an element part's wrapper).
	onDocOf
	// onDocAbove: the document node whose only child is cur (cur is a
	// type or message variable's slot, or a type part's wrapper: the
	// document element).
	onDocAbove
	// onNothing: an empty document, the context node of an expression.
	onNothing
)

func (n *antNav) NodeType() xpath.NodeType {
	if n.pos != onNode {
		return xpath.RootNode
	}
	switch t := n.cur.(type) {
	case *etree.Element:
		if n.attr >= 0 {
			return xpath.AttributeNode
		}
		if t == n.t.root {
			return xpath.RootNode
		}
		return xpath.ElementNode
	case *etree.CharData:
		return xpath.TextNode
	case *etree.Comment:
		return xpath.CommentNode
	}
	return xpath.TextNode
}

func (n *antNav) LocalName() string {
	if e, ok := n.cur.(*etree.Element); ok && n.pos == onNode {
		if n.attr >= 0 {
			return e.Attr[n.attr].Key
		}
		if e == n.t.root {
			return ""
		}
		return e.Tag
	}
	return ""
}

func (n *antNav) Prefix() string {
	if e, ok := n.cur.(*etree.Element); ok && n.pos == onNode {
		if n.attr >= 0 {
			return e.Attr[n.attr].Space
		}
		return e.Space
	}
	return ""
}

// NamespaceURL lets antchfx/xpath match names by namespace URI rather than
// by prefix.
func (n *antNav) NamespaceURL() string {
	e, ok := n.cur.(*etree.Element)
	if !ok || n.pos != onNode {
		return ""
	}
	if n.attr >= 0 {
		a := e.Attr[n.attr]
		if a.Space == "" {
			return ""
		}
		return a.NamespaceURI()
	}
	return e.NamespaceURI()
}

// Value is the string-value; a document node's is its element's (the
// holder's text children are only whitespace around it).
func (n *antNav) Value() string {
	if n.pos == onNothing {
		return ""
	}
	return node{tok: n.cur, attr: int(n.attr)}.String()
}

func (n *antNav) Copy() xpath.NodeNavigator {
	c := *n
	return &c
}

// MoveToRoot moves to the tree's root, where the compiler's $var paths
// start.
func (n *antNav) MoveToRoot() {
	n.cur, n.attr, n.pos, n.down = n.t.root, -1, onNode, true
}

// MoveToParent stops at the document node of a variable or part.
func (n *antNav) MoveToParent() bool {
	if n.attr >= 0 {
		n.attr = -1
		return true
	}
	if n.pos != onNode || n.cur == n.t.root {
		return false
	}
	if e, ok := n.cur.(*etree.Element); ok {
		switch (navigator{t: n.t}).boundary(e) {
		case bDocEl:
			n.pos, n.down = onDocAbove, false
			return true
		case bHolder:
			if e.Parent() == n.t.root {
				return false // an element variable's slot is no node of its document
			}
			// An element part's wrapper reached from $msg: its parent is the
			// message's slot.
		}
	}
	p := n.cur.Parent()
	if p == nil {
		return false
	}
	n.cur, n.down = p, false
	if (navigator{t: n.t}).boundary(p) == bHolder {
		n.pos = onDocOf
	}
	return true
}

func (n *antNav) MoveToNextAttribute() bool {
	e, ok := n.cur.(*etree.Element)
	if !ok || n.pos != onNode {
		return false
	}
	for i := int(n.attr) + 1; i < len(e.Attr); i++ {
		a := e.Attr[i]
		if a.Space == "xmlns" || (a.Space == "" && a.Key == "xmlns") {
			continue
		}
		n.attr = int32(i)
		return true
	}
	return false
}

func navigable(t etree.Token) bool {
	switch t.(type) {
	case *etree.Element, *etree.CharData, *etree.Comment:
		return true
	}
	return false
}

func (n *antNav) MoveToChild() bool {
	if n.attr >= 0 {
		return false
	}
	switch n.pos {
	case onNothing:
		return false
	case onDocAbove:
		n.pos = onNode
		return true
	}
	e, ok := n.cur.(*etree.Element)
	if !ok {
		return false
	}
	for _, c := range e.Child {
		if navigable(c) {
			// Below the root and a message variable's slot are the slots
			// and the parts, which a $var path walks.
			n.down = e == n.t.root || n.pos == onNode && n.isMessageSlot(e)
			n.cur, n.pos = c, onNode
			return true
		}
	}
	return false
}

func (n *antNav) isMessageSlot(e *etree.Element) bool {
	if n.t.vars == nil || e.Parent() != n.t.root {
		return false
	}
	v := (navigator{t: n.t}).slotVar(e)
	return v != nil && v.msg != nil
}

// siblings are cur's siblings, none for a document node, a document
// element, or a slot or part not reached from the root; a $var path's
// walk over the slots and parts goes forward only, so backward there are
// none either.
func (n *antNav) siblings(forward bool) ([]etree.Token, int) {
	if n.pos != onNode || n.cur == n.t.root {
		return nil, -1
	}
	p := n.cur.Parent()
	if p == nil {
		return nil, -1
	}
	if (!n.down || !forward) && n.t.vars != nil {
		if e, ok := n.cur.(*etree.Element); ok && (navigator{t: n.t}).boundary(e) != bNone {
			return nil, -1
		}
	}
	return p.Child, n.cur.Index()
}

func (n *antNav) MoveToFirst() bool {
	if n.attr >= 0 {
		return false
	}
	sib, _ := n.siblings(false)
	for _, c := range sib {
		if navigable(c) {
			n.cur = c
			return true
		}
	}
	return false
}

func (n *antNav) MoveToNext() bool {
	if n.attr >= 0 {
		return false
	}
	sib, i := n.siblings(true)
	if i < 0 {
		return false
	}
	for j := i + 1; j < len(sib); j++ {
		if navigable(sib[j]) {
			n.cur = sib[j]
			return true
		}
	}
	return false
}

func (n *antNav) MoveToPrevious() bool {
	if n.attr >= 0 {
		return false
	}
	sib, i := n.siblings(false)
	for j := i - 1; j >= 0; j-- {
		if navigable(sib[j]) {
			n.cur = sib[j]
			return true
		}
	}
	return false
}

func (n *antNav) MoveTo(other xpath.NodeNavigator) bool {
	o, ok := other.(*antNav)
	if !ok || o.t != n.t {
		return false
	}
	n.cur, n.attr, n.pos, n.down = o.cur, o.attr, o.pos, o.down
	return true
}
