package process

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/persist"
)

// snapshotWant are the statuses of the mgmt-snapshot process's
// activities while an instance waits in its wait "pause".
var snapshotWant = map[string]string{
	"process Snapshot": mgmt.ActivityRunning,
	"sequence main":    mgmt.ActivityRunning,
	"receive start":    mgmt.ActivityCompleted,
	"assign prepare":   mgmt.ActivityCompleted,
	"if early":         mgmt.ActivityCompleted,
	// Which branch a completed if took is not kept.
	"empty earlyYes":   mgmt.ActivityUnknown,
	"empty earlyNo":    mgmt.ActivityUnknown,
	"reply ack":        mgmt.ActivityCompleted,
	"flow branches":    mgmt.ActivityRunning,
	"empty source":     mgmt.ActivityCompleted,
	"empty deadEnd":    mgmt.ActivitySkipped, // its only link is false
	"if choose":        mgmt.ActivityRunning,
	"sequence chosen":  mgmt.ActivityRunning,
	"wait pause":       mgmt.ActivityWaiting,
	"empty afterPause": mgmt.ActivityNotReached,
	"empty notChosen":  mgmt.ActivitySkipped,
	"empty finish":     mgmt.ActivityNotReached,
}

// activityStatus is the status of the activity kind name in d ("" when
// it is not listed).
func activityStatus(d *mgmt.InstanceDetail, kind, name string) string {
	for _, a := range d.Activities {
		if a.Kind == kind && a.Name == name {
			return a.Status
		}
	}
	return ""
}

// checkActivities compares a detail's activities with snapshotWant.
func checkActivities(t *testing.T, d *mgmt.InstanceDetail) {
	t.Helper()
	if len(d.Activities) == 0 || d.Activities[0].Kind != "process" {
		t.Fatalf("activities %+v", d.Activities)
	}
	seen := map[string]bool{}
	for _, a := range d.Activities {
		key := strings.TrimSpace(a.Kind + " " + a.Name)
		want, ok := snapshotWant[key]
		if !ok {
			t.Errorf("unexpected activity %+v", a)
			continue
		}
		seen[key] = true
		if a.Status != want {
			t.Errorf("%s (id %d): status %s, want %s", key, a.ID, a.Status, want)
		}
		if a.Kind != "process" && !strings.Contains(a.Position, "Snapshot.bpel:") {
			t.Errorf("%s: position %q", key, a.Position)
		}
	}
	for key := range snapshotWant {
		if !seen[key] {
			t.Errorf("activity %s not listed", key)
		}
	}
	// The main thread joins the flow's branches; one of them waits.
	if len(d.Branches) != 2 || d.Branches[0].Activity != "flow branches" || d.Branches[0].Waiting != "branches" ||
		d.Branches[1].Activity != "wait pause" || !strings.HasPrefix(d.Branches[1].Waiting, "alarm at ") {
		t.Errorf("branches %+v", d.Branches)
	}
}

// startSnapshot starts an instance of the mgmt-snapshot process on e and
// returns its id once it waits.
func startSnapshot(t *testing.T, e *Engine) string {
	t.Helper()
	procs := e.Processes()
	if r := dispatch(t, e, procs[0], testReq("S-1", "1", "")); r.err != nil || r.out == nil {
		t.Fatalf("run: %+v", r)
	}
	pg, err := e.QueryInstances(context.Background(), mgmt.Query{Process: "Snapshot"})
	if err != nil || len(pg.Instances) != 1 || pg.Instances[0].State != mgmt.StateWaiting {
		t.Fatalf("listing: %+v %v", pg, err)
	}
	return pg.Instances[0].ID
}

func TestInstanceDetailActivitiesInMemory(t *testing.T) {
	procs := loadInMemory(t, filepath.Join(bundlesDir, "mgmt-snapshot"))
	e := NewEngine(Options{})
	defer e.Close()
	if err := e.Deploy(procs...); err != nil {
		t.Fatal(err)
	}
	id := startSnapshot(t, e)
	if !strings.HasPrefix(id, "m") {
		t.Fatalf("id %s is not an in-memory one", id)
	}
	d, err := e.InstanceDetail(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	checkActivities(t, d)
}

func TestInstanceDetailActivitiesPersistent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "orchd.db")
	open := func() (*Engine, *persist.Store) {
		st, err := persist.Open(path, persist.Options{MaxBatchDelay: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		procs, err := loadBundle(filepath.Join(bundlesDir, "mgmt-snapshot"))
		if err != nil {
			t.Fatal(err)
		}
		e := NewEngine(Options{Store: st})
		if err := e.Deploy(procs...); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Recover(context.Background()); err != nil {
			t.Fatal(err)
		}
		return e, st
	}
	e, st := open()
	id := startSnapshot(t, e)
	for round := range 2 {
		d, err := e.InstanceDetail(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if d.InMemory || d.State != mgmt.StateWaiting {
			t.Errorf("round %d: %+v", round, d.Instance)
		}
		checkActivities(t, d)
		// Again from a fresh engine over the same store: the statuses
		// come from the stored frames alone.
		e.Close()
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		e, st = open()
	}
	e.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}
