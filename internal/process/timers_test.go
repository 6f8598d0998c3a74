package process

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/process/interp"
)

// TestTimersStopWhenInstancesMoveOn: an approval decided long before its
// timeout leaves no timer behind, in-memory or persistent (a timer used to
// stay in memory until it fell due: days, with the default timeout).
func TestTimersStopWhenInstancesMoveOn(t *testing.T) {
	for _, tt := range approvalModes() {
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

// TestTimersPastClockRange: an approval whose timeout is past the clock's
// range (P293Y: after 2262) waits, on the real clock, with no timer
// scheduled for it, until it is decided; one within the range (P200Y)
// keeps a timer that does not fire early. Both used to wrap and expire
// at once.
func TestTimersPastClockRange(t *testing.T) {
	for _, tt := range approvalModes() {
		t.Run(tt.name, func(t *testing.T) {
			e, ap := tt.setup(t)
			for i, tc := range []struct {
				timeout string
				timers  int
			}{{"P293Y", 0}, {"PT9223372036S", 0}, {"P10000Y", 0}, {"P200Y", 1}} {
				id := fmt.Sprintf("TR-%d", i)
				if st, err := approvalCall(t, e, ap, "requestApproval", map[string]string{"requestId": id, "amount": "1", "requester": "ann", "timeout": tc.timeout}); err != nil || st != "PENDING" {
					t.Fatalf("%s (%s): %q %v", id, tc.timeout, st, err)
				}
				if got := e.pendingTimers(); got != tc.timers {
					t.Errorf("%s: %d timers pending, want %d", tc.timeout, got, tc.timers)
				}
				time.Sleep(time.Second)
				if st, err := approvalCall(t, e, ap, "decide", map[string]string{"requestId": id, "approved": "true", "approver": "bob"}); err != nil || st != "APPROVED" {
					t.Fatalf("%s (%s) decided a second later: %q %v", id, tc.timeout, st, err)
				}
			}
		})
	}
}

// approvalModes are the approval process's two setups, in-memory and
// persistent on a fresh store.
func approvalModes() []struct {
	name  string
	setup func(t *testing.T) (*Engine, *interp.Version)
} {
	return []struct {
		name  string
		setup func(t *testing.T) (*Engine, *interp.Version)
	}{
		{"in-memory", approvalInMemory},
		{"persistent", func(t *testing.T) (*Engine, *interp.Version) {
			e, _, procs := persistentEngine(t, filepath.Join(t.TempDir(), "orchd.db"))
			return e, procs["OrderApproval"]
		}},
	}
}
