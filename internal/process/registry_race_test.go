package process

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/orchd/orchd/internal/mgmt"
)

// TestResumeBesideListing: an operator's resume of a suspended in-memory
// instance clears its suspension (OperatorResume) while the instance is
// still listed; a listing reads the flag (Summary) under e.reg.mu, so
// the resume must write it under e.reg.mu too. The race detector (make
// test runs -race) fails it otherwise.
func TestResumeBesideListing(t *testing.T) {
	e, p := approvalInMemory(t)
	ctx := context.Background()
	if st, err := approvalCall(t, e, p, "requestApproval", map[string]string{"requestId": "R-1", "amount": "1", "requester": "ann", "timeout": "P1D"}); err != nil || st != "PENDING" {
		t.Fatal(st, err)
	}
	pg, err := e.QueryInstances(ctx, mgmt.Query{})
	if err != nil || len(pg.Instances) != 1 {
		t.Fatalf("%+v %v", pg, err)
	}
	id := pg.Instances[0].ID
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				_, _ = e.QueryInstances(ctx, mgmt.Query{})
			}
		}()
	}
	for i := 0; i < 3000; i++ {
		if err := e.Act(ctx, id, mgmt.Suspend); err != nil {
			t.Fatal(err)
		}
		if err := e.Act(ctx, id, mgmt.Resume); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
}

// TestSuspendedRouteBesideTraffic: a message for a suspended in-memory
// instance is refused after a look at the route map, while other
// instances register and unregister routes: the look must hold e.reg.mu
// (the race detector fails it otherwise, and a map read racing a write
// can end the process with "concurrent map read and map write").
func TestSuspendedRouteBesideTraffic(t *testing.T) {
	e, p := approvalInMemory(t)
	ctx := context.Background()
	if st, err := approvalCall(t, e, p, "requestApproval", map[string]string{"requestId": "S-0", "amount": "1", "requester": "ann", "timeout": "P1D"}); err != nil || st != "PENDING" {
		t.Fatal(st, err)
	}
	pg, err := e.QueryInstances(ctx, mgmt.Query{})
	if err != nil || len(pg.Instances) != 1 {
		t.Fatalf("%+v %v", pg, err)
	}
	if err := e.Act(ctx, pg.Instances[0].ID, mgmt.Suspend); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			id := "N-" + string(rune('a'+i%26)) + string(rune('a'+(i/26)%26)) + string(rune('a'+(i/676)%26))
			_, _ = approvalCall(t, e, p, "requestApproval", map[string]string{"requestId": id, "amount": "1", "requester": "ann", "timeout": "P1D"})
			_, _ = approvalCall(t, e, p, "decide", map[string]string{"requestId": id, "approved": "true", "approver": "bob"})
		}
	}()
	for i := 0; i < 2000; i++ {
		if _, err := approvalCall(t, e, p, "decide", map[string]string{"requestId": "S-0", "approved": "true", "approver": "bob"}); err == nil {
			t.Fatal("a decision for a suspended instance was taken")
		}
	}
	stop.Store(true)
	wg.Wait()
}
