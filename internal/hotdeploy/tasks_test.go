package hotdeploy

import (
	"encoding/xml"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/echotest"
	"github.com/orchd/orchd/internal/humantask"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/process"
	"github.com/orchd/orchd/internal/soap"
)

// taskDeployer is a deployer of dir with a process engine, a front door
// and a task engine (in memory) of its own.
func taskDeployer(t *testing.T, dir string) (*Deployer, *humantask.Engine, *soap.Server) {
	t.Helper()
	engine := process.NewEngine(process.Options{})
	t.Cleanup(engine.Close)
	front := soap.NewServer(soap.ServerOptions{})
	tasks := humantask.New(humantask.Options{})
	t.Cleanup(tasks.Close)
	d, err := New(Options{Dir: dir, Engine: engine, Front: front, Tasks: tasks})
	if err != nil {
		t.Fatal(err)
	}
	return d, tasks, front
}

// TestTaskDefinitionsDeployWithBundle: a bundle's .ht files and
// htconfig.xml deploy with its processes; a broken .ht fails the
// bundle's redeploy with file and line and the serving version (and its
// definitions) stays; removing the bundle undeploys its definitions.
func TestTaskDefinitionsDeployWithBundle(t *testing.T) {
	dir := t.TempDir()
	d, tasks, front := taskDeployer(t, dir)
	srv := httptest.NewServer(front)
	t.Cleanup(srv.Close)
	echotest.Write(t, dir, "echo", "one", true)
	for _, f := range []string{"ApproveExpense.ht", "htconfig.xml"} {
		b, err := os.ReadFile(filepath.Join("../../deploy/expense-approval", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "echo", f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d.Poll()
	d.Poll()
	name := xml.Name{Space: "urn:example:expense:task", Local: "ApproveExpense"}
	if _, ok := tasks.Definition(name); !ok {
		t.Fatal("the bundle's task definition is not deployed")
	}
	if err := os.WriteFile(filepath.Join(dir, "echo", "ApproveExpense.ht"), []byte("<htd:humanInteractions xmlns:htd=\""+humantask.NS+"\">\n<htd:tasks><htd:task/></htd:tasks></htd:humanInteractions>"), 0o644); err != nil {
		t.Fatal(err)
	}
	d.Poll()
	d.Poll()
	if got := echotest.Call(t, srv.URL, "a"); got != "one-a" {
		t.Fatalf("answer %q after a broken .ht, want the serving version's one-a", got)
	}
	bs, err := d.Bundles()
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 1 || bs[0].State != "failed" || len(bs[0].Errors) == 0 || !strings.Contains(strings.Join(bs[0].Errors, "\n"), "ApproveExpense.ht:2: <task>: a task needs a name") {
		t.Fatalf("bundles %+v, want echo failed with ApproveExpense.ht:2's problem", bs)
	}
	if _, ok := tasks.Definition(name); !ok {
		t.Fatal("the serving version's task definition went with the broken redeploy")
	}
	if err := os.RemoveAll(filepath.Join(dir, "echo")); err != nil {
		t.Fatal(err)
	}
	d.Poll()
	if _, ok := tasks.Definition(name); ok {
		t.Fatal("the task definition outlived its bundle")
	}
}

// wso2TaskPackage is WSO2's ClaimsApproval task package: .ht, htconfig.xml
// and the task's WSDL, no deploy.xml.
const wso2TaskPackage = "../../testdata/wso2-humantask/ClaimsApproval2/ClaimsApprovalTask"

// TestTaskPackage: a task package uploaded as a zip deploys at once as
// version 1 listing its task, a second upload is version 2; an upload
// of htconfig.xml without a .ht file, or of a folder that is neither a
// bundle nor a task package, is refused as invalid and changes nothing;
// a folder of neither kind in the deploy directory is no bundle; the
// management API's undeploy removes the package and its task; a task
// package in the deploy directory at start is deployed by Start, before
// any poll.
func TestTaskPackage(t *testing.T) {
	dir := t.TempDir()
	d, tasks, _ := taskDeployer(t, dir)
	name := xml.Name{Space: "http://www.example.com/claims/", Local: "ApproveClaim"}
	pkg := zipOf(t, wso2TaskPackage)
	for v := 1; v <= 2; v++ {
		b, err := d.DeployZip("ClaimsApprovalTask", pkg)
		if err != nil {
			t.Fatal(err)
		}
		if b.State != "deployed" || b.Version != v || !slices.Equal(b.Tasks, []string{"{" + name.Space + "}" + name.Local}) {
			t.Fatalf("upload %d: %+v, want deployed as version %d publishing ApproveClaim", v, b, v)
		}
	}
	if _, ok := tasks.Definition(name); !ok {
		t.Fatal("the uploaded package's task is not deployed")
	}

	configOnly := t.TempDir()
	cfg, err := os.ReadFile(filepath.Join(wso2TaskPackage, "htconfig.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(configOnly, "htconfig.xml"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := d.DeployZip("ConfigOnly", zipOf(t, configOnly)); !errors.Is(err, mgmt.ErrInvalid) || !strings.Contains(err.Error(), "no .ht file") {
		t.Errorf("upload of htconfig.xml alone: %v, want invalid for want of a .ht file", err)
	}
	wsdlOnly := t.TempDir()
	if err := os.WriteFile(filepath.Join(wsdlOnly, "a.wsdl"), []byte("<x/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := d.DeployZip("WSDLOnly", zipOf(t, wsdlOnly)); !errors.Is(err, mgmt.ErrInvalid) || !strings.Contains(err.Error(), "no deploy.xml") {
		t.Errorf("upload of a WSDL alone: %v, want invalid for want of a deploy.xml or task definitions", err)
	}
	if err := os.CopyFS(filepath.Join(dir, "notes"), os.DirFS(wsdlOnly)); err != nil {
		t.Fatal(err)
	}
	d.Poll()
	d.Poll()
	bs, err := d.Bundles()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range bs {
		names = append(names, b.Name+"="+b.State)
	}
	if !slices.Equal(names, []string{"ClaimsApprovalTask=deployed", "ConfigOnly=failed"}) {
		t.Fatalf("bundles %v, want the task package deployed and the htconfig-only upload failed, no notes", names)
	}

	if err := d.Undeploy("ClaimsApprovalTask"); err != nil {
		t.Fatal(err)
	}
	if _, ok := tasks.Definition(name); ok {
		t.Fatal("the task outlived its package's undeploy")
	}

	restart := t.TempDir()
	if err := os.CopyFS(filepath.Join(restart, "ClaimsApprovalTask"), os.DirFS(wso2TaskPackage)); err != nil {
		t.Fatal(err)
	}
	d2, tasks2, _ := taskDeployer(t, restart)
	if err := d2.Start(nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := tasks2.Definition(name); !ok {
		t.Fatal("Start did not deploy the task package of the deploy directory")
	}
}
