package process

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/interp"
)

// storedInstances lists the stored instances q selects with their
// details, as orchd instances does (details); waiting in-memory
// instances are left out.
func storedInstances(t testing.TB, e *Engine, q mgmt.Query) []*mgmt.InstanceDetail {
	t.Helper()
	list, err := e.details(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	out := list[:0]
	for _, d := range list {
		if !d.InMemory {
			out = append(out, d)
		}
	}
	return out
}

// checkStored decodes a stored instance of p without an engine, to tell
// whether it is broken: nil when it decodes, or when its control state
// belongs to a version other than p (which only that version can read).
func checkStored(p *interp.Version, rec *persist.Instance, vars map[int][]byte) error {
	if fp, _, ok := interp.SplitFingerprint(rec.Frames); ok && fp != p.Fingerprint {
		return nil
	}
	var e *Engine
	if _, err := e.decode(context.Background(), p, rec, vars); err != nil && isCorrupt(err) {
		return err
	}
	return nil
}

// TestStoreInstances lists a data file no engine serves, as orchd
// instances does: three approvals (one decided) are stored by an engine
// that is then stopped, a variable of one is damaged with bbolt, and
// StoreInstances over the reopened file lists them with their variables
// and correlations, finds the damaged one broken (State "broken" selects
// it although no engine met it), and names slots when it is given no
// process.
func TestStoreInstances(t *testing.T) {
	path := filepath.Join(t.TempDir(), "orchd.db")
	e, st, procs := persistentEngine(t, path)
	ap := procs["OrderApproval"]
	for _, id := range []string{"S-1", "S-2", "S-3"} {
		if got, err := approvalCall(t, e, ap, "requestApproval", map[string]string{"requestId": id, "amount": "3", "requester": "ann"}); err != nil || got != "PENDING" {
			t.Fatalf("request %s: %q %v", id, got, err)
		}
		// Instance IDs order by their millisecond only: the next one is
		// newer when it starts in a later millisecond.
		time.Sleep(2 * time.Millisecond)
	}
	if got, err := approvalCall(t, e, ap, "decide", map[string]string{"requestId": "S-3", "approved": "true", "approver": "bob"}); err != nil || got != "APPROVED" {
		t.Fatalf("decide: %q %v", got, err)
	}
	ids := map[string]string{} // request ID -> instance ID
	for _, d := range storedInstances(t, e, mgmt.Query{Process: "OrderApproval"}) {
		ids[d.Correlations["byRequest"]] = d.ID
	}
	if len(ids) != 3 {
		t.Fatalf("instances: %v", ids)
	}
	e.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		c := tx.Bucket([]byte("vars")).Cursor()
		prefix := persist.KeyPrefix(ids["S-2"])
		k, _ := c.Seek(prefix)
		if !strings.HasPrefix(string(k), string(prefix)) {
			t.Fatalf("no variable of %s", ids["S-2"])
		}
		return tx.Bucket([]byte("vars")).Put(append([]byte(nil), k...), []byte("<unclosed><x>"))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}

	st2, err := persist.Open(path, persist.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	ctx := context.Background()
	list := func(procs []*interp.Version, q mgmt.Query) []*mgmt.InstanceDetail {
		t.Helper()
		l, err := StoreInstances(ctx, st2, procs, q)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	deployed := []*interp.Version{ap}

	all := list(deployed, mgmt.Query{})
	if len(all) != 3 || all[0].ID != ids["S-3"] || all[2].ID != ids["S-1"] {
		t.Fatalf("all instances, want S-3, S-2, S-1 (newest first): %+v", all)
	}
	if d := all[0]; d.State != mgmt.StateCompleted || !strings.Contains(d.Variables["status"], "APPROVED") || d.Version != ap.Number {
		t.Errorf("the decided instance: %+v", d)
	}
	if d := all[2]; d.State != mgmt.StateWaiting || !strings.Contains(d.Variables["request"], "S-1") || d.Correlations["byRequest"] != "S-1" || len(d.Branches) == 0 {
		t.Errorf("the waiting instance: %+v", d)
	}

	broken := list(deployed, mgmt.Query{State: mgmt.StateBroken})
	if len(broken) != 1 || broken[0].ID != ids["S-2"] || !strings.Contains(broken[0].Fault, "variable") {
		t.Errorf("--state broken: want the instance with the damaged variable: %+v", broken)
	}
	waiting := list(deployed, mgmt.Query{Process: "OrderApproval", State: mgmt.StateWaiting})
	if len(waiting) != 2 || waiting[0].State != mgmt.StateBroken || waiting[1].State != mgmt.StateWaiting {
		t.Errorf("waiting (the damaged one is listed as broken): %+v", waiting)
	}

	// Without the process, the variables are its slots.
	unnamed := list(nil, mgmt.Query{})
	if len(unnamed) != 3 || len(unnamed[2].Variables) == 0 {
		t.Fatalf("without the process: %+v", unnamed)
	}
	for name := range unnamed[2].Variables {
		if !strings.HasPrefix(name, "slot") {
			t.Errorf("without the process, variable %q is not a slot", name)
		}
	}
}
