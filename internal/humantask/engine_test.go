package humantask

import (
	"context"
	"encoding/xml"
	"errors"
	"strings"
	"testing"
	"time"
)

const expenseInput = `<ex:expenseRequest xmlns:ex="urn:example:expense"><ex:id>E-1</ex:id><ex:employee>mark</ex:employee>` +
	`<ex:amount>1250.00</ex:amount><ex:description>Travel</ex:description></ex:expenseRequest>`

const decision = `<ex:decision xmlns:ex="urn:example:expense"><ex:approved>true</ex:approved></ex:decision>`

var approveExpense = xml.Name{Space: "urn:example:expense:task", Local: "ApproveExpense"}

// createExpense creates the example's task from expenseInput.
func createExpense(t *testing.T, e *Engine, input string) Task {
	t.Helper()
	def, ok := e.Definition(approveExpense)
	if !ok {
		t.Fatal("ApproveExpense not deployed")
	}
	task, err := e.Create(context.Background(), CreateRequest{Def: def, Bundle: "expense-approval", Version: 1, Input: input})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// TestCreateResolves: a task created from the example's definition has
// its priority, presentation, people and deadline from the input.
func TestCreateResolves(t *testing.T) {
	e, clk, _ := exampleEngine(t)
	task := createExpense(t, e, expenseInput)
	if task.State != Ready || task.Priority != 2 {
		t.Errorf("state %s priority %d, want READY 2 (an amount over 1000)", task.State, task.Priority)
	}
	if task.Subject != "Expense of 1250.00 by mark" {
		t.Errorf("subject %q", task.Subject)
	}
	if got := task.People[PotentialOwners].Groups; len(got) != 1 || got[0] != "managers" {
		t.Errorf("potential owners %v, want the group managers", task.People[PotentialOwners])
	}
	if got := task.People[ExcludedOwners].Users; len(got) != 1 || got[0] != "mark" {
		t.Errorf("excluded owners %v, want mark (the input's employee)", task.People[ExcludedOwners])
	}
	if len(task.Deadlines) != 1 || !task.Deadlines[0].Due.Equal(clk.Now().Add(time.Hour)) {
		t.Errorf("deadlines %+v, want one an hour on (no escalateAfter)", task.Deadlines)
	}
	small := strings.Replace(strings.Replace(expenseInput, "1250.00", "80", 1), "</ex:description>", "</ex:description><ex:escalateAfter>PT2M</ex:escalateAfter>", 1)
	task = createExpense(t, e, small)
	if task.Priority != 5 || !task.Deadlines[0].Due.Equal(clk.Now().Add(2*time.Minute)) {
		t.Errorf("priority %d deadline %v, want 5 and two minutes on", task.Priority, task.Deadlines[0].Due)
	}
}

// TestRoles: who may do what, as a table: each step is an operation by a
// user and the error kind it must get (nil: it succeeds), in order, on
// one task.
func TestRoles(t *testing.T) {
	e, _, _ := exampleEngine(t)
	ctx := context.Background()
	task := createExpense(t, e, expenseInput)
	id := task.ID
	steps := []struct {
		name string
		user string
		op   func(Identity) (Task, error)
		want error
		then State
	}{
		{"an outsider cannot see it", "eve", func(w Identity) (Task, error) { return e.Get(ctx, w, id) }, ErrNotFound, Ready},
		{"an outsider cannot claim it", "eve", func(w Identity) (Task, error) { return e.Claim(ctx, w, id) }, ErrNotFound, Ready},
		{"the excluded employee cannot claim (four eyes)", "mark", func(w Identity) (Task, error) { return e.Claim(ctx, w, id) }, ErrNotFound, Ready},
		{"the administrator sees it", "finn", func(w Identity) (Task, error) { return e.Get(ctx, w, id) }, nil, Ready},
		{"the administrator is no potential owner", "finn", func(w Identity) (Task, error) { return e.Claim(ctx, w, id) }, ErrForbidden, Ready},
		{"nobody completes a Ready task", "ann", func(w Identity) (Task, error) { return e.Complete(ctx, w, id, decision) }, ErrForbidden, Ready},
		{"a manager claims it", "ann", func(w Identity) (Task, error) { return e.Claim(ctx, w, id) }, nil, Reserved},
		{"a claimed task is not claimed twice", "ann", func(w Identity) (Task, error) { return e.Claim(ctx, w, id) }, ErrState, Reserved},
		{"a task that is not skipable is not skipped", "finn", func(w Identity) (Task, error) { return e.Skip(ctx, w, id) }, ErrOperation, Reserved},
		{"the owner starts it", "ann", func(w Identity) (Task, error) { return e.Start(ctx, w, id) }, nil, InProgress},
		{"the owner stops it", "ann", func(w Identity) (Task, error) { return e.Stop(ctx, w, id) }, nil, Reserved},
		{"the administrator releases it", "finn", func(w Identity) (Task, error) { return e.Release(ctx, w, id) }, nil, Ready},
		{"delegating to the excluded employee is refused", "finn", func(w Identity) (Task, error) { return e.Delegate(ctx, w, id, "mark") }, ErrArgument, Ready},
		{"delegating to an unknown person is refused", "finn", func(w Identity) (Task, error) { return e.Delegate(ctx, w, id, "zed") }, ErrArgument, Ready},
		{"the administrator delegates to dora", "finn", func(w Identity) (Task, error) { return e.Delegate(ctx, w, id, "dora") }, nil, Reserved},
		{"dora suspends it", "dora", func(w Identity) (Task, error) { return e.Suspend(ctx, w, id) }, nil, Suspended},
		{"a suspended task is not completed", "dora", func(w Identity) (Task, error) { return e.Complete(ctx, w, id, decision) }, ErrState, Suspended},
		{"dora resumes it", "dora", func(w Identity) (Task, error) { return e.Resume(ctx, w, id) }, nil, Reserved},
		{"a manager who is not the owner may not set the priority", "ann", func(w Identity) (Task, error) { return e.SetPriority(ctx, w, id, 1) }, ErrForbidden, Reserved},
		{"the owner sets the priority", "dora", func(w Identity) (Task, error) { return e.SetPriority(ctx, w, id, 1) }, nil, Reserved},
		{"a manager comments", "ann", func(w Identity) (Task, error) { return e.AddComment(ctx, w, id, "urgent") }, nil, Reserved},
		{"a manager who is not the owner cannot complete", "ann", func(w Identity) (Task, error) { return e.Complete(ctx, w, id, decision) }, ErrForbidden, Reserved},
		{"output must be XML", "dora", func(w Identity) (Task, error) { return e.Complete(ctx, w, id, "<oops") }, ErrArgument, Reserved},
		{"the owner completes it", "dora", func(w Identity) (Task, error) { return e.Complete(ctx, w, id, decision) }, nil, Completed},
		{"a completed task is not failed", "dora", func(w Identity) (Task, error) { return e.Fail(ctx, w, id, Fault{Name: "rejected"}) }, ErrState, Completed},
	}
	for _, st := range steps {
		_, err := st.op(who(t, e, st.user))
		if (st.want == nil) != (err == nil) || (st.want != nil && !errors.Is(err, st.want)) {
			t.Fatalf("%s: %s got %v, want %v", st.name, st.user, err, st.want)
		}
		got, err := e.Get(ctx, System(), id)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != st.then {
			t.Fatalf("%s: the task is %s, want %s", st.name, got.State, st.then)
		}
	}
	got, _ := e.Get(ctx, System(), id)
	if got.Priority != 1 || len(got.Comments) != 1 || got.Comments[0].By != "ann" || got.Output != decision || got.ActualOwner != "dora" {
		t.Errorf("the completed task: %+v", got)
	}
}

// TestDo: Do turns an operation's name into the engine's call, and an
// unknown name or a missing argument into the WS-HT error kinds.
func TestDo(t *testing.T) {
	e, _, _ := exampleEngine(t)
	ctx := context.Background()
	id := createExpense(t, e, expenseInput).ID
	p := 3
	steps := []struct {
		user string
		a    Action
		want error
		then State
	}{
		{"ann", Action{Op: "approve"}, ErrOperation, Ready},
		{"ann", Action{Op: OpClaim}, nil, Reserved},
		{"ann", Action{Op: OpSetPriority}, ErrArgument, Reserved},
		{"ann", Action{Op: OpSetPriority, Priority: &p}, nil, Reserved},
		{"ann", Action{Op: OpAddComment, Comment: "looks fine"}, nil, Reserved},
		{"ann", Action{Op: OpStart}, nil, InProgress},
		{"ann", Action{Op: OpComplete, Output: decision}, nil, Completed},
	}
	for _, st := range steps {
		got, err := e.Do(ctx, who(t, e, st.user), id, st.a)
		if (st.want == nil) != (err == nil) || (st.want != nil && !errors.Is(err, st.want)) {
			t.Fatalf("%s %+v: got %v, want %v", st.user, st.a, err, st.want)
		}
		if err == nil && got.State != st.then {
			t.Fatalf("%s %+v: the task is %s, want %s", st.user, st.a, got.State, st.then)
		}
	}
	got, _ := e.Get(ctx, System(), id)
	if got.Priority != 3 || len(got.Comments) != 1 || got.Output != decision {
		t.Errorf("after Do: priority %d comments %d output %q", got.Priority, len(got.Comments), got.Output)
	}
}

// TestListSeesOnlyOwnTasks: a listing holds the tasks the user's roles
// let it see, and a state filter narrows it.
func TestListSeesOnlyOwnTasks(t *testing.T) {
	e, clk, _ := exampleEngine(t)
	ctx := context.Background()
	a := createExpense(t, e, expenseInput)
	clk.Advance(time.Second)
	b := createExpense(t, e, strings.Replace(expenseInput, "mark", "ann", 1))
	for _, tc := range []struct {
		user string
		f    Filter
		want []string
	}{
		{"ann", Filter{}, []string{a.ID}},        // excluded from b (her own)
		{"mark", Filter{}, []string{b.ID}},       // excluded from a
		{"finn", Filter{}, []string{b.ID, a.ID}}, // administers both, newest first
		{"eve", Filter{}, nil},                   // nobody
		{"dora", Filter{}, nil},                  // not before the escalation
		{"finn", Filter{States: []State{Completed}}, nil},
		{"finn", Filter{Role: PotentialOwners}, nil},
	} {
		got, err := e.List(ctx, who(t, e, tc.user), tc.f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, x := range got {
			ids = append(ids, x.ID)
		}
		if strings.Join(ids, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s %+v: %v, want %v", tc.user, tc.f, ids, tc.want)
		}
	}
}

// TestEscalationReassigns: an unclaimed task whose start deadline
// passes is reassigned to the directors (fake clock); a task started in
// time is not.
func TestEscalationReassigns(t *testing.T) {
	e, clk, _ := exampleEngine(t)
	ctx := context.Background()
	unclaimed := createExpense(t, e, expenseInput)
	started := createExpense(t, e, expenseInput)
	if _, err := e.Start(ctx, who(t, e, "ann"), started.ID); err != nil {
		t.Fatal(err)
	}
	clk.Advance(59 * time.Minute)
	if got, _ := e.Get(ctx, System(), unclaimed.ID); len(got.Escalations) != 0 {
		t.Fatalf("escalated before its deadline: %+v", got)
	}
	clk.Advance(time.Minute)
	got, _ := e.Get(ctx, System(), unclaimed.ID)
	if got.State != Ready || len(got.Escalations) != 1 || got.Escalations[0] != "reassignToDirectors" {
		t.Fatalf("after the deadline: %s %v", got.State, got.Escalations)
	}
	if po := got.People[PotentialOwners]; len(po.Groups) != 1 || po.Groups[0] != "directors" {
		t.Errorf("potential owners %+v, want the directors", po)
	}
	if _, err := e.Claim(ctx, who(t, e, "ann"), unclaimed.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("a manager claims the escalated task (or sees it): %v", err)
	}
	if _, err := e.Claim(ctx, who(t, e, "dora"), unclaimed.ID); err != nil {
		t.Errorf("a director cannot claim the escalated task: %v", err)
	}
	if s, _ := e.Get(ctx, System(), started.ID); len(s.Escalations) != 0 || s.ActualOwner != "ann" || !s.Deadlines[0].Met {
		t.Errorf("the task started in time escalated: %+v", s)
	}
}

// TestDeadlineSurvivesRestart: a deadline is durable: an engine opened
// on the store after the first closed fires it (at once when it fell
// due meanwhile), and a claim survives as it was.
func TestDeadlineSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	clk := newFakeClock()
	people := testPeople(t, examplePeople)
	e := New(Options{Store: st, Directory: people, Clock: clk})
	if err := e.Deploy("expense-approval", 1, "../../deploy/expense-approval"); err != nil {
		t.Fatal(err)
	}
	waiting := createExpense(t, e, expenseInput)
	claimed := createExpense(t, e, expenseInput)
	if _, err := e.Claim(context.Background(), who(t, e, "ann"), claimed.ID); err != nil {
		t.Fatal(err)
	}
	e.Close()
	st.Close()

	clk.Advance(2 * time.Hour) // orchd is down: nothing fires
	st = openStore(t, dir)
	defer st.Close()
	e = New(Options{Store: st, Directory: people, Clock: clk})
	defer e.Close()
	if err := e.Deploy("expense-approval", 1, "../../deploy/expense-approval"); err != nil {
		t.Fatal(err)
	}
	if err := e.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	clk.Advance(0) // the overdue deadlines are due now
	got, _ := e.Get(context.Background(), System(), waiting.ID)
	if len(got.Escalations) != 1 {
		t.Errorf("the overdue deadline did not fire after the restart: %+v", got)
	}
	c, _ := e.Get(context.Background(), System(), claimed.ID)
	if c.ActualOwner != "" || c.State != Ready {
		// A claimed task was not started: its start deadline escalates it too.
		t.Errorf("the claimed, unstarted task: %s owner %q, want READY with no owner after the escalation", c.State, c.ActualOwner)
	}
}

// TestExitSession: an open task whose instance ended is exited; a
// completed one stays completed.
func TestExitSession(t *testing.T) {
	e, _, _ := exampleEngine(t)
	ctx := context.Background()
	def, _ := e.Definition(approveExpense)
	cb := func(sid string) *Callback {
		return &Callback{Address: "http://127.0.0.1:1/cb", Operation: "approvalResponse",
			Headers: []string{`<odesession:session xmlns:odesession="` + nsODESession + `">` + sid + `</odesession:session>`}}
	}
	open, err := e.Create(ctx, CreateRequest{Def: def, Input: expenseInput, Callback: cb("s1")})
	if err != nil {
		t.Fatal(err)
	}
	other, _ := e.Create(ctx, CreateRequest{Def: def, Input: expenseInput, Callback: cb("s2")})
	n, err := e.ExitSession(ctx, "s1")
	if err != nil || n != 1 {
		t.Fatalf("ExitSession: %d %v", n, err)
	}
	if got, _ := e.Get(ctx, System(), open.ID); got.State != Exited {
		t.Errorf("the task of the ended instance is %s", got.State)
	}
	if got, _ := e.Get(ctx, System(), other.ID); got.State != Ready {
		t.Errorf("another instance's task is %s", got.State)
	}
}

// TestAuthenticate: an unknown user and a wrong password get the same
// error.
func TestAuthenticate(t *testing.T) {
	e, _, _ := exampleEngine(t)
	for _, c := range [][2]string{{"ann", "wrong"}, {"nobody", "nobody-secret"}, {"", ""}} {
		if _, err := e.Authenticate(c[0], c[1]); !errors.Is(err, ErrAuth) {
			t.Errorf("%q/%q: %v, want ErrAuth", c[0], c[1], err)
		}
	}
	id, err := e.Authenticate("ann", "ann-secret")
	if err != nil || id.User != "ann" || len(id.Groups) != 1 || id.Groups[0] != "managers" {
		t.Errorf("ann: %+v %v", id, err)
	}
}

// TestAuthenticateBounded: with every password check slot taken (as
// MaxAuthChecks checks running would hold them) a sign-in fails at once
// with ErrAuthBusy, checking nothing; once a slot frees, it is checked.
// (htclient's TestSignInsBounded shows the bound over concurrent
// sign-ins through an API.)
func TestAuthenticateBounded(t *testing.T) {
	e := New(Options{Directory: testPeople(t, examplePeople), MaxAuthChecks: 2})
	t.Cleanup(e.Close)
	e.authSlots <- struct{}{}
	e.authSlots <- struct{}{}
	if _, err := e.Authenticate("ann", "ann-secret"); !errors.Is(err, ErrAuthBusy) {
		t.Fatalf("every slot taken: %v, want ErrAuthBusy", err)
	}
	<-e.authSlots
	if id, err := e.Authenticate("ann", "ann-secret"); err != nil || id.User != "ann" {
		t.Fatalf("a slot free: %+v %v", id, err)
	}
	if len(e.authSlots) != 1 {
		t.Errorf("%d slots taken after the check, want the 1 the test holds", len(e.authSlots))
	}
}

// TestRescheduleFiresOnce: two engines on one store (two cluster
// nodes): a task created on the first is unknown to the second's timers
// until Reschedule (a member left); then both fire its deadline and it
// escalates once; a task of an engine that closed (died) escalates on
// the other after Reschedule only.
func TestRescheduleFiresOnce(t *testing.T) {
	e1, clk, st := exampleEngine(t)
	e2 := New(Options{Store: st, Directory: testPeople(t, examplePeople), Clock: clk})
	t.Cleanup(e2.Close)
	if err := e2.Deploy("expense-approval", 1, "../../deploy/expense-approval"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	both := createExpense(t, e1, expenseInput)
	e2.Reschedule()
	e2.mu.RLock()
	scheduled := len(e2.timers)
	e2.mu.RUnlock()
	if scheduled != 1 {
		t.Fatalf("the second engine scheduled %d deadlines, want the task's one", scheduled)
	}
	clk.Advance(time.Hour)
	if got, _ := e2.Get(ctx, System(), both.ID); len(got.Escalations) != 1 || !got.Deadlines[0].Fired {
		t.Errorf("fired by both engines: escalations %v, deadlines %+v; want one, fired", got.Escalations, got.Deadlines)
	}

	orphan := createExpense(t, e1, expenseInput)
	e1.Close() // the node that created it dies
	clk.Advance(time.Hour)
	if got, _ := e2.Get(ctx, System(), orphan.ID); len(got.Escalations) != 0 {
		t.Fatalf("escalated with no engine scheduling it: %v", got.Escalations)
	}
	e2.Reschedule()
	clk.Advance(0)
	if got, _ := e2.Get(ctx, System(), orphan.ID); len(got.Escalations) != 1 {
		t.Errorf("the dead engine's task after Reschedule: escalations %v, want one", got.Escalations)
	}
}
