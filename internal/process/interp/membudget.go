package interp

import (
	"errors"
	"fmt"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/membudget"
	"github.com/orchd/orchd/internal/process/plan"
)

// chargeCopy accounts for copy c writing src over dst against the
// memory bounds (internal/process/membudget), before it writes: over a
// bound it returns a *membudget.Exceeded, which ends the run as the step
// budget does (overMemory). It measures the value entering and the one
// it replaces, never the whole variable (but once, when its size is not
// known: a message or another activity wrote it since).
func (in *Instance) chargeCopy(c *plan.CopyOp, src source, dst target) error {
	v := c.To.V
	if v == nil {
		tok := dst.Tok
		if dst.fresh {
			tok = dst.parent
		}
		if v = in.slotOf(tok); v == nil {
			return nil
		}
	}
	var n int64
	switch {
	case src.node.Tok == nil:
		n = int64(len(src.text))
	case src.node.Attr >= 0:
		if e, ok := src.node.Tok.(*etree.Element); ok && src.node.Attr < len(e.Attr) {
			n = int64(len(e.Attr[src.node.Attr].Value))
		}
	default:
		n = membudget.TokenSize(src.node.Tok)
	}
	var old int64
	if !dst.fresh {
		switch t := dst.Tok.(type) {
		case *etree.Element:
			if dst.Attr >= 0 && dst.Attr < len(t.Attr) {
				old = int64(len(t.Attr[dst.Attr].Value))
			} else {
				old = membudget.TokenSize(t)
			}
		default:
			old = membudget.TokenSize(t)
		}
	}
	return in.mem.Charge(len(in.root.Child), v.Slot-1, v.Name, in.Slot(v), old, n)
}

// overMemory stops a run that went over a memory bound, as overBudget
// does for the step budget: a persistent instance is suspended with the
// reason, an in-memory one fails; no fault handler sees it.
func (in *Instance) overMemory(err error) (Result, error, bool) {
	if !in.proc.InMemory && in.host.Stored() {
		in.suspendReason = err.Error()
		return ResSuspended, fmt.Errorf("instance %s suspended for an operator: %w", in.id, err), true
	}
	return ResFailed, fmt.Errorf("instance stopped: %w", err), true
}

// isOverMemory reports whether err is a run over a memory bound.
func isOverMemory(err error) bool { return errors.Is(err, membudget.ErrExceeded) }
