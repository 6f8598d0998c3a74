package interp

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

// EvOn reports whether in emits events of category c.
func (in *Instance) EvOn(c events.Category) bool {
	return in.proc.Sink != nil && in.proc.Events&c != 0
}

// Emit fills in what every event of in carries and hands ev over. An
// in-memory instance gets its id now if it has none yet.
func (in *Instance) Emit(ev events.Event) {
	in.host.Named(in)
	ev.Time = time.Now()
	ev.Process = in.proc.Name.String()
	ev.Instance = in.id
	in.proc.Sink.Emit(ev)
}

// EmitLifecycle emits an instance lifecycle event of kind k (an
// operator's action: suspended, resumed) for instance id of version p,
// when p's deploy.xml enables instance lifecycle events.
func (p *Version) EmitLifecycle(id string, k events.Kind, detail string) {
	if p.Sink == nil || p.Events&events.InstanceLifecycle == 0 {
		return
	}
	p.Sink.Emit(events.Event{Kind: k, Detail: detail, Time: time.Now(), Process: p.Name.String(), Version: p.Number, Instance: id})
}

// EvTagger is an activity that names itself in events: its tag, name
// and position.
type EvTagger interface {
	EvTag() (tag, name string, pos string)
}

// emitActivity emits an activity event for a (nothing for constructs the
// compiler made, which have no element).
func (in *Instance) emitActivity(k events.Kind, a plan.Activity, fault string) {
	t, ok := a.(EvTagger)
	if !ok {
		return
	}
	tag, name, pos := t.EvTag()
	if tag == "" {
		return
	}
	in.Emit(events.Event{Kind: k, Activity: tag, Name: name, Position: pos, Fault: fault})
}

// emitVariable emits variableChanged for variable v, naming the activity
// the current thread runs.
func (in *Instance) emitVariable(v *expr.Var) {
	ev := events.Event{Kind: events.VariableChanged, Variable: v.Name}
	if t := in.cur; t != nil && len(t.stack) > 0 {
		if tg, ok := t.Top().act.(EvTagger); ok {
			ev.Activity, ev.Name, ev.Position = tg.EvTag()
		}
	}
	in.Emit(ev)
}

// EmitEnd emits the event of a run that ended the instance.
func (in *Instance) EmitEnd(res Result, err error) {
	ev := events.Event{Duration: time.Since(in.started)}
	switch res {
	case ResCompleted:
		ev.Kind = events.InstanceCompleted
	case ResExited:
		ev.Kind = events.InstanceTerminated
	case ResSuspended:
		ev.Kind = events.InstanceSuspended
	default:
		ev.Kind = events.InstanceFaulted
		var u *errUncaught
		if errors.As(err, &u) {
			ev.Fault = u.F.Name.String()
		} else if f := in.inHandler; f != nil {
			ev.Fault = f.Name.String()
		}
	}
	if err != nil {
		ev.Detail = err.Error()
	}
	in.Emit(ev)
}

// faultName names the BPEL fault err is, if it is one.
func faultName(err error) string {
	var f *faultValue
	if errors.As(err, &f) {
		return f.Name.String()
	}
	return ""
}

// emitAnsweredInvoke emits partnerAnswered for a call of a that took dur and
// ended with err (a partner's fault, a failure, or nil).
func emitAnsweredInvoke(a *plan.Invoke, in *Instance, err error, dur time.Duration) {
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
	in.Emit(ev)
}
