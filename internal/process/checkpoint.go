package process

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/persist"
)

// Store is what the engine needs of the instance store; *persist.Store
// implements it. Only persistent processes use it.
type Store interface {
	Commit(cps ...*persist.Checkpoint) error
	Instance(id string) (*persist.Instance, map[int][]byte, error)
	Route(key string) (string, bool, error)
	Instances(fn func(*persist.Instance) bool) error
	Timers(fn func(persist.Timer) bool) error
	Outbox(fn func(persist.OutboxMessage) bool) error
	AckOutbox(seq uint64) error
}

type instState = persist.State

const stateWaiting = persist.Waiting

func persistNewID() string { return persist.NewID() }

// stateOf is the stored state after a run that ended with r.
func stateOf(r result) persist.State {
	switch r {
	case resBlocked:
		return persist.Waiting
	case resCompleted:
		return persist.Completed
	case resHandled, resFaulted, resFailed:
		return persist.Faulted
	case resExited:
		return persist.Terminated
	case resSuspended:
		return persist.Suspended
	}
	return persist.Running
}

// checkpoint writes the instance's state in one store commit: its record,
// the variables changed since the last checkpoint, its routes and timer.
// Replies held so far become deliverable once it returns nil.
func (in *instance) checkpoint(st persist.State) error {
	e := in.e
	rec := persist.Instance{
		ID: in.id, Process: in.p.Name.String(), State: st,
		Created: in.started, Updated: e.now(), Correlations: in.corr,
	}
	if in.inHandler != nil {
		rec.Fault = in.inHandler.Error()
	}
	cp := &persist.Checkpoint{Vars: map[int][]byte{}}
	for _, k := range in.regRoutes {
		cp.RemoveRoutes = append(cp.RemoveRoutes, persist.Route{Key: k, InstanceID: in.id})
	}
	if in.regTimer != 0 {
		cp.RemoveTimers = append(cp.RemoveTimers, persist.Timer{Due: time.Unix(0, in.regTimer), InstanceID: in.id})
	}
	// What the instance is registered under after this checkpoint; it
	// replaces in.regRoutes and in.regTimer only once the commit holds, so
	// a failed commit leaves them describing what the store still has.
	var routes []string
	var timer int64
	if st == persist.Waiting {
		routes = in.routeKeys()
		for _, k := range routes {
			cp.AddRoutes = append(cp.AddRoutes, persist.Route{Key: k, InstanceID: in.id})
		}
		if in.wake != 0 {
			timer = in.wake
			cp.AddTimers = append(cp.AddTimers, persist.Timer{Due: time.Unix(0, in.wake), InstanceID: in.id})
		}
	}
	ended := st == persist.Completed || st == persist.Faulted || st == persist.Terminated
	if ended && in.p.cleans(st == persist.Completed, "instance") {
		cp.Delete = true
	} else {
		var err error
		if rec.Frames, err = in.encodeFrames(routes, timer); err != nil {
			return err
		}
		dropVars := ended && in.p.cleans(st == persist.Completed, "variables")
		for i, d := range in.dirty {
			if !d && !dropVars {
				continue
			}
			if dropVars {
				cp.Vars[i+1] = nil
				continue
			}
			var b bytes.Buffer
			in.root.Child[i].(*etree.Element).WriteTo(&b, &etree.WriteSettings{})
			cp.Vars[i+1] = b.Bytes()
		}
	}
	cp.Instance = rec
	cp.Outbox = in.outbox
	n := 0
	for _, v := range cp.Vars {
		n += len(v)
	}
	n += len(rec.Frames)
	start := time.Now()
	err := e.store.Commit(cp)
	e.metrics.commitTime.Observe(time.Since(start).Seconds())
	if err != nil {
		return err
	}
	for _, m := range cp.Outbox {
		e.sendOutbox(m)
	}
	in.outbox = nil
	in.regRoutes, in.regTimer = routes, timer
	for i := range in.dirty {
		in.dirty[i] = false
	}
	in.state = st
	in.p.metrics.commits.Inc()
	in.p.metrics.storedBytes.Add(float64(n))
	in.deliverReplies()
	return nil
}

// cleans reports whether deploy.xml's <cleanup> drops category when an
// instance ends (successfully or not).
func (p *Process) cleans(success bool, category string) bool {
	for _, r := range p.cleanup {
		if r.on == "always" || (r.on == "success") == success {
			if r.categories["all"] || r.categories[category] {
				return true
			}
		}
	}
	return false
}

const framesVersion = 1

// encodeFrames encodes the control state: frames, the fault being
// handled, and the routes and timer the instance is registered under.
func (in *instance) encodeFrames(routes []string, timer int64) ([]byte, error) {
	b := make([]byte, 0, 16+8*len(in.stack))
	b = append(b, framesVersion)
	b = binary.AppendUvarint(b, uint64(len(in.stack)))
	for _, f := range in.stack {
		b = binary.AppendUvarint(b, uint64(f.act.id()))
		b = binary.AppendUvarint(b, uint64(f.pc))
		b = binary.AppendVarint(b, f.due)
	}
	b = appendString(b, in.p.fingerprint)
	var fault string
	if in.inHandler != nil {
		fault = in.inHandler.name.String()
	}
	b = appendString(b, fault)
	b = binary.AppendUvarint(b, uint64(len(routes)))
	for _, k := range routes {
		b = appendString(b, k)
	}
	b = binary.AppendVarint(b, timer)
	return b, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

var errBadFrames = errors.New("corrupt instance control state")

type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errBadFrames
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errBadFrames
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) string() string {
	n := r.uvarint()
	if r.err != nil || uint64(len(r.b)) < n {
		r.err = errBadFrames
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// load rebuilds a persistent instance from the store.
func (e *Engine) load(ctx context.Context, p *Process, id string) (*instance, error) {
	rec, vars, err := e.store.Instance(id)
	if err != nil {
		return nil, fmt.Errorf("load instance %s: %w", id, err)
	}
	in := newInstance(e, p, ctx)
	in.id, in.started, in.state, in.corr = rec.ID, rec.Created, rec.State, rec.Correlations
	r := &reader{b: rec.Frames}
	if len(r.b) == 0 || r.b[0] != framesVersion {
		return nil, fmt.Errorf("instance %s: %w (version)", id, errBadFrames)
	}
	r.b = r.b[1:]
	n := r.uvarint()
	for i := uint64(0); i < n && r.err == nil; i++ {
		aid, pc, due := r.uvarint(), r.uvarint(), r.varint()
		if aid >= uint64(len(p.acts)) {
			return nil, fmt.Errorf("instance %s: %w (activity %d)", id, errBadFrames, aid)
		}
		in.stack = append(in.stack, frame{act: p.acts[aid], pc: int(pc), due: due})
	}
	if fp := r.string(); r.err == nil && fp != p.fingerprint {
		return nil, fmt.Errorf("instance %s was checkpointed by another version of process %s; it cannot resume on this one", id, p.Name.Local)
	}
	if f := r.string(); f != "" {
		in.inHandler = &faultValue{name: parseClark(f)}
	}
	rn := r.uvarint()
	for i := uint64(0); i < rn && r.err == nil; i++ {
		in.regRoutes = append(in.regRoutes, r.string())
	}
	in.regTimer = r.varint()
	if r.err != nil {
		return nil, fmt.Errorf("instance %s: %w", id, r.err)
	}
	in.wake = in.regTimer
	for slot, data := range vars {
		if slot < 1 || slot > len(p.vars) || data == nil {
			continue
		}
		doc := etree.NewDocument()
		if err := doc.ReadFromBytes(data); err != nil || doc.Root() == nil {
			return nil, fmt.Errorf("instance %s variable %s: %w", id, p.vars[slot-1].name, errBadFrames)
		}
		el := doc.Root()
		doc.RemoveChild(el)
		in.root.RemoveChildAt(slot - 1)
		in.root.InsertChildAt(slot-1, el)
	}
	return in, nil
}

func parseClark(s string) qname {
	if len(s) > 0 && s[0] == '{' {
		for i := 1; i < len(s); i++ {
			if s[i] == '}' {
				return qname{Space: s[1:i], Local: s[i+1:]}
			}
		}
	}
	return qname{Local: s}
}

// step runs an invoke. For a persistent process calling an operation not
// marked idempotent, the instance is checkpointed first, so that after a
// crash the call is not repeated blindly: a recovered instance whose
// invoke may have run follows the failure policy instead.
func (a *invoke) step(in *instance, f *frame) (activity, bool, error) {
	if a.reliable(in) {
		return nil, true, a.enqueue(in)
	}
	guarded := !in.p.InMemory && in.e.store != nil && !in.p.idempotent[a.pl.name+"/"+a.op.Name]
	if guarded && f.pc == 0 {
		f.pc = 1
		if err := in.checkpoint(persist.Running); err != nil {
			return nil, false, fmt.Errorf("checkpoint before invoke %s.%s at %s: %w", a.pl.name, a.op.Name, a.pos, err)
		}
	} else if guarded && in.recovered {
		in.recovered = false
		return a.failed(in, f, errors.New("orchd stopped while this call was in flight; it may or may not have reached the partner"))
	}
	if f.due != 0 && in.e.now().UnixNano() < f.due {
		in.wakeAt(f.due) // waiting to retry
		return nil, false, errBlocked
	}
	call := &exchange.Call{Operation: a.op}
	if a.in != nil {
		call.Input = in.message(a.in)
		if err := in.applyCorrelations(a.corrs, call.Input, true, a.pos); err != nil {
			return nil, false, err
		}
	}
	if a.pl.partner == nil {
		return nil, false, fmt.Errorf("invoke %s.%s at %s: partner link is not bound", a.pl.name, a.op.Name, a.pos)
	}
	start := time.Now()
	res, err := a.pl.partner.Invoke(in.ctx, call)
	a.metrics.observe(err, time.Since(start))
	if err != nil {
		var flt *exchange.Fault
		if errors.As(err, &flt) {
			return nil, false, &faultValue{name: flt.Name, data: flt.Message, reason: flt.Reason, at: a.pos}
		}
		return a.failed(in, f, err)
	}
	if a.out != nil && res != nil {
		if err := in.applyCorrelations(a.corrs, res, false, a.pos); err != nil {
			return nil, false, err
		}
		in.storeMessage(a.out, res)
	}
	return nil, true, nil
}

// nsActivityFailure names the fault thrown by faultOnFailure.
var activityFailure = qname{Space: nsActivityRecovery, Local: "activityFailure"}

// errSuspended ends a run with the instance suspended for an operator.
var errSuspended = errors.New("instance suspended")

// failed applies the invoke's failure policy (ODE's failureHandling) to a
// failed call: retry later, throw activityFailure, or, for persistent
// processes with no policy, suspend the instance for an operator.
func (a *invoke) failed(in *instance, f *frame, err error) (activity, bool, error) {
	err = fmt.Errorf("invoke %s.%s at %s: %w", a.pl.name, a.op.Name, a.pos, err)
	fp := a.policy
	attempts := f.pc - 1
	if attempts < 0 {
		attempts = 0
	}
	if fp != nil && attempts < fp.retryFor {
		f.pc = attempts + 2
		f.due = in.e.now().Add(time.Duration(fp.retryDelaySecs) * time.Second).UnixNano()
		in.wakeAt(f.due)
		in.e.log.Warn("invoke failed; will retry", "err", err, "attempt", attempts+1, "of", fp.retryFor)
		return nil, false, errBlocked
	}
	if fp != nil && fp.faultOnFailure {
		return nil, false, &faultValue{name: activityFailure, reason: err.Error(), at: a.pos}
	}
	if !in.p.InMemory && in.e.store != nil {
		in.suspendReason = err.Error()
		return nil, false, errSuspended
	}
	return nil, false, err
}
