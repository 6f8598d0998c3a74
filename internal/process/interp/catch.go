package interp

import (
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
)

// catchSite is where a fault raised in a thread goes (findCatch): the
// frame at th.stack[k] is either a termination handler the fault ends
// (term), or a scope running its body whose handler act (with its fault
// variable v) takes the fault in its place.
type catchSite struct {
	th   *thread
	k    int
	term bool
	sc   *plan.Scope
	act  plan.Activity
	v    *expr.Var
	// explicit says act is the scope's own catch or catchAll, not the
	// default fault handler (compensate, then rethrow).
	explicit bool
}

// findCatch walks from thread t outwards, innermost frame first, to the
// frame that takes fault fv, the way fail routes it (WS-BPEL 2.0 12.5,
// 12.6): a scope running its body with a matching catch or catchAll, or
// with a default fault handler to run; a scope running a fault handler
// is passed over (a fault inside a fault handler goes to the enclosing
// scopes), and so is a compensation handler (its fault goes to the
// scope of the compensate activity, on a parent thread); a termination
// handler ends there. With explicitOnly, default fault handlers are
// passed over too: they rethrow the fault from their scope, so the
// enclosing scopes see it next, and only an author's handler (or a
// termination handler) counts. ok is false when no frame takes it: the
// fault would end the instance.
func (in *Instance) findCatch(t *thread, fv *faultValue, explicitOnly bool) (cs catchSite, ok bool) {
	for th := t; th != nil; th = th.parent {
		for k := len(th.stack) - 1; k >= 0; k-- {
			fr := &th.stack[k]
			if hr, isRun := fr.act.(*plan.HandlerRun); isRun && hr.Term {
				return catchSite{th: th, k: k, term: true}, true
			}
			sc, isScope := fr.act.(*plan.Scope)
			if !isScope || fr.pc != scopeBody {
				continue
			}
			var act plan.Activity
			var v *expr.Var
			if sc.Handlers != nil {
				act, v = handlerFaultHandlers(sc.Handlers, fv)
			}
			explicit := act != nil
			if act == nil && sc.DefaultFH && !explicitOnly {
				act = in.proc.Comp.DefaultFH
			}
			if act == nil {
				continue
			}
			return catchSite{th: th, k: k, sc: sc, act: act, v: v, explicit: explicit}, true
		}
	}
	return catchSite{}, false
}

// wouldCatch reports whether fault fv, raised now in the current thread,
// would be taken by a handler the author wrote (a matching catch or a
// catchAll of an enclosing scope, up to the process) or ended by a
// termination handler, rather than end the instance.
func (in *Instance) wouldCatch(fv *faultValue) bool {
	_, ok := in.findCatch(in.cur, fv, true)
	return ok
}
