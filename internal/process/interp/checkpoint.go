package interp

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

type instState = persist.State

// stateWaiting is the stored state of an instance that waits.
const stateWaiting = persist.Waiting

func persistNewID() string { return persist.NewID() }

// StateOf is the stored state after a run that ended with r.
func StateOf(r Result) persist.State {
	switch r {
	case ResBlocked:
		return persist.Waiting
	case ResCompleted:
		return persist.Completed
	case ResHandled, ResFaulted, ResFailed:
		return persist.Faulted
	case ResExited:
		return persist.Terminated
	case ResSuspended:
		return persist.Suspended
	}
	return persist.Running
}

// Checkpoint writes the instance's state in one store commit: its record,
// the variables changed since the last checkpoint, its routes and timer.
// Replies held so far become deliverable once it returns nil.
func (in *Instance) Checkpoint(st persist.State) error {
	rec := persist.Instance{
		ID: in.id, Process: in.proc.Name.String(), State: st,
		Created: in.started, Updated: in.host.Now(), Correlations: in.corr,
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
		routes = in.RouteKeys()
		for _, k := range routes {
			cp.AddRoutes = append(cp.AddRoutes, persist.Route{Key: k, InstanceID: in.id})
		}
		if in.wake != 0 {
			timer = in.wake
			cp.AddTimers = append(cp.AddTimers, persist.Timer{Due: time.Unix(0, in.wake), InstanceID: in.id})
		}
	}
	ended := st == persist.Completed || st == persist.Faulted || st == persist.Terminated
	if ended && in.proc.Cleans(st == persist.Completed, "instance") {
		cp.Delete = true
	} else {
		// EncodeFrames takes the private variables of the thread running
		// (an event handler's, a parallel forEach branch's) out of the
		// tree, so that the tree holds the shared ones written below; the
		// run goes on in that thread after the checkpoint (one before a
		// partner call), so they go back in once written.
		active := in.active
		var err error
		if rec.Frames, err = in.EncodeFrames(routes, timer); err != nil {
			in.activate(active)
			return err
		}
		defer in.activate(active)
		dropVars := ended && in.proc.Cleans(st == persist.Completed, "variables")
		ws := xmlparse.WriteSettings()
		for i, d := range in.dirty {
			if !d && !dropVars {
				continue
			}
			if dropVars {
				cp.Vars[i+1] = nil
				continue
			}
			var b bytes.Buffer
			in.root.Child[i].(*etree.Element).WriteTo(&b, &ws)
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
		in.DeliverReplies()
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
	lock := in.lockAtCommit && !in.lockTaken
	in.lockTaken = in.lockTaken || lock
	err := in.host.Commit(in, cp, lock)
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
	in.proc.Metrics.Commits.Inc()
	in.proc.Metrics.StoredBytes.Add(float64(n))
	in.DeliverReplies()
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

// framesSession flags a version byte (3 or 4) whose frames end, after
// the endpoint list, with the instance's session identifier (session.go);
// an instance that never handed one out is written without it, as before.
const framesSession = 0x10

// framesVersionOf splits a frames version byte into the version (2 to 4,
// checked by the caller) and whether the session identifier follows.
func framesVersionOf(b byte) (version byte, session bool) {
	return b &^ framesSession, b&framesSession != 0
}

// EncodeFrames encodes the control state: the threads with their frames
// and private variables, the fault being handled, and the routes and
// timer the instance is registered under.
func (in *Instance) EncodeFrames(routes []string, timer int64) ([]byte, error) {
	in.deactivate()
	b := make([]byte, 0, 32+8*len(in.threads[0].stack))
	recs := in.proc.Comp != nil && in.hasRecs()
	// The fingerprint first: a load finds the instance's version by it
	// before decoding anything that depends on the definition.
	b = append(b, FramesFingerprinted)
	b = appendString(b, in.proc.Fingerprint)
	var ver byte
	switch {
	case recs:
		ver = framesVersionComp
	case len(in.eprs) == 0 && in.session == nil:
		ver = framesVersion
	default:
		ver = framesVersionEPRs
	}
	if in.session != nil {
		ver |= framesSession
	}
	b = append(b, ver)
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
				fault = f.fault.Name.String()
			}
			b = appendString(b, fault)
			if recs {
				b = appendRec(b, f.rec)
			}
		}
		b = appendSlots(b, t.priv)
	}
	b = appendString(b, in.proc.Fingerprint)
	var fault string
	if in.inHandler != nil {
		fault = in.inHandler.Name.String()
	}
	b = appendString(b, fault)
	b = binary.AppendUvarint(b, uint64(len(routes)))
	for _, k := range routes {
		b = appendString(b, k)
	}
	b = binary.AppendVarint(b, timer)
	if ver != framesVersion {
		b = in.appendEPRs(b)
	}
	if in.session != nil {
		b = appendString(b, *in.session)
	}
	return b, nil
}

// DecodeThreads reads what encodeFrames wrote of the threads (recs: each
// frame is followed by its compensation record).
func (in *Instance) DecodeThreads(r *persist.Reader, recs bool) error {
	p := in.proc
	n := r.Uvarint()
	if r.Err != nil || n == 0 || n > uint64(len(r.B)) {
		return ErrBadFrames
	}
	in.threads = in.threads[:0]
	for i := uint64(0); i < n && r.Err == nil; i++ {
		t := &thread{}
		parent := r.Uvarint()
		if parent > i || (i > 0 && parent == 0) {
			return ErrBadFrames
		}
		if parent > 0 {
			t.parent = in.threads[parent-1]
		}
		if len(r.B) == 0 {
			return ErrBadFrames
		}
		t.state = threadState(r.B[0])
		r.B = r.B[1:]
		if t.state > tDone {
			return ErrBadFrames
		}
		t.kids = int(r.Uvarint())
		nf := r.Uvarint()
		if nf > uint64(len(r.B)) {
			return ErrBadFrames
		}
		for j := uint64(0); j < nf && r.Err == nil; j++ {
			aid, pc, due := r.Uvarint(), r.Uvarint(), r.Varint()
			fi, fn, fk := r.Varint(), r.Varint(), r.Varint()
			fault := r.String()
			if aid >= uint64(len(p.Acts)) {
				return fmt.Errorf("%w (activity %d)", ErrBadFrames, aid)
			}
			f := frame{act: p.Acts[aid], pc: int(pc), due: due, i: fi, n: fn, k: fk}
			if fault != "" {
				f.fault = &faultValue{Name: parseClark(fault)}
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
	return r.Err
}

// appendString appends s to b, length-prefixed, as persist.Reader.String
// reads it.
func appendString(b []byte, s string) []byte { return persist.AppendString(b, s) }

// ErrBadFrames marks stored control state (frames) that does not decode.
var ErrBadFrames = errors.New("corrupt instance control state")

// ErrBadVariable marks a stored variable that is not XML.
var ErrBadVariable = errors.New("corrupt stored variable")

// newReader returns a reader of stored control state (frames, outbox
// messages): B is what remains, Err the first failure (ErrBadFrames),
// after which every read returns zero.
func newReader(b []byte) *persist.Reader {
	return &persist.Reader{B: b, Bad: ErrBadFrames}
}

// parseClark parses a QName in Clark notation ({namespace}local).
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
func stepInvoke(a *plan.Invoke, in *Instance, f *frame) (plan.Activity, bool, error) {
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
	recovered, err := in.beforeCall(f, func() bool { return !in.proc.Idempotent[a.Pl.Name+"/"+a.Op.Name] })
	if err != nil {
		return nil, false, fmt.Errorf("checkpoint before invoke %s.%s at %s: %w", a.Pl.Name, a.Op.Name, a.Pos, err)
	}
	if recovered {
		return failedInvoke(a, in, f, errMayHaveRun)
	}
	if f.due != 0 && in.host.Now().UnixNano() < f.due {
		in.wakeAt(f.due) // waiting to retry
		return nil, false, errBlocked
	}
	call := &exchange.Call{Operation: a.Op, Timeout: a.Timeout}
	if call.Input, err = in.invokeInput(a); err != nil {
		return nil, false, err
	}
	if partner == nil {
		return nil, false, fmt.Errorf("invoke %s.%s at %s: partner link is not bound", a.Pl.Name, a.Op.Name, a.Pos)
	}
	partner = in.tracePartner(partner, a)
	if in.EvOn(events.PartnerInteraction) {
		in.Emit(events.Event{Kind: events.PartnerInvoked, Activity: "invoke", Name: a.Name, Position: a.Pos.String(), Partner: a.Pl.Name, Operation: a.Op.Name})
	}
	if in.othersBusy() {
		// Other branches can go on meanwhile: the call goes out on its own
		// goroutine, with copies of what it reads.
		call.Input = CopyMessage(call.Input)
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

// invokeInput builds the message invoke a sends, from its inputVariable
// or <toParts> (an element variable standing for a message of one
// element part is compiled as toParts), and applies the correlations it
// initiates; nil when the operation takes no input. A variable never
// assigned raises bpel:uninitializedVariable (WS-BPEL 2.0 8.4.1, 10.3)
// rather than sending the call without its part.
func (in *Instance) invokeInput(a *plan.Invoke) (*exchange.Message, error) {
	var m *exchange.Message
	switch {
	case a.ToParts != nil:
		if err := in.partsInitialized(a.Op.Input, a.ToParts, a.Pos); err != nil {
			return nil, err
		}
		m = in.partsMessage(a.Op.Input, a.ToParts)
	case a.In != nil:
		if err := in.initialized(a.In, a.Pos); err != nil {
			return nil, err
		}
		m = in.message(a.In)
	default:
		return nil, nil
	}
	if err := in.ApplyCorrelations(a.Corrs, m, true, a.Pos); err != nil {
		return nil, err
	}
	return m, nil
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
// a reply or a one-way invoke (the outbox) waits for its commit, so that
// it leaves before the call. recovered reports a guarded call that may have happened
// before orchd stopped: the caller fails it instead of calling again. err
// is the checkpoint's failure.
func (in *Instance) beforeCall(f *frame, guarded func() bool) (recovered bool, err error) {
	if in.proc.InMemory || !in.host.Stored() {
		return false, nil
	}
	g := guarded()
	switch {
	case g && f.pc == 0:
		// pc 1 marks the call as under way for any checkpoint taken
		// while it is (another branch's, or this run's first).
		f.pc = 1
		if in.Unpromised() && len(in.outbox) == 0 {
			return false, nil
		}
		fallthrough
	case len(in.out) > 0, len(in.outbox) > 0:
		return false, in.Checkpoint(persist.Running)
	case g && in.cur.mayHaveRun:
		in.cur.mayHaveRun = false
		return true, nil
	}
	return false, nil
}

// Unpromised reports that a checkpoint in the middle of this run would
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
func (in *Instance) Unpromised() bool {
	return !in.host.Clustered() && !in.stored && !in.answered && len(in.out) == 0
}

// callAsync sends a partner call on its own goroutine while other threads
// go on: call runs there under the instance's context and returns the
// answer, which comes back to the current thread (its frame f resumes
// with f.k == 1 and the answer in the thread's answer). It returns
// errCalling, for the step to return.
func (in *Instance) callAsync(f *frame, call func(ctx context.Context) *callAnswer) error {
	t := in.cur
	t.callSeq++
	seq := t.callSeq
	if in.calls == nil {
		in.calls = &answers{Notify: make(chan struct{}, 1)}
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
func answeredInvoke(a *plan.Invoke, in *Instance, f *frame, res *exchange.Message, err error, dur time.Duration) (plan.Activity, bool, error) {
	in.stepsLeft = in.stepBudget // the run waited for the partner
	in.mem.StartRun(in.proc.MaxVariableBytes, in.proc.MaxRunBytes, in.host.MemoryBounds())
	in.proc.InvokeMetrics[a.ID()].Observe(err, dur)
	if in.EvOn(events.PartnerInteraction) {
		emitAnsweredInvoke(a, in, err, dur)
	}
	if err != nil {
		if fv := faultFromPartner(err, a, in.proc.UndeclaredFaultsFail); fv != nil {
			return nil, false, fv
		}
		return failedInvoke(a, in, f, err)
	}
	if a.ReplySchema != nil && res != nil {
		if err := in.checkReply(a, res); err != nil {
			return nil, false, err
		}
	}
	if res != nil && (a.Out != nil || a.FromParts != nil) {
		if err := in.ApplyCorrelations(a.Corrs, res, false, a.Pos); err != nil {
			return nil, false, err
		}
		if a.FromParts != nil {
			in.storeParts(res, a.FromParts)
		} else {
			in.StoreMessage(a.Out, res)
		}
	}
	return nil, true, nil
}

// ActivityFailure is the fault a failed partner call throws (ODE's name
// for the fault of faultOnFailure), in-memory or persistent
// (partnerfail.go says when a persistent instance suspends instead).
var ActivityFailure = exchange.QName{Space: deploy.NsActivityRecovery, Local: "activityFailure"}

// nsFault is the namespace of the data orchd's own faults carry.
const nsFault = "urn:orchd:fault"

// errSuspended ends a run with the instance suspended for an operator.
var errSuspended = errors.New("instance suspended")

// FramesFingerprinted tags frames that start with the fingerprint of the
// version that wrote them; older frames start with their version byte
// (2 to 4) and carry the fingerprint after the threads only.
const FramesFingerprinted = 0x80

// SplitFingerprint returns the fingerprint frames start with and the
// frames after it; ok is false for untagged (older) frames.
func SplitFingerprint(frames []byte) (fp string, rest []byte, ok bool) {
	if len(frames) == 0 || frames[0] != FramesFingerprinted {
		return "", frames, false
	}
	r := newReader(frames[1:])
	fp = r.String()
	if r.Err != nil {
		return "", frames, false
	}
	return fp, r.B, true
}
