package process

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/process/interp"
)

// approvalVariant compiles the order approval with edits applied to its
// BPEL (old, new, old, new, ...), as version number n, in-memory or
// persistent.
func approvalVariant(t *testing.T, n int, inMemory bool, edits ...string) *interp.Version {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "order-approval")
	copyDir(t, "../../deploy/order-approval", dir)
	edit := func(file string, edits ...string) {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		for i := 0; i+1 < len(edits); i += 2 {
			if !strings.Contains(s, edits[i]) {
				t.Fatalf("%s has no %q to edit", file, edits[i])
			}
			s = strings.ReplaceAll(s, edits[i], edits[i+1])
		}
		if err := os.WriteFile(filepath.Join(dir, file), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit("OrderApproval.bpel", edits...)
	if inMemory {
		edit("deploy.xml", "<in-memory>false</in-memory>", "<in-memory>true</in-memory>")
	}
	procs, err := loadBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	procs[0].Number = n
	return procs[0]
}

// The versions of the migration tests. Version 2 answers differently
// (APPROVED-V2), declares a variable before the others (every slot
// moves) and has an activity more before the pick (every activity id
// after it moves), so only paths and names can match them up. Version 3
// renames the pick and a variable: nothing can move to it. Version 4
// renames the variable only, which the operator's mapping bridges.
var (
	approvalV2 = []string{
		"'APPROVED'", "'APPROVED-V2'",
		`<variable name="request"`, `<variable name="note" type="xsd:string"/>
    <variable name="request"`,
		"</assign>\n    </if>", "</assign>\n      <else><empty name=\"noTimeout\"/></else>\n    </if>",
	}
	approvalV3 = []string{`<pick name="awaitDecision">`, `<pick name="awaitVerdict">`,
		`name="timeout"`, `name="limit"`, "$timeout", "$limit", `variable="timeout"`, `variable="limit"`}
	approvalV4 = []string{"'APPROVED'", "'APPROVED-V4'",
		`name="timeout"`, `name="limit"`, "$timeout", "$limit", `variable="timeout"`, `variable="limit"`}
)

func TestMigrate(t *testing.T) {
	for _, mode := range []struct {
		name     string
		inMemory bool
	}{{"in-memory", true}, {"persistent", false}} {
		t.Run(mode.name, func(t *testing.T) {
			rec := &eventLog{}
			disp, err := events.NewDispatcher(events.Options{Budget: 10 * time.Second}, rec)
			if err != nil {
				t.Fatal(err)
			}
			opts := Options{MessageHold: 100 * time.Millisecond, Events: disp}
			var e *Engine
			if mode.inMemory {
				e = NewEngine(opts)
				t.Cleanup(e.Close)
			} else {
				e, _ = storeEngine(t, opts)
			}
			v1 := approvalVariant(t, 1, mode.inMemory)
			if err := e.Deploy(v1); err != nil {
				t.Fatal(err)
			}
			ids := []string{"R-1", "R-2", "R-3"}
			for _, id := range ids {
				if st, err := approvalCall(t, e, v1, "requestApproval", map[string]string{"requestId": id, "amount": "5", "requester": "ann"}); err != nil || st != "PENDING" {
					t.Fatalf("request %s: %q %v", id, st, err)
				}
			}
			v2 := approvalVariant(t, 2, mode.inMemory, approvalV2...)
			if _, err := e.Redeploy(func(b string) bool { return b == v1.Bundle }, v2); err != nil {
				t.Fatal(err)
			}
			v3 := approvalVariant(t, 3, mode.inMemory, approvalV3...)
			v4 := approvalVariant(t, 4, mode.inMemory, approvalV4...)
			if err := e.AddRetired(v3, v4); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			onVersion := func(n int) int {
				t.Helper()
				p, err := e.QueryInstances(ctx, mgmt.Query{Process: "OrderApproval", Version: n, State: mgmt.StateWaiting})
				if err != nil {
					t.Fatal(err)
				}
				return len(p.Instances)
			}

			// Version 3: refused, per instance, naming what differs.
			res, err := e.Migrate(ctx, mgmt.MigrateRequest{Process: "OrderApproval", From: 1, To: 3})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Moved) != 0 || len(res.Refused) != 3 || res.Matched != 3 {
				t.Fatalf("to version 3: %+v", res)
			}
			t.Logf("refused for version 3: %q", res.Refused[0].Reasons)
			for _, r := range res.Refused {
				all := strings.Join(r.Reasons, "\n")
				for _, want := range []string{`activity <pick name="awaitDecision">`, "not in version 3", "variable timeout: not in version 3"} {
					if !strings.Contains(all, want) {
						t.Errorf("%s refused for %q, want a reason with %q", r.ID, all, want)
					}
				}
			}

			// Dry run to version 2: all would move, none does.
			res, err = e.Migrate(ctx, mgmt.MigrateRequest{Process: "OrderApproval", From: 1, To: 2, DryRun: true})
			if err != nil || len(res.Moved) != 3 || len(res.Refused) != 0 {
				t.Fatalf("dry run to version 2: %+v %v", res, err)
			}
			if n1, n2 := onVersion(1), onVersion(2); n1 != 3 || n2 != 0 {
				t.Fatalf("after the dry run: %d on version 1, %d on version 2", n1, n2)
			}

			// A filter selects one; then the rest move.
			res, err = e.Migrate(ctx, mgmt.MigrateRequest{Process: "OrderApproval", From: 1, To: 2, Query: mgmt.Query{Correlation: "R-1"}})
			if err != nil || len(res.Moved) != 1 || len(res.Refused) != 0 {
				t.Fatalf("R-1 to version 2: %+v %v", res, err)
			}
			res, err = e.Migrate(ctx, mgmt.MigrateRequest{Process: "OrderApproval", From: 1, To: 2, Max: 1})
			if err != nil || len(res.Moved) != 1 || !res.Truncated {
				t.Fatalf("one more to version 2: %+v %v", res, err)
			}
			if n1, n2 := onVersion(1), onVersion(2); n1 != 1 || n2 != 2 {
				t.Fatalf("after two moves: %d on version 1, %d on version 2", n1, n2)
			}
			// The last one goes to version 4 with the variable mapped.
			res, err = e.Migrate(ctx, mgmt.MigrateRequest{Process: "OrderApproval", From: 1, To: 4, Variables: map[string]string{"timeout": "limit"}})
			if err != nil || len(res.Moved) != 1 || len(res.Refused) != 0 {
				t.Fatalf("to version 4 with a mapping: %+v %v", res, err)
			}
			if n := onVersion(1); n != 0 {
				t.Fatalf("%d left on version 1", n)
			}
			// Version 1 has no instances left: it can be dropped at once.
			if dropped, err := e.DropUnused(0); err != nil || !slices.Contains(dropped, v1) {
				t.Fatalf("DropUnused after the migration: %v %v", dropped, err)
			}
			answers := map[string]bool{}
			for _, id := range ids {
				st, err := approvalCall(t, e, v2, "decide", map[string]string{"requestId": id, "approved": "true", "approver": "bob"})
				if err != nil {
					t.Fatalf("decide %s: %v", id, err)
				}
				answers[st] = true
			}
			if !answers["APPROVED-V2"] || !answers["APPROVED-V4"] || len(answers) != 2 {
				t.Fatalf("answers %v, want APPROVED-V2 and APPROVED-V4 only", answers)
			}
			// Each move is in the instance's events, the dry run's not.
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := disp.Close(cctx); err != nil {
				t.Fatal(err)
			}
			var moves []string
			for _, ev := range rec.all() {
				if ev.Kind == events.InstanceMigrated {
					moves = append(moves, fmt.Sprintf("%d %s", ev.Version, ev.Detail))
				}
			}
			slices.Sort(moves)
			if want := []string{"2 from version 1 to version 2", "2 from version 1 to version 2", "4 from version 1 to version 4"}; !slices.Equal(moves, want) {
				t.Errorf("instanceMigrated events %q, want %q", moves, want)
			}
		})
	}
}
