package interp

import (
	"fmt"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/membudget"
	"github.com/orchd/orchd/internal/process/migrate"
)

// Where is where the instance stands, for a migration's check
// (migrate.Pair.Check). The caller holds the instance's lock.
func (in *Instance) Where() migrate.Instance {
	w := migrate.Instance{Compensation: in.hasRecs()}
	if len(in.reqs) > 0 {
		w.Busy = "a request to it waits for its reply"
	}
	for _, t := range in.threads {
		if t.state == tDone {
			continue
		}
		if t.state == tCalling {
			w.Busy = "a partner call of it is in flight"
		}
		ids := make([]int, len(t.stack))
		for i, f := range t.stack {
			ids[i] = f.act.ID()
		}
		w.Threads = append(w.Threads, ids)
	}
	for name := range in.corr {
		w.Correlations = append(w.Correlations, name)
	}
	return w
}

// Rebind moves the instance, which no run holds, to version to of its
// process as mv says (migrate.Pair.Check made it for this instance):
// its frames stand in to's activities, its variables in to's slots, and
// to's variables mv maps nothing to take their initial values. Every
// variable is written at its next checkpoint, which names to. Its
// routes and timer name the process, not the version, and are
// unchanged; its next run (the engine's, at once) waits again on to's
// activities.
func (in *Instance) Rebind(to *Version, mv *migrate.Move) error {
	if w := in.Where(); w.Busy != "" {
		return fmt.Errorf("instance %s: %s", in.id, w.Busy)
	}
	for _, t := range in.threads {
		for _, f := range t.stack {
			if id, ok := mv.Acts[f.act.ID()]; !ok || id >= len(to.Acts) {
				return fmt.Errorf("instance %s: activity %d has no place in the target", in.id, f.act.ID())
			}
		}
		for _, ps := range t.priv {
			if mv.Slots[ps.Slot-1] == 0 {
				return fmt.Errorf("instance %s: a private variable has no place in the target", in.id)
			}
		}
	}
	in.deactivate()
	for _, t := range in.threads {
		for i := range t.stack {
			t.stack[i].act = to.Acts[mv.Acts[t.stack[i].act.ID()]]
		}
		t.waits, t.waitKeys = t.waits[:0], t.waitKeys[:0]
		for i := range t.priv {
			ps := &t.priv[i]
			ps.Slot = mv.Slots[ps.Slot-1]
			ps.El.Tag = to.Vars[ps.Slot-1].SlotName()
		}
	}
	var root *etree.Element
	if to.Slots != nil {
		root = expr.CopyTree(to.Slots)
	} else {
		root = expr.NewSlots(to.Vars)
	}
	old := append([]etree.Token(nil), in.root.Child...)
	for i, tok := range old {
		j := mv.Slots[i]
		if j == 0 {
			continue
		}
		el := tok.(*etree.Element)
		in.root.RemoveChild(el)
		el.Tag = to.Vars[j-1].SlotName()
		root.RemoveChildAt(j - 1)
		root.InsertChildAt(j-1, el)
	}
	for pl, epr := range in.eprs {
		delete(in.eprs, pl)
		if q := to.Plinks[pl.Name]; q != nil {
			in.eprs[q] = epr
		}
	}
	in.proc, in.root, in.waits = to, root, in.waits[:0]
	in.docs = expr.DocTree{Top: root, Vars: to.Vars}
	in.mem, in.timing = membudget.Meter{}, nil
	if !to.InMemory {
		in.dirty = make([]bool, len(to.Vars))
		for i := range in.dirty {
			in.dirty[i] = true
		}
	}
	return nil
}
