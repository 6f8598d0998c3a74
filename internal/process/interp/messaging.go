package interp

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// partsMessage builds a message of type md from variables (<toParts>).
func (in *Instance) partsMessage(md *exchange.MessageDesc, parts []plan.PartMap) *exchange.Message {
	m := &exchange.Message{Parts: make(map[string]*etree.Element, len(parts))}
	if md != nil {
		m.Name = md.Name
	}
	for _, pm := range parts {
		s := in.Slot(pm.V)
		var val *etree.Element
		el := partElement(md, pm.Part)
		switch {
		case el.IsZero():
			val = expr.CopyTree(s)
			val.Space, val.Tag = "", pm.Part
		case typed(pm.V):
			// A type-typed variable for an element part: the part is the
			// element holding its value, as a copy to the part would
			// make it (its content replaced, WS-BPEL 8.4.2).
			val = expr.CopyTree(s)
			expr.RenameTo(val, el)
		default:
			val = expr.FirstElement(s)
		}
		if val != nil {
			m.Parts[pm.Part] = val
		}
	}
	return m
}

// partsInitialized raises bpel:uninitializedVariable when a variable that
// <toParts> (or an element variable standing for a message) maps to an
// element part holds no element: the message would lack the part.
func (in *Instance) partsInitialized(md *exchange.MessageDesc, parts []plan.PartMap, at xmldoc.Pos) error {
	if md == nil {
		return nil
	}
	for _, pm := range parts {
		s := in.Slot(pm.V)
		switch {
		case partElement(md, pm.Part).IsZero():
		case typed(pm.V) && (len(s.Child) > 0 || len(s.Attr) > 0):
		case expr.FirstElement(s) == nil:
			return in.faultf(at, "uninitializedVariable", "variable %s, for part %s, was never assigned", pm.V.Name, pm.Part)
		}
	}
	return nil
}

// storeParts copies the parts of m into variables (<fromParts>).
func (in *Instance) storeParts(m *exchange.Message, parts []plan.PartMap) {
	for _, pm := range parts {
		val := m.Parts[pm.Part]
		in.resetVar(pm.V)
		if val == nil {
			continue
		}
		s := in.Slot(pm.V)
		switch {
		case pm.V.Elem.IsZero():
			// A type-typed variable holds the part's content.
			for _, a := range val.Attr {
				s.CreateAttr(a.FullKey(), a.Value)
			}
			expr.CopyChildren(s, val, nil)
		default:
			s.AddChild(expr.CopyTree(val))
		}
	}
}

// partElement is the element of md's part named part; zero for a type
// part (or no md).
func partElement(md *exchange.MessageDesc, part string) exchange.QName {
	if md != nil {
		for _, p := range md.Parts {
			if p.Name == part {
				return p.Element
			}
		}
	}
	return exchange.QName{}
}

// typed reports a variable declared with a type (not a message or an
// element): its slot holds the value itself.
func typed(v *expr.Var) bool { return v.Msg == nil && v.Elem.IsZero() }

// initialized raises bpel:uninitializedVariable when message variable v
// is used before it was assigned: an element part with no element, or no
// part holding anything at all.
func (in *Instance) initialized(v *expr.Var, at xmldoc.Pos) error {
	if v.Msg == nil {
		return nil
	}
	s := in.Slot(v)
	empty := 0
	for i, pd := range v.Msg.Parts {
		w := s.Child[i].(*etree.Element)
		if pd.Element.IsZero() {
			if len(w.Child) == 0 && len(w.Attr) == 0 {
				empty++
			}
			continue
		}
		if expr.FirstElement(w) == nil {
			return in.faultf(at, "uninitializedVariable", "part %s of variable %s was never assigned", pd.Name, v.Name)
		}
	}
	if empty > 0 && empty == len(v.Msg.Parts) {
		return in.faultf(at, "uninitializedVariable", "variable %s was never assigned", v.Name)
	}
	return nil
}

// OpenRequest is a request-response message a receive or onMessage took
// and no reply has answered yet. A request whose reply comes in a later
// run stays open: its client waits (awaitReply) until a reply activity
// answers it or the reply timeout expires.
type OpenRequest struct {
	Ex  *exchange.Exchange
	mex string
	// State: 0 open, 1 answered, 2 given up (timeout); done, made when
	// a client starts waiting (under the instance's lock, as answer runs),
	// is closed when answered.
	State atomic.Int32
	Done  chan struct{}
}

// Answer delivers the reply, once.
func (r *OpenRequest) Answer(msg *exchange.Message, f *exchange.Fault) {
	if !r.State.CompareAndSwap(0, 1) {
		return
	}
	r.Ex.Respond(msg, f)
	if r.Done != nil {
		close(r.Done)
	}
}

// AwaitReply is returned by a run whose trigger request is still open:
// Dispatch waits for the reply after releasing the instance.
type AwaitReply struct {
	Req     *OpenRequest
	Timeout time.Duration
	Op      string
	// GaveUp, if set, runs when the wait times out (a persistent
	// instance's stashed requests drop the abandoned one).
	GaveUp func()
}

func (a *AwaitReply) Error() string { return "reply pending for " + a.Op }

// wait blocks until the request is answered or its reply timeout expires.
func (a *AwaitReply) wait() error {
	t := time.NewTimer(a.Timeout)
	defer t.Stop()
	select {
	case <-a.Req.Done:
		return nil
	case <-t.C:
	}
	if a.Req.State.CompareAndSwap(0, 2) {
		if a.GaveUp != nil {
			a.GaveUp()
		}
		return fmt.Errorf("no reply to %s within the reply timeout (%s): the instance is still running", a.Op, a.Timeout)
	}
	<-a.Req.Done
	return nil
}

// WaitForReply runs after Dispatch released the instance. While it
// waits for a later run's reply, the exchange is idle (exchange.Idler).
func WaitForReply(ctx context.Context, err error) error {
	if err == nil {
		return nil // the common case, without errors.As's allocation
	}
	var aw *AwaitReply
	if errors.As(err, &aw) {
		if id := exchange.IdlerOf(ctx); id != nil {
			id.Idle(exchange.WaitMessage)
			defer id.Busy(exchange.WaitMessage)
		}
		return aw.wait()
	}
	return err
}

// findRequest is the index in in.reqs of the open request a reply to
// pl.op (message exchange mex) answers, or -1.
func (in *Instance) findRequest(pl *plan.PartnerLink, op *exchange.Operation, mex string) int {
	for i, r := range in.reqs {
		if r.Ex.Endpoint == pl.Provided && r.Ex.Operation.Name == op.Name && r.mex == mex {
			return i
		}
	}
	return -1
}

// openRequestFor records that a receive took a request-response message.
func (in *Instance) openRequestFor(ex *exchange.Exchange, mex string, at xmldoc.Pos) error {
	for _, r := range in.reqs {
		if r.Ex.Endpoint == ex.Endpoint && r.Ex.Operation.Name == ex.Operation.Name && r.mex == mex {
			return in.faultf(at, "conflictingRequest", "a request for %s is already open (message exchange %q)", ex.Operation.Name, mex)
		}
	}
	r := &in.trigReq
	if ex != in.trigger || r.Ex != nil {
		r = &OpenRequest{}
	}
	r.Ex, r.mex = ex, mex
	if in.reqs == nil {
		in.reqs = in.reqsBuf[:0]
	}
	in.reqs = append(in.reqs, r)
	return nil
}

// MissingReplies answers the requests an ended instance never replied to
// with bpel:missingReply.
func (in *Instance) MissingReplies() {
	for _, r := range in.reqs {
		if r.Ex == in.trigger {
			continue // answered by finish with the run's outcome
		}
		f := &exchange.Fault{Name: BpelFault("missingReply"), Reason: fmt.Sprintf("the instance ended without replying to %s", r.Ex.Operation.Name)}
		if in.proc.InMemory || !in.host.Stored() {
			r.Answer(nil, f)
		} else {
			// Only once the end is stored (checkpoint, deliverReplies).
			in.out = append(in.out, pendingReply{Req: r, fault: f})
		}
	}
	in.reqs = nil
}

// TriggerRequest is the open request of the run's trigger, if any.
func (in *Instance) TriggerRequest() *OpenRequest {
	for _, r := range in.reqs {
		if r.Ex == in.trigger {
			return r
		}
	}
	return nil
}

// ExchangeFault is f as the answer to a request.
func (f *faultValue) ExchangeFault() *exchange.Fault {
	msg := f.data
	if msg == nil && f.elem != nil {
		msg = &exchange.Message{Parts: map[string]*etree.Element{f.elem.Tag: f.elem}}
	}
	reason := f.Reason
	if f.at.Line > 0 {
		reason = fmt.Sprintf("%s (at %s)", f.Reason, f.at)
	}
	return &exchange.Fault{Name: f.Name, Message: msg, Reason: reason}
}

// Respond answers request r. An in-memory instance answers at once, once
// what the next message needs is registered; a persistent one holds the
// reply (copied) until the state it describes is durable.
func (in *Instance) Respond(r *OpenRequest, msg *exchange.Message, f *exchange.Fault) {
	if r.Ex == in.trigger {
		in.answered = true
		// Work after the reply belongs to the instance, not to the
		// client's connection.
		in.ctx = in.host.BaseContext()
	}
	if r.Ex.Respond == nil {
		return
	}
	if in.proc.InMemory || !in.host.Stored() {
		if len(in.proc.Routes) > 0 {
			in.host.Answering(in)
		}
		r.Answer(msg, f)
		return
	}
	if f != nil {
		f = &exchange.Fault{Name: f.Name, Message: CopyMessage(f.Message), Reason: f.Reason}
	}
	in.out = append(in.out, pendingReply{Req: r, msg: CopyMessage(msg), fault: f})
}

// DeliverReplies answers the requests whose replies were held (Respond)
// until the state they describe was durable.
func (in *Instance) DeliverReplies() {
	for _, r := range in.out {
		r.Req.Answer(r.msg, r.fault)
	}
	in.out = in.out[:0]
}
