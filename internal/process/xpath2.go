package process

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/bpel"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
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
func builtinSimple(t exchange.QName) *xpath2.Type {
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
	x  *expr.Xp2Expr
	at bpel.Pos
}

// value is the value of the external variable at index i.
func (ev *xp2Eval) value(i int) (xpath2.Sequence, error) {
	r := &ev.x.Refs[i]
	in := ev.in
	switch r.Kind {
	case expr.RefPID:
		return xpath2.Sequence{xpath2.Str(in.pid())}, nil
	case expr.RefProcessQName:
		q := in.p.Name
		return xpath2.Sequence{xpath2.QName{NS: q.Space, Local: q.Local, T: xpath2.TQName}}, nil
	case expr.RefProperty:
		return xpath2.Sequence{xpath2.Str(expr.XpathString(r.Prop.Eval(&in.docs, in.root)))}, nil
	case expr.RefEventTime:
		return currentEventDateTime(in)
	}
	v := r.V
	s := in.slot(v)
	if r.Part >= 0 {
		s = s.Child[r.Part].(*etree.Element)
	}
	if r.Simple != nil {
		// Never assigned: the empty sequence (a <from> selecting it is a
		// selectionFailure, unless ignoreMissingFromData).
		if len(s.Child) == 0 {
			return nil, nil
		}
		text := s.Text()
		if r.Simple == xpath2.TBoolean && strings.HasPrefix(v.Name, "link:") {
			return xpath2.Sequence{xpath2.Boolean(text == "1")}, nil
		}
		a, err := xpath2.Cast(xpath2.Untyped(text), r.Simple, nil)
		if err != nil {
			return nil, fmt.Errorf("variable %s: %w", v.Name, err)
		}
		return xpath2.Sequence{a}, nil
	}
	n := expr.BaseNode(in.root, v, r.Part)
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
func (in *instance) evalXPath2(x *expr.Expr, ctx *etree.Element, at bpel.Pos) (xpath2.Sequence, error) {
	ev := &xp2Eval{in: in, x: x.X2, at: at}
	dc := &xpath2.DynamicContext{VariableAt: ev.value}
	if x.X2.Query {
		dc.Item = xnode{t: &in.docs, tok: ctx, attr: -1}
	} else {
		dc.Item = xnode{t: &in.docs, tok: in.root, attr: -1, doc: docNothing}
	}
	if x.X2.Links != nil {
		dc.Variables = func(space, local string) (xpath2.Sequence, bool) {
			v, ok := x.X2.Links[local]
			if space != nsXP2Link || !ok {
				return nil, false
			}
			return xpath2.Sequence{xpath2.Boolean(in.slot(v).Text() == "1")}, true
		}
	}
	seq, err := x.X2.X.Evaluate(dc)
	if err != nil {
		var f *faultValue
		if errors.As(err, &f) {
			return nil, f
		}
		return nil, in.faultf(at, "subLanguageExecutionFault", "evaluating %q: %v", x.Src, err)
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
	nodes := make([]expr.Node, 0, len(seq))
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
		nodes = append(nodes, expr.Node{Tok: n.tok, Attr: int(n.attr)})
	}
	return nodes
}

// appendBuilt appends the node an XQuery constructor or saxon:parse
// built (an etree token of its own tree) to nodes; a document contributes
// its document element. ok is false for any other item.
func appendBuilt(nodes []expr.Node, it xpath2.Item) ([]expr.Node, bool) {
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
					nodes = append(nodes, expr.Node{Tok: c, Attr: -1})
				}
			}
			return nodes, true
		}
		for _, c := range d.ChildElements() {
			nodes = append(nodes, expr.Node{Tok: c, Attr: -1})
		}
		return nodes, true
	}
	return append(nodes, expr.Node{Tok: tok, Attr: attr}), true
}

// condXPath2 is the effective boolean value of an XPath 2.0 condition.
func (in *instance) condXPath2(x *expr.Expr, at bpel.Pos) (bool, error) {
	seq, err := in.evalXPath2(x, in.root, at)
	if err != nil {
		return false, err
	}
	b, err := xpath2.EffectiveBooleanValue(seq)
	if err != nil {
		return false, in.faultf(at, "subLanguageExecutionFault", "condition %q: %v", x.Src, err)
	}
	return b, nil
}

// xnode adapts a node of an instance's variable tree (t set) or of a tree
// an ODE function built (t nil) to xpath2.Node. In the instance tree the
// document boundaries are navigator's: from a node inside a variable or
// part, the parent and ancestor axes end at its document node.
type xnode struct {
	t    *expr.DocTree
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
	return expr.Node{Tok: n.tok, Attr: int(n.attr)}.String()
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
	if n.t == nil || n.t.Vars == nil {
		p := n.tok.Parent()
		if p == nil {
			return nil
		}
		return xnode{t: n.t, tok: p, attr: -1}
	}
	nav := expr.Navigator{T: n.t}
	if e, ok := n.tok.(*etree.Element); ok {
		switch nav.Boundary(e) {
		case expr.BRoot:
			return nil
		case expr.BDocEl:
			return xnode{t: n.t, tok: e, attr: -1, doc: docAbove}
		case expr.BHolder:
			if e.Parent() == n.t.Top {
				return nil
			}
		}
	}
	p := n.tok.Parent()
	if p == nil || p == n.t.Top {
		return nil
	}
	if nav.Boundary(p) == expr.BHolder {
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
func evalToXPath2CopyOp(c *plan.CopyOp, in *instance) (target, error) {
	v, err := in.eval(c.To.X, in.root, c.Pos)
	if err != nil {
		return target{}, err
	}
	var buf [1]expr.Node
	nodes, ok := expr.NodesIn(v, &buf)
	if !ok || len(nodes) != 1 || in.slotOf(nodes[0].Tok) == nil {
		return target{}, in.faultf(c.Pos, "selectionFailure", "<to> %q does not select one node of a variable", c.To.X.Src)
	}
	return target{Node: nodes[0]}, nil
}

// slotOf is the variable whose value holds tok, or nil when tok is no
// node of the instance's variables.
func (in *instance) slotOf(tok etree.Token) *expr.Var {
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
			if i := e.Index(); i >= 0 && i < len(in.p.Vars) {
				return in.p.Vars[i]
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
