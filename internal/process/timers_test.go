package process

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/orchd/orchd/internal/process/interp"
)

// TestTimersStopWhenInstancesMoveOn: an approval decided long before its
// timeout leaves no timer behind, in-memory or persistent (a timer used to
// stay in memory until it fell due: days, with the default timeout).
func TestTimersStopWhenInstancesMoveOn(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T) (*Engine, *interp.Version)
	}{
		{"in-memory", approvalInMemory},
		{"persistent", func(t *testing.T) (*Engine, *interp.Version) {
			e, _, procs := persistentEngine(t, filepath.Join(t.TempDir(), "orchd.db"))
			return e, procs["OrderApproval"]
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, ap := tt.setup(t)
			const n = 10
			for i := 0; i < n; i++ {
				id := fmt.Sprintf("TM-%d", i)
				if st, err := approvalCall(t, e, ap, "requestApproval", map[string]string{"requestId": id, "amount": "1", "requester": "ann", "timeout": "PT1H"}); err != nil || st != "PENDING" {
					t.Fatalf("%s: %q %v", id, st, err)
				}
			}
			if got := e.pendingTimers(); got != n {
				t.Fatalf("%d timers pending for %d waiting approvals", got, n)
			}
			for i := 0; i < n; i++ {
				id := fmt.Sprintf("TM-%d", i)
				if st, err := approvalCall(t, e, ap, "decide", map[string]string{"requestId": id, "approved": "true", "approver": "bob"}); err != nil || st != "APPROVED" {
					t.Fatalf("%s decided: %q %v", id, st, err)
				}
			}
			if got := e.pendingTimers(); got != 0 {
				t.Errorf("%d timers pending after every approval was decided", got)
			}
		})
	}
}

// pendingTimers counts the scheduled timers.
func (e *Engine) pendingTimers() int {
	e.timers.mu.Lock()
	defer e.timers.mu.Unlock()
	return len(e.timers.m)
}
