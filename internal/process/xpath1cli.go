package process

import (
	"errors"
	"fmt"

	"github.com/antchfx/xpath"
	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/bpel"
	"github.com/orchd/orchd/internal/xpath2"
)

// EvalXPath1 evaluates src as an XPath 1.0 expression the way a process
// whose expressionLanguage is XPath 1.0 does: the compiler's variable
// rewriting, function check and direct evaluators, then antchfx/xpath over
// the variable tree. It serves "orchd xpath --version 1.0". Each variable
// is a variable of its own: a document is an element variable holding its
// document element, a text a string-typed variable. ctx, when not nil, is
// the context node (its document node); without it the context is an
// empty document, as for a process's expression. The result is given as
// XDM items: nodes, xs:string, xs:boolean, and numbers as xs:double whose
// string value is XPath 1.0's. Errors are *xpath2.Error: XPST0017 for an
// unknown function, XPST0081 for an undeclared prefix, XPST0008 for an
// unknown variable, XPST0003 otherwise.
func EvalXPath1(src string, ns map[string]string, ctx *etree.Document, vars map[string]xpath2.Input) (xpath2.Sequence, error) {
	r := cliResolver{}
	root := etree.NewElement("vars")
	slot := func(v *variable, content etree.Token) *etree.Element {
		v.slot = len(root.Child) + 1
		s := root.CreateElement(v.slotName())
		if content != nil {
			s.AddChild(content)
		}
		return s
	}
	var t docTree
	for name, in := range vars {
		v := &variable{name: name}
		if in.Doc != nil {
			e := in.Doc.Root().Copy()
			v.elem = qname{Space: e.NamespaceURI(), Local: e.Tag}
			slot(v, e)
		} else {
			v.typ, v.simple = qname{Space: bpel.NSXSD, Local: "string"}, "string"
			slot(v, etree.NewText(in.Text))
		}
		r[name] = v
		t.vars = append(t.vars, v)
	}
	var ctxSlot *etree.Element
	if ctx != nil {
		v := &variable{name: " context"}
		ctxSlot = slot(v, ctx.Root().Copy())
		t.vars = append(t.vars, v)
	}
	t.root = root
	if ns == nil {
		ns = map[string]string{}
	}
	ns = xpathNS(ns)
	rw, err := rewrite(src, r, nil, ns, true)
	if err != nil {
		return nil, &xpath2.Error{Code: "XPST0008", Msg: err.Error()}
	}
	if err := checkXPath1Functions(rw, ns); err != nil {
		code := "XPST0017"
		if errors.Is(err, errUndeclaredPrefix) {
			code = "XPST0081"
		}
		return nil, &xpath2.Error{Code: code, Msg: err.Error()}
	}
	x, err := newExpr(src, rw, ns)
	if err != nil {
		return nil, &xpath2.Error{Code: "XPST0003", Msg: err.Error()}
	}
	var v any
	if ctxSlot == nil {
		x.fast = compilePath(src, r, ns, false, true)
		if x.fast == nil {
			x.fastX = compileFast(src, r, ns)
		}
		v = x.eval(&t, root)
	} else {
		xe := x.get()
		res := xe.Evaluate(&navigator{t: &t, cur: ctxSlot, attr: -1, pos: onDocOf})
		if it, ok := res.(*xpath.NodeIterator); ok {
			return nodesToXDM(&t, it), nil
		}
		v = res
	}
	var buf [1]node
	if nodes, ok := nodesIn(v, &buf); ok {
		v = nodes
	}
	switch v := v.(type) {
	case []node:
		out := make(xpath2.Sequence, len(v))
		for i, n := range v {
			out[i] = xnode{t: &t, tok: n.tok, attr: int32(n.attr)}
		}
		return out, nil
	case string:
		return xpath2.Sequence{xpath2.Str(v)}, nil
	case bool:
		return xpath2.Sequence{xpath2.Boolean(v)}, nil
	case float64:
		return xpath2.Sequence{xpath1Number(v)}, nil
	}
	return nil, &xpath2.Error{Code: "FOER0000", Msg: fmt.Sprintf("unexpected XPath 1.0 result %T", v)}
}

// nodesToXDM collects a node-set, keeping the document nodes antchfx
// stands on as document nodes.
func nodesToXDM(t *docTree, it *xpath.NodeIterator) xpath2.Sequence {
	var out xpath2.Sequence
	for it.MoveNext() {
		n := it.Current().(*navigator)
		x := xnode{t: t, tok: n.cur, attr: n.attr}
		switch n.pos {
		case onDocOf:
			x.doc = docOf
		case onDocAbove:
			x.doc = docAbove
		case onNothing:
			x.doc = docNothing
		}
		out = append(out, x)
	}
	return out
}

// xpath1Number is an XPath 1.0 number: an xs:double whose string value
// is XPath 1.0's (no exponent: 1e20 is 100000000000000000000).
type xpath1Number float64

// Type implements xpath2.Atomic.
func (xpath1Number) Type() *xpath2.Type { return xpath2.TDouble }

// String implements xpath2.Atomic.
func (n xpath1Number) String() string { return formatNumber(float64(n)) }

// cliResolver resolves the command line's variables.
type cliResolver map[string]*variable

func (r cliResolver) lookupVar(name string) *variable { return r[name] }

func (r cliResolver) propertyPath(varName, property string, _ *etree.Element, _ map[string]string) (string, error) {
	return "", fmt.Errorf("bpel:getVariableProperty(%q, %q): no properties outside a process", varName, property)
}
