package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/mgmt"
)

// processVersions lists, by process, its versions as the management API
// shows them ("2:active", "1:retired"), newest first.
func processVersions(t *testing.T, o *orchd) map[string][]string {
	t.Helper()
	var ps []mgmt.Process
	apiGet(t, o.base, "processes", &ps)
	m := map[string][]string{}
	for _, p := range ps {
		m[p.Local] = append(m[p.Local], fmt.Sprintf("%d:%s", p.Version, p.State))
	}
	for _, vs := range m {
		slices.Sort(vs)
		slices.Reverse(vs)
	}
	return m
}

// TestVersionsPerProcess: each process's first deploy is its version 1
// and its redeploys count from there, whatever the other bundles do (the
// node's deploy counter, which names the archives, is not shown), in the
// log and the management API, and a restart keeps the numbers of the
// versions it keeps.
func TestVersionsPerProcess(t *testing.T) {
	deploy, data := t.TempDir(), t.TempDir()
	writeVersion(t, deploy, "pa", "V1", true)
	writeVersion(t, deploy, "pb", "V1", false)
	writeVersion(t, deploy, "pc", "V1", false)
	o := startOrchd(t, "--deploy", deploy, "--data", data, "--deploy-poll", hotPoll)
	want := map[string][]string{"pa": {"1:active"}, "pb": {"1:active"}, "pc": {"1:active"}}
	if got := processVersions(t, o); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("on a fresh start: %v, want %v\n%s", got, want, o.log())
	}
	for _, p := range []string{"pa", "pb", "pc"} {
		if !strings.Contains(o.log(), "bundle="+p+" version=1 ") {
			t.Errorf("the deploy of %s is not logged as version=1\n%s", p, o.log())
		}
	}
	if strings.Contains(o.log(), "version=2") || strings.Contains(o.log(), "version=3") {
		t.Errorf("a fresh start logs a version other than 1\n%s", o.log())
	}

	// An instance waits on pb's version 1, which is so kept (and archived).
	if got := answer(t, o.base, "pb", "old", "1"); got != "V1-started-old" {
		t.Fatalf("first call: %q", got)
	}
	writeVersion(t, deploy, "pb", "V2", false)
	waitLog(t, o, "bundle=pb version=2 ")
	writeVersion(t, deploy, "pb", "V3", false)
	waitLog(t, o, "bundle=pb version=3 ")
	if !eventually(func() bool { return !strings.Contains(fmt.Sprint(processVersions(t, o)["pb"]), "2:") }) {
		t.Fatalf("pb's version 2, which no instance uses, is not dropped: %v\n%s", processVersions(t, o), o.log())
	}
	want = map[string][]string{"pa": {"1:active"}, "pb": {"3:active", "1:retired"}, "pc": {"1:active"}}
	if got := processVersions(t, o); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after two redeploys of pb: %v, want %v\n%s", got, want, o.log())
	}

	// A restart keeps pb's versions 3 and 1 (archived with their
	// numbers); pa, in-memory, starts again at 1, and so do its redeploys.
	stopOrchd(t, o)
	o2 := startOrchd(t, "--deploy", deploy, "--data", data, "--deploy-poll", hotPoll)
	if got := processVersions(t, o2); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after a restart: %v, want %v\n%s", got, want, o2.log())
	}
	if got := answer(t, o2.base, "pb", "old", "5"); got != "V1-done-5" {
		t.Fatalf("after the restart, the instance of pb's version 1 answered %q\n%s", got, o2.log())
	}
	writeVersion(t, deploy, "pa", "V2", true)
	waitLog(t, o2, "bundle=pa version=2 ")
	if got := processVersions(t, o2)["pa"]; fmt.Sprint(got) != "[2:active]" && fmt.Sprint(got) != "[2:active 1:retired]" {
		t.Fatalf("pa redeployed after the restart: %v, want version 2 active\n%s", got, o2.log())
	}
}
