package process

import (
	"strings"

	"github.com/antchfx/xpath"
	"github.com/beevik/etree"
)

// navigator implements xpath.NodeNavigator over an etree tree. The root
// node is the etree.Document (or the topmost element's parent chain end).
type navigator struct {
	root *etree.Element // the document node (an etree.Document's Element)
	cur  etree.Token    // *etree.Element or *etree.CharData or *etree.Comment
	attr int            // index into cur's Attr when on an attribute, else -1
}

func newNavigator(doc *etree.Element) *navigator {
	return &navigator{root: doc, cur: doc, attr: -1}
}

func (n *navigator) NodeType() xpath.NodeType {
	switch t := n.cur.(type) {
	case *etree.Element:
		if n.attr >= 0 {
			return xpath.AttributeNode
		}
		if t == n.root {
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

func (n *navigator) LocalName() string {
	if e, ok := n.cur.(*etree.Element); ok {
		if n.attr >= 0 {
			return e.Attr[n.attr].Key
		}
		if e == n.root {
			return ""
		}
		return e.Tag
	}
	return ""
}

func (n *navigator) Prefix() string {
	if e, ok := n.cur.(*etree.Element); ok {
		if n.attr >= 0 {
			return e.Attr[n.attr].Space
		}
		return e.Space
	}
	return ""
}

// NamespaceURL lets antchfx/xpath match names by namespace URI rather than
// by prefix.
func (n *navigator) NamespaceURL() string {
	e, ok := n.cur.(*etree.Element)
	if !ok {
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

func (n *navigator) Value() string { return node{tok: n.cur, attr: n.attr}.String() }

// stringValue is the XPath string-value of an element: its descendant
// text, concatenated.
func stringValue(e *etree.Element) string {
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

func (n *navigator) Copy() xpath.NodeNavigator {
	c := *n
	return &c
}

func (n *navigator) MoveToRoot() {
	n.cur, n.attr = n.root, -1
}

func (n *navigator) MoveToParent() bool {
	if n.attr >= 0 {
		n.attr = -1
		return true
	}
	if n.cur == n.root {
		return false
	}
	p := n.cur.Parent()
	if p == nil {
		return false
	}
	n.cur = p
	return true
}

func (n *navigator) MoveToNextAttribute() bool {
	e, ok := n.cur.(*etree.Element)
	if !ok {
		return false
	}
	for i := n.attr + 1; i < len(e.Attr); i++ {
		a := e.Attr[i]
		if a.Space == "xmlns" || (a.Space == "" && a.Key == "xmlns") {
			continue
		}
		n.attr = i
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

func (n *navigator) MoveToChild() bool {
	if n.attr >= 0 {
		return false
	}
	e, ok := n.cur.(*etree.Element)
	if !ok {
		return false
	}
	for _, c := range e.Child {
		if navigable(c) {
			n.cur = c
			return true
		}
	}
	return false
}

func (n *navigator) siblings() ([]etree.Token, int) {
	p := n.cur.Parent()
	if p == nil || n.cur == n.root {
		return nil, -1
	}
	return p.Child, n.cur.Index()
}

func (n *navigator) MoveToFirst() bool {
	if n.attr >= 0 {
		return false
	}
	sib, _ := n.siblings()
	for _, c := range sib {
		if navigable(c) {
			n.cur = c
			return true
		}
	}
	return false
}

func (n *navigator) MoveToNext() bool {
	if n.attr >= 0 {
		return false
	}
	sib, i := n.siblings()
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

func (n *navigator) MoveToPrevious() bool {
	if n.attr >= 0 {
		return false
	}
	sib, i := n.siblings()
	for j := i - 1; j >= 0; j-- {
		if navigable(sib[j]) {
			n.cur = sib[j]
			return true
		}
	}
	return false
}

func (n *navigator) MoveTo(other xpath.NodeNavigator) bool {
	o, ok := other.(*navigator)
	if !ok || o.root != n.root {
		return false
	}
	n.cur, n.attr = o.cur, o.attr
	return true
}
