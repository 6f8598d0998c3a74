package main

import (
	"testing"
	"time"

	"github.com/orchd/orchd/internal/mgmt"
)

// TestRetentionSweepsEndedInstances: the binary with --retention 2s and a
// sweep every 200 ms keeps a completed persistent instance listed until
// its period has passed since its end, then deletes it. (The rules, a
// waiting instance never swept among them, on a fake clock, are
// internal/process's TestRetentionFakeClock.)
func TestRetentionSweepsEndedInstances(t *testing.T) {
	deploy := t.TempDir()
	writeProcess(t, deploy, "Kept", "127.0.0.1:1", `<sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    `+initOut+`
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`, false)
	o := startOrchd(t, "--deploy", deploy, "--data", t.TempDir(), "--retention", "2s", "--retention-every", "200ms")
	if r := callRun(t, o.base, "Kept", "R1", "1"); r.status != 200 {
		t.Fatalf("Kept: %d %s", r.status, r.body)
	}
	ended := time.Now()
	list := func(process string) []mgmt.Instance {
		var p mgmt.Page
		apiGet(t, o.base, "instances?process="+process, &p)
		return p.Instances
	}
	if got := list("Kept"); len(got) != 1 || got[0].State != "completed" {
		t.Fatalf("right after its end: %+v, want the completed instance", got)
	}
	if !eventually(func() bool { return len(list("Kept")) == 0 }) {
		t.Fatalf("the completed instance is still listed %v after its end", time.Since(ended).Round(time.Millisecond))
	}
	if gone := time.Since(ended); gone < 2*time.Second {
		t.Errorf("deleted %v after its end, before its 2s period", gone.Round(time.Millisecond))
	}
	waitLog(t, o, "retention: ended instances deleted")
}
