package interp

import (
	"bytes"
	"encoding/binary"
	"sort"

	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/xmlparse"
)

// Compensation and termination (WS-BPEL 2.0 sections 12.4 to 12.6).
//
// A scope that could ever be compensated (it has a compensationHandler,
// or a descendant scope has one: its default handler compensates them) is
// marked compensable at compile time. When such a scope completes
// successfully, a compRec is appended to the frame of its enclosing scope
// (or of the handler it ran in): the scope, a copy of its variables as
// they are at completion (the snapshot), and the records of its own
// completed children. Records are appended in completion order, so each
// enclosing scope instance holds the tree of its compensable completed
// children; a loop's body completing three times leaves three records.
//
// <compensateScope> and <compensate> run, in reverse completion order,
// the handlers of the records of the scope whose fault, compensation or
// termination handler they are in: each on a child thread whose private
// slots are the record's snapshot, so the handler sees its scope's
// variables as they were, and the enclosing ones as they are now. A
// record is removed when its handler starts: it runs at most once.
//
// When a fault handler (explicit, or the default one: compensate, then
// rethrow) takes over a scope, the scopes running inside it, except those
// the fault came through, are terminated; the termination handler of
// each (explicit, or the default: compensate its completed children) runs
// first, innermost first, then the fault handler. A fault inside a
// termination handler ends it and goes no further. <exit> runs nothing.
//
// Processes without any of this pay nothing: no record is made, fail()
// passes over scopes as before, and no activity is registered, so the
// activity numbers in their checkpoints are unchanged.

// compRec is a completed scope instance that may be compensated, or a
// termination handler to run; a scope frame's rec only collects kids.
type compRec struct {
	Sc   *plan.Scope
	Snap []privSlot
	Kids []*compRec
}

func stepHandlerRun(a *plan.HandlerRun, in *Instance, f *frame) (plan.Activity, bool, error) {
	if f.pc == 1 {
		return nil, true, nil
	}
	f.pc = 1
	body := a.Sc.Comp
	if a.Term {
		body = a.Sc.Term
	}
	if body == nil {
		body = in.proc.Comp.CompAll
	}
	return body, false, nil
}

func stepCompensate(a *plan.Compensate, in *Instance, _ *frame) (plan.Activity, bool, error) {
	if in.cur.kids > 0 {
		return nil, false, errJoin
	}
	ctx := in.compContext()
	if ctx == nil || ctx.rec == nil {
		return nil, true, nil
	}
	kids := ctx.rec.Kids
	for i := len(kids) - 1; i >= 0; i-- {
		r := kids[i]
		if a.Target != nil && r.Sc != a.Target {
			continue
		}
		ctx.rec.Kids = append(kids[:i:i], kids[i+1:]...)
		in.runHandler(r.Sc.CompAct, r)
		return nil, false, errJoin
	}
	return nil, true, nil
}

func stepTerminator(a *plan.Terminator, in *Instance, f *frame) (plan.Activity, bool, error) {
	if in.cur.kids > 0 {
		return nil, false, errJoin
	}
	if f.rec == nil || len(f.rec.Kids) == 0 {
		return nil, true, nil
	}
	last := len(f.rec.Kids) - 1
	r := f.rec.Kids[last]
	f.rec.Kids = f.rec.Kids[:last]
	in.runHandler(r.Sc.TermAct, r)
	return nil, false, errJoin
}

// runHandler spawns the thread running a handler for record r, with r's
// snapshot as its private variables.
func (in *Instance) runHandler(h *plan.HandlerRun, r *compRec) {
	t := in.spawn(h, r.Snap)
	t.stack[0].rec = r
	r.Snap = nil
	if len(t.priv) > 0 {
		in.hasPriv = true
	}
}

// compContext is the frame whose rec holds the completed children a
// compensate activity of the current thread works on: the innermost
// running fault handler's scope, or compensation or termination handler.
func (in *Instance) compContext() *frame {
	for th := in.cur; th != nil; th = th.parent {
		for k := len(th.stack) - 1; k >= 0; k-- {
			fr := &th.stack[k]
			switch fr.act.(type) {
			case *plan.HandlerRun:
				return fr
			case *plan.Scope:
				if fr.pc == scopeHandling {
					return fr
				}
			}
		}
	}
	return nil
}

// completed records the successful completion of compensable scope a,
// whose frame f is the current thread's top, with its enclosing scope (or
// handler).
func (in *Instance) completed(a *plan.Scope, f *frame) {
	r := &compRec{Sc: a}
	if f.rec != nil {
		r.Kids = f.rec.Kids
		f.rec = nil
	}
	for _, v := range a.SnapVars {
		r.Snap = append(r.Snap, privSlot{Slot: v.Slot, El: in.Slot(v).Copy()})
	}
	th, k := in.cur, len(in.cur.stack)-2
	for th != nil {
		for ; k >= 0; k-- {
			fr := &th.stack[k]
			switch fr.act.(type) {
			case *plan.Scope, *plan.HandlerRun:
				if fr.rec == nil {
					fr.rec = &compRec{}
				}
				fr.rec.Kids = append(fr.rec.Kids, r)
				return
			}
		}
		if th = th.parent; th != nil {
			k = len(th.stack) - 1
		}
	}
}

// terminations lists the termination handlers to run when a fault
// handler takes over the scope running on th (the fault came from t):
// one for each scope running in a thread under th, other than those the
// fault came through, that has one to run; innermost last. Each sees
// the private variables of the thread it was terminated in.
func (in *Instance) terminations(th, t *thread) *compRec {
	type job struct {
		r     *compRec
		depth int
	}
	var jobs []job
	in.deactivate()
	for _, x := range in.threads {
		if x == th || x.state == tDone || !x.isIn(th) || t.isIn(x) {
			continue
		}
		depth := 0
		for y := x; y != th; y = y.parent {
			depth++
		}
		for k := range x.stack {
			fr := &x.stack[k]
			sc, ok := fr.act.(*plan.Scope)
			if !ok || fr.pc != scopeBody || !sc.TermNeeded {
				continue
			}
			r := &compRec{Sc: sc, Snap: privChain(x, th)}
			if fr.rec != nil {
				r.Kids = fr.rec.Kids
			}
			jobs = append(jobs, job{r: r, depth: depth<<16 | k})
		}
	}
	if len(jobs) == 0 {
		return nil
	}
	sort.SliceStable(jobs, func(i, j int) bool { return jobs[i].depth < jobs[j].depth })
	rec := &compRec{Kids: make([]*compRec, len(jobs))}
	for i, j := range jobs {
		rec.Kids[i] = j.r
	}
	return rec
}

// privChain gathers the private variables x sees that th does not (the
// innermost copy of each slot); the tree must be deactivated.
func privChain(x, th *thread) []privSlot {
	var out []privSlot
	for y := x; y != nil && y != th; y = y.parent {
	next:
		for _, ps := range y.priv {
			for _, o := range out {
				if o.Slot == ps.Slot {
					continue next
				}
			}
			out = append(out, ps)
		}
	}
	return out
}

// framesVersionComp is framesVersionEPRs (its endpoint list always
// present) with each frame followed by its compensation record; it is
// written only when some frame has one.
const framesVersionComp = 4

// hasRecs reports whether a frame of a live thread holds a record.
func (in *Instance) hasRecs() bool {
	for _, t := range in.threads {
		for i := range t.stack {
			if t.stack[i].rec != nil {
				return true
			}
		}
	}
	return false
}

// appendRec encodes r (nil included) and its children.
func appendRec(b []byte, r *compRec) []byte {
	if r == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	var id uint64
	if r.Sc != nil {
		id = uint64(r.Sc.ID()) + 1
	}
	b = binary.AppendUvarint(b, id)
	b = appendSlots(b, r.Snap)
	b = binary.AppendUvarint(b, uint64(len(r.Kids)))
	for _, k := range r.Kids {
		b = appendRec(b, k)
	}
	return b
}

// maxRecDepth bounds the nesting a stored record may claim.
const maxRecDepth = 64

// readRec decodes what appendRec wrote.
func (in *Instance) readRec(r *persist.Reader, depth int) (*compRec, error) {
	if len(r.B) == 0 || depth > maxRecDepth {
		return nil, ErrBadFrames
	}
	present := r.B[0]
	r.B = r.B[1:]
	switch present {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, ErrBadFrames
	}
	rec := &compRec{}
	if id := r.Uvarint(); id > 0 {
		if id > uint64(len(in.proc.Acts)) {
			return nil, ErrBadFrames
		}
		sc, ok := in.proc.Acts[id-1].(*plan.Scope)
		if !ok || sc.CompAct == nil {
			return nil, ErrBadFrames
		}
		rec.Sc = sc
	}
	var err error
	if rec.Snap, err = in.readSlots(r); err != nil {
		return nil, err
	}
	n := r.Uvarint()
	if r.Err != nil || n > uint64(len(r.B)) {
		return nil, ErrBadFrames
	}
	for i := uint64(0); i < n; i++ {
		k, err := in.readRec(r, depth+1)
		if err != nil {
			return nil, err
		}
		if k == nil || k.Sc == nil {
			return nil, ErrBadFrames
		}
		rec.Kids = append(rec.Kids, k)
	}
	return rec, r.Err
}

// appendSlots encodes variable slots: each slot number and its XML.
func appendSlots(b []byte, slots []privSlot) []byte {
	b = binary.AppendUvarint(b, uint64(len(slots)))
	ws := xmlparse.WriteSettings()
	for _, ps := range slots {
		b = binary.AppendUvarint(b, uint64(ps.Slot))
		var buf bytes.Buffer
		ps.El.WriteTo(&buf, &ws)
		b = appendString(b, buf.String())
	}
	return b
}

// readSlots decodes what appendSlots wrote.
func (in *Instance) readSlots(r *persist.Reader) ([]privSlot, error) {
	np := r.Uvarint()
	if r.Err != nil || np > uint64(len(r.B)) {
		return nil, ErrBadFrames
	}
	var out []privSlot
	for j := uint64(0); j < np && r.Err == nil; j++ {
		slot := r.Uvarint()
		data := r.String()
		if slot < 1 || slot > uint64(len(in.proc.Vars)) {
			return nil, ErrBadFrames
		}
		el, err := xmlparse.Stored(data)
		if err != nil {
			return nil, ErrBadFrames
		}
		out = append(out, privSlot{Slot: int(slot), El: el})
	}
	return out, r.Err
}
