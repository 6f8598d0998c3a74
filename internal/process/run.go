package process

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/corrval"
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
	// keys are the route keys each in-memory instance in routes is
	// registered under (preRegister, block); mail those it is found
	// under only while its run waits for partner answers (openMail).
	keys, mail map[*interp.Instance][]string
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

// stripeOf is the stripe whose table holds instance id's lock.
func (s *stripes) stripeOf(id string) *stripe {
	// FNV-1a over the string, without hash.Hash's allocations.
	h := uint32(2166136261)
	for i := 0; i < len(id); i++ {
		h = (h ^ uint32(id[i])) * 16777619
	}
	return &s[h%uint32(len(s))]
}

// held is the lock of instance id, which the calling goroutine holds.
func (s *stripes) held(id string) *idLock {
	st := s.stripeOf(id)
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.held[id]
}

// of is instance id's lock, counted as used until its Unlock (after a
// successful TryLock or Lock) or unref.
func (s *stripes) of(id string) *idLock {
	st := s.stripeOf(id)
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
		// A request with the correlation values of an instance that just
		// ended because two of its activities waited for such a message
		// (the operation also continues instances) was meant for it: it
		// gets the fault rather than a new instance (betsy's
		// Receive-ConflictingReceiveFault).
		if e.answerEnded(p, ex, tried, interp.BpelFault("conflictingReceive")) {
			return nil
		}
		return e.create(ctx, p, ex)
	}
	if e.answerEnded(p, ex, tried, exchange.QName{}) {
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
		v, err := corrval.Values(m, u.In)
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
	d := interp.Delivery{Ex: ex}
	if p.InMemory {
		if len(p.Routes) > 0 {
			// A message may find the instance (through the routes
			// preRegister adds when it replies) while this run goes on.
			in.Lock()
			defer in.Unlock()
		}
		return e.drive(in, d, true)
	}
	if e.opts.Owners == nil {
		// Until its first checkpoint only this run can reach the
		// instance (no store, route or timer knows its id): its first
		// checkpoint takes its stripe (Commit), so that new instances
		// whose ids share a stripe do not wait for each other's partner
		// calls.
		d.LockAtCommit = true
		defer func() {
			if in.LockTaken() {
				e.stripes.held(in.ID()).Unlock()
			}
		}()
		return e.drive(in, d, true)
	}
	m := e.stripes.lock(in.ID())
	defer m.Unlock()
	release, fence, err := e.ownNew(ctx, in.ID())
	if err != nil {
		return err
	}
	defer release()
	d.Fence, d.LastCommit = fence, lastCommit(fence)
	return e.drive(in, d, true)
}

// lastCommit is what a run does before its last commit under the lock
// whose token is fence: a fence that can releases the lock with it.
func lastCommit(fence any) func() {
	if rf, ok := fence.(releasingFence); ok {
		return rf.ReleaseWithNext
	}
	return nil
}

// resume delivers ex to the instance routed under key, if there is one.
func (e *Engine) resume(ctx context.Context, p *interp.Version, key string, ex *exchange.Exchange) (bool, error) {
	if p.InMemory {
		e.reg.mu.Lock()
		in := e.reg.routes[key]
		if in != nil && in.MailboxOpen() {
			retarget(in, ex)
			m := in.Post(ctx, ex)
			e.reg.mu.Unlock()
			return true, <-m.Done
		}
		e.reg.mu.Unlock()
		if in == nil {
			return false, nil
		}
		in.Lock()
		defer in.Unlock()
		if in.IsSuspended() {
			// The route map is shared with every other instance's
			// registration: read it under its lock.
			e.reg.mu.Lock()
			routed := e.reg.routes[key] == in
			e.reg.mu.Unlock()
			if routed {
				return true, suspendedError(in)
			}
		}
		if !e.claim(in, func() bool { return e.reg.routes[key] == in }) {
			return false, nil
		}
		retarget(in, ex)
		return true, e.drive(in, interp.Delivery{Ex: ex, Ctx: ctx}, false)
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
	if in.IsSuspended() {
		e.unload(in)
		return true, suspendedError(in)
	}
	retarget(in, ex)
	return true, e.drive(in, interp.Delivery{Ex: ex, Fence: fence, LastCommit: lastCommit(fence)}, false)
}

// drive has in run with delivery d (Begin for a new instance) and
// settles its outcome. The caller holds the instance's lock.
func (e *Engine) drive(in *interp.Instance, d interp.Delivery, begin bool) error {
	var out interp.Outcome
	if begin {
		out = in.Begin(d)
	} else {
		out = in.Run(d)
	}
	return e.settle(in, d.Ex, out)
}

// settle does what the outcome of a run of in serving ex (nil: a timer,
// recovery, an operator) leaves to the engine: registers a blocked
// instance's routes and timer, keeps its open requests, forgets an
// ended one, and returns what the trigger exchange's Dispatch returns.
// The caller holds the instance's lock.
func (e *Engine) settle(in *interp.Instance, ex *exchange.Exchange, out interp.Outcome) error {
	p := in.Version()
	if p.InMemory && out.Result != interp.ResBlocked {
		if in.ID() != "" {
			// (Only a named instance can be registered.)
			e.reg.mu.Lock()
			e.unregisterLocked(in)
			e.reg.mu.Unlock()
		}
		e.keepEnded(in, out.Result, out.Fault)
	}
	if out.NotStored != nil {
		// Nothing of the run is durable: the instance is dropped from
		// memory; the store's last checkpoint is the instance.
		e.keepOpen(in.ID(), out.Open)
		if out.Refire != 0 {
			e.refire(p, in.ID(), out.Refire)
		}
		return out.Answer
	}
	e.sampled.note(in, out.Result == interp.ResBlocked || out.Result == interp.ResSuspended)
	if out.Result == interp.ResBlocked {
		if len(out.Open) > 0 {
			e.reg.mu.Lock()
			e.reg.open[in.ID()] = out.Open
			e.reg.mu.Unlock()
		}
		if err := e.block(in, out); err != nil {
			return e.refuseConflict(in, ex, out, err)
		}
	} else {
		e.unscheduleOf(in)
		if ex != nil && !ex.Received.IsZero() {
			e.metrics.completed.Observe(time.Since(ex.Received).Seconds())
		}
		if ended := e.opts.InstanceEnded; ended != nil && out.Result != interp.ResSuspended && in.Session() != "" {
			ended(p.Name.String(), in.ID(), in.Session())
		}
		if ended := e.opts.ExtensionWaitsEnded; ended != nil && out.Result != interp.ResSuspended {
			if keys := in.ExtensionWaits(); len(keys) > 0 {
				ended(p.Name.String(), keys)
			}
		}
	}
	if out.Pending != nil {
		// The reply comes from a later run (after a pick, a receive or a
		// timer): the client waits for it, the instance is released.
		aw := &interp.AwaitReply{Req: out.Pending, Timeout: e.replyTimeout(p, ex), Op: ex.Operation.Name}
		if !p.InMemory {
			id := in.ID()
			aw.GaveUp = func() { e.dropAbandoned(id) }
		}
		return aw
	}
	return out.Answer
}

// preRegister makes a running in-memory instance findable by the messages
// its correlation values already route, before its reply leaves: a client
// that answers at once finds it (and waits for this run to end).
func (e *Engine) preRegister(in *interp.Instance) {
	e.reg.mu.Lock()
	defer e.reg.mu.Unlock()
	e.nameLocked(in)
	for op, shapes := range in.Version().Routes {
		for _, sh := range shapes {
			k, ok := interp.InstanceKeyRouteShape(sh, in, op)
			if !ok {
				continue
			}
			if o := e.reg.routes[k]; o != in {
				if o != nil {
					continue // another conversation's: block refuses this instance
				}
				e.reg.routes[k] = in
				e.reg.keys[in] = append(e.reg.keys[in], k)
				e.addMemRoute(k)
			}
		}
	}
	e.releaseHeldLocked(e.reg.keys[in])
}

// nameLocked gives an in-memory instance its id when it first becomes
// findable. The caller holds e.reg.mu.
func (e *Engine) nameLocked(in *interp.Instance) {
	in.Name(e.host().NewMemID)
}

// block registers a blocked instance: its routes (in-memory processes;
// persistent routes are in the checkpoint) and its timer. An in-memory
// instance one of whose routes another live instance holds (a start
// message carrying that conversation's correlation value) registers
// nothing: the error says so, as the store's refusal does for a
// persistent one.
func (e *Engine) block(in *interp.Instance, out interp.Outcome) error {
	if in.Version().InMemory {
		e.reg.mu.Lock()
		for _, k := range out.Routes {
			if o := e.reg.routes[k]; o != nil && o != in {
				e.unregisterLocked(in)
				e.reg.mu.Unlock()
				return exchange.ClientError("process %s: a correlation value of this message already belongs to another conversation", in.Version().Name.Local)
			}
		}
		e.nameLocked(in)
		e.reg.live[in.ID()] = in
		e.unregisterLocked(in)
		if len(out.Routes) > 0 {
			e.reg.keys[in] = out.Routes
		}
		for _, k := range out.Routes {
			e.reg.routes[k] = in
			e.addMemRoute(k)
		}
		e.releaseHeldLocked(out.Routes)
		e.reg.mu.Unlock()
	} else if len(out.Routes) > 0 {
		// Persistent: the checkpoint stored the routes.
		e.reg.mu.Lock()
		e.releaseHeldLocked(out.Routes)
		e.reg.mu.Unlock()
	}
	if out.Wake != 0 {
		e.schedule(in.Version(), in.ID(), out.Wake)
	} else {
		e.unscheduleOf(in)
	}
	return nil
}

// refuseConflict drops in-memory instance in, which block refused with
// err: nothing of it stays. The trigger's client gets err unless its
// reply has left already (then the log says what happened).
func (e *Engine) refuseConflict(in *interp.Instance, ex *exchange.Exchange, out interp.Outcome, err error) error {
	e.unscheduleOf(in)
	if ex != nil && (ex.Operation.OneWay() || out.Pending != nil || out.Answer != nil) {
		return err
	}
	e.log.Warn("instance dropped after its reply: a correlation value it initiated belongs to another conversation",
		slog.String(logProcess, in.Version().Name.Local), slog.String(logInstance, in.ID()))
	return nil
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
	delete(e.reg.live, in.ID())
	return true
}

func (e *Engine) unregisterLocked(in *interp.Instance) {
	for _, k := range e.reg.keys[in] {
		if e.reg.routes[k] == in {
			delete(e.reg.routes, k)
			e.removeMemRoute(k)
		}
	}
	delete(e.reg.keys, in)
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
// adopted from the store is not scheduled twice). A due of interp.Never (a
// deadline past the clock's range) never fires: it only stops the timer
// the instance had.
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
		delete(ts.m, id)
	}
	if due == interp.Never {
		return true
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
	if in.Version().InMemory && in.ID() == "" {
		return // never blocked (block names it): never scheduled
	}
	e.unschedule(in.ID())
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
		in.Lock()
		defer in.Unlock()
		if !e.claim(in, func() bool { return e.reg.live[id] == in && in.WaitsForTimer(due) && !in.IsSuspended() }) {
			return
		}
		_ = e.drive(in, interp.Delivery{Ctx: ctx}, false)
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
	if !in.WaitsForTimer(due) {
		// Suspended (it fires when resumed), or moved on.
		e.unload(in)
		return
	}
	_ = e.drive(in, interp.Delivery{Fence: fence, LastCommit: lastCommit(fence)}, false)
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
