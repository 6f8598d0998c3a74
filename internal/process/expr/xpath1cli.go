package expr

import (
	"errors"
	"fmt"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/xmldoc"
	"github.com/orchd/orchd/internal/xpath1"
	"github.com/orchd/orchd/internal/xpath2"
)

// EvalXPath1 evaluates src as an XPath 1.0 expression the way a process
// whose expressionLanguage is XPath 1.0 does: the compiler's variable
// rewriting, function check and direct evaluators, then internal/xpath1
// over the variable tree. It serves "orchd xpath --version 1.0". Each variable
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
	slot := func(v *Var, content etree.Token) *etree.Element {
		v.Slot = len(root.Child) + 1
		s := root.CreateElement(v.SlotName())
		if content != nil {
			s.AddChild(content)
		}
		return s
	}
	var t DocTree
	for name, in := range vars {
		v := &Var{Name: name}
		if in.Doc != nil {
			e := in.Doc.Root().Copy()
			v.Elem = exchange.QName{Space: e.NamespaceURI(), Local: e.Tag}
			slot(v, e)
		} else {
			v.Typ, v.Simple = exchange.QName{Space: xmldoc.NSXSD, Local: "string"}, "string"
			slot(v, etree.NewText(in.Text))
		}
		r[name] = v
		t.Vars = append(t.Vars, v)
	}
	var ctxSlot *etree.Element
	if ctx != nil {
		// An element variable, so that its slot stands for the
		// document node, the parent of the document element.
		e := ctx.Root().Copy()
		v := &Var{Name: " context", Elem: exchange.QName{Space: e.NamespaceURI(), Local: e.Tag}}
		ctxSlot = slot(v, e)
		t.Vars = append(t.Vars, v)
	}
	t.Top = root
	if ns == nil {
		ns = map[string]string{}
	}
	ns = XpathNS(ns)
	rw, err := Rewrite(src, r, nil, ns, true)
	if err != nil {
		return nil, &xpath2.Error{Code: "XPST0008", Msg: err.Error()}
	}
	if err := CheckXPath1Functions(rw, ns); err != nil {
		code := "XPST0017"
		if errors.Is(err, ErrUndeclaredPrefix) {
			code = "XPST0081"
		}
		return nil, &xpath2.Error{Code: code, Msg: err.Error()}
	}
	x, err := NewExpr(src, rw, ns)
	if err != nil {
		return nil, &xpath2.Error{Code: "XPST0003", Msg: err.Error()}
	}
	var v any
	if ctxSlot == nil {
		x.Fast = CompilePath(src, r, ns, false, true)
		if x.Fast == nil {
			x.FastX = CompileFast(src, r, ns)
		}
		v = x.Eval(&t, root)
	} else {
		v = x.EvalNode(&t, xpath1.Node{Tok: ctxSlot, Attr: -1, Doc: xpath1.DocOf})
	}
	var buf [1]Node
	if nodes, ok := NodesIn(v, &buf); ok {
		v = nodes
	}
	switch v := v.(type) {
	case []Node:
		out := make(xpath2.Sequence, len(v))
		for i, n := range v {
			if n.Doc == xpath1.NamespaceNode {
				// XPath 2.0 has no namespace axis to give them as nodes:
				// a namespace node is its URI.
				out[i] = xpath2.Str(n.String())
				continue
			}
			out[i] = XNode{T: &t, Tok: n.Tok, Attr: int32(n.Attr), Doc: n.Doc}
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

// xpath1Number is an XPath 1.0 number: an xs:double whose string value
// is XPath 1.0's (no exponent: 1e20 is 100000000000000000000).
type xpath1Number float64

// Type implements xpath2.Atomic.
func (xpath1Number) Type() *xpath2.Type { return xpath2.TDouble }

// String implements xpath2.Atomic.
func (n xpath1Number) String() string { return xpath1.FormatNumber(float64(n)) }

// cliResolver resolves the command line's variables.
type cliResolver map[string]*Var

func (r cliResolver) LookupVar(name string) *Var { return r[name] }

func (r cliResolver) PropertyPath(varName, property string, _ *etree.Element, _ map[string]string) (string, error) {
	return "", fmt.Errorf("bpel:getVariableProperty(%q, %q): no properties outside a process", varName, property)
}
