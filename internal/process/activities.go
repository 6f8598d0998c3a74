package process

import (
	"fmt"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/bpel"
)

func stepSequence(a *sequence, _ *instance, f *frame) (activity, bool, error) {
	if f.pc >= len(a.children) {
		return nil, true, nil
	}
	f.pc++
	return a.children[f.pc-1], f.pc == len(a.children), nil
}

func stepIfAct(a *ifAct, in *instance, _ *frame) (activity, bool, error) {
	for i, c := range a.conds {
		ok, err := in.cond(c, a.pos)
		if err != nil {
			return nil, false, err
		}
		if ok {
			eliminateBranchLinks(a.dead, in, i)
			return a.branches[i], true, nil
		}
	}
	eliminateBranchLinks(a.dead, in, len(a.conds))
	return a.els, true, nil
}

func stepWhile(a *while, in *instance, _ *frame) (activity, bool, error) {
	ok, err := in.cond(a.cond, a.pos)
	if err != nil || !ok {
		return nil, true, err
	}
	if err := in.ctx.Err(); err != nil {
		return nil, false, fmt.Errorf("while at %s: %w", a.pos, err)
	}
	return a.body, false, nil
}

func (in *instance) cond(c *expr, at bpel.Pos) (bool, error) {
	if c.x2 != nil && c.fast == nil {
		return in.condXPath2(c, at)
	}
	v, err := in.eval(c, in.root, at)
	if err != nil {
		return false, err
	}
	return xpathBool(v), nil
}

func stepEmpty(a *empty, _ *instance, _ *frame) (activity, bool, error) { return nil, true, nil }

func stepExit(a *exit, in *instance, _ *frame) (activity, bool, error) {
	in.exited = true
	return nil, true, nil
}

func stepThrow(a *throw, in *instance, _ *frame) (activity, bool, error) {
	fv := &faultValue{name: a.faultName, at: a.pos}
	if a.v != nil {
		if a.v.msg != nil {
			fv.data = copyMessage(in.message(a.v))
		} else if e := firstElement(in.slot(a.v)); e != nil {
			fv.elem = copyTree(e)
		}
	}
	return nil, false, fv
}

func stepReceive(a *receive, in *instance, _ *frame) (activity, bool, error) {
	ok, err := in.take(&a.inbound, a.pos)
	if err != nil || ok {
		return nil, ok, err
	}
	if err := in.await(&a.inbound, a.pos); err != nil {
		return nil, false, err
	}
	return nil, false, errBlocked
}

func stepReply(a *reply, in *instance, _ *frame) (activity, bool, error) {
	mex := a.mex
	if a.ev != nil {
		mex = requestMexOnEvent(a.ev, in)
	}
	i := in.findRequest(a.pl, a.op, mex)
	if i < 0 {
		return nil, false, in.faultf(a.pos, "missingRequest", "no open request for %s.%s", a.pl.name, a.op.Name)
	}
	var msg *exchange.Message
	switch {
	case a.toParts != nil:
		md := a.op.Output
		if !a.faultName.IsZero() {
			md = a.op.Faults[a.faultName.Local]
		}
		msg = in.partsMessage(md, a.toParts)
	case a.v != nil:
		if err := in.initialized(a.v, a.pos); err != nil {
			return nil, false, err
		}
		msg = in.message(a.v)
	}
	if msg != nil && a.faultName.IsZero() {
		if err := in.applyCorrelations(a.corrs, msg, true, a.pos); err != nil {
			return nil, false, err
		}
	}
	var f *exchange.Fault
	if !a.faultName.IsZero() {
		f = &exchange.Fault{Name: a.faultName, Message: msg}
		msg = nil
	}
	r := in.reqs[i]
	in.reqs = append(in.reqs[:i], in.reqs[i+1:]...)
	in.respond(r, msg, f)
	return nil, true, nil
}

func stepAssign(a *assign, in *instance, _ *frame) (activity, bool, error) {
	if a.validate != nil {
		if err := applyValidatedAssign(a, in); err != nil {
			return nil, false, err
		}
		return nil, true, nil
	}
	for _, c := range a.copies {
		if err := applyCopyOp(c, in); err != nil {
			return nil, false, err
		}
	}
	return nil, true, nil
}

// copyMessage deep-copies a message, for bindings that share trees.
func copyMessage(m *exchange.Message) *exchange.Message {
	if m == nil {
		return nil
	}
	c := &exchange.Message{Name: m.Name, Parts: make(map[string]*etree.Element, len(m.Parts))}
	for k, v := range m.Parts {
		if v != nil {
			c.Parts[k] = copyTree(v)
		}
	}
	return c
}
