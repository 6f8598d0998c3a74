package diagram

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/process/plan"
)

var update = flag.Bool("update", false, "rewrite the golden SVGs in testdata")

// bundlePlan compiles the one process of bundle folder dir.
func bundlePlan(t *testing.T, dir string) *plan.Plan {
	t.Helper()
	ps, err := compile.LoadBundleWith(dir, compile.LoadOptions{})
	if err != nil || len(ps) != 1 {
		t.Fatalf("%s: %d processes, %v", dir, len(ps), err)
	}
	return ps[0]
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update after checking the picture):\n%s", name, got)
	}
}

// TestGolden renders the purchase order bare, with a version overlay
// and with an instance overlay, and the order approval (a pick, a
// while, an if) bare.
func TestGolden(t *testing.T) {
	po := bundlePlan(t, "../../deploy/purchase-order")
	l := New(po)
	ids := map[string]int{}
	for _, b := range l.Boxes {
		if b.Role == RoleActivity {
			ids[b.Kind+" "+b.Name] = b.ID
		}
	}
	tests := []struct {
		name string
		l    *Layout
		ov   Overlay
	}{
		{"purchase-order.svg", l, Overlay{}},
		{"purchase-order-version.svg", l, ForVersion(&mgmt.Process{Version: 1, SampleEvery: 64, SampleFirst: 16, Outline: outlineOf(l, func(b Box) (uint64, uint64) {
			if b.Kind == "invoke" {
				return 16, 16 * uint64(3*time.Millisecond)
			}
			return 16, 16 * uint64(40*time.Microsecond)
		})})},
		{"purchase-order-instance.svg", l, ForInstance(instanceOf(l, ids))},
		{"order-approval.svg", New(bundlePlan(t, "../../deploy/order-approval")), Overlay{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.l.SVG(&buf, tt.ov); err != nil {
				t.Fatal(err)
			}
			wellFormed(t, buf.Bytes())
			golden(t, tt.name, buf.Bytes())
		})
	}
}

// outlineOf is an outline of l's activities with the counts and times
// stats gives each.
func outlineOf(l *Layout, stats func(Box) (count, ns uint64)) *mgmt.Activity {
	nodes := make([]*mgmt.Activity, len(l.Boxes))
	var root *mgmt.Activity
	for i, b := range l.Boxes {
		if b.Role != RoleActivity {
			continue
		}
		c, ns := stats(b)
		n := &mgmt.Activity{ID: b.ID, Kind: b.Kind, Name: b.Name, Count: c, Nanos: ns, P99Nanos: ns / max(c, 1) * 2}
		nodes[i] = n
		p := b.Parent
		for p >= 0 && nodes[p] == nil {
			p = l.Boxes[p].Parent
		}
		if p < 0 {
			root = n
			continue
		}
		nodes[p].Children = append(nodes[p].Children, n)
	}
	return root
}

// instanceOf is a purchase order instance suspended on its ERP invoke:
// the receive and the CRM invoke completed, the rest not reached.
func instanceOf(l *Layout, ids map[string]int) *mgmt.InstanceDetail {
	d := &mgmt.InstanceDetail{Instance: mgmt.Instance{ID: "42", State: "suspended"}}
	var failed string
	for _, b := range l.Boxes {
		if b.Role != RoleActivity {
			continue
		}
		st := mgmt.ActivityNotReached
		switch {
		case b.Kind == "process" || b.Kind == "sequence":
			st = mgmt.ActivityRunning
		case b.Kind == "receive", strings.Contains(strings.ToLower(b.Name), "crm"), b.Kind == "assign" && failed == "":
			st = mgmt.ActivityCompleted
		case b.Kind == "invoke" && failed == "":
			st, failed = mgmt.ActivityFailed, b.Pos
		}
		d.Activities = append(d.Activities, mgmt.ActivityStatus{ID: b.ID, Kind: b.Kind, Name: b.Name, Position: b.Pos, Status: st})
	}
	d.Failure = &mgmt.Failure{Activity: "invoke", Position: failed, Reason: "partner erp: connection refused", Attempts: 3}
	return d
}
