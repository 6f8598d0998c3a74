package interp

import (
	"fmt"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

func stepSequence(a *plan.Sequence, _ *Instance, f *frame) (plan.Activity, bool, error) {
	if f.pc >= len(a.Children) {
		return nil, true, nil
	}
	f.pc++
	return a.Children[f.pc-1], f.pc == len(a.Children), nil
}

func stepIfAct(a *plan.IfAct, in *Instance, _ *frame) (plan.Activity, bool, error) {
	for i, c := range a.Conds {
		ok, err := in.Cond(c, a.Pos)
		if err != nil {
			return nil, false, err
		}
		if ok {
			eliminateBranchLinks(a.Dead, in, i)
			return a.Branches[i], true, nil
		}
	}
	eliminateBranchLinks(a.Dead, in, len(a.Conds))
	return a.Els, true, nil
}

func stepWhile(a *plan.While, in *Instance, _ *frame) (plan.Activity, bool, error) {
	ok, err := in.Cond(a.Cond, a.Pos)
	if err != nil || !ok {
		return nil, true, err
	}
	if err := in.ctx.Err(); err != nil {
		return nil, false, fmt.Errorf("while at %s: %w", a.Pos, err)
	}
	return a.Body, false, nil
}

// Cond evaluates condition c of the activity at position at.
func (in *Instance) Cond(c *expr.Expr, at xmldoc.Pos) (bool, error) {
	if c.X2 != nil && c.Fast == nil {
		return in.condXPath2(c, at)
	}
	v, err := in.Eval(c, in.root, at)
	if err != nil {
		return false, err
	}
	return expr.XpathBool(v), nil
}

func stepEmpty(a *plan.Empty, _ *Instance, _ *frame) (plan.Activity, bool, error) {
	return nil, true, nil
}

func stepExit(a *plan.Exit, in *Instance, _ *frame) (plan.Activity, bool, error) {
	in.exited = true
	return nil, true, nil
}

func stepThrow(a *plan.Throw, in *Instance, _ *frame) (plan.Activity, bool, error) {
	fv := &faultValue{Name: a.FaultName, at: a.Pos}
	if a.V != nil {
		if a.V.Msg != nil {
			fv.data = CopyMessage(in.message(a.V))
		} else if e := expr.FirstElement(in.Slot(a.V)); e != nil {
			fv.elem = expr.CopyTree(e)
		}
	}
	return nil, false, fv
}

func stepReceive(a *plan.Receive, in *Instance, _ *frame) (plan.Activity, bool, error) {
	ok, err := in.take(&a.Inbound, a.Pos)
	if err != nil || ok {
		return nil, ok, err
	}
	if err := in.await(&a.Inbound, a.Pos); err != nil {
		return nil, false, err
	}
	return nil, false, errBlocked
}

func stepReply(a *plan.Reply, in *Instance, _ *frame) (plan.Activity, bool, error) {
	mex := a.Mex
	if a.Ev != nil {
		mex = requestMexOnEvent(a.Ev, in)
	}
	i := in.findRequest(a.Pl, a.Op, mex)
	if i < 0 {
		return nil, false, in.faultf(a.Pos, "missingRequest", "no open request for %s.%s", a.Pl.Name, a.Op.Name)
	}
	var msg *exchange.Message
	switch {
	case a.ToParts != nil:
		md := a.Op.Output
		if !a.FaultName.IsZero() {
			md = a.Op.Faults[a.FaultName.Local]
		}
		if err := in.partsInitialized(md, a.ToParts, a.Pos); err != nil {
			return nil, false, err
		}
		msg = in.partsMessage(md, a.ToParts)
	case a.V != nil:
		if err := in.initialized(a.V, a.Pos); err != nil {
			return nil, false, err
		}
		msg = in.message(a.V)
	}
	if msg != nil && a.FaultName.IsZero() {
		if err := in.ApplyCorrelations(a.Corrs, msg, true, a.Pos); err != nil {
			return nil, false, err
		}
	}
	var f *exchange.Fault
	if !a.FaultName.IsZero() {
		f = &exchange.Fault{Name: a.FaultName, Message: msg}
		msg = nil
	}
	r := in.reqs[i]
	in.reqs = append(in.reqs[:i], in.reqs[i+1:]...)
	in.Respond(r, msg, f)
	return nil, true, nil
}

// stepAssign runs assign a: its copies in order, then the validation a
// asks for, all or nothing (WS-BPEL 2.0 8.4): a fault takes back the
// changes in.undo logged.
func stepAssign(a *plan.Assign, in *Instance, _ *frame) (plan.Activity, bool, error) {
	in.undoing = true
	for i, c := range a.Copies {
		in.undoWrite = a.Validate != nil || i < len(a.Copies)-1
		if err := applyCopyOp(c, in); err != nil {
			in.rollback()
			if a.Validate != nil {
				return nil, false, err
			}
			return nil, false, inActivity(err, &a.Base)
		}
	}
	if a.Validate != nil {
		if err := in.validate(a.Validate, a.Pos); err != nil {
			in.rollback()
			return nil, false, err
		}
	}
	in.undoing = false
	in.undo.Reset()
	return nil, true, nil
}

// rollback takes back what the assign running changed; the variables'
// sizes are measured again when next charged.
func (in *Instance) rollback() {
	in.undoing = false
	in.undo.Rollback()
	for i := range in.root.Child {
		in.mem.Forget(i)
	}
}

// CopyMessage deep-copies a message, for bindings that share trees.
func CopyMessage(m *exchange.Message) *exchange.Message {
	if m == nil {
		return nil
	}
	c := &exchange.Message{Name: m.Name, Parts: make(map[string]*etree.Element, len(m.Parts))}
	for k, v := range m.Parts {
		if v != nil {
			c.Parts[k] = expr.CopyTree(v)
		}
	}
	return c
}
