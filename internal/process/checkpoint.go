package process

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/deploy"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/xmlparse"
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
	// ScanInstances and InstanceTimers serve the management API's
	// listings and details (mgmt_instances.go).
	ScanInstances(sc persist.Scan, fn func(*persist.InstanceView) bool) (persist.ScanResult, error)
	InstanceTimers(id string) ([]persist.Timer, error)
}

// InstanceOwners lets one orchd process at a time run a persistent
// instance when several share one store. The engine calls Acquire after
// its own per-instance lock, before it loads the instance, around every
// run, timer, recovery and operator action, and release when it is done;
// an error fails that run before it starts (a Server fault for a
// message). Acquire may wait while another process holds id.
//
// fence is the lock's token: every checkpoint of the run carries it
// (persist.Checkpoint.Fence), and a store shared by the processes commits
// the checkpoint only while the lock still holds, so a process that lost
// the lock in the middle of a run (paused past its lease) cannot write
// over what another stored since. Such a failed commit is a failed run,
// as any other: nothing acknowledged, the client gets a Server fault, the
// run's state in memory is dropped.
type InstanceOwners interface {
	Acquire(ctx context.Context, id string) (release func(), fence any, err error)
}

// InstanceClaimer is InstanceOwners that owns a new instance more
// cheaply than Acquire can any: a new instance's id is known to no other
// process until its first checkpoint commits, so nobody holds its lock,
// and the locks of concurrent new instances can be taken together (one
// etcd transaction for many). release and fence are as Acquire's.
type InstanceClaimer interface {
	Claim(ctx context.Context, id string) (release func(), fence any, err error)
}

// releasingFence is a fence that can give up its lock in the run's last
// checkpoint (cluster.Lock): finish asks it to, for the runs whose last
// commit it is (instance.foldRelease); release then has nothing left to
// do, or does it as usual if that commit failed.
type releasingFence interface{ ReleaseWithNext() }

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
	rec := persist.Instance{
		ID: in.id, Process: in.p.Name.String(), State: st,
		Created: in.started, Updated: in.e.now(), Correlations: in.corr,
	}
	if in.inHandler != nil {
		rec.Fault = in.inHandler.Error()
	}
	if st == persist.Suspended && in.suspendReason != "" {
		rec.Fault = in.suspendReason
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
	if ended && in.p.Cleans(st == persist.Completed, "instance") {
		cp.Delete = true
	} else {
		var err error
		if rec.Frames, err = in.encodeFrames(routes, timer); err != nil {
			return err
		}
		dropVars := ended && in.p.Cleans(st == persist.Completed, "variables")
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
	cp.Fence = in.fence
	if cp.Delete && !in.stored && len(cp.Outbox) == 0 {
		// The instance ends deleted and the store never held it: the
		// commit would write nothing (docs/architecture.md, "the end of a
		// run").
		in.state = st
		in.deliverReplies()
		return nil
	}
	n := 0
	for _, v := range cp.Vars {
		n += len(v)
	}
	n += len(rec.Frames)
	idle := in.idle // the commit is I/O: no CPU slot held
	if idle != nil {
		idle.Idle(exchange.WaitCommit)
	}
	sp := in.traceCommit(cp, st, n)
	err := in.e.commit(in, cp)
	in.tracedCommit(sp, cp, err)
	if idle != nil {
		idle.Busy(exchange.WaitCommit)
	}
	if err != nil {
		return &notStoredError{err: err}
	}
	in.outbox = nil
	in.regRoutes, in.regTimer = routes, timer
	for i := range in.dirty {
		in.dirty[i] = false
	}
	in.state = st
	in.stored = true
	in.p.metrics.commits.Inc()
	in.p.metrics.storedBytes.Add(float64(n))
	in.deliverReplies()
	return nil
}

// notStoredError is a failed checkpoint. It ends the run: finish writes
// nothing more of it (not even its failure), drops the instance from
// memory and answers its client with a server error, so that the store's
// last checkpoint stays the instance's state and the next message or
// timer starts from it.
type notStoredError struct{ err error }

func (e *notStoredError) Error() string {
	return "instance state could not be stored: " + e.err.Error()
}
func (e *notStoredError) Unwrap() error { return e.err }

// framesVersion 3 is version 2 followed by the partner role endpoints
// assigned at run time; an instance with none is written as version 2.
// Version 4 (framesVersionComp, compensate.go) adds compensation records.
const (
	framesVersion     = 2
	framesVersionEPRs = 3
)

// encodeFrames encodes the control state: the threads with their frames
// and private variables, the fault being handled, and the routes and
// timer the instance is registered under.
func (in *instance) encodeFrames(routes []string, timer int64) ([]byte, error) {
	in.deactivate()
	b := make([]byte, 0, 32+8*len(in.threads[0].stack))
	recs := in.p.Comp != nil && in.hasRecs()
	// The fingerprint first: a load finds the instance's version by it
	// before decoding anything that depends on the definition.
	b = append(b, framesFingerprinted)
	b = appendString(b, in.p.Fingerprint)
	switch {
	case recs:
		b = append(b, framesVersionComp)
	case len(in.eprs) == 0:
		b = append(b, framesVersion)
	default:
		b = append(b, framesVersionEPRs)
	}
	index := make(map[*thread]int, len(in.threads))
	live := make([]*thread, 0, len(in.threads))
	for _, t := range in.threads {
		if t.state != tDone || t == in.threads[0] {
			index[t] = len(live)
			live = append(live, t)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(live)))
	for _, t := range live {
		parent := 0
		if t.parent != nil {
			parent = index[t.parent] + 1
		}
		b = binary.AppendUvarint(b, uint64(parent))
		st := t.state
		if st == tCalling {
			st = tReady // its call may or may not have happened: see invoke.step
		}
		b = append(b, byte(st))
		b = binary.AppendUvarint(b, uint64(t.kids))
		b = binary.AppendUvarint(b, uint64(len(t.stack)))
		for _, f := range t.stack {
			b = binary.AppendUvarint(b, uint64(f.act.ID()))
			b = binary.AppendUvarint(b, uint64(f.pc))
			b = binary.AppendVarint(b, f.due)
			b = binary.AppendVarint(b, f.i)
			b = binary.AppendVarint(b, f.n)
			b = binary.AppendVarint(b, f.k)
			var fault string
			if f.fault != nil {
				fault = f.fault.name.String()
			}
			b = appendString(b, fault)
			if recs {
				b = appendRec(b, f.rec)
			}
		}
		b = appendSlots(b, t.priv)
	}
	b = appendString(b, in.p.Fingerprint)
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
	if recs || len(in.eprs) > 0 {
		b = in.appendEPRs(b)
	}
	return b, nil
}

// decodeThreads reads what encodeFrames wrote of the threads (recs: each
// frame is followed by its compensation record).
func (in *instance) decodeThreads(r *reader, recs bool) error {
	p := in.p
	n := r.uvarint()
	if r.err != nil || n == 0 || n > uint64(len(r.b)) {
		return errBadFrames
	}
	in.threads = in.threads[:0]
	for i := uint64(0); i < n && r.err == nil; i++ {
		t := &thread{}
		parent := r.uvarint()
		if parent > i || (i > 0 && parent == 0) {
			return errBadFrames
		}
		if parent > 0 {
			t.parent = in.threads[parent-1]
		}
		if len(r.b) == 0 {
			return errBadFrames
		}
		t.state = threadState(r.b[0])
		r.b = r.b[1:]
		if t.state > tDone {
			return errBadFrames
		}
		t.kids = int(r.uvarint())
		nf := r.uvarint()
		if nf > uint64(len(r.b)) {
			return errBadFrames
		}
		for j := uint64(0); j < nf && r.err == nil; j++ {
			aid, pc, due := r.uvarint(), r.uvarint(), r.varint()
			fi, fn, fk := r.varint(), r.varint(), r.varint()
			fault := r.string()
			if aid >= uint64(len(p.Acts)) {
				return fmt.Errorf("%w (activity %d)", errBadFrames, aid)
			}
			f := frame{act: p.Acts[aid], pc: int(pc), due: due, i: fi, n: fn, k: fk}
			if fault != "" {
				f.fault = &faultValue{name: parseClark(fault)}
			}
			if recs {
				rec, err := in.readRec(r, 0)
				if err != nil {
					return err
				}
				f.rec = rec
			}
			t.stack = append(t.stack, f)
		}
		priv, err := in.readSlots(r)
		if err != nil {
			return err
		}
		if len(priv) > 0 {
			t.priv = priv
			in.hasPriv = true
		}
		in.threads = append(in.threads, t)
	}
	in.cur = in.threads[0]
	return r.err
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

var errBadFrames = errors.New("corrupt instance control state")

// errBadVariable marks a stored variable that is not XML.
var errBadVariable = errors.New("corrupt stored variable")

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

func parseClark(s string) exchange.QName {
	if len(s) > 0 && s[0] == '{' {
		for i := 1; i < len(s); i++ {
			if s[i] == '}' {
				return exchange.QName{Space: s[1:i], Local: s[i+1:]}
			}
		}
	}
	return exchange.QName{Local: s}
}

// stepInvoke runs an invoke. For a persistent process calling an operation not
// marked idempotent, the instance is checkpointed first, so that after a
// crash the call is not repeated blindly: a recovered instance whose
// invoke may have run follows the failure policy instead.
func stepInvoke(a *plan.Invoke, in *instance, f *frame) (plan.Activity, bool, error) {
	if f.k == kAnswer {
		// The answer of the call that went out on its own goroutine.
		f.k = 0
		if ans := in.cur.answer; ans != nil {
			in.cur.answer = nil
			return answeredInvoke(a, in, f, ans.msg, ans.err, ans.dur)
		}
		// Resumed after a crash with the call in flight (a checkpoint
		// taken for another branch recorded it): below, as a call that
		// may have happened.
	} else if f.k != 0 {
		if done, err, ok := in.recoveryStep(f, a.Pos); ok {
			return nil, done, err
		}
	}
	partner, err := in.partnerOf(a.Pl, a.Pos)
	if err != nil {
		return nil, false, err
	}
	if reliableInvoke(a, in) {
		return nil, true, enqueueInvoke(a, in)
	}
	recovered, err := in.beforeCall(f, func() bool { return !in.p.Idempotent[a.Pl.Name+"/"+a.Op.Name] })
	if err != nil {
		return nil, false, fmt.Errorf("checkpoint before invoke %s.%s at %s: %w", a.Pl.Name, a.Op.Name, a.Pos, err)
	}
	if recovered {
		return failedInvoke(a, in, f, errMayHaveRun)
	}
	if f.due != 0 && in.e.now().UnixNano() < f.due {
		in.wakeAt(f.due) // waiting to retry
		return nil, false, errBlocked
	}
	call := &exchange.Call{Operation: a.Op, Timeout: a.Timeout}
	if a.ToParts != nil {
		call.Input = in.partsMessage(a.Op.Input, a.ToParts)
	} else if a.In != nil {
		if err := in.initialized(a.In, a.Pos); err != nil {
			return nil, false, err
		}
		call.Input = in.message(a.In)
	}
	if call.Input != nil {
		if err := in.applyCorrelations(a.Corrs, call.Input, true, a.Pos); err != nil {
			return nil, false, err
		}
	}
	if partner == nil {
		return nil, false, fmt.Errorf("invoke %s.%s at %s: partner link is not bound", a.Pl.Name, a.Op.Name, a.Pos)
	}
	partner = in.tracePartner(partner, a)
	if in.evOn(events.PartnerInteraction) {
		in.emit(events.Event{Kind: events.PartnerInvoked, Activity: "invoke", Name: a.Name, Position: a.Pos.String(), Partner: a.Pl.Name, Operation: a.Op.Name})
	}
	if in.othersBusy() {
		// Other branches can go on meanwhile: the call goes out on its own
		// goroutine, with copies of what it reads.
		call.Input = copyMessage(call.Input)
		return nil, false, in.callAsync(f, func(ctx context.Context) *callAnswer {
			start := time.Now()
			res, err := partner.Invoke(ctx, call)
			return &callAnswer{msg: res, err: err, dur: time.Since(start)}
		})
	}
	start := time.Now()
	res, err := partner.Invoke(in.ctx, call)
	return answeredInvoke(a, in, f, res, err, time.Since(start))
}

// errMayHaveRun is the failure of a guarded call that was in flight when
// orchd stopped.
var errMayHaveRun = errors.New("orchd stopped while this call was in flight; it may or may not have reached the partner")

// beforeCall does what a persistent instance needs before a partner call
// (an invoke, a REST extension activity) in frame f. A call guarded (not
// idempotent: guarded is asked only for persistent processes) is preceded
// by a checkpoint, so that after a crash it is not repeated blindly,
// unless the instance is unpromised (nothing of it stored, nobody
// answered: nothing stored could make the call again); any call is, once
// a reply waits for its commit, so that the reply leaves now rather than
// after the call. recovered reports a guarded call that may have happened
// before orchd stopped: the caller fails it instead of calling again. err
// is the checkpoint's failure.
func (in *instance) beforeCall(f *frame, guarded func() bool) (recovered bool, err error) {
	if in.p.InMemory || !in.e.stored() {
		return false, nil
	}
	g := guarded()
	switch {
	case g && f.pc == 0:
		// pc 1 marks the call as under way for any checkpoint taken
		// while it is (another branch's, or this run's first).
		f.pc = 1
		if in.unpromised() {
			return false, nil
		}
		fallthrough
	case len(in.out) > 0:
		return false, in.checkpoint(persist.Running)
	case g && in.cur.mayHaveRun:
		in.cur.mayHaveRun = false
		return true, nil
	}
	return false, nil
}

// unpromised reports that a checkpoint in the middle of this run would
// serve none of the guarantees docs/architecture.md states: the store
// holds nothing of the instance (this run created it and none of its
// checkpoints committed), and the run has answered nobody (no reply made
// or waiting for a commit; a one-way trigger is acknowledged only when
// the run ends). A crash then leaves nothing to recover: no stored state
// from which orchd could make a call again, no answer that described
// state. Its client, unanswered, retries or not, as after a crash before
// the request arrived. In a cluster (Options.Owners) no run is
// unpromised: there the checkpoint before a call also shows the run in
// flight to the other nodes (docs/cluster.md), which this does not
// change.
func (in *instance) unpromised() bool {
	return !in.e.clustered() && !in.stored && !in.answered && len(in.out) == 0
}

// callAsync sends a partner call on its own goroutine while other threads
// go on: call runs there under the instance's context and returns the
// answer, which comes back to the current thread (its frame f resumes
// with f.k == 1 and the answer in the thread's answer). It returns
// errCalling, for the step to return.
func (in *instance) callAsync(f *frame, call func(ctx context.Context) *callAnswer) error {
	t := in.cur
	t.callSeq++
	seq := t.callSeq
	if in.calls == nil {
		in.calls = &answers{notify: make(chan struct{}, 1)}
	}
	in.inflight++
	f.k = kAnswer
	ctx, calls := in.ctx, in.calls
	go func() {
		a := call(ctx)
		a.t, a.seq = t, seq
		calls.put(a)
	}()
	return errCalling
}

// answeredInvoke takes a partner's answer (or failure) into the instance.
func answeredInvoke(a *plan.Invoke, in *instance, f *frame, res *exchange.Message, err error, dur time.Duration) (plan.Activity, bool, error) {
	in.stepsLeft = in.stepBudget // the run waited for the partner
	in.p.invokeMetrics[a.ID()].observe(err, dur)
	if in.evOn(events.PartnerInteraction) {
		emitAnsweredInvoke(a, in, err, dur)
	}
	if err != nil {
		var flt *exchange.Fault
		if errors.As(err, &flt) {
			return nil, false, faultFromPartner(flt, a)
		}
		return failedInvoke(a, in, f, err)
	}
	if a.ReplySchema != nil && res != nil {
		if err := in.checkReply(a, res); err != nil {
			return nil, false, err
		}
	}
	if res != nil && (a.Out != nil || a.FromParts != nil) {
		if err := in.applyCorrelations(a.Corrs, res, false, a.Pos); err != nil {
			return nil, false, err
		}
		if a.FromParts != nil {
			in.storeParts(res, a.FromParts)
		} else {
			in.storeMessage(a.Out, res)
		}
	}
	return nil, true, nil
}

// activityFailure is the fault a failed partner call throws (ODE's name
// for the fault of faultOnFailure), in-memory or persistent
// (partnerfail.go says when a persistent instance suspends instead).
var activityFailure = exchange.QName{Space: deploy.NsActivityRecovery, Local: "activityFailure"}

// nsFault is the namespace of the data orchd's own faults carry.
const nsFault = "urn:orchd:fault"

// errSuspended ends a run with the instance suspended for an operator.
var errSuspended = errors.New("instance suspended")

// parseStored parses an element orchd stored (a variable slot, an outbox
// message part, a compensation frame's variable) and detaches it from its
// document. It uses the linear-time parser with no limits (what was
// stored was bounded when it came in) and keeps all whitespace, so the
// value reads back as it was written.
func parseStored[T []byte | string](data T) (*etree.Element, error) {
	doc, err := xmlparse.Parse([]byte(data), xmlparse.Options{Limits: xmlparse.NoLimits(), KeepWhitespace: true})
	if err != nil {
		return nil, err
	}
	el := doc.Root()
	if el == nil {
		return nil, errors.New("no element")
	}
	doc.RemoveChild(el)
	return el, nil
}

// framesFingerprinted tags frames that start with the fingerprint of the
// version that wrote them; older frames start with their version byte
// (2 to 4) and carry the fingerprint after the threads only.
const framesFingerprinted = 0x80

// splitFingerprint returns the fingerprint frames start with and the
// frames after it; ok is false for untagged (older) frames.
func splitFingerprint(frames []byte) (fp string, rest []byte, ok bool) {
	if len(frames) == 0 || frames[0] != framesFingerprinted {
		return "", frames, false
	}
	r := &reader{b: frames[1:]}
	fp = r.string()
	if r.err != nil {
		return "", frames, false
	}
	return fp, r.b, true
}
