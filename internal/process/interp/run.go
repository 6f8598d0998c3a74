package interp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/xsd"
)

// Delivery is what one run of an instance is given: the message it
// serves (nil for a timer that fell due, or a recovery) and what the
// host holds while it runs.
type Delivery struct {
	// Ex is the message delivered; nil when the instance's timer is due
	// or it is recovered.
	Ex *exchange.Exchange
	// Ctx is the context of the run: the request's for a request-response
	// message (the run's work after its reply goes on under the host's
	// base context); nil keeps the context of the instance's last run
	// (a new instance's is the one NewInstance was given). A run without a
	// message, or with a one-way one, works under the base context
	// whatever Ctx is.
	Ctx context.Context
	// Fence is the token of the instance lock the run holds
	// (InstanceOwners), carried by its checkpoints; nil on one node.
	Fence any
	// LastCommit, when set, is called before the run's end-of-run
	// checkpoint, the last commit of the run under its lock (a fence that
	// can release the lock with it).
	LastCommit func()
	// LockAtCommit says the host has not locked the instance (a new one,
	// which nothing else can reach until it is stored): the run's first
	// commit asks Host.Commit to take the lock, and LockTaken tells the
	// host to let go of it after the run.
	LockAtCommit bool
}

// Never is the deadline (unix nanoseconds) that never falls due: a wait
// past the clock's range (xsd.Never). Outcome.Wake and Host.Sleep take
// it; the host schedules no timer for it.
const Never = xsd.Never

// Outcome is what a run leaves the host to do: the interpreter has
// answered the requests it could, stored what the guarantees call for
// and counted the end; the host registers, schedules and keeps what the
// outcome names.
type Outcome struct {
	// Result is how the run ended.
	Result Result
	// Answer is what the delivery's client gets back from Dispatch: nil
	// (answered, or a one-way message taken), an error, or, when Pending
	// is set, nothing yet (the host waits for a later run's reply).
	Answer error
	// Pending is the open request of the delivery that a later run will
	// answer (the instance blocked before its reply): its client waits
	// for it.
	Pending *OpenRequest
	// Open are the requests of a blocked persistent instance, or of one
	// whose run could not be stored, that a later run answers: the host
	// keeps them (the instance itself is in the store) and hands them to
	// that run (Reopen).
	Open []*OpenRequest
	// Routes are the keys a blocked instance waits under: for the host to
	// register (in-memory), or those the checkpoint stored (persistent).
	Routes []string
	// Wake is when the blocked instance's timer is due (unix nanos); 0:
	// none.
	Wake int64
	// NotStored is the failed end-of-run checkpoint of a persistent
	// instance: nothing of the run is durable, and the host drops the
	// instance from memory; the store's last checkpoint is the instance.
	NotStored error
	// Refire is the due time of the stored timer a timer run that could
	// not be stored leaves waiting: the host fires it again later.
	Refire int64
	// Fault is the name of the uncaught fault that ended the instance.
	Fault exchange.QName
}

// Begin starts a new instance with delivery d: it counts the start,
// initializes the variables and runs the instance (Run).
func (in *Instance) Begin(d Delivery) Outcome {
	p := in.proc
	if p.Metrics != nil {
		p.Metrics.Started.Inc()
	}
	n := p.Stats.Started.Add(1)
	if in.host.Sample(n) && p.ActStats != nil {
		in.timing = &sampler{}
	}
	if in.EvOn(events.InstanceLifecycle) {
		in.Emit(events.Event{Kind: events.InstanceCreated})
	}
	in.begin(d)
	if err := in.Start(); err != nil {
		return in.end(d.Ex, ResFailed, err, false, d.LastCommit)
	}
	return in.run(d)
}

// Run delivers d to the instance and steps it to quiescence, then ends
// the run: it answers what the outcome of the run answers (an uncaught
// fault every open request, a request the process ended without
// answering bpel:missingReply), takes the end-of-run checkpoint of a
// persistent instance, delivers the replies held for it, and counts and
// reports an instance's end. The caller holds the instance's lock.
func (in *Instance) Run(d Delivery) Outcome {
	in.begin(d)
	return in.run(d)
}

// begin takes what d gives the run.
func (in *Instance) begin(d Delivery) {
	if d.Ctx != nil {
		in.ctx = d.Ctx
	}
	in.fence, in.lockAtCommit, in.lockTaken = d.Fence, d.LockAtCommit, false
}

// LockTaken reports that a commit of the run took the instance's lock
// (Delivery.LockAtCommit).
func (in *Instance) LockTaken() bool { return in.lockTaken }

// run is Run after begin.
func (in *Instance) run(d Delivery) Outcome {
	ex := d.Ex
	if in.host.Tracer() != nil {
		defer in.traceRun(ex)()
	}
	in.idle = exchange.IdlerOf(in.ctx)
	defer func() { in.idle = nil }()
	in.inbox, in.trigger, in.answered = ex, ex, false
	if ex == nil || ex.Operation.OneWay() {
		in.ctx = in.host.BaseContext()
	}
	res, err := in.runSteps()
	for res == ResBlocked && in.waitInline(ex) {
		res, err = in.runSteps()
	}
	notTaken := false
	if ex != nil && in.inbox == ex {
		in.inbox = nil
		notTaken = res == ResBlocked
	}
	return in.end(ex, res, err, notTaken, d.LastCommit)
}

// maxInlineWait bounds how long a request may wait inline for its
// instance's timer.
const maxInlineWait = 5 * time.Minute

// waitInline lets a request-response exchange whose instance waits only
// for a timer (a <wait> before the reply) wait for it in its own
// goroutine, as a straight-through engine should, instead of failing for
// want of a reply. A persistent instance the store holds is checkpointed
// first, so the wait survives a crash; an unpromised one (created by this
// run) is not: after a crash its unanswered client retries, and a stored
// copy would only go on alone beside the retry's instance. It reports
// whether the run should go on.
func (in *Instance) waitInline(ex *exchange.Exchange) bool {
	if ex == nil || in.answered || ex.Operation.OneWay() || ex.Respond == nil || len(in.waits) > 0 || in.wake == 0 {
		return false
	}
	if time.Unix(0, in.wake).Sub(in.host.Now()) > maxInlineWait {
		return false
	}
	if !in.proc.InMemory && in.host.Stored() && !in.Unpromised() {
		if err := in.Checkpoint(persist.Waiting); err != nil {
			return false
		}
	}
	return in.host.Sleep(in.ctx, in.wake)
}

// Terminate ends the instance as an operator asked: every open request
// is answered with bpel:missingReply (once the end is stored, for a
// persistent instance), every thread stopped, and the run ended as an
// exit.
func (in *Instance) Terminate(d Delivery) Outcome {
	in.begin(d)
	for _, r := range in.reqs {
		if r.State.Load() != 0 {
			continue
		}
		f := &exchange.Fault{Name: BpelFault("missingReply"),
			Reason: fmt.Sprintf("instance %s was terminated by an operator before it replied to %s", in.id, r.Ex.Operation.Name)}
		if in.proc.InMemory {
			r.Answer(nil, f)
		} else {
			in.Respond(r, nil, f) // delivered once the state is stored
		}
	}
	in.reqs = nil
	in.StopAll()
	return in.end(nil, ResExited, nil, false, d.LastCommit)
}

// end ends a run: answers for faults, the checkpoint (persistent),
// replies, metrics, and the answer the trigger exchange gets. notTaken
// says the trigger's message found no activity waiting for it.
func (in *Instance) end(ex *exchange.Exchange, res Result, err error, notTaken bool, last func()) Outcome {
	p := in.proc
	label := p.Name.Local
	out := Outcome{Result: res}
	if res == ResFaulted {
		// An uncaught fault is the answer to every open request: the
		// client learns the fault by its name, with its data. (u is
		// declared here: it escapes, and the common path must not pay.)
		var u *errUncaught
		if errors.As(err, &u) {
			in.host.Ended(in, u.F.ExchangeFault(), u.F.at.String())
			for _, r := range in.reqs {
				in.Respond(r, nil, u.F.ExchangeFault())
			}
			in.reqs = nil
			out.Fault = u.F.Name
		}
	}
	if res != ResBlocked && len(in.reqs) > 0 {
		if r := in.TriggerRequest(); r != nil && err == nil {
			in.Respond(r, nil, &exchange.Fault{Name: BpelFault("missingReply"), Reason: in.endReason(res, ex)})
		}
		in.MissingReplies()
	}
	if !p.InMemory && in.host.Stored() {
		cerr := err
		var ns *notStoredError
		if !errors.As(err, &ns) {
			// (A checkpoint inside the run failed: that run is not
			// stored either.)
			if last != nil {
				last() // the run's last commit
			}
			cerr = in.Checkpoint(StateOf(res))
		}
		if cerr != nil {
			return in.notStored(ex, cerr, out)
		}
	}
	in.DeliverReplies()
	var pending *OpenRequest
	if res == ResBlocked {
		if pending = in.TriggerRequest(); pending != nil && pending.Done == nil {
			pending.Done = make(chan struct{})
		}
		if p.InMemory {
			out.Routes = in.RouteKeys()
			in.idleSince = in.host.Now()
		} else {
			out.Routes = in.regRoutes
			if len(in.reqs) > 0 {
				out.Open = in.reqs
			}
		}
		out.Wake = in.wake
	} else {
		if p.Metrics != nil {
			p.Metrics.Duration.Observe(time.Since(in.started).Seconds())
			p.Metrics.Ended[outcomeName(res)].Inc()
		}
		p.Stats.Ended(res)
		if in.EvOn(events.InstanceLifecycle) {
			in.EmitEnd(res, err)
		}
	}
	if err != nil && res != ResBlocked && (ex == nil || in.answered || ex.Operation.OneWay()) {
		// An in-memory instance nothing named yet gets its id here, so
		// the line names the instance.
		in.host.Logger().Warn("instance ended with an error", slog.String("process", label), slog.String("instance", in.Name(in.host.NewMemID)), slog.Any("err", err))
	}
	switch {
	case ex == nil:
	case notTaken:
		out.Answer = exchange.ClientError("instance of process %s is not waiting for %s now", label, ex.Operation.Name)
	case ex.Operation.OneWay():
		if err != nil && exchange.KindOf(err) == exchange.KindClient {
			out.Answer = err
		}
	case in.answered:
	case err != nil:
		out.Answer = fmt.Errorf("process %s: %w", label, err)
	case pending != nil:
		// The reply comes from a later run (after a pick, a receive or a
		// timer): the client waits for it, the instance is released.
		out.Pending = pending
	default:
		out.Answer = fmt.Errorf("process %s: %s", label, in.endReason(res, ex))
	}
	return out
}

// notStored ends a persistent instance's run whose checkpoint failed.
// Nothing of the run is durable, so nothing of it may be seen: the
// replies it made are dropped (whoever waits for one gets a server error
// instead). The store still holds its last checkpoint, which the next
// message or timer loads. Requests opened by earlier runs go back to the
// host, for the run that will answer them; a timer run is tried again
// later.
func (in *Instance) notStored(ex *exchange.Exchange, cerr error, out Outcome) Outcome {
	p := in.proc
	in.host.Logger().Error("checkpoint failed", slog.String("process", p.Name.Local), slog.String("instance", in.id), slog.Any("err", cerr))
	var earlier []*OpenRequest
	for _, r := range in.reqs {
		if r.Ex != in.trigger {
			earlier = append(earlier, r)
		}
	}
	for _, r := range in.out {
		if r.Req.Ex != in.trigger {
			earlier = append(earlier, r.Req)
		}
	}
	in.out, in.reqs = nil, nil
	out.Open = earlier
	if p.Metrics != nil {
		p.Metrics.Ended["failed"].Inc()
	}
	p.Stats.Ended(ResFailed)
	if ex == nil && in.regTimer != 0 && in.state == stateWaiting {
		// A timer's run: the stored instance still waits for it.
		out.Refire = in.regTimer
	}
	out.NotStored = cerr
	out.Answer = &StoreFailure{Process: p.Name.Local, Err: cerr}
	if errors.Is(cerr, persist.ErrConflict) {
		// The message's correlation value is a live conversation's: the
		// client's doing, not the server's.
		out.Answer = exchange.ClientError("%w", out.Answer)
	}
	return out
}

// StoreFailure is a failed checkpoint as the client hears it: a
// conflict's or a refused checkpoint's detail (the store's key format
// and bounds, another conversation's instance id) is in the log and
// behind Unwrap, never in the text a fault carries.
type StoreFailure struct {
	Process string
	Err     error
}

func (e *StoreFailure) Error() string {
	if errors.Is(e.Err, persist.ErrConflict) {
		return "process " + e.Process + ": instance state could not be stored: a correlation value of this message already belongs to another conversation"
	}
	if errors.Is(e.Err, persist.ErrInvalid) {
		// A checkpoint the store refused as it is (a correlation value
		// over its bound of key bytes, say): what and how long is the
		// store's business, in the log.
		return "process " + e.Process + ": instance state could not be stored: a value of this message (a correlation value, say) is over the store's bounds (the server log has the detail)"
	}
	// The store's other failures (unavailable, disk full) name no key
	// or instance.
	return "process " + e.Process + ": " + e.Err.Error()
}

func (e *StoreFailure) Unwrap() error { return e.Err }

// endReason says why a run ended without answering ex.
func (in *Instance) endReason(res Result, ex *exchange.Exchange) string {
	op := "the request"
	if ex != nil {
		op = ex.Operation.Name
	}
	switch res {
	case ResHandled:
		return fmt.Sprintf("the process faulted (%s) and its fault handler did not reply to %s", in.inHandler, op)
	case ResExited:
		return fmt.Sprintf("the process exited without replying to %s", op)
	case ResBlocked:
		return fmt.Sprintf("instance %s waits without having replied to %s", in.id, op)
	}
	return fmt.Sprintf("the process completed without replying to %s", op)
}

// outcomeName is the outcome label of an instance that ended with r.
func outcomeName(r Result) string {
	switch r {
	case ResCompleted:
		return "completed"
	case ResHandled, ResFaulted:
		return "faulted"
	case ResExited:
		return "exited"
	case ResSuspended:
		return "suspended"
	}
	return "failed"
}
