package interp

import (
	"time"

	"github.com/orchd/orchd/internal/persist"
)

// What the host reads of an instance it holds: its identity, its version,
// its lock and the few facts routing and timers decide on. Everything
// else a reader wants is in the instance's Snapshot.

// Version is the deployed version the instance runs on.
func (in *Instance) Version() *Version { return in.proc }

// Lock and Unlock take and release the instance's lock, which a run and
// every reader of the instance hold; TryLock takes it if it is free.
func (in *Instance) Lock()         { in.mu.Lock() }
func (in *Instance) Unlock()       { in.mu.Unlock() }
func (in *Instance) TryLock() bool { return in.mu.TryLock() }

// Correlations are the values of the instance's initiated correlation
// sets (set name -> values key); the caller must not change them.
func (in *Instance) Correlations() map[string]string { return in.corr }

// WaitsForTimer reports whether the instance (blocked, or loaded waiting)
// waits for its timer due at due.
func (in *Instance) WaitsForTimer(due int64) bool {
	return in.wake == due && (in.proc.InMemory || in.state == stateWaiting)
}

// StoredState is the state of the instance's last checkpoint (persistent
// instances).
func (in *Instance) StoredState() persist.State { return in.state }

// IsSuspended reports whether an operator suspended the in-memory
// instance, or the loaded persistent one is stored suspended.
func (in *Instance) IsSuspended() bool {
	return in.suspended || (!in.proc.InMemory && in.state == persist.Suspended)
}

// Suspension says why the instance is suspended: a failed activity's
// reason, or "" (suspended by an operator).
func (in *Instance) Suspension() string { return in.suspendReason }

// Name gives an in-memory instance its id from next, if it has none yet;
// it returns the id.
func (in *Instance) Name(next func() string) string {
	if in.id == "" {
		in.id = next()
	}
	return in.id
}

// StartedAt is when the instance was created.
func (in *Instance) StartedAt() time.Time { return in.started }

// ID is the instance's id ("" for an in-memory instance nothing has
// named yet).
func (in *Instance) ID() string { return in.id }
