package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/mgmt"
)

// taskPeople writes the example's people file (mode 600) and a password
// file per user into dir; it returns the people file's path.
func taskPeople(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile("../../deploy/expense-approval/people.txt")
	if err != nil {
		t.Fatal(err)
	}
	people := filepath.Join(dir, "people")
	if err := os.WriteFile(people, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"ann", "mark", "dora", "eve", "finn"} {
		if err := os.WriteFile(filepath.Join(dir, u+".password"), []byte(u+"-secret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return people
}

// expense posts an expense claim to the example process.
func expense(t *testing.T, base, id, escalateAfter string) {
	t.Helper()
	body := `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:ex="urn:example:expense"><soapenv:Body>` +
		`<ex:expenseRequest><ex:id>` + id + `</ex:id><ex:employee>mark</ex:employee><ex:amount>99</ex:amount>` +
		`<ex:description>d</ex:description><ex:escalateAfter>` + escalateAfter + `</ex:escalateAfter></ex:expenseRequest></soapenv:Body></soapenv:Envelope>`
	r := post(t, http.DefaultClient, base+"/processes/ExpenseApproval", "text/xml; charset=utf-8", "urn:example:expense#submit", []byte(body))
	if r.status != 200 || !strings.Contains(r.body, "SUBMITTED") {
		t.Fatalf("submit %s: %d %s", id, r.status, r.body)
	}
}

// expenseStatus asks the example process for an expense's status.
func expenseStatus(t *testing.T, base, id string) response {
	t.Helper()
	body := `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:ex="urn:example:expense"><soapenv:Body>` +
		`<ex:statusRequest><ex:id>` + id + `</ex:id></ex:statusRequest></soapenv:Body></soapenv:Envelope>`
	return post(t, http.DefaultClient, base+"/processes/ExpenseApproval", "text/xml; charset=utf-8", "urn:example:expense#status", []byte(body))
}

// userTasks lists the tasks user sees, through orchd ctl tasks --json.
func userTasks(t *testing.T, base, dir, user string) map[string]mgmt.Task {
	t.Helper()
	out := mustCtl(t, base, "tasks", "--json", "--user", user, "--password-file", filepath.Join(dir, user+".password"))
	var ts []mgmt.Task
	if err := json.Unmarshal([]byte(out), &ts); err != nil {
		t.Fatalf("tasks --json: %v\n%s", err, out)
	}
	byExpense := map[string]mgmt.Task{}
	for _, x := range ts {
		for _, id := range []string{"E-7", "E-8"} {
			if strings.Contains(x.Input, ">"+id+"<") {
				byExpense[id] = x
			}
		}
	}
	return byExpense
}

// TestHumanTaskKillRecover is the example of deploy/expense-approval end
// to end on the binary: two expense claims create two approval tasks for
// the managers; the employee (an excluded owner) and an outsider can
// neither see nor claim them; ann claims one; orchd is killed -9 with
// that task claimed and both instances waiting; after the restart the
// task is still ann's, the other one (a one-second start deadline) has
// escalated to the directors, and completing each continues its
// instance, whose status answers the decision.
func TestHumanTaskKillRecover(t *testing.T) {
	deploy, data, dir := t.TempDir(), t.TempDir(), t.TempDir()
	copyBundleFrom(t, "../../deploy/expense-approval", deploy, "expense-approval", "127.0.0.1:9101", "127.0.0.1:9102", nil)
	people := taskPeople(t, dir)
	args := []string{"--deploy", deploy, "--data", data, "--people-file", people}
	o := startOrchd(t, args...)
	expense(t, o.base, "E-7", "PT1H")
	expense(t, o.base, "E-8", "PT1S")
	var seven mgmt.Task
	// finn administers both (E-8 may have escalated away from the
	// managers already: its deadline is a second).
	waitUntil(t, "two tasks for finn", func() bool { ts := userTasks(t, o.base, dir, "finn"); seven = ts["E-7"]; return len(ts) == 2 })
	if _, ok := userTasks(t, o.base, dir, "ann")["E-7"]; !ok {
		t.Error("ann, a manager, does not see E-7")
	}
	if ts := userTasks(t, o.base, dir, "eve"); len(ts) != 0 {
		t.Errorf("eve, in no group, sees %v", ts)
	}
	if ts := userTasks(t, o.base, dir, "mark"); len(ts) != 0 {
		t.Errorf("mark, the employee (excluded owner), sees %v", ts)
	}
	if r := runCtl(t, o.base, "task", "claim", seven.ID, "--user", "mark", "--password-file", filepath.Join(dir, "mark.password")); r.code != 1 {
		t.Errorf("mark claims his own expense: %s", r)
	}
	if r := runCtl(t, o.base, "task", "claim", seven.ID, "--user", "ann", "--password-file", filepath.Join(dir, "mark.password")); r.code != 1 || !strings.Contains(r.stderr, "401") {
		t.Errorf("ann with mark's password: %s", r)
	}
	mustCtl(t, o.base, "task", "claim", seven.ID, "--user", "ann", "--password-file", filepath.Join(dir, "ann.password"))
	kill9(t, o)

	o = startOrchd(t, args...)
	ts := userTasks(t, o.base, dir, "ann")
	if got := ts["E-7"]; got.State != "RESERVED" || got.ActualOwner != "ann" {
		t.Fatalf("after kill -9, ann's task is %s owned by %q, want RESERVED by ann", got.State, got.ActualOwner)
	}
	var eight mgmt.Task
	waitUntil(t, "E-8's escalation to the directors", func() bool { eight = userTasks(t, o.base, dir, "dora")["E-8"]; return eight.ID != "" })
	if len(eight.Escalations) != 1 {
		t.Errorf("E-8: escalations %v", eight.Escalations)
	}
	if _, ok := userTasks(t, o.base, dir, "ann")["E-8"]; ok {
		t.Error("ann still sees the escalated task")
	}
	decision := `<ex:decision xmlns:ex="urn:example:expense"><ex:approved>true</ex:approved><ex:comment>ok</ex:comment></ex:decision>`
	mustCtl(t, o.base, "task", "complete", ts["E-7"].ID, "--user", "ann", "--password-file", filepath.Join(dir, "ann.password"), "--output", decision)
	mustCtl(t, o.base, "task", "claim", eight.ID, "--user", "dora", "--password-file", filepath.Join(dir, "dora.password"))
	mustCtl(t, o.base, "task", "complete", eight.ID, "--user", "dora", "--password-file", filepath.Join(dir, "dora.password"),
		"--output", strings.Replace(decision, "true", "false", 1))
	for id, want := range map[string]string{"E-7": "APPROVED", "E-8": "REJECTED"} {
		var r response
		waitUntil(t, id+"'s decision", func() bool { r = expenseStatus(t, o.base, id); return r.status == 200 })
		if !strings.Contains(r.body, want) {
			t.Errorf("%s: %s, want %s", id, r.body, want)
		}
	}
}
