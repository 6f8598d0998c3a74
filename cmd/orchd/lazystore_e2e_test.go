package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/mgmt"
)

// An orchd started with in-memory bundles only opens no data store; the
// first persistent bundle deployed into it, dropped into --deploy or
// uploaded, opens the configured one (bbolt in --data by default) and
// serves without a restart (issue 21, item 8).

func TestHotDeployPersistentIntoStorelessOrchd(t *testing.T) {
	deploy := t.TempDir()
	data := filepath.Join(t.TempDir(), "data")
	db := filepath.Join(data, dataFile)
	writeVersion(t, deploy, "mem", "M1", true)
	args := []string{"--deploy", deploy, "--data", data, "--deploy-poll", hotPoll}
	o := startOrchd(t, args...)
	waitAnswer(t, o, "mem", "a", "M1-started-ID")
	if exists(db) {
		t.Fatalf("%s exists with in-memory bundles only", db)
	}

	writeVersion(t, deploy, "per", "P1", false)
	waitAnswer(t, o, "per", "p", "P1-started-ID")
	if !exists(db) {
		t.Fatalf("no %s after a persistent bundle was deployed\n%s", db, o.log())
	}
	if strings.Contains(o.log(), "no data store") {
		t.Fatalf("the persistent bundle was refused first\n%s", o.log())
	}
	if !strings.Contains(o.log(), "instance store opened") {
		t.Errorf("the store's opening is not logged\n%s", o.log())
	}
	// The instance is really stored: it survives a SIGKILL and finishes
	// on the next orchd, which opens the store at start.
	if got := answer(t, o.base, "per", "keep", "0"); got != "P1-started-keep" {
		t.Fatalf("answer %q, want P1-started-keep\n%s", got, o.log())
	}
	if got := answer(t, o.base, "mem", "b", "0"); got != "M1-started-b" {
		t.Fatalf("the in-memory process answered %q beside the persistent one", got)
	}
	kill9(t, o)
	o2 := startOrchd(t, args...)
	if got := answer(t, o2.base, "per", "keep", "2"); got != "P1-done-2" {
		t.Fatalf("after the restart the stored instance answered %q, want P1-done-2\n%s", got, o2.log())
	}
}

func TestUploadPersistentIntoStorelessOrchd(t *testing.T) {
	deploy := t.TempDir()
	data := filepath.Join(t.TempDir(), "data")
	writeVersion(t, deploy, "mem", "M1", true)
	s := startMgmt(t, deploy, "--data", data)
	if got := answer(t, s.base, "mem", "a", "0"); got != "M1-started-a" {
		t.Fatalf("answer %q, want M1-started-a\n%s", got, s.logs)
	}
	if exists(filepath.Join(data, dataFile)) {
		t.Fatal("a data file with in-memory bundles only")
	}
	stage := t.TempDir()
	writeVersion(t, stage, "per", "P1", false)
	zipped, err := zipBundle(filepath.Join(stage, "per"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.b.Deploy(context.Background(), "per", zipped)
	if err != nil {
		t.Fatalf("upload of a persistent bundle: %v\n%s", err, s.logs)
	}
	if b.State != "deployed" {
		t.Fatalf("bundle %+v, want deployed", b)
	}
	if got := answer(t, s.base, "per", "u", "0"); got != "P1-started-u" {
		t.Fatalf("answer %q, want P1-started-u\n%s", got, s.logs)
	}
	if got := answer(t, s.base, "per", "u", "4"); got != "P1-done-4" {
		t.Fatalf("second message answered %q, want P1-done-4", got)
	}
	if _, err := os.Stat(filepath.Join(data, dataFile)); err != nil {
		t.Fatalf("no data file after the upload: %v", err)
	}
	page, err := s.b.Instances(context.Background(), mgmt.Query{Process: "per"})
	if err != nil || len(page.Instances) != 1 || page.Instances[0].InMemory || page.Instances[0].State != "completed" {
		t.Fatalf("instances of per: %+v, %v; want one stored, completed", page, err)
	}
}
