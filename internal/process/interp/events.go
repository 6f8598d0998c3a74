package interp

import (
	"strconv"
	"strings"
	"time"

	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/xsd"
)

// Event handlers (WS-BPEL 2.0 section 12.7). A scope with <eventHandlers>
// runs its body on a child thread, next to one listener thread for its
// onEvents and one per onAlarm; the scope's own thread joins them. Each
// event a listener accepts spawns a child thread of the listener running
// a fresh instance of the handler's scope, with its own copies of the
// handler's variables (the private slots of parallel forEach). When the
// body's thread ends, the scope closes its listeners: they accept nothing
// more, and end once their running handler instances have. A fault that
// reaches the scope kills the whole tree (scope.go's fail). All of it is
// threads and frames, so a persistent instance checkpoints it as usual.

// privSlots makes fresh private copies of vars for a handler instance.
func privSlots(vars []*expr.Var) []privSlot {
	priv := make([]privSlot, 0, len(vars))
	for _, v := range vars {
		priv = append(priv, privSlot{Slot: v.Slot, El: v.NewSlot()})
	}
	return priv
}

// closeListeners stops the listeners of the scope running on t from
// accepting events (its body ended): each ends once its running handler
// instances have.
func (in *Instance) closeListeners(t *thread) {
	for _, x := range in.threads {
		if x.parent != t || x.state == tDone || len(x.stack) == 0 {
			continue
		}
		if _, ok := x.stack[0].act.(plan.Listener); !ok {
			continue
		}
		x.stack[0].n = 1
		if x.state == tWaiting {
			x.waits, x.waitKeys, x.wake = x.waits[:0], x.waitKeys[:0], 0
		}
		x.state = tReady
	}
}

// Listener frame use: n = 1 once closed; k counts the events accepted
// (it names each handler instance's open request); due is an alarm's next
// deadline, pc 1 once it is computed, 2 once a one-shot alarm fired.

func stepEventListener(a *plan.EventListener, in *Instance, f *frame) (plan.Activity, bool, error) {
	if f.n == 1 {
		return closedListener(in)
	}
	t := in.cur
	for _, ev := range a.H.Events {
		ex := in.inbox
		if ex == nil || ex.Operation.Name != ev.Op.Name || ex.Endpoint != ev.Pl.Provided {
			continue
		}
		msg := ex.Input
		ib := ev.Inbound
		ib.V, ib.FromParts = nil, nil
		var tag string
		if ev.Tag != nil {
			f.k++
			tag = strconv.FormatInt(f.k, 10)
			ib.Mex = ev.Mex + "\x1f" + tag
		}
		ok, err := in.take(&ib, ev.Pos)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			continue
		}
		h := in.spawn(ev.Body, privSlots(ev.Priv))
		in.hasPriv = true
		in.activate(h)
		switch {
		case ev.FromParts != nil:
			in.storeParts(msg, ev.FromParts)
		case ev.ElemVar:
			s := in.Slot(ev.V)
			expr.ClearChildren(s)
			if p := msg.Part(ev.Op.Input.Parts[0].Name); p != nil {
				s.AddChild(p)
			}
		case ev.V != nil:
			in.StoreMessage(ev.V, msg)
		}
		if ev.Tag != nil {
			in.Slot(ev.Tag).SetText(tag)
		}
		in.activate(t)
	}
	for _, ev := range a.H.Events {
		if err := in.await(&ev.Inbound, ev.Pos); err != nil {
			return nil, false, err
		}
	}
	return nil, false, errBlocked
}

// closedListener ends a closed listener once its handler instances have.
func closedListener(in *Instance) (plan.Activity, bool, error) {
	if in.cur.kids > 0 {
		return nil, false, errJoin
	}
	return nil, true, nil
}

func stepAlarmListener(a *plan.AlarmListener, in *Instance, f *frame) (plan.Activity, bool, error) {
	if f.n == 1 {
		return closedListener(in)
	}
	al := a.Al
	now := in.host.Now()
	if f.pc == 0 {
		var due int64
		var err error
		if al.Deadline != nil {
			due, err = atDeadlineSpec(al.Deadline, in, now)
		} else {
			due, err = nextAlarmListener(a, in, now)
		}
		if err != nil {
			return nil, false, err
		}
		f.pc, f.due = 1, due
	}
	if f.pc == 2 {
		return nil, false, errBlocked // fired; waits to be closed
	}
	if now.UnixNano() < f.due {
		in.wakeAt(f.due)
		return nil, false, errBlocked
	}
	in.spawn(al.Body, privSlots(al.Priv))
	in.hasPriv = true
	if al.Repeat == nil {
		f.pc = 2
		return nil, false, errBlocked
	}
	next, err := nextAlarmListener(a, in, time.Unix(0, f.due))
	if err != nil {
		return nil, false, err
	}
	if next <= now.UnixNano() {
		// Fell behind (orchd was down): the next one is a period from now.
		if next, err = nextAlarmListener(a, in, now); err != nil {
			return nil, false, err
		}
	}
	f.due = next
	in.wakeAt(f.due)
	return nil, false, errBlocked
}

// nextAlarmListener is from plus the alarm's repeatEvery duration, which must be
// positive, as a deadline (unix nanoseconds; xsd.Never past the clock's
// range).
func nextAlarmListener(a *plan.AlarmListener, in *Instance, from time.Time) (int64, error) {
	v, err := in.Eval(a.Al.Repeat, in.root, a.Pos)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(expr.XpathString(v))
	t, err := xsd.DeadlineFor(from, s)
	if err != nil {
		return 0, in.faultf(a.Pos, "invalidExpressionValue", "<repeatEvery> %q: %v", s, err)
	}
	if t <= xsd.DeadlineOf(from) {
		return 0, in.faultf(a.Pos, "invalidExpressionValue", "<repeatEvery> %q is not a positive duration", s)
	}
	return t, nil
}

// childDoneScope is told when a branch of a scope with event handlers
// ends: when its body's thread ends, its listeners stop accepting events.
func childDoneScope(a *plan.Scope, in *Instance, t *thread, f *frame) {
	if a.Events == nil || f.pc != scopeBody || f.i == 1 {
		return
	}
	f.i = 1
	in.closeListeners(t)
}

// requestMexOnEvent is the message exchange under which the current handler
// instance of ev holds its open request.
func requestMexOnEvent(ev *plan.OnEvent, in *Instance) string {
	return ev.Mex + "\x1f" + in.Slot(ev.Tag).Text()
}

// startHandlersEventHandlers spawns the listener threads of h next to the body's
// thread (the current thread is the scope's).
func startHandlersEventHandlers(h *plan.EventHandlers, in *Instance) {
	if h.Listen != nil {
		in.spawn(h.Listen, nil)
	}
	for _, al := range h.Alarms {
		in.spawn(al.Listen, nil)
	}
}
