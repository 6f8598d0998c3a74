package interp

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/xmldoc"
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

// xp2Eval is one evaluation of an XPath 2.0 expression in an instance.
type xp2Eval struct {
	in *Instance
	x  *expr.Xp2Expr
	at xmldoc.Pos
}

// value is the value of the external variable at index i.
func (ev *xp2Eval) value(i int) (xpath2.Sequence, error) {
	r := &ev.x.Refs[i]
	in := ev.in
	switch r.Kind {
	case expr.RefPID:
		return xpath2.Sequence{xpath2.Str(in.PID())}, nil
	case expr.RefProcessQName:
		q := in.proc.Name
		return xpath2.Sequence{xpath2.QName{NS: q.Space, Local: q.Local, T: xpath2.TQName}}, nil
	case expr.RefProperty:
		return xpath2.Sequence{xpath2.Str(expr.XpathString(r.Prop.Eval(&in.docs, in.root)))}, nil
	case expr.RefEventTime:
		return currentEventDateTime(in)
	}
	v := r.V
	s := in.Slot(v)
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
	return xpath2.Sequence{expr.XNode{T: &in.docs, Tok: n, Attr: -1}}, nil
}

// ProcessName is the local name of the instance's process
// (abx:getProcessName()).
func (in *Instance) ProcessName() string { return in.proc.Name.Local }

// PID is the instance id $ode:pid and abx:getProcessId() yield: a
// persistent instance's id, a fresh unique one for an in-memory instance.
func (in *Instance) PID() string {
	if in.id != "" {
		return in.id
	}
	if in.odePID == "" {
		in.odePID = persistNewID()
	}
	return in.odePID
}

// evalXPath2 evaluates an XPath 2.0 expression; ctx is the query's
// context node, the tree's root for an expression, nil for a condition.
func (in *Instance) evalXPath2(x *expr.Expr, ctx *etree.Element, at xmldoc.Pos) (xpath2.Sequence, error) {
	ev := &xp2Eval{in: in, x: x.X2, at: at}
	b := in.host.MemoryBounds()
	dc := &xpath2.DynamicContext{VariableAt: ev.value, MaxItems: b.MaxItems, MaxStringBytes: b.MaxStringBytes}
	switch {
	case x.X2.Query:
		dc.Item = expr.XNode{T: &in.docs, Tok: ctx, Attr: -1}
	case ctx != nil: // else a condition: no context item (XPDY0002)
		dc.Item = expr.XNode{T: &in.docs, Tok: in.root, Attr: -1, Doc: expr.DocNothing}
	}
	if x.X2.Links != nil {
		dc.Variables = func(space, local string) (xpath2.Sequence, bool) {
			v, ok := x.X2.Links[local]
			if space != expr.NsXP2Link || !ok {
				return nil, false
			}
			return xpath2.Sequence{xpath2.Boolean(in.Slot(v).Text() == "1")}, true
		}
	}
	seq, err := x.X2.X.Evaluate(dc)
	if err != nil {
		var f *faultValue
		if errors.As(err, &f) {
			return nil, f
		}
		var xf *expr.Fault
		if errors.As(err, &xf) {
			return nil, &faultValue{Name: BpelFault(xf.Name), Reason: xf.Reason, at: at}
		}
		return nil, in.faultf(at, "subLanguageExecutionFault", "evaluating %q: %v", x.Src, err)
	}
	return seq, nil
}

// condXPath2 is the effective boolean value of an XPath 2.0 condition.
func (in *Instance) condXPath2(x *expr.Expr, at xmldoc.Pos) (bool, error) {
	seq, err := in.evalXPath2(x, nil, at)
	if err != nil {
		return false, err
	}
	b, err := xpath2.EffectiveBooleanValue(seq)
	if err != nil {
		return false, in.faultf(at, "subLanguageExecutionFault", "condition %q: %v", x.Src, err)
	}
	return b, nil
}

// evalToXPath2CopyOp evaluates a general XPath 2.0 to-expression.
func evalToXPath2CopyOp(c *plan.CopyOp, in *Instance) (target, error) {
	v, err := in.Eval(c.To.X, in.root, c.Pos)
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
func (in *Instance) slotOf(tok etree.Token) *expr.Var {
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
			if i := e.Index(); i >= 0 && i < len(in.proc.Vars) {
				return in.proc.Vars[i]
			}
			return nil
		}
		e = p
	}
	return nil
}

// touchNode marks the variable holding tok changed.
func (in *Instance) touchNode(tok etree.Token) {
	if v := in.slotOf(tok); v != nil {
		in.touch(v)
	}
}

// currentEventDateTime is $ode:currentEventDateTime: when the message
// that started this run of the instance was received; the current time
// for a run a timer started, as ODE did when it had no event time.
func currentEventDateTime(in *Instance) (xpath2.Sequence, error) {
	t := in.host.Now()
	if in.trigger != nil && !in.trigger.Received.IsZero() {
		t = in.trigger.Received
	}
	a, err := xpath2.Cast(xpath2.Untyped(t.Format(time.RFC3339Nano)), xpath2.TDateTime, nil)
	if err != nil {
		return nil, fmt.Errorf("$ode:currentEventDateTime: %w", err)
	}
	return xpath2.Sequence{a}, nil
}
