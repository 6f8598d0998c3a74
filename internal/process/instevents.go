package process

import (
	"errors"
	"time"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
)

// Instance events (internal/events). The engine emits only when
// Options.Events is set and the process's deploy.xml enables the event's
// category; every emission point tests evOn first, so with no dispatcher
// the runtime pays one nil check and builds no event.

// evOn reports whether in emits events of category c.
func (in *instance) evOn(c events.Category) bool {
	return in.e != nil && in.e.events() != nil && in.p.Events&c != 0
}

// emit fills in what every event of in carries and hands ev over. An
// in-memory instance gets its id now if it has none yet.
func (in *instance) emit(ev events.Event) {
	in.e.named(in)
	ev.Time = time.Now()
	ev.Process = in.p.Name.String()
	ev.Instance = in.id
	in.e.events().Emit(ev)
}

type evTagger interface {
	EvTag() (tag, name string, pos string)
}

// emitActivity emits an activity event for a (nothing for constructs the
// compiler made, which have no element).
func (in *instance) emitActivity(k events.Kind, a plan.Activity, fault string) {
	t, ok := a.(evTagger)
	if !ok {
		return
	}
	tag, name, pos := t.EvTag()
	if tag == "" {
		return
	}
	in.emit(events.Event{Kind: k, Activity: tag, Name: name, Position: pos, Fault: fault})
}

// emitVariable emits variableChanged for variable v, naming the activity
// the current thread runs.
func (in *instance) emitVariable(v *expr.Var) {
	ev := events.Event{Kind: events.VariableChanged, Variable: v.Name}
	if t := in.cur; t != nil && len(t.stack) > 0 {
		if tg, ok := t.top().act.(evTagger); ok {
			ev.Activity, ev.Name, ev.Position = tg.EvTag()
		}
	}
	in.emit(ev)
}

// emitEnd emits the event of a run that ended the instance.
func (in *instance) emitEnd(res result, err error) {
	ev := events.Event{Duration: time.Since(in.started)}
	switch res {
	case resCompleted:
		ev.Kind = events.InstanceCompleted
	case resExited:
		ev.Kind = events.InstanceTerminated
	case resSuspended:
		ev.Kind = events.InstanceSuspended
	default:
		ev.Kind = events.InstanceFaulted
		var u *errUncaught
		if errors.As(err, &u) {
			ev.Fault = u.f.name.String()
		} else if f := in.inHandler; f != nil {
			ev.Fault = f.name.String()
		}
	}
	if err != nil {
		ev.Detail = err.Error()
	}
	in.emit(ev)
}

// faultName names the BPEL fault err is, if it is one.
func faultName(err error) string {
	var f *faultValue
	if errors.As(err, &f) {
		return f.name.String()
	}
	return ""
}

// emitAnsweredInvoke emits partnerAnswered for a call of a that took dur and
// ended with err (a partner's fault, a failure, or nil).
func emitAnsweredInvoke(a *plan.Invoke, in *instance, err error, dur time.Duration) {
	ev := events.Event{Kind: events.PartnerAnswered, Activity: "invoke", Name: a.Name, Position: a.Pos.String(),
		Partner: a.Pl.Name, Operation: a.Op.Name, Duration: dur}
	if err != nil {
		var flt *exchange.Fault
		if errors.As(err, &flt) {
			ev.Fault = flt.Name.String()
		} else {
			ev.Detail = err.Error()
		}
	}
	in.emit(ev)
}
