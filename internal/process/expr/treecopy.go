package expr

import (
	"strconv"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/xpath1"
)

// copyTree returns a deep copy of e, as e.Copy() does, in a handful of
// allocations instead of three or so per element: the copy's elements,
// text nodes, child lists and attributes each come from one slice sized
// by a first walk over e. An assignment copies subtrees on every exchange
// (the purchase order copies a dozen), and etree's per-node allocations
// were the largest share of the runtime's garbage.
//
// The copy is an ordinary etree tree: every child list and attribute list
// has its capacity capped at its length (an empty child list with room in
// the original gets room for one child, see room), so appending beyond
// that (AddChild, CreateAttr) moves the list to a fresh array instead of
// writing over a neighbour's. Its nodes share their slices' lifetime: while any node of
// the copy is reachable, the memory of the whole copy is retained.
// Attributes keep etree's Copy behaviour (their Element() is the
// original's element); text nodes keep their CDATA and whitespace flags.
func CopyTree(e *etree.Element) *etree.Element {
	var s treeSizes
	s.add(e)
	if s.elems == 1 && s.attrs == 0 && s.toks <= 1 && s.texts == s.toks {
		return copyLeaf(e)
	}
	a := s.alloc()
	return a.dup(e)
}

// copyChildrenOf appends copies of src's element and text children to box
// (comments and processing instructions are skipped), all from one
// treeAlloc, and calls each, when not nil, with every copied element and
// its original before the copy joins box.
func CopyChildrenOf(box, src *etree.Element, each func(cp, orig *etree.Element)) {
	var s treeSizes
	n := 0
	for _, ch := range src.Child {
		switch t := ch.(type) {
		case *etree.Element:
			s.add(t)
			n++
		case *etree.CharData:
			s.text(t)
			n++
		}
	}
	if n == 0 {
		return
	}
	if n == 1 && s.elems == 0 && s.texts == 1 && len(box.Child) == 0 {
		for _, ch := range src.Child {
			if t, ok := ch.(*etree.CharData); ok {
				SetText(box, t.Data)
			}
		}
		return
	}
	if free := cap(box.Child) - len(box.Child); free < n {
		grown := make([]etree.Token, len(box.Child), len(box.Child)+n)
		copy(grown, box.Child)
		box.Child = grown
	}
	a := s.alloc()
	for _, ch := range src.Child {
		switch t := ch.(type) {
		case *etree.Element:
			cp := a.dup(t)
			if each != nil {
				each(cp, t)
			}
			box.AddChild(cp)
		case *etree.CharData:
			box.AddChild(a.text(t))
		}
	}
}

// room is the capacity of the copy of e's child list: its length, or one
// for an empty list that has room (an element prepared for the one child
// it will get, such as a new instance's part wrapper; any larger room is
// not kept, so that copying an element emptied of many children does not
// copy its capacity).
func room(e *etree.Element) int {
	if len(e.Child) == 0 && cap(e.Child) > 0 {
		return 1
	}
	return len(e.Child)
}

// treeSizes counts what a copy needs.
type treeSizes struct {
	elems, texts, toks, attrs int
}

func (s *treeSizes) add(e *etree.Element) {
	s.elems++
	s.attrs += len(e.Attr)
	s.toks += room(e)
	for _, ch := range e.Child {
		switch t := ch.(type) {
		case *etree.Element:
			s.add(t)
		case *etree.CharData:
			s.text(t)
		}
	}
}

func (s *treeSizes) text(c *etree.CharData) {
	if !c.IsCData() {
		s.texts++
	}
}

func (s *treeSizes) alloc() treeAlloc {
	var a treeAlloc
	if s.elems > 0 {
		a.elems = make([]etree.Element, s.elems)
	}
	if s.texts > 0 {
		a.texts = make([]etree.CharData, s.texts)
	}
	if s.toks > 0 {
		a.toks = make([]etree.Token, s.toks)
	}
	if s.attrs > 0 {
		a.attrs = make([]etree.Attr, s.attrs)
	}
	return a
}

// treeAlloc hands out the nodes of one copy.
type treeAlloc struct {
	elems []etree.Element
	texts []etree.CharData
	toks  []etree.Token
	attrs []etree.Attr
}

func (a *treeAlloc) dup(e *etree.Element) *etree.Element {
	ne := &a.elems[0]
	a.elems = a.elems[1:]
	ne.Space, ne.Tag = e.Space, e.Tag
	if n := len(e.Attr); n > 0 {
		ne.Attr = a.attrs[:n:n]
		a.attrs = a.attrs[n:]
		copy(ne.Attr, e.Attr)
	}
	if n := room(e); n > 0 {
		ne.Child = a.toks[:0:n]
		a.toks = a.toks[n:]
	}
	for _, ch := range e.Child {
		switch t := ch.(type) {
		case *etree.Element:
			ne.AddChild(a.dup(t))
		case *etree.CharData:
			ne.AddChild(a.text(t))
		case *etree.Comment:
			ne.AddChild(etree.NewComment(t.Data))
		case *etree.ProcInst:
			ne.AddChild(etree.NewProcInst(t.Target, t.Inst))
		case *etree.Directive:
			ne.AddChild(etree.NewDirective(t.Data))
		}
	}
	return ne
}

func (a *treeAlloc) text(c *etree.CharData) *etree.CharData {
	if c.IsCData() {
		return etree.NewCData(c.Data)
	}
	cd := &a.texts[0]
	a.texts = a.texts[1:]
	cd.SetData(c.Data)
	return cd
}

// leafCopy is an element with at most one text child, in one allocation:
// most of what an assignment copies is such a leaf (<sku>SKU-A100</sku>).
type leafCopy struct {
	el etree.Element
	textChild
}

// textChild is a text node and a one-token child list to hold it, in one
// allocation.
type textChild struct {
	text etree.CharData
	toks [1]etree.Token
}

// copyLeaf copies e, which has no attributes and at most one child, a
// plain text node.
func copyLeaf(e *etree.Element) *etree.Element {
	l := &leafCopy{}
	l.el.Space, l.el.Tag = e.Space, e.Tag
	if len(e.Child) == 1 {
		l.el.Child = l.toks[:0:1]
		l.text.SetData(e.Child[0].(*etree.CharData).Data)
		l.el.AddChild(&l.text)
	}
	return &l.el
}

// setText makes the text s the whole content of e (no content when s is
// empty), as clearChildren and SetText would. A lone plain text child is
// reused, and an element with no room for a child gets the text node and
// its child list in one allocation.
func SetText(e *etree.Element, s string) {
	if len(e.Child) == 1 && s != "" {
		if cd, ok := e.Child[0].(*etree.CharData); ok && !cd.IsCData() {
			cd.SetData(s)
			return
		}
	}
	ClearChildren(e)
	if s == "" {
		return
	}
	if cap(e.Child) > 0 {
		e.AddChild(etree.NewText(s))
		return
	}
	t := &textChild{}
	t.text.SetData(s)
	e.Child = t.toks[:0:1]
	e.AddChild(&t.text)
}

// copyChildren appends copies of src's element and text children to box;
// each copied element declares the namespaces it uses from src's scope
// that scope (nil: none) does not bind the same way.
func CopyChildren(box, src, scope *etree.Element) {
	CopyChildrenOf(box, src, func(cp, orig *etree.Element) {
		FixNamespaces(cp, orig, scope)
	})
}

// fixNamespaces makes cp (a copy of orig, about to be placed under dst)
// declare every namespace prefix its subtree uses that orig's ancestors
// declared and dst's scope does not bind the same way.
func FixNamespaces(cp, orig, dst *etree.Element) {
	var buf [4]string
	for _, p := range UsedPrefixes(cp, buf[:0]) {
		if DeclaresPrefix(cp, p) {
			continue
		}
		DeclareIfNeeded(cp, p, orig.Parent(), dst)
	}
}

func DeclareIfNeeded(on *etree.Element, prefix string, srcScope, dstScope *etree.Element) {
	uri, ok := LookupNS(srcScope, prefix)
	if !ok {
		if prefix == "" {
			// Unqualified in the source: undo a default namespace the
			// destination would otherwise impose.
			if have, ok := LookupNS(dstScope, ""); ok && have != "" {
				on.CreateAttr("xmlns", "")
			}
		}
		return
	}
	if have, ok := LookupNS(dstScope, prefix); ok && have == uri {
		return
	}
	if have, ok := LookupNS(on, prefix); ok && have == uri && on != dstScope {
		if DeclaresPrefix(on, prefix) {
			return
		}
	}
	if prefix == "" {
		on.CreateAttr("xmlns", uri)
	} else {
		on.CreateAttr("xmlns:"+prefix, uri)
	}
}

// usedPrefixes appends to used the namespace prefixes e's subtree uses in
// element and attribute names and in xsi:type-like QName values, once
// each. Subtrees use few prefixes, so a slice beats a map.
func UsedPrefixes(e *etree.Element, used []string) []string {
	used = AddPrefix(used, e.Space)
	for _, a := range e.Attr {
		if a.Space != "" && a.Space != "xmlns" && a.Space != "xml" {
			used = AddPrefix(used, a.Space)
			if a.Key == "type" {
				if i := strings.IndexByte(a.Value, ':'); i > 0 {
					used = AddPrefix(used, a.Value[:i])
				}
			}
		}
	}
	for _, c := range e.Child {
		if ce, ok := c.(*etree.Element); ok {
			used = UsedPrefixes(ce, used)
		}
	}
	return used
}

func DeclaresPrefix(e *etree.Element, prefix string) bool {
	for _, a := range e.Attr {
		if (prefix == "" && a.Space == "" && a.Key == "xmlns") || (prefix != "" && a.Space == "xmlns" && a.Key == prefix) {
			return true
		}
	}
	return false
}

func LookupNS(e *etree.Element, prefix string) (string, bool) {
	for p := e; p != nil; p = p.Parent() {
		for _, a := range p.Attr {
			if (prefix == "" && a.Space == "" && a.Key == "xmlns") || (prefix != "" && a.Space == "xmlns" && a.Key == prefix) {
				return a.Value, true
			}
		}
	}
	if prefix == "xml" {
		return "http://www.w3.org/XML/1998/namespace", true
	}
	return "", false
}

// clearChildren removes every child token of e.
func ClearChildren(e *etree.Element) {
	for n := len(e.Child); n > 0; n-- {
		e.RemoveChildAt(n - 1)
	}
}

func AddPrefix(used []string, p string) []string {
	for _, u := range used {
		if u == p {
			return used
		}
	}
	return append(used, p)
}

// NewQualified makes a child of parent named q, declaring q's namespace
// on it under the prefix ns.
func NewQualified(parent *etree.Element, q exchange.QName) *etree.Element {
	if q.Space == "" {
		return parent.CreateElement(q.Local)
	}
	e := parent.CreateElement("ns:" + q.Local)
	e.CreateAttr("xmlns:ns", q.Space)
	return e
}

// RenameTo gives e the qualified name q, declaring q's namespace on e.
func RenameTo(e *etree.Element, q exchange.QName) {
	if q.Space == "" {
		e.Space, e.Tag = "", q.Local
		return
	}
	for _, a := range e.Attr {
		if a.Space == "xmlns" && a.Value == q.Space {
			e.Space, e.Tag = a.Key, q.Local
			return
		}
	}
	prefix := "ns"
	for i := 1; DeclaresPrefix(e, prefix); i++ {
		prefix = "ns" + strconv.Itoa(i)
	}
	e.Space, e.Tag = prefix, q.Local
	e.CreateAttr("xmlns:"+prefix, q.Space)
}

// ReplaceContent gives dst a copy of src's attributes and children, keeping
// dst's name (WS-BPEL 2.0 section 8.4.2, replacement of element content).
// Namespaces the copies need are declared once, on dst, unless dst binds
// the prefix differently; then the copied child declares it itself.
func ReplaceContent(dst, src *etree.Element) {
	ClearChildren(dst)
	keep := dst.Attr[:0]
	for _, a := range dst.Attr {
		if xpath1.IsNSDecl(a) {
			keep = append(keep, a)
		}
	}
	dst.Attr = keep
	var buf [4]string
	used := buf[:0]
	for _, a := range src.Attr {
		if !xpath1.IsNSDecl(a) && a.Space != "" && a.Space != "xml" {
			used = AddPrefix(used, a.Space)
		}
	}
	for _, ch := range src.Child {
		if ce, ok := ch.(*etree.Element); ok {
			used = UsedPrefixes(ce, used)
		}
	}
	for _, p := range used {
		uri, ok := LookupNS(src, p)
		if !ok {
			continue
		}
		if have, ok := LookupNS(dst, p); ok && have == uri {
			continue
		}
		if !DeclaresPrefix(dst, p) && (p != "" || dst.Space == "") {
			DeclareIfNeeded(dst, p, src, nil)
		}
	}
	for _, a := range src.Attr {
		if !xpath1.IsNSDecl(a) {
			dst.CreateAttr(a.FullKey(), a.Value)
		}
	}
	CopyChildren(dst, src, dst)
}
