package interp

import (
	"github.com/orchd/orchd/internal/process/plan"
)

// statusDeriver derives the per-activity statuses of a snapshot (see
// Snapshot) from the instance's frames.
type statusDeriver struct {
	in   *Instance
	acts []plan.Activity
	st   []ActStatus
	kids [][]int
	// topPc is the program counter of an activity's frame found on top of
	// a ready thread's stack (a sequence between two children), -1 when
	// none.
	topPc []int
	fault []string
	start []int64
}

// activitySnaps are the statuses of the instance's plan activities,
// indexed by id (nil when the plan has no outline).
func (in *Instance) activitySnaps() []ActivitySnap {
	p := in.proc
	if len(p.ActParent) != len(p.Acts) || len(p.Acts) == 0 {
		return nil
	}
	n := len(p.Acts)
	d := &statusDeriver{in: in, acts: p.Acts, st: make([]ActStatus, n), kids: make([][]int, n), topPc: make([]int, n), fault: make([]string, n)}
	for i, par := range p.ActParent {
		d.topPc[i] = -1
		if par >= 0 && int(par) < n {
			d.kids[par] = append(d.kids[par], i)
		}
	}
	d.frames()
	d.ancestors(p.ActParent)
	for id := range d.st {
		if d.st[id].live() {
			d.within(id)
		}
	}
	out := make([]ActivitySnap, n)
	for id, a := range p.Acts {
		r := ref(a)
		if _, ok := a.(*plan.HandlerRun); ok {
			r.Kind, r.Name = "", "" // a construct: it copies its scope's element
		}
		if a == p.Root {
			r.Kind, r.Name = "process", p.Name.Local
		}
		out[id] = ActivitySnap{ActRef: r, Parent: int(p.ActParent[id]), Status: d.st[id], Fault: d.fault[id]}
	}
	if in.timing != nil {
		for _, m := range in.timing.marks {
			if m.act >= 0 && m.act < n && out[m.act].Status.live() && (out[m.act].Start.IsZero() || m.at.Before(out[m.act].Start)) {
				out[m.act].Start = m.at
			}
		}
	}
	return out
}

// set raises activity id's status to s when s says more (a failure over
// a wait over running, any of them over not reached).
func (d *statusDeriver) set(id int, s ActStatus) {
	if id < 0 || id >= len(d.st) {
		return
	}
	if cur := d.st[id]; cur == ActNotReached || (cur.live() && s.live() && s > cur) {
		d.st[id] = s
	}
}

// frames marks the activities with a frame on a live thread.
func (d *statusDeriver) frames() {
	var handling []*frame // scope frames running a fault handler
	for _, t := range d.in.threads {
		if t.state == tDone || len(t.stack) == 0 {
			continue
		}
		last := len(t.stack) - 1
		for k := range t.stack {
			f := &t.stack[k]
			id := f.act.ID()
			s := ActRunning
			if k == last {
				switch {
				case failedFrame(f):
					s = ActFailed
				case t.state == tWaiting || t.state == tLinks:
					s = ActWaiting
				case t.state == tReady && id >= 0 && id < len(d.topPc):
					d.topPc[id] = f.pc
				}
			}
			d.set(id, s)
			if sc, ok := f.act.(*plan.Scope); ok && f.pc == scopeHandling && sc.Body != nil {
				handling = append(handling, f)
			}
		}
	}
	// Once every live activity is known: what ran in a faulted body is
	// unknown, except what runs still (a compensation handler of a scope
	// inside it).
	for _, f := range handling {
		body := f.act.(*plan.Scope).Body.ID()
		d.mark(body, ActFaulted)
		if f.fault != nil && body < len(d.fault) {
			d.fault[body] = f.fault.Name.String()
		}
	}
}

// ancestors marks running the activities enclosing a live one in the
// plan: a sequence or an if hands its frame to its last child, so they
// need not have a frame of their own. A compensation handler that runs
// makes its scope compensated instead (the scope completed earlier);
// the walk stops there, at a termination handler, and at the constructs
// a thread running a handler starts from (shared by every scope, or
// placed in the plan by where they were compiled, not where they run).
func (d *statusDeriver) ancestors(parent []int32) {
	for id := range d.st {
		if !d.st[id].live() {
			continue
		}
		for x := id; !d.standalone(x); {
			p := int(parent[x])
			if p < 0 {
				break
			}
			if sc, ok := d.acts[p].(*plan.Scope); ok && (isAct(sc.Comp, x) || isAct(sc.Term, x)) {
				if isAct(sc.Comp, x) && !d.st[p].live() {
					d.st[p] = ActCompensated
					if b := sc.Body; b != nil && !d.st[b.ID()].live() {
						d.st[b.ID()] = ActNotReached // whatever a faulted enclosing scope said
						d.complete(b.ID())
					}
				}
				break
			}
			if d.st[p] != ActNotReached {
				break
			}
			d.st[p] = ActRunning
			x = p
		}
	}
}

// isAct reports whether a is activity id.
func isAct(a plan.Activity, id int) bool { return a != nil && a.ID() == id }

// standalone reports whether activity id is a construct whose place in
// the plan says nothing of what encloses it when it runs: a handler
// run, or one of the compensation constructs every scope shares.
func (d *statusDeriver) standalone(id int) bool {
	if _, ok := d.acts[id].(*plan.HandlerRun); ok {
		return true
	}
	if c := d.in.proc.Comp; c != nil {
		if isAct(c.CompAll, id) || isAct(c.DefaultFH, id) || isAct(c.Terminator, id) {
			return true
		}
		if seq, ok := c.DefaultFH.(*plan.Sequence); ok {
			for _, k := range seq.Children {
				if isAct(k, id) {
					return true
				}
			}
		}
	}
	return false
}

// within derives the statuses of the children of live activity id.
func (d *statusDeriver) within(id int) {
	first := -1 // the first live child, in the plan's order
	for i, k := range d.kids[id] {
		if d.st[k].live() {
			first = i
			break
		}
	}
	switch a := d.acts[id].(type) {
	case *plan.Sequence:
		done := len(a.Children)
		switch {
		case first >= 0:
			done = d.index(a.Children, d.kids[id][first])
		case d.topPc[id] >= 0:
			done = min(d.topPc[id], len(a.Children))
		default:
			done = 0
		}
		for _, c := range a.Children[:max(done, 0)] {
			d.complete(c.ID())
		}
	case *plan.Flow:
		if first < 0 && d.topPc[id] == 0 {
			return // not started yet (a flow starts its branches at once)
		}
		for _, c := range a.Children {
			if !d.st[c.ID()].live() {
				d.finished(c.ID())
			}
		}
	case *plan.IfAct, *plan.Pick:
		if first < 0 {
			return // not decided yet
		}
		for _, k := range d.kids[id] {
			if d.st[k] == ActNotReached {
				d.mark(k, ActSkipped)
			}
		}
	}
}

// index is the position of activity id among list, len(list) when absent.
func (d *statusDeriver) index(list []plan.Activity, id int) int {
	for i, c := range list {
		if c.ID() == id {
			return i
		}
	}
	return len(list)
}

// finished marks a child of a started flow that no longer runs:
// completed, or skipped when dead-path elimination skipped it.
func (d *statusDeriver) finished(id int) {
	if l, ok := d.acts[id].(*plan.Linked); ok {
		switch d.dead(l) {
		case deadYes:
			d.mark(id, ActSkipped)
			return
		case deadUnknown:
			d.mark(id, ActUnknown)
			return
		}
	}
	d.complete(id)
}

type deadness uint8

const (
	deadNo deadness = iota
	deadYes
	deadUnknown
)

// dead says whether dead-path elimination skipped l: its incoming links
// are all decided and false, with no join condition of its own.
func (d *statusDeriver) dead(l *plan.Linked) deadness {
	if len(l.Targets) == 0 {
		return deadNo
	}
	run := false
	for _, t := range l.Targets {
		st, ok := d.in.linkStatus(t)
		if !ok {
			return deadUnknown
		}
		run = run || st
	}
	switch {
	case l.Join != nil:
		return deadUnknown
	case run || !l.Suppress:
		return deadNo
	}
	return deadYes
}

// complete marks activity id completed, with what necessarily ran
// inside it: a sequence's and a flow's children, a scope's body, a
// linked activity, a repeatUntil's body; what ran inside the others
// (if, pick, while, forEach, handlers) is unknown.
func (d *statusDeriver) complete(id int) {
	if d.st[id] != ActNotReached {
		return
	}
	d.st[id] = ActCompleted
	switch a := d.acts[id].(type) {
	case *plan.Sequence:
		for _, c := range a.Children {
			d.complete(c.ID())
		}
	case *plan.Flow:
		for _, c := range a.Children {
			d.finished(c.ID())
		}
	case *plan.Linked:
		if a.Act != nil {
			d.complete(a.Act.ID())
		}
	case *plan.RepeatUntil:
		if a.Body != nil {
			d.complete(a.Body.ID())
		}
	case *plan.Scope:
		if a.Body != nil {
			d.complete(a.Body.ID())
		}
	}
	for _, k := range d.kids[id] {
		if d.st[k] == ActNotReached {
			d.mark(k, ActUnknown)
		}
	}
}

// mark gives activity id status s (unless already derived) and what it
// encloses s too when s is ActSkipped, ActUnknown otherwise (what ran
// inside a faulted or compensated activity is not kept).
func (d *statusDeriver) mark(id int, s ActStatus) {
	if id < 0 || id >= len(d.st) {
		return
	}
	if d.st[id] == ActNotReached || (s == ActFaulted || s == ActCompensated) && d.st[id] == ActRunning {
		d.st[id] = s
	}
	below := ActUnknown
	if s == ActSkipped {
		below = s
	}
	for _, k := range d.kids[id] {
		if d.st[k] == ActNotReached {
			d.mark(k, below)
		}
	}
}
