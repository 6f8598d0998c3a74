package interp

import (
	"bytes"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/process/corrval"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/xmlparse"
)

// Snapshot is a read-only picture of an instance at one moment, for the
// readers of its state (the management API's listings and details, and
// what comes next: a diagram overlaying each activity's status, moving a
// waiting instance to a new version, retrying or skipping a failed
// activity). It is plain data: it shares nothing with the instance, so
// it may be kept and read after the instance's lock is released.
//
// Activities is indexed by plan activity id (plan.Activity.ID, the index
// in the version's Acts), so it lines up with anything that carries the
// plan's ids. Their statuses are derived when the snapshot is taken from
// the instance's explicit control state (the frames of its threads, the
// link statuses, the scope frames handling a fault), not recorded as the
// instance runs; where that state cannot tell, the status says so
// (ActUnknown):
//
//   - an activity with a frame on a live thread runs (ActRunning), waits
//     (ActWaiting: a message, an alarm, links) or is suspended on a
//     failure (ActFailed); the activities enclosing it in the plan run;
//   - the children of a running sequence before the one running
//     completed, a running if's or pick's branches other than the one
//     taken were skipped, the children of a started flow that no longer
//     run completed, or were skipped by dead-path elimination when their
//     incoming links are all false (a join condition of its own is not
//     evaluated: such an activity is ActUnknown);
//   - a completed activity's sequence, flow and scope body children
//     completed too, whereas what ran inside a completed if, pick, while,
//     forEach or handler is unknown (ActUnknown): which branch was taken
//     and how many iterations ran is not kept. Likewise a running loop's
//     earlier iterations are not visible: its body shows the current
//     iteration only;
//   - a scope whose fault handler runs has its body ActFaulted (with the
//     fault's name), and what ran inside that body ActUnknown; a scope
//     whose compensation handler runs is ActCompensated, its body
//     completed. A compensation that has already run, and a fault
//     handler that has, are not visible.
//
// Times: Start is known only for the running activities of an instance
// sampled for timing (Instance.Timing); completed activities' times are
// summed into the version's statistics, not kept per instance.
type Snapshot struct {
	ID       string
	Process  exchange.QName
	Version  int // the deploy number (Version.Number)
	InMemory bool
	// State is "suspended" (an operator suspended an in-memory
	// instance), "running" (a thread waits for a partner's answer), the
	// stored state of a persistent one (persist.State's name), else
	// "waiting".
	State string
	// Started is when the instance started; LastActive when an in-memory
	// instance last blocked (zero for a persistent one: its record says).
	Started, LastActive time.Time
	// SuspendReason is why it is suspended ("" for an in-memory instance
	// an operator suspended); Fault the fault a process-level fault
	// handler is handling.
	SuspendReason string
	Fault         string
	Threads       []ThreadSnap
	// Root is the id of the process's own activity (the plan's root).
	Root       int
	Activities []ActivitySnap
	Variables  []VariableSnap
	// Requests are the open requests: taken, not yet replied to.
	Requests []RequestSnap
	// Correlations are the initiated correlation sets' values (the parts
	// of a key joined by commas), nil when none.
	Correlations map[string]string
	// Alarm is when the instance wants to run again (zero: no alarm).
	Alarm time.Time
}

// ActRef names an activity of the plan.
type ActRef struct {
	ID int
	// Kind is the activity's element ("receive", "sequence"); "" for a
	// construct the compiler made. In Snapshot.Activities the process's
	// own activity is kind "process", named after the process.
	Kind, Name, Position string
}

// ThreadState is where a live thread stands.
type ThreadState string

// Thread states.
const (
	ThreadReady   ThreadState = "ready"
	ThreadWaiting ThreadState = "waiting" // a message or an alarm
	ThreadJoining ThreadState = "joining" // its branches
	ThreadLinks   ThreadState = "links"   // incoming links, or an isolated scope
	ThreadCalling ThreadState = "calling" // a partner's answer
)

// ThreadSnap is one live line of control.
type ThreadSnap struct {
	State ThreadState
	// At is the innermost activity on its stack that has an element;
	// Top the activity of its top frame (possibly a construct).
	At, Top ActRef
	// Stack is the activities of its frames, outermost first.
	Stack []int
	// Awaits is what a waiting thread waits for: messages and an alarm
	// of a receive, pick or wait, or the alarm of an activity waiting to
	// run again (an invoke's retry); for a calling thread, the answer of
	// its invoke's partner link and operation. Empty for other waits.
	Awaits []Await
	// Failure is set when the thread is suspended on its top activity's
	// failure (an operator may retry, fault or cancel it).
	Failure *FailureSnap
}

// Await is one thing a waiting thread waits for: a message (PartnerLink
// and Operation set) or an alarm (Due set).
type Await struct {
	PartnerLink, Operation string
	// Correlations names the correlation sets the message must match,
	// with the instance's values where initiated ("" otherwise).
	Correlations map[string]string
	Due          time.Time
}

// FailureSnap is the failure an instance is suspended on.
type FailureSnap struct {
	Activity ActRef
	Reason   string
	// Attempts is how many times the activity was tried.
	Attempts int
}

// ActStatus is an activity's status in a snapshot.
type ActStatus uint8

// Activity statuses (see Snapshot).
const (
	ActNotReached ActStatus = iota
	ActRunning
	ActWaiting
	ActFailed
	ActCompleted
	ActFaulted
	ActCompensated
	ActSkipped
	ActUnknown
)

// actStatusNames are the statuses' names, the management API's.
var actStatusNames = [...]string{mgmt.ActivityNotReached, mgmt.ActivityRunning, mgmt.ActivityWaiting, mgmt.ActivityFailed,
	mgmt.ActivityCompleted, mgmt.ActivityFaulted, mgmt.ActivityCompensated, mgmt.ActivitySkipped, mgmt.ActivityUnknown}

// String is the status's name ("notReached", "running", ...).
func (s ActStatus) String() string {
	if int(s) < len(actStatusNames) {
		return actStatusNames[s]
	}
	return mgmt.ActivityUnknown
}

// live reports whether s is a status of an activity with a frame.
func (s ActStatus) live() bool { return s == ActRunning || s == ActWaiting || s == ActFailed }

// ActivitySnap is one activity's status.
type ActivitySnap struct {
	ActRef
	// Parent is the enclosing activity's id (-1 for the root).
	Parent int
	Status ActStatus
	// Fault is the fault of an ActFaulted scope body.
	Fault string
	// Start is when a running activity started, in a sampled instance.
	Start time.Time
}

// VariableSnap is one variable that was set (its slot differs from a
// fresh one), named as corrval.VarNames names it, Value its content as XML (or
// text).
type VariableSnap struct {
	Name  string
	Slot  int
	Value string
}

// RequestSnap is an open request.
type RequestSnap struct {
	Operation string
	Since     time.Time
}

// Snapshot takes a snapshot of the instance. The caller holds the
// instance's lock (or otherwise knows no run steps it).
func (in *Instance) Snapshot() *Snapshot {
	s := in.Summary()
	for _, r := range in.reqs {
		if r == nil || r.Ex == nil {
			continue
		}
		rs := RequestSnap{Since: r.Ex.Received}
		if rs.Since.IsZero() {
			rs.Since = r.Ex.Dispatched
		}
		if r.Ex.Operation != nil {
			rs.Operation = r.Ex.Operation.Name
		}
		s.Requests = append(s.Requests, rs)
	}
	for _, t := range in.threads {
		if t.state != tDone && len(t.stack) > 0 {
			s.Threads = append(s.Threads, in.threadSnap(t))
		}
	}
	s.Variables = in.variableSnaps()
	s.Activities = in.activitySnaps()
	return s
}

// Summary is the part of Snapshot a listing needs, cheap to take: the
// instance's identity, state, times, reasons, correlation values and
// alarm, without threads, requests, variables or activities. The
// caller holds the instance's lock.
func (in *Instance) Summary() *Snapshot {
	p := in.proc
	s := &Snapshot{ID: in.id, Process: p.Name, Version: p.Number, InMemory: p.InMemory, Started: in.started,
		LastActive: in.idleSince, SuspendReason: in.suspendReason, Correlations: corrval.Listed(in.corr), Root: -1}
	if p.Root != nil {
		s.Root = p.Root.ID()
	}
	if in.inHandler != nil {
		s.Fault = in.inHandler.Name.String()
	}
	if in.wake != 0 {
		s.Alarm = time.Unix(0, in.wake)
	}
	calling := false
	for _, t := range in.threads {
		calling = calling || t.state == tCalling
	}
	switch {
	case in.suspended:
		s.State = "suspended"
	case calling:
		s.State = "running"
	case !p.InMemory && in.state != 0:
		s.State = in.state.String()
	default:
		s.State = "waiting"
	}
	return s
}

// ref names activity a.
func ref(a plan.Activity) ActRef {
	r := ActRef{ID: a.ID(), Position: a.Where().String()}
	if tg, ok := a.(EvTagger); ok {
		r.Kind, r.Name, _ = tg.EvTag()
	}
	return r
}

func (in *Instance) threadSnap(t *thread) ThreadSnap {
	top := t.Top()
	ts := ThreadSnap{Top: ref(top.act), Stack: make([]int, len(t.stack))}
	for k := range t.stack {
		ts.Stack[k] = t.stack[k].act.ID()
	}
	for k := len(t.stack) - 1; k >= 0; k-- {
		if r := ref(t.stack[k].act); r.Kind != "" {
			ts.At = r
			break
		}
	}
	switch t.state {
	case tWaiting:
		ts.State = ThreadWaiting
		ts.Awaits = in.awaits(top)
	case tJoining:
		ts.State = ThreadJoining
	case tLinks:
		ts.State = ThreadLinks
	case tCalling:
		ts.State = ThreadCalling
		if iv, ok := top.act.(*plan.Invoke); ok && iv.Pl != nil && iv.Op != nil {
			ts.Awaits = []Await{{PartnerLink: iv.Pl.Name, Operation: iv.Op.Name}}
		}
	default:
		ts.State = ThreadReady
	}
	if failedFrame(top) {
		fl := &FailureSnap{Activity: ts.Top, Reason: in.suspendReason, Attempts: 1 + int(top.i)}
		if _, ok := top.act.(*plan.Invoke); ok && top.pc > 1 {
			fl.Attempts += top.pc - 1 // the failure policy's retries
		}
		ts.Failure = fl
	}
	return ts
}

// failedFrame reports whether the instance is suspended on frame f's
// failure: the failure policy marks the frame of an invoke or a REST
// activity (frame.K means other things in other frames: a forEach's
// completed branches).
func failedFrame(f *frame) bool {
	switch f.act.(type) {
	case *plan.Invoke, *plan.RestActivity:
		return f.k == kFailed
	}
	return false
}

// awaits is what waiting frame f waits for.
func (in *Instance) awaits(f *frame) []Await {
	msg := func(ib *plan.Inbound) Await {
		w := Await{}
		if ib.Pl != nil {
			w.PartnerLink = ib.Pl.Name
		}
		if ib.Op != nil {
			w.Operation = ib.Op.Name
		}
		for _, u := range ib.Corrs {
			if u.Set == nil {
				continue
			}
			if w.Correlations == nil {
				w.Correlations = map[string]string{}
			}
			w.Correlations[u.Set.Name] = corrval.ListedKey(in.corr[u.Set.Name])
		}
		return w
	}
	alarm := func(due int64) Await { return Await{Due: time.Unix(0, due)} }
	switch a := f.act.(type) {
	case *plan.Receive:
		return []Await{msg(&a.Inbound)}
	case *plan.ExtWait:
		return []Await{msg(&a.Inbound)}
	case *plan.Pick:
		var out []Await
		for _, om := range a.Msgs {
			out = append(out, msg(&om.Inbound))
		}
		if len(a.Alarms) > 0 && f.due != 0 {
			out = append(out, alarm(f.due))
		}
		return out
	case *plan.Wait:
		return []Await{alarm(f.due)}
	}
	if f.due != 0 {
		return []Await{alarm(f.due)} // an invoke waiting to retry, an event handler
	}
	return nil
}

// variableSnaps are the variables whose slot differs from a fresh one,
// as the tree holds them now (a thread's private slots when it is the
// active one).
func (in *Instance) variableSnaps() []VariableSnap {
	names := corrval.VarNames(in.proc.Plan)
	var out []VariableSnap
	ws := new(etree.WriteSettings)
	*ws = xmlparse.WriteSettings()
	for i, v := range in.proc.Vars {
		if i >= len(in.root.Child) {
			break
		}
		slot, ok := in.root.Child[i].(*etree.Element)
		if !ok {
			continue
		}
		var b, fresh bytes.Buffer
		slot.WriteTo(&b, ws)
		v.NewSlot().WriteTo(&fresh, ws)
		if bytes.Equal(b.Bytes(), fresh.Bytes()) {
			continue // never set
		}
		out = append(out, VariableSnap{Name: names[v.Slot], Slot: v.Slot, Value: VariableText(b.Bytes())})
	}
	return out
}

// VariableText renders a stored slot as the variable's XML: the slot's
// content, without the slot element itself (text for a simple value).
func VariableText(data []byte) string {
	root, err := xmlparse.Stored(data)
	if err != nil {
		return string(data)
	}
	if len(root.ChildElements()) == 0 {
		return root.Text()
	}
	out := xmlparse.NewDocument()
	for _, c := range append([]etree.Token(nil), root.Child...) {
		out.AddChild(c)
	}
	s, _ := out.WriteToString()
	return s
}
