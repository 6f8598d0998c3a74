package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/orchd/orchd/internal/etcdstore"
	"github.com/orchd/orchd/internal/etcdtest"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/persist"
)

// expenseID finds the expense id (E-n) in a task's input.
var expenseID = regexp.MustCompile(`>(E-[0-9]+)<`)

// tasksOf lists the tasks user sees through node base (orchd ctl tasks
// --json, with flags), by the expense id of their input, and counts them
// by expense id.
func tasksOf(t *testing.T, base, dir, user string, flags ...string) (map[string]mgmt.Task, map[string]int) {
	t.Helper()
	out := mustCtl(t, base, append([]string{"tasks", "--json", "--user", user, "--password-file", filepath.Join(dir, user+".password")}, flags...)...)
	var ts []mgmt.Task
	if err := json.Unmarshal([]byte(out), &ts); err != nil {
		t.Fatalf("tasks --json: %v\n%s", err, out)
	}
	by, n := map[string]mgmt.Task{}, map[string]int{}
	for _, x := range ts {
		if m := expenseID.FindStringSubmatch(x.Input); m != nil {
			by[m[1]] = x
			n[m[1]]++
		}
	}
	return by, n
}

// tasksByExpense lists the open tasks user sees through node base by
// the expense id of their input.
func tasksByExpense(t *testing.T, base, dir, user string) map[string]mgmt.Task {
	t.Helper()
	by, _ := tasksOf(t, base, dir, user)
	return by
}

// storedWaiting counts the stored instances waiting for a message.
func storedWaiting(t *testing.T, st *etcdstore.Store) int {
	t.Helper()
	n := 0
	if err := st.Instances(func(rec *persist.Instance) bool {
		if rec.State == persist.Waiting {
			n++
		}
		return true
	}); err != nil {
		t.Errorf("reading instances: %v", err)
	}
	return n
}

// cheapPeople writes the example's people and password files (taskPeople)
// and then the people file again with bcrypt hashes of the minimum cost:
// the test signs in often, on three nodes built with -race.
func cheapPeople(t *testing.T, dir string) string {
	t.Helper()
	people := taskPeople(t, dir)
	var lines []string
	for _, u := range [][2]string{{"ann", "managers"}, {"mark", "managers"}, {"dora", "directors"}, {"eve", ""}, {"finn", "finance"}} {
		h, err := bcrypt.GenerateFromPassword([]byte(u[0]+"-secret"), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, u[0]+":"+string(h)+":"+u[1])
	}
	if err := os.WriteFile(people, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return people
}

// escalatedTotal sums orchd_tasks_escalated_total over nodes.
func escalatedTotal(nodes ...*orchd) float64 {
	var sum float64
	for _, o := range nodes {
		v, _ := scrapeMetric(http.DefaultClient, o.base, "orchd_tasks_escalated_total")
		sum += v
	}
	return sum
}

// TestHumanTaskCluster is issue 36's cluster case on three orchd nodes
// with --cluster on one 3-member etcd, serving deploy/expense-approval
// (a persistent process stored in etcd): an expense submitted on a
// creates a task; ann, a manager, lists it and claims it through b and
// completes it through c, and the instance waiting on a's side continues
// (its stored status is APPROVED and the client's status request, on b,
// answers it). A second task's one-second start deadline escalates to
// the directors once (one escalation in the task, one on the three
// nodes' metrics); dora claims it through a and completes it through c,
// and the instance answers REJECTED. A third task, created on a, which
// is then killed -9 before its deadline, escalates on the survivors
// (both schedule it when a leaves: each logs so), once: one escalation,
// one on b's and c's metrics, one task.
func TestHumanTaskCluster(t *testing.T) {
	start := time.Now()
	ec := etcdtest.Start(t, 3)
	deploy, dir := t.TempDir(), t.TempDir()
	copyBundleFrom(t, "../../deploy/expense-approval", deploy, "expense-approval", "127.0.0.1:9101", "127.0.0.1:9102", nil)
	people := cheapPeople(t, dir)
	a := startClusterNode(t, ec, deploy, "e2ht", "a", "--people-file", people)
	b := startClusterNode(t, ec, deploy, "e2ht", "b", "--people-file", people)
	c := startClusterNode(t, ec, deploy, "e2ht", "c", "--people-file", people)
	t.Logf("three nodes up %v after the start", time.Since(start))
	pw := func(u string) string { return filepath.Join(dir, u+".password") }

	expense(t, a.base, "E-7", "PT1H")
	expense(t, a.base, "E-8", "PT1S")
	var seven mgmt.Task
	waitUntil(t, "E-7 for ann through b", func() bool { seven = tasksByExpense(t, b.base, dir, "ann")["E-7"]; return seven.ID != "" })
	if seven.State != "READY" {
		t.Fatalf("E-7 through b: %s, want READY", seven.State)
	}
	if ts := tasksByExpense(t, c.base, dir, "mark"); len(ts) != 0 {
		t.Errorf("mark, the employee (excluded owner), sees through c: %v", ts)
	}
	mustCtl(t, b.base, "task", "claim", seven.ID, "--user", "ann", "--password-file", pw("ann"))
	if got := tasksByExpense(t, c.base, dir, "ann")["E-7"]; got.State != "RESERVED" || got.ActualOwner != "ann" {
		t.Fatalf("E-7 through c after ann claimed it through b: %s by %q", got.State, got.ActualOwner)
	}
	// mark may not complete a task ann claimed, on any node.
	decision := `<ex:decision xmlns:ex="urn:example:expense"><ex:approved>true</ex:approved><ex:comment>ok on c</ex:comment></ex:decision>`
	if r := runCtl(t, c.base, "task", "complete", seven.ID, "--user", "mark", "--password-file", pw("mark"), "--output", decision); r.code == 0 {
		t.Errorf("mark completed ann's task through c: %s", r)
	}
	mustCtl(t, c.base, "task", "complete", seven.ID, "--user", "ann", "--password-file", pw("ann"), "--output", decision)

	// The instance (persistent, in etcd) took the decision: its stored
	// status variable says APPROVED before any client asks.
	st := openClusterStore(t, ec, "e2ht")
	if n := storedWaiting(t, st); n != 2 {
		t.Errorf("instances waiting in etcd: %d, want E-7's and E-8's", n)
	}
	waitUntil(t, "E-7's instance to take the decision", func() bool {
		for _, in := range listInstances(t, b, mgmt.Query{Process: "ExpenseApproval"}) {
			if s := in.Variables["status"]; strings.Contains(s, "E-7") && strings.Contains(s, "APPROVED") {
				return true
			}
		}
		return false
	})
	r := expenseStatus(t, b.base, "E-7")
	if r.status != 200 || !strings.Contains(r.body, "APPROVED") || !strings.Contains(r.body, "ok on c") {
		t.Fatalf("E-7's status through b: %d %s", r.status, r.body)
	}
	if got, _ := tasksOf(t, a.base, dir, "ann", "--state", "COMPLETED"); got["E-7"].State != "COMPLETED" {
		t.Errorf("E-7 through a: %+v, want COMPLETED", got["E-7"])
	}

	t.Logf("E-7 done %v after the start", time.Since(start))
	// E-8's deadline: once across the nodes.
	var eight mgmt.Task
	waitUntil(t, "E-8's escalation to dora through c", func() bool { eight = tasksByExpense(t, c.base, dir, "dora")["E-8"]; return eight.ID != "" })
	eight = tasksByExpense(t, b.base, dir, "dora")["E-8"] // due seconds ago
	if len(eight.Escalations) != 1 || len(eight.Deadlines) != 1 || !eight.Deadlines[0].Fired {
		t.Errorf("E-8 escalated %v, deadlines %+v; want one escalation, fired", eight.Escalations, eight.Deadlines)
	}
	if n := escalatedTotal(a, b, c); n != 1 {
		t.Errorf("orchd_tasks_escalated_total over the nodes: %v, want 1", n)
	}
	if _, ok := tasksByExpense(t, a.base, dir, "ann")["E-8"]; ok {
		t.Error("ann still sees the escalated E-8")
	}
	mustCtl(t, a.base, "task", "claim", eight.ID, "--user", "dora", "--password-file", pw("dora"))
	mustCtl(t, c.base, "task", "complete", eight.ID, "--user", "dora", "--password-file", pw("dora"),
		"--output", strings.Replace(decision, "true", "false", 1))
	waitUntil(t, "E-8's decision", func() bool { r = expenseStatus(t, a.base, "E-8"); return r.status == 200 })
	if !strings.Contains(r.body, "REJECTED") {
		t.Errorf("E-8's status through a: %s, want REJECTED", r.body)
	}

	// E-9 is created on a, which dies before the deadline falls due:
	// the survivors escalate it, once.
	before := escalatedTotal(b, c)
	expense(t, a.base, "E-9", "PT2S")
	waitUntil(t, "E-9's task", func() bool { return tasksByExpense(t, b.base, dir, "finn")["E-9"].ID != "" })
	kill9(t, a)
	t.Logf("killed a %v after the start", time.Since(start))
	var nine mgmt.Task
	if !pollFor(15*time.Second, func() bool { nine = tasksByExpense(t, b.base, dir, "dora")["E-9"]; return nine.ID != "" }) {
		t.Fatalf("E-9's deadline did not fire on the survivors: %+v\nb:\n%s", tasksByExpense(t, b.base, dir, "finn")["E-9"], b.log())
	}
	t.Logf("E-9 escalated %v after the start", time.Since(start))
	time.Sleep(500 * time.Millisecond) // the other survivor fires it too, in vain
	nine = tasksByExpense(t, c.base, dir, "dora")["E-9"]
	for _, o := range []*orchd{b, c} {
		if !strings.Contains(o.log(), "task deadlines rescheduled") {
			t.Errorf("a survivor did not schedule a's task deadlines:\n%s", o.log())
		}
	}
	_, n := tasksOf(t, c.base, dir, "finn")
	if len(nine.Escalations) != 1 || n["E-9"] != 1 {
		t.Errorf("E-9 escalated %v (%d tasks), want once (one task)", nine.Escalations, n["E-9"])
	}
	if n := escalatedTotal(b, c) - before; n != 1 {
		t.Errorf("E-9's escalations on b and c's metrics: %v, want 1", n)
	}
}

// TestHumanTaskClusterInMemory: the example made in-memory on two
// nodes: a task created by an instance on a, completed through b,
// continues the instance on a: b sends the outcome to a's address over
// HTTP (the nodes' addresses allowed by --partner-allow), not in
// process to itself, where no instance waits (before: b "delivered" it
// to itself, held it 5 s and dropped it).
func TestHumanTaskClusterInMemory(t *testing.T) {
	ec := etcdtest.Start(t, 3)
	deploy, dir := t.TempDir(), t.TempDir()
	copyBundleFrom(t, "../../deploy/expense-approval", deploy, "expense-approval", "127.0.0.1:9101", "127.0.0.1:9102",
		map[string][][2]string{"deploy.xml": {{"<in-memory>false</in-memory>", "<in-memory>true</in-memory>"}}})
	people := cheapPeople(t, dir)
	a := startClusterNode(t, ec, deploy, "e2hm", "a", "--people-file", people, "--partner-allow", "127.0.0.1")
	b := startClusterNode(t, ec, deploy, "e2hm", "b", "--people-file", people, "--partner-allow", "127.0.0.1")
	pw := filepath.Join(dir, "ann.password")
	expense(t, a.base, "E-7", "PT1H")
	var seven mgmt.Task
	waitUntil(t, "E-7 for ann through b", func() bool { seven = tasksByExpense(t, b.base, dir, "ann")["E-7"]; return seven.ID != "" })
	mustCtl(t, b.base, "task", "claim", seven.ID, "--user", "ann", "--password-file", pw)
	mustCtl(t, b.base, "task", "complete", seven.ID, "--user", "ann", "--password-file", pw, "--output",
		`<ex:decision xmlns:ex="urn:example:expense"><ex:approved>true</ex:approved><ex:comment>ok on b</ex:comment></ex:decision>`)
	var r response
	if !pollFor(10*time.Second, func() bool { r = expenseStatus(t, a.base, "E-7"); return r.status == 200 }) || !strings.Contains(r.body, "APPROVED") {
		t.Fatalf("E-7's status on a: %d %s\nb:\n%s", r.status, r.body, b.log())
	}
}
