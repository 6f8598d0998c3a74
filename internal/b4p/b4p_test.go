package b4p

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/humantask"
	"github.com/orchd/orchd/internal/instancestore"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/process"
	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/process/interp"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/soap"
)

// inlineTask is the expense bundle's people activity with its task
// written inline.
const inlineTaskXML = `<htd:task name="ApproveExpense">
  <htd:interface portType="tns:ApprovalPT" operation="approve"/>
  <htd:peopleAssignments><htd:potentialOwners><htd:from><htd:literal><htt:organizationalEntity><htt:groups><htt:group>managers</htt:group></htt:groups></htt:organizationalEntity></htd:literal></htd:from></htd:potentialOwners></htd:peopleAssignments>
  <htd:presentationElements><htd:name>Approve an expense</htd:name></htd:presentationElements>
</htd:task>`

// referenceTask is the same task as expense.ht defines it.
const referenceTaskXML = `<b4p:localTask reference="tns:ApproveExpense"/>`

// world is a process engine and a task engine wired as orchd serve
// wires them, the expense bundle deployed, its endpoints served over
// HTTP on loopback.
type world struct {
	tasks     *humantask.Engine
	taskStore *humantask.MemStore
	people    *People
	plans     []*plan.Plan
	store     string // the persistent store's folder ("" in memory)
	engine    *process.Engine
	stop      func() // stops the engine and closes its store
	url       string
}

func newWorld(t *testing.T, inMemory bool, task string) *world {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"expense.bpel", "expense.wsdl", "expense.ht", "deploy.xml"} {
		b, err := os.ReadFile(filepath.Join("testdata", "expense", f))
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Replace(string(b), "INMEMORY", map[bool]string{true: "true", false: "false"}[inMemory], 1)
		s = strings.Replace(s, "            TASK\n", task+"\n", 1)
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	w := &world{people: New(Options{}), taskStore: humantask.NewMemStore()}
	w.tasks = humantask.New(humantask.Options{Store: w.taskStore, Ended: w.people.Ended, CallbackRetry: 10 * time.Millisecond})
	t.Cleanup(w.tasks.Close)
	w.people.Bind(w.tasks, nil)
	if err := w.tasks.Deploy("expense", 1, dir); err != nil {
		t.Fatal(err)
	}
	var err error
	if w.plans, err = compile.LoadBundleWith(dir, compile.LoadOptions{Extensions: w.people.Extensions()}); err != nil {
		t.Fatal(err)
	}
	if !inMemory {
		w.store = t.TempDir()
	}
	w.start(t)
	return w
}

// start starts a process engine (over the store, if persistent) with
// the instance events going to the people extension, deploys the plans
// on it and serves their endpoints.
func (w *world) start(t *testing.T) {
	t.Helper()
	opts := process.Options{ExtensionWaitsEnded: w.people.ExtensionWaitsEnded}
	if w.store != "" {
		store := instancestore.NewLazy(instancestore.Config{Dir: w.store}, nil, nil)
		t.Cleanup(func() { _ = store.Close() })
		if _, err := store.Open(); err != nil {
			t.Fatal(err)
		}
		opts.Store = store
	}
	e := process.NewEngine(opts)
	t.Cleanup(e.Close)
	w.stop = func() {
		e.Close()
		if l, ok := opts.Store.(*instancestore.Lazy); ok {
			_ = l.Close()
		}
	}
	w.people.Bind(w.tasks, e)
	if err := e.Deploy(interp.NewVersions(w.plans)...); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	front := soap.NewServer(soap.ServerOptions{})
	for _, ep := range w.plans[0].Endpoints {
		if err := front.Handle(ep, e); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(front)
	t.Cleanup(srv.Close)
	w.engine, w.url = e, srv.URL
}

// post sends a SOAP 1.1 request of op with id to path and returns the
// answer's body.
func (w *world) post(t *testing.T, path, op, body string) (int, string) {
	t.Helper()
	env := `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:tns="urn:b4ptest"><soapenv:Body>` + body + `</soapenv:Body></soapenv:Envelope>`
	req, err := http.NewRequest("POST", w.url+path, strings.NewReader(env))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/xml; charset=utf-8")
	req.Header.Set("SOAPAction", "urn:b4ptest#"+op)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// openTask is the one open task mary (a manager) sees, waiting for it
// a while (an in-memory instance replies before it goes on to create
// the task).
func (w *world) openTask(t *testing.T) humantask.Task {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ts, err := w.tasks.List(context.Background(), mary, humantask.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(ts) == 1 {
			return ts[0]
		}
		if len(ts) > 1 || time.Now().After(deadline) {
			t.Fatalf("mary sees %d open tasks, want 1", len(ts))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var (
	mary = humantask.Identity{User: "mary", Groups: []string{"managers"}}
	joe  = humantask.Identity{User: "joe", Groups: []string{"staff"}}
)

// TestPeopleActivity runs the expense process through its people
// activity in both modes: the activity creates the task from its input
// variable, the instance waits (stored, when persistent), and the task's
// end continues it as BPEL4People says.
func TestPeopleActivity(t *testing.T) {
	ctx := context.Background()
	decision := `<tns:decision xmlns:tns="urn:b4ptest"><tns:verdict>approved</tns:verdict><tns:comment>fine</tns:comment></tns:decision>`
	tests := []struct {
		name, task string
		end        func(w *world, id string) error
		want       string
	}{
		{"completed: the output reaches the output variable", inlineTaskXML, func(w *world, id string) error {
			if _, err := w.tasks.Claim(ctx, mary, id); err != nil {
				return err
			}
			_, err := w.tasks.Complete(ctx, mary, id, decision)
			return err
		}, "done:approved"},
		{"a task of the bundle's .ht file by reference", referenceTaskXML, func(w *world, id string) error {
			if _, err := w.tasks.Claim(ctx, mary, id); err != nil {
				return err
			}
			_, err := w.tasks.Complete(ctx, mary, id, decision)
			return err
		}, "done:approved"},
		{"skipped: the activity completes, the output variable untouched", inlineTaskXML, func(w *world, id string) error {
			if _, err := w.tasks.Claim(ctx, mary, id); err != nil {
				return err
			}
			_, err := w.tasks.Skip(ctx, mary, id)
			return err
		}, "done:skipped"},
		{"failed: the task's fault reaches the scope's handler", inlineTaskXML, func(w *world, id string) error {
			if _, err := w.tasks.Claim(ctx, mary, id); err != nil {
				return err
			}
			if _, err := w.tasks.Start(ctx, mary, id); err != nil {
				return err
			}
			_, err := w.tasks.Fail(ctx, mary, id, humantask.Fault{Name: "rejected", Detail: "<reason>too much</reason>"})
			return err
		}, "fault:rejected"},
	}
	for _, mode := range []struct {
		name     string
		inMemory bool
	}{{"in-memory", true}, {"persistent", false}} {
		for _, tc := range tests {
			t.Run(mode.name+"/"+tc.name, func(t *testing.T) {
				w := newWorld(t, mode.inMemory, tc.task)
				if code, body := w.post(t, "/processes/expense", "submit", `<tns:req><tns:id>e1</tns:id><tns:amount>120.50</tns:amount></tns:req>`); code != 200 || !strings.Contains(body, "submitted") {
					t.Fatalf("submit: %d %s", code, body)
				}
				task := w.openTask(t)
				if !strings.Contains(task.Input, "120.50") || task.Process != "{urn:b4ptest:process}Expense" {
					t.Errorf("task input %q, process %q: want the expense of the process", task.Input, task.Process)
				}
				if _, err := w.tasks.Claim(ctx, joe, task.ID); err == nil {
					t.Errorf("joe (not a manager) claimed the task")
				}
				if err := tc.end(w, task.ID); err != nil {
					t.Fatal(err)
				}
				code, body := w.post(t, "/processes/expense", "status", `<tns:req><tns:id>e1</tns:id></tns:req>`)
				if code != 200 || !strings.Contains(body, ">"+tc.want+"<") {
					t.Errorf("status: %d %s, want %s", code, body, tc.want)
				}
			})
		}
	}
}

// The extension's callback endpoint is served in process only: a
// request over HTTP, even with a task's id, is refused.
func TestCallbackEndpointRefusesHTTP(t *testing.T) {
	w := newWorld(t, true, inlineTaskXML)
	w.post(t, "/processes/expense", "submit", `<tns:req><tns:id>e2</tns:id><tns:amount>1</tns:amount></tns:req>`)
	task := w.openTask(t)
	path := plan.ExtWaitPath(parseClarkT(t, task.Process))
	code, body := w.post(t, path, plan.ExtWaitOperation, `<key>`+task.ID+`</key><state>COMPLETED</state>`)
	if code == 200 || !strings.Contains(body, "FailedAuthentication") {
		t.Errorf("POST %s: %d %s, want FailedAuthentication", path, code, body)
	}
	if got := w.openTask(t); got.State != humantask.Ready {
		t.Errorf("task %s after the refused request, want READY", got.State)
	}
}

func parseClarkT(t *testing.T, s string) exchange.QName {
	t.Helper()
	q, ok := parseClark(s)
	if !ok {
		t.Fatalf("process %q", s)
	}
	return q
}

// A persistent instance waits at its people activity stored: an orchd
// that starts again on the store continues it when the task completes.
func TestPeopleActivityAfterRestart(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, false, inlineTaskXML)
	w.post(t, "/processes/expense", "submit", `<tns:req><tns:id>r1</tns:id><tns:amount>7</tns:amount></tns:req>`)
	task := w.openTask(t)
	w.stop()
	w.start(t) // a new engine on the same store
	if _, err := w.tasks.Claim(ctx, mary, task.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.tasks.Complete(ctx, mary, task.ID, `<tns:decision xmlns:tns="urn:b4ptest"><tns:verdict>rejected</tns:verdict></tns:decision>`); err != nil {
		t.Fatal(err)
	}
	if code, body := w.post(t, "/processes/expense", "status", `<tns:req><tns:id>r1</tns:id></tns:req>`); code != 200 || !strings.Contains(body, ">done:rejected<") {
		t.Errorf("status after the restart: %d %s, want done:rejected", code, body)
	}
}

// A task that ends while no process engine takes its end (orchd stopped
// between the task's completion and the instance's continuation) keeps
// the end pending in the task store: the task engine that starts again
// on that store sends it, and the waiting instance continues.
func TestPeopleActivityEndSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, false, inlineTaskXML)
	w.post(t, "/processes/expense", "submit", `<tns:req><tns:id>r2</tns:id><tns:amount>7</tns:amount></tns:req>`)
	task := w.openTask(t)
	w.stop()
	w.people.Bind(w.tasks, nil) // no process engine: the end is refused
	if _, err := w.tasks.Claim(ctx, mary, task.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.tasks.Complete(ctx, mary, task.ID, `<tns:decision xmlns:tns="urn:b4ptest"><tns:verdict>approved</tns:verdict></tns:decision>`); err != nil {
		t.Fatal(err)
	}
	w.tasks.Close() // orchd stops before the end reached the instance
	rec, ok, err := w.taskStore.Task(task.ID)
	if err != nil || !ok {
		t.Fatalf("stored task: %v %v", ok, err)
	}
	if !strings.Contains(string(rec), `"endPending":true`) {
		t.Fatalf("the stored task does not keep its end pending: %s", rec)
	}

	w.tasks = humantask.New(humantask.Options{Store: w.taskStore, Ended: w.people.Ended, CallbackRetry: 10 * time.Millisecond})
	t.Cleanup(w.tasks.Close)
	w.start(t) // a new process engine on the same instance store
	if err := w.tasks.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, body := w.post(t, "/processes/expense", "status", `<tns:req><tns:id>r2</tns:id></tns:req>`)
		if code == 200 && strings.Contains(body, ">done:approved<") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status 5s after the restart: %d %s, want done:approved", code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	deadline = time.Now().Add(5 * time.Second)
	for {
		rec, _, err := w.taskStore.Task(task.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(rec), `"endPending"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task still has its end pending after the instance took it: %s", rec)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Task events name the process instance that waits for the task (and
// the task in their own field), so that instance's timeline shows its
// task being created, claimed and ended.
func TestTaskEventsInInstanceTimeline(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, false, inlineTaskXML)
	tl := events.NewTimeline(events.TimelineOptions{})
	d, err := events.NewDispatcher(events.Options{}, tl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	w.tasks = humantask.New(humantask.Options{Store: w.taskStore, Ended: w.people.Ended, Events: d, CallbackRetry: 10 * time.Millisecond})
	t.Cleanup(w.tasks.Close)
	w.people.Bind(w.tasks, w.engine)
	w.post(t, "/processes/expense", "submit", `<tns:req><tns:id>e1</tns:id><tns:amount>7</tns:amount></tns:req>`)
	task := w.openTask(t)
	if _, err := w.tasks.Claim(ctx, mary, task.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.tasks.Complete(ctx, mary, task.ID, `<tns:decision xmlns:tns="urn:b4ptest"><tns:verdict>approved</tns:verdict></tns:decision>`); err != nil {
		t.Fatal(err)
	}
	want := []events.Kind{events.TaskCreated, events.TaskClaimed, events.TaskEnded}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var got []events.Kind
		for _, ev := range tl.Events(task.Instance) {
			if ev.Task == task.ID {
				got = append(got, ev.Kind)
			}
		}
		if slices.Equal(got, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("instance %s's timeline has task events %v, want %v", task.Instance, got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An instance that ends while its task is open (here terminated by an
// operator) exits the task: nobody can work on it any more.
func TestInstanceEndExitsTask(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, false, inlineTaskXML)
	w.post(t, "/processes/expense", "submit", `<tns:req><tns:id>x1</tns:id><tns:amount>7</tns:amount></tns:req>`)
	task := w.openTask(t)
	if err := w.engine.Act(ctx, task.Instance, mgmt.Terminate); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := w.tasks.Get(ctx, mary, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State == humantask.Exited {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s 5s after its instance was terminated, want EXITED", got.State)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := w.tasks.Claim(ctx, mary, task.ID); err == nil {
		t.Errorf("an exited task was claimed")
	}
}
