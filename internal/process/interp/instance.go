package interp

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/corrval"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/membudget"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// frame is the explicit state of one running activity: which activity and
// how far it got (pc), and for pick and wait the deadline (unix nanos).
// An instance's frames are plain data, so a persistent instance can be
// checkpointed and resumed.
type frame struct {
	act plan.Activity
	pc  int
	due int64
	// i, n and k are counters of structured activities (forEach: next
	// value, final value, completed branches; scope: isolation held).
	i, n, k int64
	// fault is the fault a scope's handler is handling (for rethrow).
	fault *faultValue
	// rec holds compensation state (compensate.go): for a scope, its
	// completed child scope instances; for a compensation or termination
	// handler, the scope instance it runs for; for a terminator, the
	// termination handlers still to run.
	rec *compRec
}

// Instance is one running process instance: its variables (an etree tree
// whose root's children are the variables' slots) and its frames.
type Instance struct {
	id   string
	proc *Version
	host Host
	ctx  context.Context
	// tr is what tracing keeps of the instance (tracing.go); nil
	// without Options.Tracer.
	tr *instTrace
	// idle is the front door's Idler of the exchange this run serves
	// (drive), which a commit tells it waits: in.ctx is the instance's
	// own once the reply ran, the commit still the request's.
	idle exchange.Idler
	// fence is the token of the instance lock this run holds
	// (InstanceOwners), carried by its checkpoints; nil on one node.
	fence any
	root  *etree.Element
	// docs is root with the variables' documents marked, for XPath.
	docs expr.DocTree
	// threads are the instance's lines of control; threads[0] runs the
	// process. cur is the one being stepped; active the one whose private
	// variables are in the tree.
	threads []*thread
	// mainThread, threadsBuf and trigReq spare the common case (one
	// thread, one request) their allocations.
	mainThread thread
	threadsBuf [1]*thread
	trigReq    OpenRequest
	reqsBuf    [1]*OpenRequest
	cur        *thread
	active     *thread
	hasPriv    bool
	// linksChanged wakes threads waiting for links.
	linksChanged bool
	// calls collects answers of partner calls in flight (inflight of
	// them); isoHolder is the thread inside an isolated scope.
	calls     *answers
	inflight  int
	isoHolder *thread
	// corr holds the initiated correlation sets: name -> values key.
	corr map[string]string

	// inbox is a delivered message no activity has taken yet; ambiguous
	// says it matches several waiting activities.
	inbox     *exchange.Exchange
	ambiguous bool
	// exited says an exit activity ended the run.
	exited bool
	// mailOpen and mailQ (guarded by the host's lock) let messages reach
	// the run while it waits for partner answers; pendingMail are those
	// handed to it and not yet settled (mailbox.go).
	mailOpen    bool
	mailQ       []*Mail
	pendingMail []*Mail
	// reqs are the open requests: taken by a receive or onMessage, not
	// yet answered by a reply.
	reqs []*OpenRequest
	// out holds replies not yet delivered (see deliverReplies).
	out []pendingReply
	// inHandler is set while a process-level fault handler runs.
	inHandler *faultValue

	// waits and wake describe what a blocked instance waits for.
	waits []*plan.Inbound
	wake  int64
	// dirty marks variables changed since the last checkpoint.
	dirty   []bool
	started time.Time

	// trigger is the exchange that started this run; answered is set when
	// it got its reply.
	trigger  *exchange.Exchange
	answered bool
	// regRoutes are the route keys the blocked instance is registered
	// under; state is its stored state (persistent instances).
	regRoutes []string
	regTimer  int64
	state     instState
	// stored says the store holds a checkpoint of the instance: it was
	// loaded, or a checkpoint of this run committed (see unpromised).
	stored bool
	// outbox holds one-way invokes to send after the next checkpoint.
	outbox []persist.OutboxMessage
	// eprs are the partner role endpoints assigned by <copy><to
	// partnerLink> (nil until the first).
	eprs map[*plan.PartnerLink]*AssignedEPR
	// session is the instance's session identifier (session.go): an
	// unguessable token minted the first time the instance hands it
	// out, nil until then; kept in a persistent instance's frames. A
	// pointer: most instances have none, and Instance stays in its
	// allocation size class.
	session *string
	// suspendReason says why a run ended suspended (persistent: stored
	// as the record's fault while suspended). suspended marks an
	// in-memory instance an operator suspended (guarded by mu).
	suspendReason string
	suspended     bool
	// stepsLeft is what remains of the step budget, stepBudget (run
	// sets both; a partner's answer refills it).
	stepsLeft, stepBudget int
	// mem keeps the variables' sizes and the bytes the run assigned
	// (membudget.go).
	mem membudget.Meter
	// undo logs an assign's changes while it runs (undoing), so that a
	// fault takes them all back; undoWrite says the copy running is
	// followed by something that can fault (so its write is logged too).
	undo               expr.Undo
	undoing, undoWrite bool
	// idleSince is when a waiting in-memory instance last blocked (its
	// last activity, for listings).
	idleSince time.Time
	// odePID is $ode:pid of an in-memory instance (id is set only when
	// one becomes findable).
	odePID string
	// timing is set on the instances sampled for the outline's timing
	// (Begin).
	timing *sampler
	// lockAtCommit and lockTaken: the run's first commit takes the
	// instance's lock (Delivery.LockAtCommit), and did.
	lockAtCommit, lockTaken bool
	mu                      sync.Mutex
}

// pendingReply is a reply held until the state it describes is durable
// (persistent processes) or the instance is quiescent.
type pendingReply struct {
	Req   *OpenRequest
	msg   *exchange.Message
	fault *exchange.Fault
}

// Context is the context the instance's work runs under now: the
// request's until the reply, then the host's base context.
func (in *Instance) Context() context.Context { return in.ctx }

// errUncaught wraps a BPEL fault that no handler caught.
type errUncaught struct{ F *faultValue }

func (e *errUncaught) Error() string { return "uncaught " + e.F.Error() }

// NewInstance returns a new instance of version p, run by host e under
// ctx, its variables' slots fresh (Start runs the variables'
// initializers and pushes the process's activity).
func NewInstance(e Host, p *Version, ctx context.Context) *Instance {
	var root *etree.Element
	if p.Slots != nil {
		root = expr.CopyTree(p.Slots)
	} else {
		root = expr.NewSlots(p.Vars)
	}
	in := &Instance{proc: p, host: e, ctx: ctx, root: root, started: time.Now()}
	in.docs = expr.DocTree{Top: root, Vars: p.Vars, Inst: in}
	main := &in.mainThread
	main.stack = main.stackBuf[:0]
	in.threadsBuf[0] = main
	in.threads, in.cur = in.threadsBuf[:1], main
	if !p.InMemory {
		in.id = persistNewID()
		in.dirty = make([]bool, len(p.Vars))
	}
	return in
}

// touch marks variable v changed since the last checkpoint, in a way the
// memory meter does not follow (its size is measured again at the next
// copy into it).
func (in *Instance) touch(v *expr.Var) {
	in.dirtied(v)
	in.mem.Forget(v.Slot - 1)
}

// dirtied marks variable v changed since the last checkpoint by a copy,
// whose bytes chargeCopy accounts for.
func (in *Instance) dirtied(v *expr.Var) {
	if in.dirty != nil {
		in.dirty[v.Slot-1] = true
	}
}

// Slot is variable v's slot in the instance tree.
func (in *Instance) Slot(v *expr.Var) *etree.Element {
	return in.root.Child[v.Slot-1].(*etree.Element)
}

// Result is how a run of an instance ended.
type Result int

const (
	// ResCompleted: the process finished normally.
	ResCompleted Result = iota
	// ResBlocked: the instance waits for a message or a timer.
	ResBlocked
	// ResHandled: a fault reached the process and its handler ran.
	ResHandled
	// ResExited: an exit activity ended the instance.
	ResExited
	// ResFaulted: a fault nobody caught ended the instance.
	ResFaulted
	// ResFailed: a system failure ended the instance.
	ResFailed
	// ResSuspended: the instance waits for an operator (failure policy).
	ResSuspended
)

// Start initializes the variables and pushes the process's activity.
func (in *Instance) Start() error {
	for _, op := range in.proc.Inits {
		if err := applyCopyOp(op, in); err != nil {
			return err
		}
		in.touch(op.To.V)
	}
	main := in.threads[0]
	main.stack = append(main.stack, frame{act: in.proc.Root})
	if in.timing != nil {
		in.timing.begin(main, 0, in.proc.Root)
	}
	return nil
}

// runSteps runs the instance's threads until it waits, ends or fails.
func (in *Instance) runSteps() (Result, error) {
	in.stepBudget = in.proc.MaxSteps
	if in.stepBudget == 0 {
		in.stepBudget = in.host.MaxSteps()
	}
	in.stepsLeft = in.stepBudget
	in.mem.StartRun(in.proc.MaxVariableBytes, in.proc.MaxRunBytes, in.host.MemoryBounds())
	in.CheckAmbiguous()
	in.ReadyAll()
	return in.schedule()
}

// CheckAmbiguous notes whether the delivered message matches more than one
// activity waiting for it (different sets: the same were conflictingReceive;
// one waiting in parallel branches counts once): the activity that would
// take it raises bpel:ambiguousReceive instead (WS-BPEL 10.4).
func (in *Instance) CheckAmbiguous() {
	in.ambiguous = false
	m := in.inbox
	if m == nil || len(in.threads) < 2 {
		return
	}
	n, seen := 0, (*plan.Inbound)(nil)
	for _, t := range in.threads {
		if t.state != tWaiting {
			continue
		}
		waits := t.waits
		if len(waits) == 0 && len(t.stack) > 0 {
			// A loaded persistent instance: its threads' waits are not
			// stored, but the activities they wait in are.
			waits = inboundsOf(t.Top())
		}
		for _, ib := range waits {
			if ib != seen && ib.Op != nil && ib.Op.Name == m.Operation.Name && ib.Pl.Provided == m.Endpoint && in.matches(ib, m.Input) {
				n, seen = n+1, ib
			}
		}
	}
	in.ambiguous = n > 1
}

// inboundsOf are the messages the activity of frame f waits for, when it
// is a receive, a pick or an open event listener.
func inboundsOf(f *frame) []*plan.Inbound {
	switch a := f.act.(type) {
	case *plan.Receive:
		return []*plan.Inbound{&a.Inbound}
	case *plan.ExtWait:
		return []*plan.Inbound{&a.Inbound}
	case *plan.Pick:
		ibs := make([]*plan.Inbound, len(a.Msgs))
		for i := range a.Msgs {
			ibs[i] = &a.Msgs[i].Inbound
		}
		return ibs
	case *plan.EventListener:
		if f.n == 1 {
			return nil
		}
		ibs := make([]*plan.Inbound, len(a.H.Events))
		for i := range a.H.Events {
			ibs[i] = &a.H.Events[i].Inbound
		}
		return ibs
	}
	return nil
}

// matches reports whether message m satisfies ib's correlations with the
// instance's initiated sets.
func (in *Instance) matches(ib *plan.Inbound, m *exchange.Message) bool {
	for _, u := range ib.Corrs {
		if u.Initiate == "yes" {
			continue
		}
		v, err := corrval.Values(m, u.In)
		if err != nil {
			return false
		}
		have, ok := in.corr[u.Set.Name]
		if (ok && have != v) || (!ok && u.Initiate == "no") {
			return false
		}
	}
	return true
}

// StoreMessage moves the parts of m into message variable v. The parts
// become the instance's: the caller must not use them afterwards.
func (in *Instance) StoreMessage(v *expr.Var, m *exchange.Message) {
	in.touch(v)
	if in.EvOn(events.DataHandling) {
		defer in.emitVariable(v)
	}
	s := in.Slot(v)
	if in.undoing && in.undoWrite {
		in.undo.Content(s)
	}
	for i, pd := range v.Msg.Parts {
		wrapper := s.Child[i].(*etree.Element)
		if in.undoing && in.undoWrite {
			in.undo.Content(wrapper)
		}
		val := m.Parts[pd.Name]
		if pd.Element.IsZero() {
			// Type-typed part: the value is the wrapper itself.
			if val == nil {
				val = etree.NewElement(pd.Name)
			} else {
				val.Space, val.Tag = "", pd.Name
			}
			s.RemoveChildAt(i)
			s.InsertChildAt(i, val)
			continue
		}
		expr.ClearChildren(wrapper)
		if val != nil {
			wrapper.AddChild(val)
		}
	}
}

// message builds a Message from variable v's parts. The part elements are
// the instance's own; a binding that keeps them must copy.
func (in *Instance) message(v *expr.Var) *exchange.Message {
	s := in.Slot(v)
	m := &exchange.Message{Name: v.Msg.Name, Parts: make(map[string]*etree.Element, len(v.Msg.Parts))}
	for i, pd := range v.Msg.Parts {
		w := s.Child[i].(*etree.Element)
		if pd.Element.IsZero() {
			m.Parts[pd.Name] = w
			continue
		}
		if c := expr.FirstElement(w); c != nil {
			m.Parts[pd.Name] = c
		}
	}
	return m
}

func (in *Instance) faultf(at xmldoc.Pos, name string, format string, args ...any) *faultValue {
	return &faultValue{Name: BpelFault(name), Reason: fmt.Sprintf(format, args...), at: at}
}

// take gives a delivered message to ib if it is for ib's operation: the
// correlations are checked or initiated and the message stored. It
// reports whether ib took it.
func (in *Instance) take(ib *plan.Inbound, at xmldoc.Pos) (bool, error) {
	m := in.inbox
	if m == nil || ib.Op == nil || m.Operation.Name != ib.Op.Name || m.Endpoint != ib.Pl.Provided {
		return false, nil
	}
	if in.ambiguous {
		// Taken to be answered with the fault if nothing catches it.
		in.ambiguous, in.inbox = false, nil
		if !m.Operation.OneWay() && m.Respond != nil {
			_ = in.openRequestFor(m, ib.Mex, at)
		}
		return false, in.faultf(at, "ambiguousReceive", "the message for %s matches more than one activity waiting for it", m.Operation.Name)
	}
	if err := in.ApplyCorrelations(ib.Corrs, m.Input, false, at); err != nil {
		// The activity faults on this message: it was delivered, and is
		// not offered to another activity.
		in.inbox = nil
		return false, err
	}
	if !m.Operation.OneWay() && m.Respond != nil {
		if err := in.openRequestFor(m, ib.Mex, at); err != nil {
			// bpel:conflictingRequest (10.4.1): the activity faults, and
			// the second request, which no reply could answer, gets the
			// fault.
			in.inbox = nil
			if fv, ok := err.(*faultValue); ok {
				in.Respond(&OpenRequest{Ex: m}, nil, fv.ExchangeFault())
			}
			return false, err
		}
	}
	switch {
	case ib.FromParts != nil:
		in.storeParts(m.Input, ib.FromParts)
	case ib.V != nil:
		in.StoreMessage(ib.V, m.Input)
	}
	in.takeCallback(ib.Pl, m.Headers)
	m.Input = nil
	in.inbox = nil
	return true, nil
}

// WaitRouteKey is the key under which a message for the i-th wait of
// thread t finds the instance (RouteKeys' key for that wait), "" when
// no key routes it.
func (in *Instance) WaitRouteKey(t *thread, i int) string {
	k := t.waitKeys[i]
	if k == "" {
		return ""
	}
	if sk, session := in.sessionRouteKey(t.waits[i], k); session {
		return sk
	}
	return k
}

// await records that the current thread waits for ib's operation. Another
// activity (not ib in a parallel branch) already waiting for the same
// partner link, operation and correlation values makes it
// bpel:conflictingReceive (10.4): a message could not tell the two apart.
func (in *Instance) await(ib *plan.Inbound, at xmldoc.Pos) error {
	var key string
	if ib.Route != nil {
		key, _ = InstanceKeyRouteShape(ib.Route, in, ib.Op.Name)
	}
	if len(in.threads) > 1 {
		for _, t := range in.threads {
			if t == in.cur || t.state != tWaiting {
				continue
			}
			for i, w := range t.waits {
				if w != ib && w.Op == ib.Op && w.Pl.Provided == ib.Pl.Provided && t.waitKeys[i] == key {
					return in.faultf(at, "conflictingReceive", "two activities wait at once for %s on partner link %s with the same correlation", ib.Op.Name, ib.Pl.Name)
				}
			}
		}
	}
	t := in.cur
	t.waits = append(t.waits, ib)
	t.waitKeys = append(t.waitKeys, key)
	return nil
}

// wakeAt records that the current thread wants to run again at due.
func (in *Instance) wakeAt(due int64) {
	t := in.cur
	if t.wake == 0 || due < t.wake {
		t.wake = due
	}
}

// RouteKeys are the keys under which the blocked instance is found by the
// messages it waits for.
func (in *Instance) RouteKeys() []string {
	var keys []string
	for _, ib := range in.waits {
		if ib.Route == nil {
			continue
		}
		if k, ok := InstanceKeyRouteShape(ib.Route, in, ib.Op.Name); ok {
			if sk, session := in.sessionRouteKey(ib, k); session { // session.go
				// An instance that handed out its session waits under that
				// alone, in both modes: its callbacks carry it, a message
				// without it (or with another session) is not for it, and
				// the store binds a key to one instance, so under the plain
				// key a second persistent instance waiting there could not
				// be stored.
				keys = append(keys, sk)
			} else {
				keys = append(keys, k)
			}
		}
	}
	return keys
}
