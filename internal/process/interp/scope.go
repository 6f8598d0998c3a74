package interp

import (
	"errors"
	"fmt"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
)

// Scope frame phases (frame.pc).
const (
	scopeStart = iota
	scopeBody
	scopeHandling
)

func stepScope(a *plan.Scope, in *Instance, f *frame) (plan.Activity, bool, error) {
	switch f.pc {
	case scopeStart:
		if a.Isolated {
			if in.isoHolder != nil && in.isoHolder != in.cur && !in.cur.isIn(in.isoHolder) {
				return nil, false, errLinks
			}
			if in.isoHolder == nil {
				in.isoHolder = in.cur
				f.k = 1
			}
		}
		if !a.IsProcess {
			for _, v := range a.Vars {
				in.resetVar(v)
			}
			for _, op := range a.Inits {
				if err := applyCopyOp(op, in); err != nil {
					return nil, false, scopeInitFailure(err)
				}
			}
			for _, name := range a.CorrSets {
				delete(in.corr, name)
			}
			for _, pl := range a.Plinks {
				delete(in.eprs, pl)
			}
		}
		f.pc = scopeBody
		if a.Events != nil {
			// The body runs on a thread of its own, next to the
			// listeners; this thread joins them (events.go).
			in.spawn(a.Body, nil)
			startHandlersEventHandlers(a.Events, in)
			return nil, false, errJoin
		}
		return a.Body, false, nil
	default:
		if a.Events != nil && f.pc == scopeBody && in.cur.kids > 0 {
			return nil, false, errJoin
		}
		in.cur.scopeFaulted = f.pc == scopeHandling
		if f.pc == scopeHandling {
			// The links leaving a scope whose fault handler ran are dead
			// (11.6.2), once the handler is done: the termination
			// handlers of the scopes it terminated, and the handler
			// itself, may set links leaving it first (12.6, 11.6.1).
			for _, l := range a.Sources {
				in.decideLink(l, false)
			}
		}
		if a.Compensable && f.pc == scopeBody {
			in.completed(a, f)
		}
		if f.k == 1 && in.isoHolder == in.cur {
			in.isoHolder = nil
			in.linksChanged = true
		}
		return nil, true, nil
	}
}

// scopeInitFailure turns a failed variable initialization into the
// standard fault, thrown to the enclosing scope.
func scopeInitFailure(err error) error {
	var fv *faultValue
	if errors.As(err, &fv) {
		return &faultValue{Name: BpelFault("scopeInitializationFailure"), Reason: fv.Error(), at: fv.at}
	}
	return err
}

// resetVar makes v uninitialized again (a scope starts).
func (in *Instance) resetVar(v *expr.Var) {
	in.touch(v)
	s := in.Slot(v)
	expr.ClearChildren(s)
	s.Attr = s.Attr[:0]
	if v.Msg != nil {
		for _, p := range v.Msg.Parts {
			s.CreateElement(p.Name)
		}
	}
}

// fail routes err raised in thread t. A BPEL fault goes to the innermost
// enclosing scope (in t or its ancestors) that is running its body and has
// a handler for it: the scope's running activities are terminated (the
// termination handlers of the scopes among them run first, compensate.go)
// and the handler runs in their place. A scope with no matching handler
// passes the fault on, through its default handler (compensate, then
// rethrow) when it has completed children to compensate or scopes to
// terminate. Anything else, and a fault no scope catches, ends the
// instance.
func (in *Instance) fail(t *thread, err error) error {
	var fv *faultValue
	if !errors.As(err, &fv) {
		return err
	}
	cs, ok := in.findCatch(t, fv, false)
	if !ok {
		return &errUncaught{F: fv}
	}
	th, k := cs.th, cs.k
	fr := &th.stack[k]
	if cs.term {
		// A fault inside a termination handler ends that handler and goes
		// no further (12.6).
		in.kill(th)
		th.stack = th.stack[:k+1]
		fr.pc = 1
		th.state = tReady
		in.activate(th)
		return nil
	}
	sc := cs.sc
	var terms *compRec
	if sc.SubTerm {
		terms = in.terminations(th, t)
	}
	in.kill(th)
	th.stack = th.stack[:k+1]
	th.state = tReady
	fr.pc, fr.fault = scopeHandling, fv
	if sc.IsProcess && cs.explicit {
		in.inHandler = fv
	}
	if in.isoHolder != nil && in.isoHolder.isIn(th) && in.isoHolder != th {
		in.isoHolder = nil
		in.linksChanged = true
	}
	in.activate(th)
	if cs.v != nil {
		in.resetVar(cs.v)
		in.setFaultVar(cs.v, fv)
	}
	th.stack = append(th.stack, frame{act: cs.act})
	if terms != nil {
		// The terminated scopes' termination handlers run first.
		th.stack = append(th.stack, frame{act: in.proc.Comp.Terminator, rec: terms})
	}
	return nil
}

// handlerFaultHandlers picks the handler for fv: a catch chosen by the rules of
// WS-BPEL 2.0 section 12.5, else catchAll.
func handlerFaultHandlers(h *plan.FaultHandlers, fv *faultValue) (plan.Activity, *expr.Var) {
	if c := matchFaultHandlers(h, fv); c != nil {
		return c.Act, c.V
	}
	if h.CatchAll != nil {
		return h.CatchAll, nil
	}
	return nil, nil
}

// matchFaultHandlers picks the catch for fv (WS-BPEL 2.0 section 12.5): a catch with
// the fault's name and a variable of the fault data's type; else one with
// the name and no variable; else one with no name and a variable of the
// data's type. A fault message of one element part matches a
// faultElement of that element.
func matchFaultHandlers(h *plan.FaultHandlers, fv *faultValue) *plan.Catch {
	typeOK := func(c *plan.Catch) bool {
		if c.V == nil {
			return false
		}
		if c.V.Msg != nil {
			return fv.data != nil && (fv.data.Name.IsZero() || fv.data.Name == c.V.Msg.Name)
		}
		el := fv.element()
		return el != nil && (c.V.Elem.IsZero() || (el.NamespaceURI() == c.V.Elem.Space && el.Tag == c.V.Elem.Local))
	}
	for _, c := range h.Catches {
		if c.FaultName == fv.Name && c.V != nil && typeOK(c) {
			return c
		}
	}
	for _, c := range h.Catches {
		if c.FaultName == fv.Name && c.V == nil {
			return c
		}
	}
	for _, c := range h.Catches {
		if c.FaultName.IsZero() && typeOK(c) {
			return c
		}
	}
	return nil
}

// element is the fault's data as one element: an element fault, or a
// message fault of a single element part.
func (f *faultValue) element() *etree.Element {
	if f.elem != nil {
		return f.elem
	}
	if f.data != nil && len(f.data.Parts) == 1 {
		for _, p := range f.data.Parts {
			return p
		}
	}
	return nil
}

func (in *Instance) setFaultVar(v *expr.Var, fv *faultValue) {
	if v.Msg != nil && fv.data != nil {
		in.StoreMessage(v, CopyMessage(fv.data))
		return
	}
	if el := fv.element(); el != nil {
		in.touch(v)
		s := in.Slot(v)
		expr.ClearChildren(s)
		s.AddChild(expr.CopyTree(el))
	}
}

func stepRethrow(a *plan.Rethrow, in *Instance, _ *frame) (plan.Activity, bool, error) {
	for th := in.cur; th != nil; th = th.parent {
		for k := len(th.stack) - 1; k >= 0; k-- {
			fr := &th.stack[k]
			if _, ok := fr.act.(*plan.Scope); ok && fr.pc == scopeHandling && fr.fault != nil {
				return nil, false, fr.fault
			}
		}
	}
	return nil, false, in.faultf(a.Pos, "missingFault", "<rethrow> outside a fault handler")
}

// faultFromPartner turns a partner's fault answer (err) into a BPEL
// fault, or returns nil for a failure. A declared fault keeps its name
// and message. A SOAP fault the operation does not declare whose detail
// holds one element is thrown named by that element's QName, with the
// element as its data (docs/bpel.md says why); one without detail, with
// text only or several elements, and any undeclared fault under
// compatibility mode ODE (undeclaredFail), is a failure.
func faultFromPartner(err error, a *plan.Invoke, undeclaredFail bool) *faultValue {
	var flt *exchange.Fault
	if errors.As(err, &flt) {
		return &faultValue{Name: flt.Name, data: flt.Message, Reason: flt.Reason, at: a.Pos}
	}
	var uf *exchange.UndeclaredFault
	if undeclaredFail || !errors.As(err, &uf) || len(uf.Detail) != 1 {
		return nil
	}
	d := uf.Detail[0]
	name := exchange.QName{Space: d.NamespaceURI(), Local: d.Tag}
	return &faultValue{Name: name, elem: d, Reason: fmt.Sprintf("undeclared SOAP fault %s from %s.%s: %s", uf.Code.Local, a.Pl.Name, a.Op.Name, uf.Reason), at: a.Pos}
}
