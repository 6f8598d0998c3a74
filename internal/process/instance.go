package process

import (
	"context"
	"errors"
	"fmt"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/bpel"
)

// activity is a compiled activity. step advances frame f of instance in by
// one move: it may push a child to run next, report the frame done, or fail
// with a *faultValue (a BPEL fault) or another error (a system failure).
type activity interface {
	step(in *instance, f *frame) (push activity, done bool, err error)
	where() bpel.Pos
}

// frame is the explicit state of one running activity: which activity and
// how far it got. An instance's frames are plain data, so a persistent
// instance can be checkpointed and resumed.
type frame struct {
	act activity
	pc  int
}

// instance is one running process instance: its variables (an etree tree
// whose root's children are the variables' slots) and its frames.
type instance struct {
	p     *Process
	e     *Engine
	ctx   context.Context
	root  *etree.Element
	stack []frame

	// ex is the exchange that created the instance; pending until the
	// reply activity answers it.
	ex      *exchange.Exchange
	replied bool
	// inHandler is set while a process-level fault handler runs.
	inHandler *faultValue
	exited    bool
}

// errUncaught wraps a BPEL fault that no handler caught.
type errUncaught struct{ f *faultValue }

func (e *errUncaught) Error() string { return "uncaught " + e.f.Error() }

func newInstance(e *Engine, p *Process, ctx context.Context, ex *exchange.Exchange) *instance {
	root := etree.NewElement("")
	for _, v := range p.vars {
		root.AddChild(v.newSlot())
	}
	return &instance{p: p, e: e, ctx: ctx, root: root, ex: ex, stack: make([]frame, 0, 8)}
}

func (in *instance) slot(v *variable) *etree.Element {
	return in.root.Child[v.slot-1].(*etree.Element)
}

// run initializes variables and runs the instance's frames to quiescence.
// It returns nil when the instance completed (normally or after a fault
// handler), an *errUncaught for an unhandled fault, or a system error.
func (in *instance) run() error {
	for _, v := range in.p.inits {
		if err := v.init.apply(in); err != nil {
			return in.fail(err)
		}
	}
	in.stack = append(in.stack, frame{act: in.p.root})
	for len(in.stack) > 0 {
		if in.exited {
			in.stack = in.stack[:0]
			break
		}
		top := &in.stack[len(in.stack)-1]
		push, done, err := top.act.step(in, top)
		if err != nil {
			if err = in.fail(err); err != nil {
				return err
			}
			continue
		}
		if done {
			in.stack = in.stack[:len(in.stack)-1]
		}
		if push != nil {
			in.stack = append(in.stack, frame{act: push})
		}
	}
	if in.inHandler != nil {
		return errHandled
	}
	return nil
}

// errHandled reports that the instance ended in a process-level fault
// handler: it completed, but as faulted.
var errHandled = errors.New("instance faulted; fault handled by the process")

// fail routes err: a BPEL fault goes to the process's fault handlers (the
// only scope this engine has so far); anything else ends the instance.
func (in *instance) fail(err error) error {
	var fv *faultValue
	if !errors.As(err, &fv) {
		return err
	}
	if in.inHandler != nil {
		return &errUncaught{f: fv} // a fault inside a fault handler
	}
	h := in.p.handlers
	if h != nil {
		if c := h.match(fv); c != nil {
			in.stack = in.stack[:0]
			in.inHandler = fv
			if c.v != nil {
				if err := in.setFaultVar(c.v, fv); err != nil {
					return err
				}
			}
			in.stack = append(in.stack, frame{act: c.act})
			return nil
		}
		if h.catchAll != nil {
			in.stack = in.stack[:0]
			in.inHandler = fv
			in.stack = append(in.stack, frame{act: h.catchAll})
			return nil
		}
	}
	return &errUncaught{f: fv}
}

// match picks the catch for fv (WS-BPEL 2.0 section 12.5, simplified:
// name and matching data, then name alone, then data type alone).
func (h *faultHandlers) match(fv *faultValue) *catch {
	typeOK := func(c *catch) bool {
		if c.v == nil {
			return false
		}
		if c.v.msg != nil {
			return fv.data != nil && (fv.data.Name.IsZero() || fv.data.Name == c.v.msg.Name)
		}
		return fv.elem != nil
	}
	for _, c := range h.catches {
		if c.faultName == fv.name && c.v != nil && typeOK(c) {
			return c
		}
	}
	for _, c := range h.catches {
		if c.faultName == fv.name && c.v == nil {
			return c
		}
	}
	for _, c := range h.catches {
		if c.faultName.IsZero() && typeOK(c) {
			return c
		}
	}
	return nil
}

func (in *instance) setFaultVar(v *variable, fv *faultValue) error {
	s := in.slot(v)
	if v.msg != nil && fv.data != nil {
		in.storeMessage(v, fv.data)
		return nil
	}
	if fv.elem != nil {
		clearChildren(s)
		s.AddChild(fv.elem.Copy())
	}
	return nil
}

// storeMessage moves the parts of m into message variable v. The parts
// become the instance's: the caller must not use them afterwards.
func (in *instance) storeMessage(v *variable, m *exchange.Message) {
	s := in.slot(v)
	for i, pd := range v.msg.Parts {
		wrapper := s.Child[i].(*etree.Element)
		val := m.Parts[pd.Name]
		if pd.Element.IsZero() {
			// Type-typed part: the value is the wrapper itself.
			if val == nil {
				val = etree.NewElement(pd.Name)
			} else {
				val.Space, val.Tag = "", pd.Name
			}
			s.RemoveChildAt(i)
			s.InsertChildAt(i, val)
			continue
		}
		clearChildren(wrapper)
		if val != nil {
			wrapper.AddChild(val)
		}
	}
}

// message builds a Message from variable v's parts. The part elements are
// the instance's own; a binding that keeps them must copy.
func (in *instance) message(v *variable) *exchange.Message {
	s := in.slot(v)
	m := &exchange.Message{Name: v.msg.Name, Parts: make(map[string]*etree.Element, len(v.msg.Parts))}
	for i, pd := range v.msg.Parts {
		w := s.Child[i].(*etree.Element)
		if pd.Element.IsZero() {
			m.Parts[pd.Name] = w
			continue
		}
		if c := firstElement(w); c != nil {
			m.Parts[pd.Name] = c
		}
	}
	return m
}

func firstElement(e *etree.Element) *etree.Element {
	for _, c := range e.Child {
		if ce, ok := c.(*etree.Element); ok {
			return ce
		}
	}
	return nil
}

// clearChildren removes every child token of e.
func clearChildren(e *etree.Element) {
	for n := len(e.Child); n > 0; n-- {
		e.RemoveChildAt(n - 1)
	}
}

func (in *instance) faultf(at bpel.Pos, name string, format string, args ...any) *faultValue {
	return &faultValue{name: bpelFault(name), reason: fmt.Sprintf(format, args...), at: at}
}
