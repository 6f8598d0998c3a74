package hotdeploy

import (
	"encoding/xml"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/echotest"
	"github.com/orchd/orchd/internal/humantask"
	"github.com/orchd/orchd/internal/process"
	"github.com/orchd/orchd/internal/soap"
)

// TestTaskDefinitionsDeployWithBundle: a bundle's .ht files and
// htconfig.xml deploy with its processes; a broken .ht fails the
// bundle's redeploy with file and line and the serving version (and its
// definitions) stays; removing the bundle undeploys its definitions.
func TestTaskDefinitionsDeployWithBundle(t *testing.T) {
	engine := process.NewEngine(process.Options{})
	t.Cleanup(engine.Close)
	front := soap.NewServer(soap.ServerOptions{})
	srv := httptest.NewServer(front)
	t.Cleanup(srv.Close)
	tasks := humantask.New(humantask.Options{})
	t.Cleanup(tasks.Close)
	dir := t.TempDir()
	d, err := New(Options{Dir: dir, Engine: engine, Front: front, Tasks: tasks})
	if err != nil {
		t.Fatal(err)
	}
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
