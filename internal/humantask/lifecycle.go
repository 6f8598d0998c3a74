package humantask

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/xmlparse"
)

// newID returns a task id: the creation time in hex (ids sort by
// creation) and 64 random bits.
func newID(now time.Time) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%016x%s", uint64(now.UnixNano()), hex.EncodeToString(b[:]))
}

// ParseXML parses an element serialized as XML (a task's input or
// output); nil for "".
func ParseXML(s string) (*etree.Element, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	d := xmlparse.NewDocument()
	if err := d.ReadFromString(s); err != nil {
		return nil, err
	}
	if d.Root() == nil {
		return nil, errors.New("no element")
	}
	return d.Root(), nil
}

// Create creates a task (as System): it resolves its people, priority
// and presentation from the input, stores it Ready (Reserved when one
// user is its only potential owner) and schedules its deadlines.
func (e *Engine) Create(ctx context.Context, r CreateRequest) (Task, error) {
	d := r.Def
	if d == nil {
		return Task{}, fmt.Errorf("create task: %w: no definition", ErrArgument)
	}
	input, err := ParseXML(r.Input)
	if err != nil {
		return Task{}, fmt.Errorf("create task %s: %w: input: %v", d.Name.Local, ErrArgument, err)
	}
	now := e.clock.Now()
	t := &Task{ID: newID(now), Name: d.Name, Bundle: r.Bundle, Version: r.Version, Notification: d.Notification,
		Priority: defaultPriority, Skipable: d.Skipable, Input: r.Input, People: map[Role]Entities{},
		Created: now, Updated: now, Callback: r.Callback, Process: r.Process, Instance: r.Instance}
	if r.Skipable != nil {
		t.Skipable = *r.Skipable
	}
	data := &exprData{input: input}
	if d.Priority != "" {
		if t.Priority, err = evalPriority(d.Priority, data, d.Namespaces); err != nil {
			return Task{}, fmt.Errorf("create task %s: %w", d.Name.Local, err)
		}
	}
	data.priority = t.Priority
	for role, refs := range d.People {
		ents, err := resolve(refs, input, d.Namespaces)
		if err != nil {
			return Task{}, fmt.Errorf("create task %s: %s: %w", d.Name.Local, role, err)
		}
		if !ents.Empty() {
			t.People[role] = ents
		}
	}
	if r.Initiator != "" {
		ti := t.People[TaskInitiator]
		ti.Users = append(ti.Users, r.Initiator)
		t.People[TaskInitiator] = ti
	}
	if len(d.Presentation.Parameters) > 0 {
		t.Parameters = map[string]string{}
		for _, p := range d.Presentation.Parameters {
			v, err := evalString(p.Expr, data, d.Namespaces)
			if err != nil {
				return Task{}, fmt.Errorf("create task %s: presentation parameter %s: %w", d.Name.Local, p.Name, err)
			}
			t.Parameters[p.Name] = v
		}
	}
	t.Subject = substitute(d.Presentation.Subject, t.Parameters)
	t.Description = substitute(d.Presentation.Description, t.Parameters)
	if t.Subject == "" {
		t.Subject = d.Presentation.Name
	}
	for _, dl := range d.Deadlines {
		due, err := deadlineDue(dl, now, data, d.Namespaces)
		if err != nil {
			return Task{}, fmt.Errorf("create task %s: deadline %s: %w", d.Name.Local, dl.Name, err)
		}
		t.Deadlines = append(t.Deadlines, PendingDeadline{Name: dl.Name, Kind: dl.Kind, Due: due})
	}
	t.State = Ready
	t.Activated = now
	if po := t.People[PotentialOwners]; !d.Notification && len(po.Users) == 1 && len(po.Groups) == 0 &&
		!includes(t.People[ExcludedOwners], Identity{User: po.Users[0]}) {
		t.State, t.ActualOwner, t.Claimed = Reserved, po.Users[0], now
	}
	rec, err := encodeTask(t)
	if err != nil {
		return Task{}, err
	}
	if err := e.store.UpdateTask(t.ID, func([]byte) ([]byte, error) { return rec, nil }); err != nil {
		return Task{}, fmt.Errorf("create task %s: store: %w", d.Name.Local, err)
	}
	e.metrics.created.Inc()
	e.emit(TaskCreatedEvent, t, "")
	e.schedule(t)
	e.log.Info("task created", slog.String("task", t.ID), slog.String("name", t.Name.Local), slog.String("state", string(t.State)))
	return *t, nil
}

// Get returns task id, if who may see it.
func (e *Engine) Get(ctx context.Context, who Identity, id string) (Task, error) {
	t, err := e.stored(id)
	if err != nil {
		return Task{}, fmt.Errorf("get task %s: %w", id, err)
	}
	if t == nil || !rolesOf(t, who).sees() {
		return Task{}, opError("get", id, ErrNotFound, "no task has this id, or you may not see it")
	}
	return *t, nil
}

// openStates are the states a listing shows by default.
var openStates = []State{Created, Ready, Reserved, InProgress, Suspended}

// List returns the tasks who may see that f selects, newest first.
func (e *Engine) List(ctx context.Context, who Identity, f Filter) ([]Task, error) {
	states := f.States
	if len(states) == 0 {
		states = openStates
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 1000
	}
	var out []Task
	err := e.eachTask(func(t *Task) bool {
		if !slices.Contains(states, t.State) || (f.Name != "" && t.Name.Local != f.Name) ||
			(f.Notifications != nil && *f.Notifications != t.Notification) {
			return true
		}
		r := rolesOf(t, who)
		if !r.sees() || (f.Role != "" && !r.any(f.Role)) {
			return true
		}
		out = append(out, *t)
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// update runs op on task id for who in one store transaction: fn checks
// the caller's roles and the state and changes the task; then the
// deadlines the change met are marked, and what follows from the change
// (metrics, events, timers, the callback) is done.
func (e *Engine) update(op string, who Identity, id string, fn func(t *Task, r roleSet) error) (Task, error) {
	var before State
	var out *Task
	err := e.store.UpdateTask(id, func(old []byte) ([]byte, error) {
		if old == nil {
			return nil, opError(op, id, ErrNotFound, "no task has this id, or you may not see it")
		}
		t, err := decodeTask(old)
		if err != nil {
			return nil, fmt.Errorf("%s task %s: %w", op, id, err)
		}
		r := rolesOf(t, who)
		if !r.sees() {
			return nil, opError(op, id, ErrNotFound, "no task has this id, or you may not see it")
		}
		before = t.State
		if err := fn(t, r); err != nil {
			return nil, err
		}
		if t.State.Final() && !before.Final() {
			t.EndPending = t.State != Exited && t.Callback == nil && t.Process != "" && !t.Notification
		}
		t.Updated = e.clock.Now()
		markMet(t)
		out = t
		return encodeTask(t)
	})
	if err != nil {
		return Task{}, err
	}
	e.after(op, who, before, out)
	return *out, nil
}

// markMet marks the deadlines a task met: start deadlines once it was
// started (or ended), all once it ended.
func markMet(t *Task) {
	for i := range t.Deadlines {
		d := &t.Deadlines[i]
		if d.Fired || d.Met {
			continue
		}
		if t.State.Final() || (d.Kind == StartDeadline && (t.State == InProgress || (t.State == Suspended && t.SuspendedIn == InProgress))) {
			d.Met = true
		}
	}
}

// after does what follows a change of task t from state before.
func (e *Engine) after(op string, who Identity, before State, t *Task) {
	e.log.Info("task "+op, slog.String("task", t.ID), slog.String("by", who.User), slog.String("state", string(t.State)))
	if op == "claim" || ((op == "start" || op == "delegate") && before == Ready) {
		e.metrics.claimed.Inc()
		e.metrics.toClaim.Observe(t.Claimed.Sub(t.Created).Seconds())
		e.emit(TaskClaimedEvent, t, who.User)
	}
	if t.State.Final() && !before.Final() {
		e.unschedule(t.ID)
		e.metrics.ended.WithLabelValues(string(t.State)).Inc()
		e.metrics.toEnd.Observe(t.Ended.Sub(t.Created).Seconds())
		e.emit(TaskEndedEvent, t, who.User)
		if t.EndPending {
			e.endLater(t.ID, 0)
		}
		if t.State == Completed && t.Callback != nil && !t.Callback.Delivered {
			e.deliverLater(t.ID, 0)
		}
		return
	}
	e.unscheduleMet(t)
}

// needState is the error of an operation that does not apply in t's
// state.
func needState(op string, t *Task, want ...State) error {
	if slices.Contains(want, t.State) {
		return nil
	}
	ws := make([]string, len(want))
	for i, w := range want {
		ws[i] = string(w)
	}
	return opError(op, t.ID, ErrState, "the task is %s; %s needs it %s", t.State, op, strings.Join(ws, " or "))
}

// needRole is the error of a caller without one of the roles rs.
func needRole(op string, t *Task, r roleSet, rs ...Role) error {
	if r.any(rs...) {
		return nil
	}
	names := make([]string, len(rs))
	for i, x := range rs {
		names[i] = string(x)
	}
	msg := fmt.Sprintf("%s needs one of the roles %s", op, strings.Join(names, ", "))
	if r[ExcludedOwners] && slices.Contains(rs, PotentialOwners) {
		msg += " (you are an excluded owner of this task: the four-eyes rule)"
	}
	return opError(op, t.ID, ErrForbidden, "%s", msg)
}

// Claim reserves a Ready task for who, a potential owner who is not an
// excluded owner (four eyes).
func (e *Engine) Claim(ctx context.Context, who Identity, id string) (Task, error) {
	return e.update("claim", who, id, func(t *Task, r roleSet) error {
		if r[ExcludedOwners] || !r[PotentialOwners] {
			return needRole("claim", t, roleSet{ExcludedOwners: r[ExcludedOwners]}, PotentialOwners)
		}
		if err := needState("claim", t, Ready); err != nil {
			return err
		}
		t.State, t.ActualOwner, t.Claimed = Reserved, who.User, e.clock.Now()
		return nil
	})
}

// Start starts a task: Reserved by who (its actual owner), or Ready and
// who a potential owner (which claims it too).
func (e *Engine) Start(ctx context.Context, who Identity, id string) (Task, error) {
	return e.update("start", who, id, func(t *Task, r roleSet) error {
		switch t.State {
		case Reserved:
			if !r[ActualOwner] {
				return needRole("start", t, r, ActualOwner)
			}
		case Ready:
			if !r[PotentialOwners] {
				return needRole("start", t, r, PotentialOwners)
			}
			t.ActualOwner, t.Claimed = who.User, e.clock.Now()
		default:
			return needState("start", t, Ready, Reserved)
		}
		t.State = InProgress
		return nil
	})
}

// Stop takes an in-progress task back to Reserved (actual owner or
// business administrator).
func (e *Engine) Stop(ctx context.Context, who Identity, id string) (Task, error) {
	return e.update("stop", who, id, func(t *Task, r roleSet) error {
		if err := needRole("stop", t, r, ActualOwner, BusinessAdministrators); err != nil {
			return err
		}
		if err := needState("stop", t, InProgress); err != nil {
			return err
		}
		t.State = Reserved
		return nil
	})
}

// Release gives a Reserved or in-progress task back to its potential
// owners (Ready): its actual owner or a business administrator.
func (e *Engine) Release(ctx context.Context, who Identity, id string) (Task, error) {
	return e.update("release", who, id, func(t *Task, r roleSet) error {
		if err := needRole("release", t, r, ActualOwner, BusinessAdministrators); err != nil {
			return err
		}
		if err := needState("release", t, Reserved, InProgress); err != nil {
			return err
		}
		t.State, t.ActualOwner, t.Claimed = Ready, "", time.Time{}
		return nil
	})
}

// Complete completes an in-progress (or Reserved: started implicitly)
// task with output (the output message's payload element, XML); its
// actual owner only. The outcome goes to the callback.
func (e *Engine) Complete(ctx context.Context, who Identity, id, output string) (Task, error) {
	if strings.TrimSpace(output) != "" {
		if _, err := ParseXML(output); err != nil {
			return Task{}, opError("complete", id, ErrArgument, "the output is no XML element: %v", err)
		}
	}
	return e.update("complete", who, id, func(t *Task, r roleSet) error {
		if t.Notification {
			return opError("complete", t.ID, ErrOperation, "a notification is not completed")
		}
		if !r[ActualOwner] {
			return needRole("complete", t, r, ActualOwner)
		}
		if err := needState("complete", t, InProgress, Reserved); err != nil {
			return err
		}
		if t.Callback != nil && strings.TrimSpace(output) == "" {
			return opError("complete", t.ID, ErrArgument, "the task's process waits for its output: give one")
		}
		t.State, t.Output, t.Ended = Completed, output, e.clock.Now()
		return nil
	})
}

// Fail fails an in-progress (or Reserved) task with a fault of its
// operation; its actual owner only.
func (e *Engine) Fail(ctx context.Context, who Identity, id string, f Fault) (Task, error) {
	if strings.TrimSpace(f.Name) == "" {
		return Task{}, opError("fail", id, ErrArgument, "a fault needs a name")
	}
	return e.update("fail", who, id, func(t *Task, r roleSet) error {
		if !r[ActualOwner] {
			return needRole("fail", t, r, ActualOwner)
		}
		if err := needState("fail", t, InProgress, Reserved); err != nil {
			return err
		}
		ff := f
		t.State, t.Fault, t.Ended = Failed, &ff, e.clock.Now()
		return nil
	})
}

// Skip ends a skipable task without an outcome (Obsolete): its task
// initiator, actual owner or a business administrator.
func (e *Engine) Skip(ctx context.Context, who Identity, id string) (Task, error) {
	return e.update("skip", who, id, func(t *Task, r roleSet) error {
		if err := needRole("skip", t, r, TaskInitiator, ActualOwner, BusinessAdministrators); err != nil {
			return err
		}
		if !t.Skipable {
			return opError("skip", t.ID, ErrOperation, "the task is not skipable")
		}
		if err := needState("skip", t, Created, Ready, Reserved, InProgress); err != nil {
			return err
		}
		t.State, t.Ended = Obsolete, e.clock.Now()
		return nil
	})
}

// Delegate makes user the actual owner of the task (Reserved), adding it
// to the potential owners: the actual owner, a potential owner or a
// business administrator may delegate; user must be a known person and
// not an excluded owner.
func (e *Engine) Delegate(ctx context.Context, who Identity, id, user string) (Task, error) {
	target, err := e.person("delegate", id, user)
	if err != nil {
		return Task{}, err
	}
	return e.update("delegate", who, id, func(t *Task, r roleSet) error {
		if err := needRole("delegate", t, r, ActualOwner, PotentialOwners, BusinessAdministrators); err != nil {
			return err
		}
		if err := needState("delegate", t, Ready, Reserved, InProgress); err != nil {
			return err
		}
		if includes(t.People[ExcludedOwners], target) {
			return opError("delegate", t.ID, ErrArgument, "%s is an excluded owner of the task (four eyes)", user)
		}
		po := t.People[PotentialOwners]
		if !slices.Contains(po.Users, user) {
			po.Users = append(po.Users, user)
			t.People[PotentialOwners] = po
		}
		if t.State == Ready {
			t.Claimed = e.clock.Now()
		}
		t.State, t.ActualOwner = Reserved, user
		return nil
	})
}

// person returns the identity of a user named as an operation's
// argument: a person of the directory.
func (e *Engine) person(op, id, user string) (Identity, error) {
	if user == "" {
		return Identity{}, opError(op, id, ErrArgument, "no user given")
	}
	if e.opts.Directory == nil {
		return Identity{User: user}, nil
	}
	p, ok := e.opts.Directory.Lookup(user)
	if !ok {
		return Identity{}, opError(op, id, ErrArgument, "%s is not in the people directory", user)
	}
	return p, nil
}

// Forward replaces who's part of the potential owners with to (the task
// goes back to Ready): a potential owner, the actual owner or a business
// administrator.
func (e *Engine) Forward(ctx context.Context, who Identity, id string, to Entities) (Task, error) {
	if to.Empty() {
		return Task{}, opError("forward", id, ErrArgument, "forward to nobody")
	}
	for _, u := range to.Users {
		if _, err := e.person("forward", id, u); err != nil {
			return Task{}, err
		}
	}
	return e.update("forward", who, id, func(t *Task, r roleSet) error {
		if err := needRole("forward", t, r, ActualOwner, PotentialOwners, BusinessAdministrators); err != nil {
			return err
		}
		if err := needState("forward", t, Ready, Reserved, InProgress); err != nil {
			return err
		}
		po := t.People[PotentialOwners]
		po.Users = slices.DeleteFunc(po.Users, func(u string) bool { return u == who.User })
		for _, u := range to.Users {
			if !slices.Contains(po.Users, u) {
				po.Users = append(po.Users, u)
			}
		}
		for _, g := range to.Groups {
			if !slices.Contains(po.Groups, g) {
				po.Groups = append(po.Groups, g)
			}
		}
		t.People[PotentialOwners] = po
		t.State, t.ActualOwner, t.Claimed = Ready, "", time.Time{}
		return nil
	})
}

// Suspend suspends an open task: a potential owner, its actual owner or
// a business administrator.
func (e *Engine) Suspend(ctx context.Context, who Identity, id string) (Task, error) {
	return e.update("suspend", who, id, func(t *Task, r roleSet) error {
		if err := needRole("suspend", t, r, ActualOwner, PotentialOwners, BusinessAdministrators); err != nil {
			return err
		}
		if err := needState("suspend", t, Ready, Reserved, InProgress); err != nil {
			return err
		}
		t.State, t.SuspendedIn = Suspended, t.State
		return nil
	})
}

// Resume takes a suspended task back to the state it was suspended in.
func (e *Engine) Resume(ctx context.Context, who Identity, id string) (Task, error) {
	return e.update("resume", who, id, func(t *Task, r roleSet) error {
		if err := needRole("resume", t, r, ActualOwner, PotentialOwners, BusinessAdministrators); err != nil {
			return err
		}
		if err := needState("resume", t, Suspended); err != nil {
			return err
		}
		t.State, t.SuspendedIn = t.SuspendedIn, ""
		if t.State == "" {
			t.State = Ready
		}
		return nil
	})
}

// SetPriority changes the priority (0 highest .. 10 lowest): its actual
// owner or a business administrator.
func (e *Engine) SetPriority(ctx context.Context, who Identity, id string, p int) (Task, error) {
	if p < 0 || p > 10 {
		return Task{}, opError("setPriority", id, ErrArgument, "priority %d is not from 0 (highest) to 10 (lowest)", p)
	}
	return e.update("setPriority", who, id, func(t *Task, r roleSet) error {
		if err := needRole("setPriority", t, r, ActualOwner, BusinessAdministrators); err != nil {
			return err
		}
		if t.State.Final() {
			return opError("setPriority", t.ID, ErrState, "the task is %s", t.State)
		}
		t.Priority = p
		return nil
	})
}

// maxComment bounds a comment's text.
const maxComment = 64 << 10

// AddComment adds a comment: a potential or actual owner, a business
// administrator, the initiator or a stakeholder.
func (e *Engine) AddComment(ctx context.Context, who Identity, id, text string) (Task, error) {
	if strings.TrimSpace(text) == "" || len(text) > maxComment {
		return Task{}, opError("addComment", id, ErrArgument, "a comment is 1 to %d bytes", maxComment)
	}
	return e.update("addComment", who, id, func(t *Task, r roleSet) error {
		if err := needRole("addComment", t, r, ActualOwner, PotentialOwners, BusinessAdministrators, TaskInitiator, TaskStakeholders); err != nil {
			return err
		}
		n := 1
		if len(t.Comments) > 0 {
			n = t.Comments[len(t.Comments)-1].ID + 1
		}
		t.Comments = append(t.Comments, Comment{ID: n, By: who.User, At: e.clock.Now(), Text: text})
		return nil
	})
}

// Exit ends an open task because the process instance that created it
// ended (Exited): the engine only.
func (e *Engine) Exit(ctx context.Context, id string) (Task, error) {
	return e.update("exit", System(), id, func(t *Task, _ roleSet) error {
		if t.State.Final() {
			return opError("exit", t.ID, ErrState, "the task is %s", t.State)
		}
		t.State, t.Ended = Exited, e.clock.Now()
		return nil
	})
}

// ExitInstance exits every open task the process instance created.
func (e *Engine) ExitInstance(ctx context.Context, process, instance string) (int, error) {
	return e.exitWhere(ctx, func(t *Task) bool { return t.Instance != "" && t.Instance == instance && t.Process == process })
}

// ExitSession exits every open task whose callback goes to the
// conversation of session identifier sid (ODE's session of the process
// instance that created it): that instance ended.
func (e *Engine) ExitSession(ctx context.Context, sid string) (int, error) {
	if sid == "" {
		return 0, nil
	}
	return e.exitWhere(ctx, func(t *Task) bool { return t.Callback != nil && sessionIn(t.Callback.Headers) == sid })
}

func (e *Engine) exitWhere(ctx context.Context, match func(*Task) bool) (int, error) {
	var ids []string
	err := e.eachTask(func(t *Task) bool {
		if !t.State.Final() && match(t) {
			ids = append(ids, t.ID)
		}
		return true
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		if _, err := e.Exit(ctx, id); err == nil {
			n++
		}
	}
	return n, nil
}

// InstanceEnded is process.Options.InstanceEnded: the instance of
// session sid ended, and the open tasks whose outcome would go to it are
// exited (in the background: the caller is an instance's run).
func (e *Engine) InstanceEnded(process, instance, sid string) {
	go func() {
		if n, err := e.ExitSession(context.Background(), sid); err != nil {
			e.log.Warn("tasks of an ended instance not exited", slog.String("instance", instance), slog.Any("err", err))
		} else if n > 0 {
			e.log.Info("tasks exited: their instance ended", slog.String("process", process), slog.String("instance", instance), slog.Int("tasks", n))
		}
	}()
}
