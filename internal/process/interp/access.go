package interp

import (
	"time"

	"github.com/orchd/orchd/internal/persist"
)

// What the host reads of an instance it holds: its identity, its version,
// its lock and the few facts routing and timers decide on. Everything
// else a reader wants is in the instance's Snapshot.

// Version is the deployed version the instance runs on.
func (in *Instance) Version() *Version { return in.Proc }

// Lock and Unlock take and release the instance's lock, which a run and
// every reader of the instance hold; TryLock takes it if it is free.
func (in *Instance) Lock()         { in.Mu.Lock() }
func (in *Instance) Unlock()       { in.Mu.Unlock() }
func (in *Instance) TryLock() bool { return in.Mu.TryLock() }

// Correlations are the values of the instance's initiated correlation
// sets (set name -> values key); the caller must not change them.
func (in *Instance) Correlations() map[string]string { return in.Corr }

// WaitsForTimer reports whether the instance (blocked, or loaded waiting)
// waits for its timer due at due.
func (in *Instance) WaitsForTimer(due int64) bool {
	return in.Wake == due && (in.Proc.InMemory || in.State == StateWaiting)
}

// StoredState is the state of the instance's last checkpoint (persistent
// instances).
func (in *Instance) StoredState() persist.State { return in.State }

// IsSuspended reports whether an operator suspended the in-memory
// instance, or the loaded persistent one is stored suspended.
func (in *Instance) IsSuspended() bool {
	return in.Suspended || (!in.Proc.InMemory && in.State == persist.Suspended)
}

// Suspension says why the instance is suspended: a failed activity's
// reason, or "" (suspended by an operator).
func (in *Instance) Suspension() string { return in.SuspendReason }

// Name gives an in-memory instance its id from next, if it has none yet;
// it returns the id.
func (in *Instance) Name(next func() string) string {
	if in.ID == "" {
		in.ID = next()
	}
	return in.ID
}

// StartedAt is when the instance was created.
func (in *Instance) StartedAt() time.Time { return in.Started }
