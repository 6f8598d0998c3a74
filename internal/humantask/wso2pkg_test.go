package humantask_test

import (
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/htclient"
	"github.com/orchd/orchd/internal/humantask"
	"github.com/orchd/orchd/internal/mgmt"
)

// wso2Packages is WSO2's ClaimsApproval sample split as WSO2 BPS ships
// it: the task package ClaimsApprovalTask (.ht, htconfig.xml, the task's
// WSDL; no deploy.xml) and the process bundle ClaimsApprovalProcess.
const wso2Packages = "../../testdata/wso2-humantask/ClaimsApproval2"

// approveClaimTask is the task the task package publishes.
var approveClaimTask = xml.Name{Space: "http://www.example.com/claims/", Local: "ApproveClaim"}

// serveWSO2Packages serves the two packages from one deploy directory.
func serveWSO2Packages(t *testing.T) *wso2Server {
	t.Helper()
	return serveWSO2(t, nil, map[string]string{
		"ClaimsApprovalProcess": filepath.Join(wso2Packages, "ClaimsApprovalProcess"),
		"ClaimsApprovalTask":    filepath.Join(wso2Packages, "ClaimsApprovalTask"),
	})
}

// bundlesOf lists the deployer's bundles by name.
func bundlesOf(t *testing.T, s *wso2Server) map[string]mgmt.Bundle {
	t.Helper()
	bs, err := s.deployer.Bundles()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]mgmt.Bundle{}
	for _, b := range bs {
		m[b.Name] = b
	}
	return m
}

// approve has manager1 claim, start and complete task id, approved.
func approve(t *testing.T, s *wso2Server, id string) {
	t.Helper()
	ns := `xmlns:api="` + htclient.API + `"`
	ident := "<api:identifier>" + id + "</api:identifier>"
	api(t, s, "manager1", `<api:claim `+ns+`>`+ident+`</api:claim>`)
	api(t, s, "manager1", `<api:start `+ns+`>`+ident+`</api:start>`)
	api(t, s, "manager1", `<api:complete `+ns+`>`+ident+`<api:taskData><sch:ClaimApprovalResponse xmlns:sch="http://www.example.com/claims/schema"><sch:approved>true</sch:approved></sch:ClaimApprovalResponse></api:taskData></api:complete>`)
}

// taskOf is task id as manager1 sees it.
func taskOf(t *testing.T, s *wso2Server, id string) humantask.Task {
	t.Helper()
	who, err := s.tasks.Authenticate("manager1", "manager1-pw")
	if err != nil {
		t.Fatal(err)
	}
	task, err := s.tasks.Get(context.Background(), who, id)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// instances are the ids of the ClaimsApprovalProcess instances.
func instances(t *testing.T, s *wso2Server) []string {
	t.Helper()
	page, err := s.engine.QueryInstances(context.Background(), mgmt.Query{Process: "ClaimsApprovalProcess"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, in := range page.Instances {
		ids = append(ids, in.ID)
	}
	return ids
}

// TestWSO2TaskAndProcessPackages: WSO2's ClaimsApproval shipped as two
// packages deploys unchanged from one deploy directory: the task package
// (no deploy.xml) publishes ApproveClaim under its own name, version 1;
// a claim posted to the process bundle creates the task, manager1
// completes it, and the waiting instance completes with the outcome.
// Redeploying the task package (its subject changed) makes version 2:
// the task open on version 1 keeps it and still answers its instance; a
// new claim's task is created on version 2.
func TestWSO2TaskAndProcessPackages(t *testing.T) {
	s := serveWSO2Packages(t)
	bs := bundlesOf(t, s)
	if p := bs["ClaimsApprovalProcess"]; p.State != "deployed" || len(p.Processes) != 1 {
		t.Fatalf("process bundle %+v, want deployed with its process", p)
	}
	tp := bs["ClaimsApprovalTask"]
	if tp.State != "deployed" || tp.Version != 1 || len(tp.Processes) != 0 || !slices.Equal(tp.Tasks, []string{"{http://www.example.com/claims/}ApproveClaim"}) {
		t.Fatalf("task package %+v, want deployed as version 1 publishing ApproveClaim", tp)
	}

	postClaim(t, s)
	first, _ := readyTask(t, s)
	v1 := taskOf(t, s, first)
	if v1.Bundle != "ClaimsApprovalTask" {
		t.Fatalf("task %s of bundle %q, want the task package ClaimsApprovalTask", first, v1.Bundle)
	}
	firstInst := instanceOf(t, s, false)

	ht := filepath.Join(s.deploy, "ClaimsApprovalTask", "ClaimsApprovalTask.ht")
	b, err := os.ReadFile(ht)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(b), "Approve the insurance claim for", "Decide the insurance claim for", 1)
	if changed == string(b) {
		t.Fatal("the .ht's subject is not the one this test changes")
	}
	if err := os.WriteFile(ht, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	// The file's time may not move within the clock's grain: the
	// signature also holds its size, which did not change, so move it.
	if err := os.Chtimes(ht, time.Now(), time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	s.deployer.Poll()
	s.deployer.Poll()
	if tp := bundlesOf(t, s)["ClaimsApprovalTask"]; tp.State != "deployed" || tp.Version != 2 {
		t.Fatalf("task package after its redeploy %+v, want deployed as version 2", tp)
	}

	postClaim(t, s)
	second, list := readyTask(t, s, first)
	if !strings.Contains(list, "Decide the insurance claim for EUR 10000") {
		t.Errorf("the new claim's task does not have version 2's subject: %s", list)
	}
	if v2 := taskOf(t, s, second); v2.Bundle != "ClaimsApprovalTask" || v2.Version <= v1.Version {
		t.Fatalf("new task on %s version %d, want a version of ClaimsApprovalTask after %d", v2.Bundle, v2.Version, v1.Version)
	}
	if again := taskOf(t, s, first); again.Version != v1.Version {
		t.Fatalf("the open task moved from version %d to %d", v1.Version, again.Version)
	}
	var secondInst string
	for _, id := range instances(t, s) {
		if id != firstInst {
			secondInst = id
		}
	}
	approve(t, s, first)
	approve(t, s, second)
	waitApproved(t, s, firstInst, true)
	waitApproved(t, s, secondInst, true)
}

// TestWSO2TaskPackageUndeploy: removing the task package's folder
// undeploys it (gone from the listing, with its marker; ApproveClaim no
// longer defined) while the process bundle stays. A claim posted then
// does not wait silently: the process's one-way invoke of ClaimService
// (persistent: sent from the outbox, retried) fails naming the service
// and the undeployed package, and once the package is deployed again
// the next try creates the task, which answers the waiting instance.
func TestWSO2TaskPackageUndeploy(t *testing.T) {
	s := serveWSO2Packages(t)
	if _, ok := s.tasks.Definition(approveClaimTask); !ok {
		t.Fatal("the task package's ApproveClaim is not deployed")
	}
	if err := os.RemoveAll(filepath.Join(s.deploy, "ClaimsApprovalTask")); err != nil {
		t.Fatal(err)
	}
	s.deployer.Poll()
	bs := bundlesOf(t, s)
	if _, ok := bs["ClaimsApprovalTask"]; ok || bs["ClaimsApprovalProcess"].State != "deployed" {
		t.Fatalf("bundles %+v, want the process bundle alone", bs)
	}
	if _, ok := s.tasks.Definition(approveClaimTask); ok {
		t.Fatal("ApproveClaim outlived its task package")
	}
	if _, err := os.Stat(filepath.Join(s.deploy, "ClaimsApprovalTask.deployed")); err == nil {
		t.Error("the task package's marker outlived it")
	}

	postClaim(t, s)
	inst := instanceOf(t, s, false)
	const want = "no task definition: ClaimsApprovalTask, which published it, is undeployed"
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.logs.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the log does not say %q:\n%s", want, s.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(s.logs.String(), "ClaimService") {
		t.Errorf("the failed call's log does not name ClaimService:\n%s", s.logs.String())
	}

	if err := os.CopyFS(filepath.Join(s.deploy, "ClaimsApprovalTask"), os.DirFS(filepath.Join(wso2Packages, "ClaimsApprovalTask"))); err != nil {
		t.Fatal(err)
	}
	s.deployer.Poll()
	s.deployer.Poll()
	id, _ := readyTask(t, s)
	approve(t, s, id)
	waitApproved(t, s, inst, true)
}

// TestWSO2TaskPackageUndeployedInMemory: an in-memory process (its
// deploy.xml says so) invokes the task inline: with the task package
// undeployed, the invoke fails at once and the instance faults (ODE's
// activityFailure, whose detail names the service and the package),
// rather than waiting for an outcome that cannot come.
func TestWSO2TaskPackageUndeployedInMemory(t *testing.T) {
	proc := t.TempDir()
	if err := os.CopyFS(proc, os.DirFS(filepath.Join(wso2Packages, "ClaimsApprovalProcess"))); err != nil {
		t.Fatal(err)
	}
	dd := filepath.Join(proc, "deploy.xml")
	b, err := os.ReadFile(dd)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dd, []byte(strings.Replace(string(b), "<active>true</active>", "<in-memory>true</in-memory>\n    <active>true</active>", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	s := serveWSO2(t, nil, map[string]string{"ClaimsApprovalProcess": proc, "ClaimsApprovalTask": filepath.Join(wso2Packages, "ClaimsApprovalTask")})
	if err := os.RemoveAll(filepath.Join(s.deploy, "ClaimsApprovalTask")); err != nil {
		t.Fatal(err)
	}
	s.deployer.Poll()
	postClaim(t, s)
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.events.mu.Lock()
		var faulted *events.Event
		for i, e := range s.events.evs {
			if e.Kind == events.InstanceFaulted {
				faulted = &s.events.evs[i]
			}
		}
		s.events.mu.Unlock()
		if faulted != nil {
			const want = "ClaimService port ClaimPort: no task definition: ClaimsApprovalTask, which published it, is undeployed"
			if !strings.Contains(faulted.Detail, want) {
				t.Fatalf("instance %s faulted with %q, want the detail to say %q", faulted.Instance, faulted.Detail, want)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no instance faulted; instances %v", instances(t, s))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Two task packages publishing one service port: the second deployed
// is refused, naming the first, as a process's call would reach either.
func TestWSO2TaskPackagesOneService(t *testing.T) {
	task := filepath.Join(wso2Packages, "ClaimsApprovalTask")
	s := serveWSO2(t, nil, map[string]string{
		"ClaimsApprovalProcess": filepath.Join(wso2Packages, "ClaimsApprovalProcess"),
		"ClaimsApprovalTask":    task,
		"ClaimsApprovalTask2":   task,
	})
	bs := bundlesOf(t, s)
	a, b := bs["ClaimsApprovalTask"], bs["ClaimsApprovalTask2"]
	if a.State == b.State {
		t.Fatalf("both task packages %q and %q, want one refused: %+v %+v", a.State, b.State, a, b)
	}
	failed, first := b, "ClaimsApprovalTask"
	if a.State == "failed" {
		failed, first = a, "ClaimsApprovalTask2"
	}
	all := strings.Join(failed.Errors, "\n")
	for _, want := range []string{"ClaimsApprovalTask.ht:", "ApproveClaim publishes service {http://www.example.com/claims/}ClaimService", `which "` + first + `" publishes already`} {
		if !strings.Contains(all, want) {
			t.Errorf("refused for %q, want %q in it", all, want)
		}
	}
	if bs["ClaimsApprovalProcess"].State != "deployed" {
		t.Fatalf("the process bundle: %+v", bs["ClaimsApprovalProcess"])
	}
	if _, ok := s.tasks.Definition(approveClaimTask); !ok {
		t.Fatal("ApproveClaim is not deployed")
	}
}
