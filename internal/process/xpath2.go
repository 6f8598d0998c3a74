package process

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/bpel"
	"github.com/orchd/orchd/internal/xpath2"
)

// XPath 2.0 expressions and queries (expressionLanguage or queryLanguage
// urn:oasis:names:tc:wsbpel:2.0:sublang:xpath2.0) compile with
// internal/xpath2 (XQuery 1.0 ones, sublang:xquery1.0, with its
// CompileXQuery) and evaluate over xnode, an adapter of the instance's
// variable tree that keeps every variable and every message part a
// document of its own, as navigator does for XPath 1.0.
//
// A simple path ($var[.part]/a/b[2]/@c, or a relative query a/b) still
// takes the fast evaluator of fastpath.go: it selects the same nodes in
// both languages. The value evaluator of fastexpr.go is not used for XPath
// 2.0: it computes numbers as doubles and compares strings as numbers the
// XPath 1.0 way, where XPath 2.0 keeps integers and decimals exact and
// compares strings as strings.

// xp2Expr is the XPath 2.0 side of an expr.
type xp2Expr struct {
	x *xpath2.Expr
	// refs are the external variables, by the index Compile gave them.
	refs []xp2Ref
	// links are the links getLinkStatus may name (a join condition's).
	links map[string]*variable
	// query is set for a <query> or a <to> path: the context item is the
	// variable's node; an expression's is an empty document.
	query bool
}

// xp2RefKind says what a variable reference of an XPath 2.0 expression
// reads.
type xp2RefKind uint8

const (
	refVar          xp2RefKind = iota // $var or $var.part
	refProperty                       // bpel:getVariableProperty, compiled to a path
	refPID                            // $ode:pid
	refProcessQName                   // $ode:processQName
	refEventTime                      // $ode:currentEventDateTime
)

// xp2Ref is one external variable of an XPath 2.0 expression, resolved
// at compile time.
type xp2Ref struct {
	kind xp2RefKind
	v    *variable
	part int
	// simple is the built-in type of a simple-typed variable's typed
	// value, or nil.
	simple *xpath2.Type
	// prop evaluates a getVariableProperty (XPath 1.0 over the tree).
	prop *expr
}

// Namespaces private to the compiler: getVariableProperty calls become
// variables of nsXP2Property, getLinkStatus reads links through
// nsXP2Link.
const (
	nsXP2Property = "urn:orchd:xpath2:property"
	nsXP2Link     = "urn:orchd:xpath2:link"
	propPrefix    = "orchd_prop"
)

var getVarProp2RE = regexp.MustCompile(`([A-Za-z_][\w.\-]*):getVariableProperty\s*\(\s*(?:'([^']*)'|"([^"]*)")\s*,\s*(?:'([^']*)'|"([^"]*)")\s*\)`)

// builtinSimple is the built-in atomic type a variable or part declared
// with type t has, or nil: such a variable's or part's value is its typed
// value, as in ODE (WS-BPEL 2.0 section 8.2.2).
func builtinSimple(t qname) *xpath2.Type {
	if t.Space != bpel.NSXSD {
		return nil
	}
	b, ok := xpath2.LookupType(t.Local)
	if !ok || !b.DerivesFrom(xpath2.TAnyAtomic) || b == xpath2.TAnyAtomic || b == xpath2.TQName || b == xpath2.TNOTATION {
		return nil
	}
	return b
}

// xp2Eval is one evaluation of an XPath 2.0 expression in an instance.
type xp2Eval struct {
	in *instance
	x  *xp2Expr
	at bpel.Pos
}

// value is the value of the external variable at index i.
func (ev *xp2Eval) value(i int) (xpath2.Sequence, error) {
	r := &ev.x.refs[i]
	in := ev.in
	switch r.kind {
	case refPID:
		return xpath2.Sequence{xpath2.Str(in.pid())}, nil
	case refProcessQName:
		q := in.p.Name
		return xpath2.Sequence{xpath2.QName{NS: q.Space, Local: q.Local, T: xpath2.TQName}}, nil
	case refProperty:
		return xpath2.Sequence{xpath2.Str(xpathString(r.prop.eval(&in.docs, in.root)))}, nil
	case refEventTime:
		return currentEventDateTime(in)
	}
	v := r.v
	s := in.slot(v)
	if r.part >= 0 {
		s = s.Child[r.part].(*etree.Element)
	}
	if r.simple != nil {
		// Never assigned: the empty sequence (a <from> selecting it is a
		// selectionFailure, unless ignoreMissingFromData).
		if len(s.Child) == 0 {
			return nil, nil
		}
		text := s.Text()
		if r.simple == xpath2.TBoolean && strings.HasPrefix(v.name, "link:") {
			return xpath2.Sequence{xpath2.Boolean(text == "1")}, nil
		}
		a, err := xpath2.Cast(xpath2.Untyped(text), r.simple, nil)
		if err != nil {
			return nil, fmt.Errorf("variable %s: %w", v.name, err)
		}
		return xpath2.Sequence{a}, nil
	}
	n := baseNode(in.root, v, r.part)
	if n == nil {
		return nil, nil
	}
	return xpath2.Sequence{xnode{t: &in.docs, tok: n, attr: -1}}, nil
}

// pid is the instance id $ode:pid yields: a persistent instance's id, a
// fresh unique one for an in-memory instance.
func (in *instance) pid() string {
	if in.id != "" {
		return in.id
	}
	if in.odePID == "" {
		in.odePID = persistNewID()
	}
	return in.odePID
}

// evalXPath2 evaluates an XPath 2.0 expression; ctx is the query's
// context node, or the tree's root for an expression.
func (in *instance) evalXPath2(x *expr, ctx *etree.Element, at bpel.Pos) (xpath2.Sequence, error) {
	ev := &xp2Eval{in: in, x: x.x2, at: at}
	dc := &xpath2.DynamicContext{VariableAt: ev.value}
	if x.x2.query {
		dc.Item = xnode{t: &in.docs, tok: ctx, attr: -1}
	} else {
		dc.Item = xnode{t: &in.docs, tok: in.root, attr: -1, doc: docNothing}
	}
	if x.x2.links != nil {
		dc.Variables = func(space, local string) (xpath2.Sequence, bool) {
			v, ok := x.x2.links[local]
			if space != nsXP2Link || !ok {
				return nil, false
			}
			return xpath2.Sequence{xpath2.Boolean(in.slot(v).Text() == "1")}, true
		}
	}
	seq, err := x.x2.x.Evaluate(dc)
	if err != nil {
		var f *faultValue
		if errors.As(err, &f) {
			return nil, f
		}
		return nil, in.faultf(at, "subLanguageExecutionFault", "evaluating %q: %v", x.src, err)
	}
	return seq, nil
}

// fromXPath2 turns an XPath 2.0 result into the values the runtime uses
// for XPath 1.0 ones: []node for nodes (none for the empty sequence), the
// atomic value for one atomic value, the sequence itself otherwise.
func fromXPath2(seq xpath2.Sequence) any {
	if len(seq) == 1 {
		if a, ok := seq[0].(xpath2.Atomic); ok {
			return a
		}
	}
	nodes := make([]node, 0, len(seq))
	for _, it := range seq {
		n, ok := it.(xnode)
		if !ok {
			// a node an XQuery constructor built
			if nodes, ok = appendBuilt(nodes, it); !ok {
				return seq
			}
			continue
		}
		if n.doc == docNothing {
			continue
		}
		nodes = append(nodes, node{tok: n.tok, attr: int(n.attr)})
	}
	return nodes
}

// appendBuilt appends the node an XQuery constructor or saxon:parse
// built (an etree token of its own tree) to nodes; a document contributes
// its document element. ok is false for any other item.
func appendBuilt(nodes []node, it xpath2.Item) ([]node, bool) {
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
					nodes = append(nodes, node{tok: c, attr: -1})
				}
			}
			return nodes, true
		}
		for _, c := range d.ChildElements() {
			nodes = append(nodes, node{tok: c, attr: -1})
		}
		return nodes, true
	}
	return append(nodes, node{tok: tok, attr: attr}), true
}

// condXPath2 is the effective boolean value of an XPath 2.0 condition.
func (in *instance) condXPath2(x *expr, at bpel.Pos) (bool, error) {
	seq, err := in.evalXPath2(x, in.root, at)
	if err != nil {
		return false, err
	}
	b, err := xpath2.EffectiveBooleanValue(seq)
	if err != nil {
		return false, in.faultf(at, "subLanguageExecutionFault", "condition %q: %v", x.src, err)
	}
	return b, nil
}

// xnode adapts a node of an instance's variable tree (t set) or of a tree
// an ODE function built (t nil) to xpath2.Node. In the instance tree the
// document boundaries are navigator's: from a node inside a variable or
// part, the parent and ancestor axes end at its document node.
type xnode struct {
	t    *docTree
	tok  etree.Token
	attr int32 // index into tok's Attr on an attribute, else -1
	doc  xdoc
}

// xdoc says whether an xnode is a document node, and which.
type xdoc uint8

const (
	docNone    xdoc = iota
	docAbove        // the document whose only child is tok (a document element)
	docOf           // the document whose children are tok's (a holder)
	docNothing      // the empty document, an expression's context item
)

func (n xnode) elem() (*etree.Element, bool) {
	e, ok := n.tok.(*etree.Element)
	return e, ok && n.attr < 0 && n.doc == docNone
}

// Kind implements xpath2.Node.
func (n xnode) Kind() xpath2.NodeKind {
	if n.doc != docNone {
		return xpath2.DocumentNode
	}
	if n.attr >= 0 {
		return xpath2.AttributeNode
	}
	switch n.tok.(type) {
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
func (n xnode) LocalName() string {
	if n.doc != docNone {
		return ""
	}
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

// NamespaceURI implements xpath2.Node.
func (n xnode) NamespaceURI() string {
	e, ok := n.tok.(*etree.Element)
	if !ok || n.doc != docNone {
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

// Prefix implements xpath2.Node.
func (n xnode) Prefix() string {
	e, ok := n.tok.(*etree.Element)
	if !ok || n.doc != docNone {
		return ""
	}
	if n.attr >= 0 {
		return e.Attr[n.attr].Space
	}
	return e.Space
}

// StringValue implements xpath2.Node.
func (n xnode) StringValue() string {
	switch t := n.tok.(type) {
	case *etree.Element:
		if n.doc == docNothing {
			return ""
		}
	case *etree.ProcInst:
		return strings.TrimLeft(t.Inst, " \t\r\n")
	}
	return node{tok: n.tok, attr: int(n.attr)}.String()
}

// Parent implements xpath2.Node; it stops at a variable's or part's
// document node.
func (n xnode) Parent() xpath2.Node {
	if n.doc != docNone {
		return nil
	}
	if n.attr >= 0 {
		return xnode{t: n.t, tok: n.tok, attr: -1}
	}
	if n.t == nil || n.t.vars == nil {
		p := n.tok.Parent()
		if p == nil {
			return nil
		}
		return xnode{t: n.t, tok: p, attr: -1}
	}
	nav := navigator{t: n.t}
	if e, ok := n.tok.(*etree.Element); ok {
		switch nav.boundary(e) {
		case bRoot:
			return nil
		case bDocEl:
			return xnode{t: n.t, tok: e, attr: -1, doc: docAbove}
		case bHolder:
			if e.Parent() == n.t.root {
				return nil
			}
		}
	}
	p := n.tok.Parent()
	if p == nil || p == n.t.root {
		return nil
	}
	if nav.boundary(p) == bHolder {
		return xnode{t: n.t, tok: p, attr: -1, doc: docOf}
	}
	return xnode{t: n.t, tok: p, attr: -1}
}

// Children implements xpath2.Node.
func (n xnode) Children() []xpath2.Node {
	if n.attr >= 0 {
		return nil
	}
	switch n.doc {
	case docNothing:
		return nil
	case docAbove:
		return []xpath2.Node{xnode{t: n.t, tok: n.tok, attr: -1}}
	}
	e, ok := n.tok.(*etree.Element)
	if !ok {
		return nil
	}
	out := make([]xpath2.Node, 0, len(e.Child))
	for _, c := range e.Child {
		switch c.(type) {
		case *etree.Element, *etree.CharData, *etree.Comment, *etree.ProcInst:
			out = append(out, xnode{t: n.t, tok: c, attr: -1})
		}
	}
	return out
}

// Attributes implements xpath2.Node.
func (n xnode) Attributes() []xpath2.Node {
	e, ok := n.elem()
	if !ok || len(e.Attr) == 0 {
		return nil
	}
	out := make([]xpath2.Node, 0, len(e.Attr))
	for i, a := range e.Attr {
		if a.Space == "xmlns" || (a.Space == "" && a.Key == "xmlns") {
			continue
		}
		out = append(out, xnode{t: n.t, tok: e, attr: int32(i)})
	}
	return out
}

// LookupNamespace implements xpath2.Node.
func (n xnode) LookupNamespace(prefix string) (string, bool) {
	e, ok := n.elem()
	if !ok {
		return "", false
	}
	return xpath2.WrapElement(e).LookupNamespace(prefix)
}

// InScopePrefixes implements xpath2.Node.
func (n xnode) InScopePrefixes() []string {
	e, ok := n.elem()
	if !ok {
		return nil
	}
	return xpath2.WrapElement(e).InScopePrefixes()
}

// Same implements xpath2.Node.
func (n xnode) Same(o xpath2.Node) bool {
	m, ok := o.(xnode)
	return ok && m == n
}

// evalToXPath2CopyOp evaluates a general XPath 2.0 to-expression.
func evalToXPath2CopyOp(c *copyOp, in *instance) (target, error) {
	v, err := in.eval(c.to.x, in.root, c.pos)
	if err != nil {
		return target{}, err
	}
	var buf [1]node
	nodes, ok := nodesIn(v, &buf)
	if !ok || len(nodes) != 1 || in.slotOf(nodes[0].tok) == nil {
		return target{}, in.faultf(c.pos, "selectionFailure", "<to> %q does not select one node of a variable", c.to.x.src)
	}
	return target{node: nodes[0]}, nil
}

// slotOf is the variable whose value holds tok, or nil when tok is no
// node of the instance's variables.
func (in *instance) slotOf(tok etree.Token) *variable {
	var e *etree.Element
	switch t := tok.(type) {
	case *etree.Element:
		e = t
	default:
		e = tok.Parent()
	}
	for e != nil {
		p := e.Parent()
		if p == in.root {
			if i := e.Index(); i >= 0 && i < len(in.p.vars) {
				return in.p.vars[i]
			}
			return nil
		}
		e = p
	}
	return nil
}

// touchNode marks the variable holding tok changed.
func (in *instance) touchNode(tok etree.Token) {
	if v := in.slotOf(tok); v != nil {
		in.touch(v)
	}
}
