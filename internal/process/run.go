package process

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/interp"
	"github.com/orchd/orchd/internal/process/plan"
)

// registry holds the blocked instances of in-memory processes and the
// routes to them. Persistent instances live in the store instead.
type registry struct {
	mu     sync.Mutex
	live   map[string]*interp.Instance
	routes map[string]*interp.Instance
	// calling holds the in-memory instances whose run waits for the
	// answers of partner calls made on their own goroutines (listed as
	// running; see awaitAnswers).
	calling map[string]*interp.Instance
	// open holds the open requests of blocked persistent instances (the
	// instance itself is in the store; its clients wait here).
	open map[string][]*interp.OpenRequest
	// held are messages for a correlated operation that no instance
	// waits for yet, by the route keys they would be found under.
	held map[string][]*heldMsg
	// offering counts, by key, held messages handed back to an instance
	// and not yet taken or held again: later messages queue behind them.
	offering map[string]int
	// heldCount is the number of messages held (in held, or handed back
	// and being offered), bounded by Options.MessageHoldMax.
	heldCount int
	seq       atomic.Uint64
}

// stripes serialize work on one persistent instance across goroutines:
// one mutex per instance id, held in the table of one of 64 stripes (by
// a hash of the id) while a goroutine holds or waits for it. Two ids
// never share a mutex: with a mutex per stripe, two instances whose ids
// hash alike waited for each other, and deadlocked when the run holding
// the stripe waited on the other (an in-process call to a persistent
// process whose new instance commits before it replies,
// TestInProcessPersistentCallSameStripe). The stripes only spread the
// table's own lock.
type stripes [64]stripe

// stripe is the table of the instance locks whose ids hash to it.
type stripe struct {
	mu   sync.Mutex
	held map[string]*idLock
}

// idLock is one instance's lock. refs (under its stripe's mu) counts
// the goroutines holding or waiting for it; the last one out removes it.
type idLock struct {
	sync.Mutex
	s    *stripe
	id   string
	refs int
}

// lock locks instance id, waiting while another goroutine holds it.
func (s *stripes) lock(id string) *idLock {
	l := s.of(id)
	l.Mutex.Lock()
	return l
}

// of is instance id's lock, counted as used until its Unlock (after a
// successful TryLock or Lock) or unref.
func (s *stripes) of(id string) *idLock {
	// FNV-1a over the string, without hash.Hash's allocations.
	h := uint32(2166136261)
	for i := 0; i < len(id); i++ {
		h = (h ^ uint32(id[i])) * 16777619
	}
	st := &s[h%uint32(len(s))]
	st.mu.Lock()
	l := st.held[id]
	if l == nil {
		if st.held == nil {
			st.held = map[string]*idLock{}
		}
		l = &idLock{s: st, id: id}
		st.held[id] = l
	}
	l.refs++
	st.mu.Unlock()
	return l
}

// Unlock unlocks the instance and gives up this goroutine's use of l.
func (l *idLock) Unlock() {
	l.Mutex.Unlock()
	l.unref()
}

// unref gives up a use of l that did not lock it.
func (l *idLock) unref() {
	l.s.mu.Lock()
	if l.refs--; l.refs == 0 {
		delete(l.s.held, l.id)
	}
	l.s.mu.Unlock()
}

func (e *Engine) now() time.Time { return e.clock().Now() }

// Dispatch implements exchange.Dispatcher. A message that matches a
// waiting instance's correlation goes to that instance; a message for a
// start activity creates an instance; either runs straight through in the
// calling goroutine until the instance is quiescent.
func (e *Engine) Dispatch(ctx context.Context, ex *exchange.Exchange) error {
	var p *interp.Version
	if m := e.served.Load(); m != nil {
		p = (*m)[ex.Endpoint]
	}
	if p == nil {
		p = e.redeployed(ex)
	}
	if p == nil {
		return exchange.ClientError("%w: %s", ErrNoProcess, ex.Endpoint.Path)
	}
	err := interp.WaitForReply(ctx, e.deliver(ctx, p, ex, nil))
	p.Stats.Exchange(ex, time.Time{})
	return err
}

// deliver gives ex to the instance its correlation values find, or to a
// new instance, or holds it until an instance waits for it (held is the
// hold of a message delivered again).
func (e *Engine) deliver(ctx context.Context, p *interp.Version, ex *exchange.Exchange, held *heldMsg) error {
	op := ex.Operation.Name
	// A message carrying a session identifier orchd handed out (ODE's
	// implicit correlation, interp/session.go) is for that session's
	// instance alone: where no correlation set routes it, it is looked
	// for, and held, under its session key, never given to another
	// instance waiting there. Its headers are read the first time a shape
	// without correlation sets needs them.
	sid, sidRead := "", false
	var tried, keys []string
	queued := false
	for _, sh := range p.Routes[op] {
		vals, ok := shapeValues(ex.Input, sh, &tried)
		if !ok {
			continue
		}
		for _, m := range sh.Masks {
			key := interp.KeyRouteShape(sh, p, op, m, vals)
			if len(sh.Uses) == 0 && len(ex.Headers) > 0 {
				if !sidRead {
					sid, sidRead = interp.SessionOf(ex.Headers), true
				}
				if sid != "" {
					key = interp.SessionKey(key, sid)
				}
			}
			if held == nil && e.queuedBehind(key) {
				// Messages held under this key came first: this one waits
				// its turn.
				queued = true
				keys = append(keys, key)
				continue
			}
			found, err := e.resume(ctx, p, key, ex)
			if found || err != nil {
				return err
			}
			keys = append(keys, key)
		}
	}
	// Instances of retired versions (versions.go) are found by their
	// version's correlation shapes.
	for _, v := range e.olderVersions(p) {
		if found, err := e.resumeOlder(ctx, v, ex, &tried, &keys); found || err != nil {
			return err
		}
	}
	if _, ok := p.Starts[op]; ok && !queued {
		return e.create(ctx, p, ex)
	}
	if e.answerEnded(p, ex, tried) {
		return nil
	}
	if len(keys) == 0 {
		if len(tried) == 0 {
			return exchange.ClientError("operation %s of process %s does not start an instance, and the message carries no correlation values to find one", op, p.Name.Local)
		}
		return noInstance(p, op, tried)
	}
	return e.hold(ctx, p, ex, keys, tried, held)
}

// noInstance is the error of a message for op that finds no instance
// waiting under the correlation values tried and cannot start one.
func noInstance(p *interp.Version, op string, tried []string) error {
	return exchange.ClientError("no instance of process %s waits for %s with correlation %v, and %s does not start an instance", p.Name.Local, op, tried, op)
}

// shapeValues reads the values of sh's sets from m, noting each in tried
// (once) for the error a message that finds no instance gets.
func shapeValues(m *exchange.Message, sh *plan.RouteShape, tried *[]string) ([]string, bool) {
	vals := make([]string, len(sh.Uses))
	for i, u := range sh.Uses {
		v, err := interp.CorrValues(m, u.In)
		if err != nil {
			return nil, false
		}
		vals[i] = v
		if t := u.Set.Name + "=" + v; !slices.Contains(*tried, t) {
			*tried = append(*tried, t)
		}
	}
	return vals, true
}

func (e *Engine) create(ctx context.Context, p *interp.Version, ex *exchange.Exchange) error {
	if !p.InMemory {
		// Until its first checkpoint the instance is in no store: this
		// keeps its version from being dropped (DropUnused).
		p.Starting.Add(1)
		defer p.Starting.Add(-1)
	}
	in := interp.NewInstance(e.host(), p, ctx)
	p.Metrics.Started.Inc()
	e.started(in)
	if in.EvOn(events.InstanceLifecycle) {
		in.Emit(events.Event{Kind: events.InstanceCreated})
	}
	if err := in.Start(); err != nil {
		return e.finish(in, ex, interp.ResFailed, err, false)
	}
	if p.InMemory {
		if len(p.Routes) > 0 {
			// A message may find the instance (through the routes
			// preRegister adds when it replies) while this run goes on.
			in.Mu.Lock()
			defer in.Mu.Unlock()
		}
		return e.drive(in, ex)
	}
	if e.opts.Owners == nil {
		// Until its first checkpoint only this run can reach the
		// instance (no store, route or timer knows its id): checkpoint
		// takes its stripe then, so that new instances whose ids share
		// a stripe do not wait for each other's partner calls.
		defer unlockStripe(in)
		in.LazyStripe = true
		return e.drive(in, ex)
	}
	m := e.stripes.lock(in.ID)
	defer m.Unlock()
	release, fence, err := e.ownNew(ctx, in.ID)
	if err != nil {
		return err
	}
	defer release()
	in.Fence, in.FoldRelease = fence, true
	return e.drive(in, ex)
}

// unlockStripe lets go of the stripe a new instance's first checkpoint
// took (lazyStripe), if it took it.
func unlockStripe(in *interp.Instance) {
	if in.Stripe != nil {
		in.Stripe.Unlock()
		in.Stripe = nil
	}
}

// resume delivers ex to the instance routed under key, if there is one.
func (e *Engine) resume(ctx context.Context, p *interp.Version, key string, ex *exchange.Exchange) (bool, error) {
	if p.InMemory {
		e.reg.mu.Lock()
		in := e.reg.routes[key]
		if in != nil && in.MailOpen {
			retarget(in, ex)
			m := post(in, ctx, ex)
			e.reg.mu.Unlock()
			return true, <-m.Done
		}
		e.reg.mu.Unlock()
		if in == nil {
			return false, nil
		}
		in.Mu.Lock()
		defer in.Mu.Unlock()
		if in.Suspended && e.reg.routes[key] == in {
			return true, suspendedError(in)
		}
		if !e.claim(in, func() bool { return e.reg.routes[key] == in }) {
			return false, nil
		}
		in.Ctx = ctx
		retarget(in, ex)
		return true, e.drive(in, ex)
	}
	if e.store == nil {
		return false, nil
	}
	id, ok, err := e.store.Route(key)
	if err != nil || !ok {
		return false, err
	}
	m := e.stripes.lock(id)
	defer m.Unlock()
	release, fence, err := e.own(ctx, id)
	if err != nil {
		return true, err
	}
	defer release()
	if again, ok, err := e.store.Route(key); err != nil || !ok || again != id {
		return false, err
	}
	in, err := e.load(ctx, p, id, fence)
	if err != nil {
		return true, err
	}
	if in.State == persist.Suspended {
		e.unload(in)
		return true, suspendedError(in)
	}
	retarget(in, ex)
	in.FoldRelease = true
	return true, e.drive(in, ex)
}

// drive delivers ex (nil for a timer) to in and runs it to quiescence,
// then checkpoints, answers, and registers what the instance waits for.
// The caller holds the instance's lock.
func (e *Engine) drive(in *interp.Instance, ex *exchange.Exchange) error {
	if e.opts.Tracer != nil {
		defer e.traceRun(in, ex)()
	}
	in.Idle = exchange.IdlerOf(in.Ctx)
	defer func() { in.Idle = nil }()
	in.Inbox, in.Trigger, in.Answered = ex, ex, false
	if ex == nil || ex.Operation.OneWay() {
		in.Ctx = e.baseCtx
	}
	res, err := in.Run()
	for res == interp.ResBlocked && e.waitInline(in, ex) {
		res, err = in.Run()
	}
	notTaken := false
	if ex != nil && in.Inbox == ex {
		in.Inbox = nil
		notTaken = res == interp.ResBlocked
	}
	return e.finish(in, ex, res, err, notTaken)
}

// maxInlineWait bounds how long a request may wait inline for its
// instance's timer.
const maxInlineWait = 5 * time.Minute

// waitInline lets a request-response exchange whose instance waits only for
// a timer (a <wait> before the reply) wait for it in its own goroutine, as
// a straight-through engine should, instead of failing for want of a
// reply. A persistent instance the store holds is checkpointed first, so
// the wait survives a crash; an unpromised one (created by this run) is
// not: after a crash its unanswered client retries, and a stored copy
// would only go on alone beside the retry's instance. It reports whether
// the run should go on.
func (e *Engine) waitInline(in *interp.Instance, ex *exchange.Exchange) bool {
	if ex == nil || in.Answered || ex.Operation.OneWay() || ex.Respond == nil || len(in.Waits) > 0 || in.Wake == 0 {
		return false
	}
	d := e.until(in.Wake)
	if d > maxInlineWait {
		return false
	}
	if !in.Proc.InMemory && e.store != nil && !in.Unpromised() {
		if err := in.Checkpoint(persist.Waiting); err != nil {
			return false
		}
	}
	t, fired := e.timer(d)
	defer t.Stop()
	select {
	case <-fired:
		return true
	case <-in.Ctx.Done():
		return false
	}
}

// finish ends a run: answers for faults, checkpoint (persistent),
// replies, registration, metrics, and the error the trigger exchange
// gets, if any. notTaken says the trigger's message found no activity
// waiting for it.
func (e *Engine) finish(in *interp.Instance, ex *exchange.Exchange, res interp.Result, err error, notTaken bool) error {
	p := in.Proc
	label := p.Name.Local
	if res == interp.ResFaulted {
		// An uncaught fault is the answer to every open request: the
		// client learns the fault by its name, with its data. (u is
		// declared here: it escapes, and the common path must not pay.)
		var u *interp.ErrUncaught
		if errors.As(err, &u) {
			e.ended.note(p, in.Corr, u.F.ExchangeFault(), e.now())
			for _, r := range in.Reqs {
				in.Respond(r, nil, u.F.ExchangeFault())
			}
			in.Reqs = nil
		}
	}
	if res != interp.ResBlocked && len(in.Reqs) > 0 {
		if r := in.TriggerRequest(); r != nil && err == nil {
			in.Respond(r, nil, &exchange.Fault{Name: interp.BpelFault("missingReply"), Reason: endReason(in, res, ex)})
		}
		in.MissingReplies()
	}
	if p.InMemory && res != interp.ResBlocked && len(in.RegRoutes) > 0 {
		e.reg.mu.Lock()
		e.unregisterLocked(in)
		e.reg.mu.Unlock()
	}
	if !p.InMemory && e.store != nil {
		cerr := err
		var ns *interp.NotStoredError
		if !errors.As(err, &ns) {
			// (A checkpoint inside the run failed: that run is not
			// stored either.)
			if rf, ok := in.Fence.(releasingFence); ok && in.FoldRelease {
				rf.ReleaseWithNext() // the run's last commit
			}
			cerr = in.Checkpoint(interp.StateOf(res))
		}
		if cerr != nil {
			return e.notStored(in, ex, cerr)
		}
	}
	in.DeliverReplies()
	var pending *interp.OpenRequest
	if res == interp.ResBlocked {
		if pending = in.TriggerRequest(); pending != nil && pending.Done == nil {
			pending.Done = make(chan struct{})
		}
		if !p.InMemory && len(in.Reqs) > 0 {
			e.reg.mu.Lock()
			e.reg.open[in.ID] = in.Reqs
			e.reg.mu.Unlock()
		}
		e.block(in)
	} else {
		e.unscheduleOf(in)
		p.Metrics.Duration.Observe(time.Since(in.Started).Seconds())
		if ex != nil && !ex.Received.IsZero() {
			e.metrics.completed.Observe(time.Since(ex.Received).Seconds())
		}
		p.Metrics.Ended[outcomeName(res)].Inc()
		p.Stats.Ended(res)
		if in.EvOn(events.InstanceLifecycle) {
			in.EmitEnd(res, err)
		}
	}
	if err != nil && res != interp.ResBlocked && (ex == nil || in.Answered || ex.Operation.OneWay()) {
		e.log.Warn("instance ended with an error", slog.String(logProcess, label), slog.String(logInstance, in.ID), slog.Any("err", err))
	}
	switch {
	case ex == nil:
		return nil
	case notTaken:
		return exchange.ClientError("instance of process %s is not waiting for %s now", label, ex.Operation.Name)
	case ex.Operation.OneWay():
		if err != nil && exchange.KindOf(err) == exchange.KindClient {
			return err
		}
		return nil
	case in.Answered:
		return nil
	case err != nil:
		return fmt.Errorf("process %s: %w", label, err)
	case pending != nil:
		// The reply comes from a later run (after a pick, a receive or a
		// timer): the client waits for it, the instance is released.
		aw := &interp.AwaitReply{Req: pending, Timeout: e.replyTimeout(p, ex), Op: ex.Operation.Name}
		if !p.InMemory {
			id := in.ID
			aw.GaveUp = func() { e.dropAbandoned(id) }
		}
		return aw
	}
	return fmt.Errorf("process %s: %s", label, endReason(in, res, ex))
}

// notStored ends a persistent instance's run whose checkpoint failed.
// Nothing of the run is durable, so nothing of it may be seen: the replies
// it made are dropped (whoever waits for one gets a server error instead),
// and the instance is dropped from memory. The store still holds its last
// checkpoint, which the next message or timer loads. Requests opened by
// earlier runs go back to the registry, for the run that will answer them;
// a timer run is tried again later.
func (e *Engine) notStored(in *interp.Instance, ex *exchange.Exchange, cerr error) error {
	p := in.Proc
	e.log.Error("checkpoint failed", slog.String(logProcess, p.Name.Local), slog.String(logInstance, in.ID), slog.Any("err", cerr))
	var earlier []*interp.OpenRequest
	for _, r := range in.Reqs {
		if r.Ex != in.Trigger {
			earlier = append(earlier, r)
		}
	}
	for _, r := range in.Out {
		if r.Req.Ex != in.Trigger {
			earlier = append(earlier, r.Req)
		}
	}
	in.Out, in.Reqs = nil, earlier
	e.unload(in)
	p.Metrics.Ended["failed"].Inc()
	p.Stats.Ended(interp.ResFailed)
	if due, id := in.RegTimer, in.ID; ex == nil && due != 0 && in.State == interp.StateWaiting {
		// A timer's run: the stored instance still waits for it.
		e.refire(p, id, due)
	}
	return &storeFailure{process: p.Name.Local, err: cerr}
}

// storeFailure is a failed checkpoint as the client hears it: a
// conflict's detail (the store's key format, another conversation's
// instance id) is in the log (notStored) and behind Unwrap, never in the
// text a fault carries.
type storeFailure struct {
	process string
	err     error
}

func (e *storeFailure) Error() string {
	if errors.Is(e.err, persist.ErrConflict) {
		return "process " + e.process + ": instance state could not be stored: a correlation value of this message already belongs to another conversation"
	}
	// The store's other failures (unavailable, disk full) name no key
	// or instance.
	return "process " + e.process + ": " + e.err.Error()
}

func (e *storeFailure) Unwrap() error { return e.err }

// endReason says why a run ended without answering ex.
func endReason(in *interp.Instance, res interp.Result, ex *exchange.Exchange) string {
	op := "the request"
	if ex != nil {
		op = ex.Operation.Name
	}
	switch res {
	case interp.ResHandled:
		return fmt.Sprintf("the process faulted (%s) and its fault handler did not reply to %s", in.InHandler, op)
	case interp.ResExited:
		return fmt.Sprintf("the process exited without replying to %s", op)
	case interp.ResBlocked:
		return fmt.Sprintf("instance %s waits without having replied to %s", in.ID, op)
	}
	return fmt.Sprintf("the process completed without replying to %s", op)
}

func outcomeName(r interp.Result) string {
	switch r {
	case interp.ResCompleted:
		return "completed"
	case interp.ResHandled, interp.ResFaulted:
		return "faulted"
	case interp.ResExited:
		return "exited"
	case interp.ResSuspended:
		return "suspended"
	}
	return "failed"
}

// preRegister makes a running in-memory instance findable by the messages
// its correlation values already route, before its reply leaves: a client
// that answers at once finds it (and waits for this run to end).
func (e *Engine) preRegister(in *interp.Instance) {
	e.reg.mu.Lock()
	defer e.reg.mu.Unlock()
	e.nameLocked(in)
	for op, shapes := range in.Proc.Routes {
		for _, sh := range shapes {
			k, ok := interp.InstanceKeyRouteShape(sh, in, op)
			if !ok {
				continue
			}
			if e.reg.routes[k] != in {
				e.reg.routes[k] = in
				in.RegRoutes = append(in.RegRoutes, k)
				e.addMemRoute(k)
			}
		}
	}
	e.releaseHeldLocked(in.RegRoutes)
}

// nameLocked gives an in-memory instance its id when it first becomes
// findable. The caller holds e.reg.mu.
func (e *Engine) nameLocked(in *interp.Instance) {
	if in.ID == "" {
		in.ID = "m" + strconv.FormatUint(e.reg.seq.Add(1), 10)
	}
}

// block registers a blocked instance: its routes (in-memory processes;
// persistent routes are in the checkpoint) and its timer.
func (e *Engine) block(in *interp.Instance) {
	if in.Proc.InMemory {
		in.IdleSince = e.now()
		e.reg.mu.Lock()
		e.nameLocked(in)
		e.reg.live[in.ID] = in
		e.unregisterLocked(in)
		in.RegRoutes = in.RouteKeys()
		for _, k := range in.RegRoutes {
			e.reg.routes[k] = in
			e.addMemRoute(k)
		}
		e.releaseHeldLocked(in.RegRoutes)
		e.reg.mu.Unlock()
	} else if len(in.RegRoutes) > 0 {
		// Persistent: the checkpoint stored the routes.
		e.reg.mu.Lock()
		e.releaseHeldLocked(in.RegRoutes)
		e.reg.mu.Unlock()
	}
	if in.Wake != 0 {
		e.schedule(in.Proc, in.ID, in.Wake)
		in.TimerPending = true
	} else {
		e.unscheduleOf(in)
	}
}

// claim takes a blocked in-memory instance (whose lock the caller holds)
// out of the registry if it is still waiting as still says; block puts it
// back if it waits again. Between finding an instance and locking it,
// another message or its timer may have moved it on.
func (e *Engine) claim(in *interp.Instance, still func() bool) bool {
	e.reg.mu.Lock()
	defer e.reg.mu.Unlock()
	if !still() {
		return false
	}
	e.unregisterLocked(in)
	delete(e.reg.live, in.ID)
	return true
}

func (e *Engine) unregisterLocked(in *interp.Instance) {
	for _, k := range in.RegRoutes {
		if e.reg.routes[k] == in {
			delete(e.reg.routes, k)
			e.removeMemRoute(k)
		}
	}
	in.RegRoutes = nil
}

// timerSet holds the pending timer of each instance that waits for one,
// so that the timer of an instance that moves on is stopped rather than
// kept in memory until it falls due (an approval decided at once would
// keep its timeout's timer for days).
type timerSet struct {
	mu sync.Mutex
	m  map[string]*pendingTimer
}

type pendingTimer struct {
	t   Timer
	due int64
}

// schedule runs the instance's timer at due, in place of the one it had;
// it reports false when that timer is pending here already (a timer
// adopted from the store is not scheduled twice).
func (e *Engine) schedule(p *interp.Version, id string, due int64) bool {
	d := e.until(due)
	if d < 0 {
		d = 0
	}
	ts := &e.timers
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if old := ts.m[id]; old != nil {
		if old.due == due {
			return false
		}
		old.t.Stop()
	}
	if ts.m == nil {
		ts.m = map[string]*pendingTimer{}
	}
	pt := &pendingTimer{due: due}
	pt.t = e.clock().AfterFunc(d, func() {
		ts.mu.Lock()
		if ts.m[id] == pt {
			delete(ts.m, id)
		}
		ts.mu.Unlock()
		e.fire(p, id, due)
	})
	ts.m[id] = pt
	return true
}

// unschedule stops the timer of an instance that no longer waits for one.
func (e *Engine) unschedule(id string) {
	ts := &e.timers
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if pt := ts.m[id]; pt != nil {
		pt.t.Stop()
		delete(ts.m, id)
	}
}

// unscheduleOf stops in's pending timer, if it can have one. A persistent
// instance is loaded afresh for each run, and its timer may have been
// scheduled by an earlier run or adopted, so its ID is always looked up;
// an in-memory instance has one only if this object scheduled it, so the
// exchanges that never wait for a timer (the in-memory purchase order)
// do not take the timer set's lock.
func (e *Engine) unscheduleOf(in *interp.Instance) {
	if in.Proc.InMemory && !in.TimerPending {
		return
	}
	in.TimerPending = false
	e.unschedule(in.ID)
}

// fire runs an instance whose timer is due, if it still waits for it.
func (e *Engine) fire(p *interp.Version, id string, due int64) {
	ctx := e.baseCtx
	if p.InMemory {
		e.reg.mu.Lock()
		in := e.reg.live[id]
		e.reg.mu.Unlock()
		if in == nil {
			return
		}
		in.Mu.Lock()
		defer in.Mu.Unlock()
		if !e.claim(in, func() bool { return e.reg.live[id] == in && in.Wake == due && !in.Suspended }) {
			return
		}
		in.Ctx = ctx
		_ = e.drive(in, nil)
		return
	}
	if e.store == nil {
		return
	}
	m := e.stripes.lock(id)
	defer m.Unlock()
	release, fence, err := e.own(ctx, id)
	if err != nil {
		// (The cluster's etcd is unavailable: try again, as when the
		// run could not be stored.)
		e.log.Error("timer: cannot take instance", slog.String(logInstance, id), slog.Any("err", err))
		e.refire(p, id, due)
		return
	}
	defer release()
	in, err := e.load(ctx, p, id, fence)
	if errors.Is(err, ErrBroken) || errors.Is(err, persist.ErrNotFound) {
		return // logged once when found, or deleted meanwhile
	}
	if err != nil {
		e.log.Error("timer: cannot load instance", slog.String(logInstance, id), slog.Any("err", err))
		e.refire(p, id, due)
		return
	}
	if in.Wake != due || in.State != interp.StateWaiting {
		// Suspended (it fires when resumed), or moved on.
		e.unload(in)
		return
	}
	in.FoldRelease = true
	_ = e.drive(in, nil)
}

// refire fires the timer of persistent instance id due at due again
// after retryDelay, unless the engine has stopped meanwhile; fire runs it
// only if the instance still waits for it.
func (e *Engine) refire(p *interp.Version, id string, due int64) {
	time.AfterFunc(e.retryDelay(), func() {
		if e.baseCtx.Err() == nil {
			e.fire(p, id, due)
		}
	})
}

// retryDelay is how long background work that failed (an outbox send, a
// timer run that could not be stored) waits before it is tried again.
func (e *Engine) retryDelay() time.Duration {
	if e.opts.OutboxRetry > 0 {
		return e.opts.OutboxRetry
	}
	return time.Second
}

// dropAbandoned forgets the stashed open requests of persistent instance
// id whose clients gave up waiting (the instance may never run again).
func (e *Engine) dropAbandoned(id string) {
	e.reg.mu.Lock()
	defer e.reg.mu.Unlock()
	open := e.reg.open[id]
	kept := make([]*interp.OpenRequest, 0, len(open))
	for _, r := range open {
		if r.State.Load() == 0 {
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		delete(e.reg.open, id)
	} else {
		e.reg.open[id] = kept
	}
}
