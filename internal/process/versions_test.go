package process

import (
	"bytes"
	"testing"

	"github.com/orchd/orchd/internal/process/interp"
)

// A redeploy retires the version it replaces: a message for an instance
// that started on the old version reaches it (through the new version's
// endpoint), new instances start on the new version, and the old version
// is dropped once its last instance ended.
func TestRedeployKeepsInstancesOnTheirVersion(t *testing.T) {
	e, v1 := approvalInMemory(t)
	if st, err := approvalCall(t, e, v1, "requestApproval", map[string]string{"requestId": "OLD", "amount": "10", "requester": "ann"}); err != nil || st != "PENDING" {
		t.Fatalf("request on v1: %q %v", st, err)
	}
	_, v2 := approvalInMemory(t) // compiled again: another *Process, same paths
	gone, err := e.Redeploy(func(b string) bool { return b == v1.Bundle }, v2)
	if err != nil || len(gone) != 1 || gone[0] != v1 {
		t.Fatalf("Redeploy: retired %v, err %v", gone, err)
	}
	if ps := e.Processes(); len(ps) != 1 || ps[0] != v2 {
		t.Fatalf("active after redeploy: %v", ps)
	}
	if st, err := approvalCall(t, e, v2, "requestApproval", map[string]string{"requestId": "NEW", "amount": "10", "requester": "ann"}); err != nil || st != "PENDING" {
		t.Fatalf("request on v2: %q %v", st, err)
	}
	if dropped, err := e.DropUnused(0); err != nil || len(dropped) != 0 {
		t.Fatalf("DropUnused with an instance on v1 waiting: %v %v", dropped, err)
	}
	e.reg.mu.Lock()
	versions := map[string]*interp.Version{}
	for _, in := range e.reg.live {
		versions[in.Correlations()["byRequest"]] = in.Version()
	}
	e.reg.mu.Unlock()
	// Through v2's endpoint, the decision reaches the instance on v1.
	if st, err := approvalCall(t, e, v2, "decide", map[string]string{"requestId": "OLD", "approved": "true", "approver": "bob"}); err != nil || st != "APPROVED" {
		t.Fatalf("decide OLD: %q %v (live instances by version: %v)", st, err, versions)
	}
	// Through v1's endpoint, no longer served, a request goes to v2.
	if st, err := approvalCall(t, e, v1, "decide", map[string]string{"requestId": "NEW", "approved": "false", "approver": "bob"}); err != nil || st != "REJECTED" {
		t.Fatalf("decide NEW through v1's endpoint: %q %v", st, err)
	}
	dropped, err := e.DropUnused(0)
	if err != nil || len(dropped) != 1 || dropped[0] != v1 || len(e.Retired()) != 0 {
		t.Fatalf("DropUnused after v1's instance ended: %v %v, retired %v", dropped, err, e.Retired())
	}
}

// A redeploy that cannot be made changes nothing.
func TestRedeployAllOrNothing(t *testing.T) {
	e, v1 := approvalInMemory(t)
	_, v2 := approvalInMemory(t)
	_, v3 := approvalInMemory(t)
	v3.InMemory = false // no store: refused
	for _, tc := range []struct {
		name   string
		retire func(string) bool
		procs  []*interp.Version
		want   string
	}{
		{"path taken by a bundle not retired", func(string) bool { return false }, []*interp.Version{v2}, "already served"},
		{"persistent without a store", func(string) bool { return true }, []*interp.Version{v3}, "no data store"},
		{"one good, one bad", func(string) bool { return true }, []*interp.Version{v2, v3}, "no data store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gone, err := e.Redeploy(tc.retire, tc.procs...)
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) || gone != nil {
				t.Fatalf("Redeploy: %v %v, want an error with %q", gone, err, tc.want)
			}
			if ps := e.Processes(); len(ps) != 1 || ps[0] != v1 || len(e.Retired()) != 0 {
				t.Fatalf("after the failed redeploy: active %v retired %v", ps, e.Retired())
			}
		})
	}
}

// Undeploy stops serving a bundle's endpoints.
func TestUndeploy(t *testing.T) {
	e, p := approvalInMemory(t)
	if gone := e.Undeploy(p.Bundle); len(gone) != 1 || gone[0] != p || len(e.Processes()) != 0 {
		t.Fatalf("Undeploy: %v, active %v", gone, e.Processes())
	}
	if _, err := approvalCall(t, e, p, "requestApproval", map[string]string{"requestId": "X", "amount": "1", "requester": "x"}); err == nil {
		t.Fatalf("an undeployed process took a request")
	}
}
