package interp

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/plan"
)

// threadState says whether a thread can be stepped and, if not, what it
// waits for.
type threadState uint8

const (
	// tReady: the scheduler may step the thread.
	tReady threadState = iota
	// tWaiting: a receive, pick or wait; tried again when the next run
	// starts (a message or a timer arrived).
	tWaiting
	// tJoining: its top frame (flow, parallel forEach) waits for child
	// threads.
	tJoining
	// tLinks: waits for the status of incoming links, or for an isolated
	// scope held by another thread.
	tLinks
	// tCalling: a partner call is in flight on its own goroutine.
	tCalling
	// tDone: finished or terminated.
	tDone
)

// thread is one line of control of an instance: the process's main
// activity, or a branch of a flow or of a parallel forEach. Threads are
// stepped by one goroutine at a time, so activities need no locks.
type thread struct {
	stack  []frame
	parent *thread
	// kids counts the live child threads spawned by the top frame.
	kids  int
	state threadState
	// priv holds the thread's own copies of variables (a branch of a
	// parallel forEach: its counter and the variables of its scope): they
	// are in the instance tree while the thread or a descendant runs.
	priv []privSlot
	// waits and wake: what a tWaiting thread waits for.
	waits []*plan.Inbound
	// waitKeys[i] is the correlation key waits[i] waits under (for
	// conflictingReceive).
	waitKeys []string
	wake     int64
	// answer is the result of the thread's in-flight call, once it came;
	// callSeq identifies that call.
	answer  *callAnswer
	callSeq uint64
	// mayHaveRun marks a thread recovered after a crash inside a guarded
	// partner call: the call may have happened (see beforeCall).
	mayHaveRun bool
	// scopeFaulted says the last scope the thread completed ended by a
	// fault handler (read at once by a forEach counting successful
	// branches; not stored).
	scopeFaulted bool
	// stackBuf holds the first frames (the purchase order needs 3).
	stackBuf [4]frame
}

// privSlot is a variable slot a thread has its own copy of. While the
// thread is active, el is the shadowed element of the tree (swap).
type privSlot struct {
	Slot int
	El   *etree.Element
}

// callAnswer is what an asynchronous partner call returned.
type callAnswer struct {
	t   *thread
	seq uint64
	msg *exchange.Message
	// rest is the response of a REST extension activity's call.
	rest *restResponse
	err  error
	dur  time.Duration
}

// answers collects the answers of calls in flight; goroutines append,
// the instance's run takes them.
type answers struct {
	mu     sync.Mutex
	list   []*callAnswer
	Notify chan struct{}
}

func (a *answers) put(c *callAnswer) {
	a.mu.Lock()
	a.list = append(a.list, c)
	a.mu.Unlock()
	select {
	case a.Notify <- struct{}{}:
	default:
	}
}

func (a *answers) take() []*callAnswer {
	a.mu.Lock()
	l := a.list
	a.list = nil
	a.mu.Unlock()
	return l
}

// errJoin is returned by a step that waits for its child threads;
// errLinks by one that waits for link statuses; errCalling by an invoke
// whose call went out on its own goroutine.
var (
	errJoin    = errors.New("waits for branches")
	errLinks   = errors.New("waits for links")
	errCalling = errors.New("call in flight")
)

// Top is the frame t is running.
func (t *thread) Top() *frame { return &t.stack[len(t.stack)-1] }

// isIn reports whether t is anc or one of its descendants.
func (t *thread) isIn(anc *thread) bool {
	for x := t; x != nil; x = x.parent {
		if x == anc {
			return true
		}
	}
	return false
}

// spawn starts a child thread of the current thread running act.
func (in *Instance) spawn(act plan.Activity, priv []privSlot) *thread {
	t := &thread{stack: make([]frame, 0, 4), parent: in.cur, priv: priv}
	t.stack = append(t.stack, frame{act: act})
	in.cur.kids++
	in.threads = append(in.threads, t)
	if in.EvOn(events.ActivityLifecycle) {
		in.emitActivity(events.ActivityStarted, act, "")
	}
	if in.timing != nil {
		in.timing.begin(t, 0, act)
	}
	return t
}

// activate puts the private variables of t and its ancestors into the
// tree, taking out those of the thread active before.
func (in *Instance) activate(t *thread) {
	if in.active == t {
		return
	}
	if !in.hasPriv {
		in.active = t
		return
	}
	in.deactivate()
	var chain []*thread
	for x := t; x != nil; x = x.parent {
		chain = append(chain, x)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		in.swapPriv(chain[i])
	}
	in.active = t
}

// deactivate restores the tree to the instance's shared variables.
func (in *Instance) deactivate() {
	for x := in.active; x != nil; x = x.parent {
		in.swapPriv(x)
	}
	in.active = nil
}

func (in *Instance) swapPriv(t *thread) {
	for i := range t.priv {
		ps := &t.priv[i]
		cur := in.root.Child[ps.Slot-1].(*etree.Element)
		in.root.RemoveChildAt(ps.Slot - 1)
		in.root.InsertChildAt(ps.Slot-1, ps.El)
		ps.El = cur
	}
}

// kill terminates every descendant of t (not t itself): their waits,
// calls in flight and links are abandoned; a late answer is dropped.
func (in *Instance) kill(t *thread) {
	if t.kids == 0 {
		return
	}
	for _, x := range in.threads {
		if x != t && x.state != tDone && x.isIn(t) {
			if x.state == tCalling {
				in.inflight--
				in.lateAnswer()
			}
			x.state = tDone
			x.kids = 0
			if in.isoHolder == x {
				in.isoHolder = nil
			}
		}
	}
	t.kids = 0
}

// threadDone ends t and wakes its parent when it was the last child.
func (in *Instance) threadDone(t *thread) {
	t.state = tDone
	if in.isoHolder == t {
		in.isoHolder = nil
		in.linksChanged = true
	}
	p := t.parent
	if p == nil || p.state == tDone {
		return
	}
	p.kids--
	if len(p.stack) > 0 {
		// A joining activity is told when one of its branches ends.
		switch a := p.Top().act.(type) {
		case *plan.ForEach:
			childDoneForEach(a, in, p, p.Top())
		case *plan.Scope:
			childDoneScope(a, in, p, p.Top())
		}
	}
	if p.kids <= 0 && p.state == tJoining {
		p.state = tReady
	}
}

// schedule steps the instance's threads until none can go on: all done,
// or each waits for a message, a timer, or an answer that is not coming
// while the instance is quiescent. Partner calls in flight are awaited.
func (in *Instance) schedule() (Result, error) {
	res, err := in.steps()
	if len(in.pendingMail) > 0 {
		in.settleMail()
	}
	return res, err
}

func (in *Instance) steps() (Result, error) {
	for {
		progressed := false
		for i := 0; i < len(in.threads); i++ {
			t := in.threads[i]
			if t.state != tReady {
				continue
			}
			progressed = true
			if res, err, end := in.runThread(t); end {
				if res == ResSuspended {
					in.holdAll()
				} else {
					in.StopAll()
				}
				return res, err
			}
		}
		in.compact()
		if progressed {
			continue
		}
		if in.linksChanged {
			in.linksChanged = false
			for _, t := range in.threads {
				if t.state == tLinks {
					t.state = tReady
				}
			}
			continue
		}
		if in.inflight > 0 {
			in.awaitAnswers()
			continue
		}
		break
	}
	root := in.threads[0]
	if root.state == tDone {
		if in.inHandler != nil {
			return ResHandled, nil
		}
		return ResCompleted, nil
	}
	in.waits, in.wake = in.waits[:0], 0
	for _, t := range in.threads {
		if t.state == tWaiting {
			in.waits = append(in.waits, t.waits...)
			if t.wake != 0 && (in.wake == 0 || t.wake < in.wake) {
				in.wake = t.wake
			}
		}
	}
	return ResBlocked, nil
}

// StopAll ends every thread (exit, an uncaught fault, a failure).
func (in *Instance) StopAll() { in.halt(false) }

// holdAll parks the threads of an instance suspended on a failure, as
// they are, for an operator's recovery action (mgmt_instances.go): calls
// in flight are abandoned (their threads are ready to call again).
func (in *Instance) holdAll() { in.halt(true) }

// halt ends the run's threads (hold: parks them instead), dropping the
// calls in flight.
func (in *Instance) halt(hold bool) {
	for _, t := range in.threads {
		if t.state == tCalling {
			in.lateAnswer()
			t.state = tReady
		}
		if !hold {
			t.state = tDone
		}
	}
	in.inflight = 0
	in.deactivate()
}

// compact drops finished threads (the root thread stays first).
func (in *Instance) compact() {
	n := 1
	for _, t := range in.threads[1:] {
		if t.state != tDone {
			in.threads[n] = t
			n++
		}
	}
	for i := n; i < len(in.threads); i++ {
		in.threads[i] = nil
	}
	in.threads = in.threads[:n]
}

// awaitAnswers blocks until a call in flight answers, and readies the
// threads whose answers came. Answers of terminated threads are dropped.
func (in *Instance) awaitAnswers() {
	// The calls run under in.ctx: when it ends they fail promptly, so
	// their answers always come.
	if len(in.pendingMail) > 0 {
		in.settleMail()
	}
	open := in.host.OpenMail(in)
	listed := in.proc.InMemory
	if listed {
		in.host.ListCalling(in, true)
	}
	<-in.calls.Notify
	if listed {
		in.host.ListCalling(in, false)
	}
	if open {
		in.host.CloseMail(in)
	}
	for _, a := range in.calls.take() {
		if a.t.state != tCalling || a.seq != a.t.callSeq {
			continue // terminated meanwhile: counted in kill
		}
		in.inflight--
		a.t.answer = a
		a.t.state = tReady
	}
}

// runThread steps t until it cannot go on. end reports that the instance
// is over (exit, uncaught fault, failure, suspension).
func (in *Instance) runThread(t *thread) (res Result, err error, end bool) {
	in.cur = t
	in.activate(t)
	for t.state == tReady {
		if in.exited {
			return ResExited, nil, true
		}
		if len(t.stack) == 0 {
			in.threadDone(t)
			break
		}
		if in.stepsLeft--; in.stepsLeft < 0 {
			return in.overBudget()
		}
		top := t.Top()
		push, done, err := stepActivity(top.act, in, top)
		if err != nil {
			switch err {
			case errBlocked:
				t.state = tWaiting
				continue
			case errJoin:
				if t.kids > 0 {
					t.state = tJoining
				}
				continue
			case errLinks:
				t.state = tLinks
				continue
			case errCalling:
				t.state = tCalling
				continue
			case errSuspended:
				top.k = kFailed // where an operator's recovery action applies
				// The client learns that the instance waits for an
				// operator, and why.
				return ResSuspended, fmt.Errorf("instance %s suspended for an operator: %s", in.id, in.suspendReason), true
			}
			if isOverMemory(err) {
				return in.overMemory(err)
			}
			in.proc.ActStats.Fault(top.act.ID())
			if in.EvOn(events.ActivityLifecycle) {
				in.emitActivity(events.ActivityFaulted, top.act, faultName(err))
			}
			if err = in.fail(t, err); err != nil {
				var u *errUncaught
				if errors.As(err, &u) {
					return ResFaulted, err, true
				}
				return ResFailed, err, true
			}
			in.cur = t
			in.activate(t)
			continue
		}
		if in.EvOn(events.ActivityLifecycle) {
			if done {
				in.emitActivity(events.ActivityCompleted, top.act, "")
			}
			if push != nil {
				in.emitActivity(events.ActivityStarted, push, "")
			}
		}
		if in.timing != nil {
			in.timing.stepped(in.proc, t, top.act, push, done)
		}
		if done {
			t.stack = t.stack[:len(t.stack)-1]
		}
		if push != nil {
			t.stack = append(t.stack, frame{act: push})
		}
	}
	if in.exited {
		return ResExited, nil, true
	}
	return 0, nil, false
}

// ReadyAll makes every waiting thread try again (a message or a timer
// arrived).
func (in *Instance) ReadyAll() {
	for _, t := range in.threads {
		if t.state == tWaiting {
			t.state = tReady
			t.waits, t.waitKeys, t.wake = t.waits[:0], t.waitKeys[:0], 0
		}
	}
}

// othersBusy reports whether a thread other than the current one could go
// on while the current one waits for a partner: then a call goes out on
// its own goroutine.
func (in *Instance) othersBusy() bool {
	if len(in.threads) == 1 {
		return false
	}
	for _, t := range in.threads {
		if t != in.cur && (t.state == tReady || t.state == tCalling || t.state == tLinks) {
			return true
		}
		// A branch waiting for a message can take one while the call is
		// out (in-memory instances: see mail.go).
		if t != in.cur && t.state == tWaiting && len(t.waits) > 0 && in.proc.InMemory {
			return true
		}
	}
	return false
}

// overBudget stops a run that used up its step budget: a persistent
// instance is suspended with the reason, an in-memory one fails. Either
// way the client gets a Server fault naming the budget; no fault handler
// sees it.
func (in *Instance) overBudget() (Result, error, bool) {
	budget := in.proc.MaxSteps
	setting := "orchd:maxSteps in deploy.xml"
	if budget == 0 {
		budget, setting = in.host.MaxSteps(), "serve --max-steps"
	}
	reason := fmt.Sprintf("%v: the run took %d activity steps without waiting for a message, a timer or a partner (the budget; %s sets it)", errStepBudget, budget, setting)
	if !in.proc.InMemory && in.host.Stored() {
		in.suspendReason = reason
		return ResSuspended, fmt.Errorf("instance %s suspended for an operator: %w: the run took %d activity steps without waiting (the budget; %s sets it)",
			in.id, errStepBudget, budget, setting), true
	}
	return ResFailed, fmt.Errorf("instance stopped: %w: the run took %d activity steps without waiting (the budget; %s sets it)",
		errStepBudget, budget, setting), true
}
