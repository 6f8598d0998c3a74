package process

import (
	"context"

	"github.com/orchd/orchd/internal/persist"
)

// Store is what the engine needs of the instance store; *persist.Store
// implements it. Only persistent processes use it.
type Store interface {
	Commit(cps ...*persist.Checkpoint) error
	Instance(id string) (*persist.Instance, map[int][]byte, error)
	Route(key string) (string, bool, error)
	Instances(fn func(*persist.Instance) bool) error
	Timers(fn func(persist.Timer) bool) error
	Outbox(fn func(persist.OutboxMessage) bool) error
	AckOutbox(seq uint64) error
	// ScanInstances and InstanceTimers serve the management API's
	// listings and details (mgmt_instances.go).
	ScanInstances(sc persist.Scan, fn func(*persist.InstanceView) bool) (persist.ScanResult, error)
	InstanceTimers(id string) ([]persist.Timer, error)
}

// InstanceOwners lets one orchd process at a time run a persistent
// instance when several share one store. The engine calls Acquire after
// its own per-instance lock, before it loads the instance, around every
// run, timer, recovery and operator action, and release when it is done;
// an error fails that run before it starts (a Server fault for a
// message). Acquire may wait while another process holds id.
//
// fence is the lock's token: every checkpoint of the run carries it
// (persist.Checkpoint.Fence), and a store shared by the processes commits
// the checkpoint only while the lock still holds, so a process that lost
// the lock in the middle of a run (paused past its lease) cannot write
// over what another stored since. Such a failed commit is a failed run,
// as any other: nothing acknowledged, the client gets a Server fault, the
// run's state in memory is dropped.
type InstanceOwners interface {
	Acquire(ctx context.Context, id string) (release func(), fence any, err error)
}

// InstanceClaimer is InstanceOwners that owns a new instance more
// cheaply than Acquire can any: a new instance's id is known to no other
// process until its first checkpoint commits, so nobody holds its lock,
// and the locks of concurrent new instances can be taken together (one
// etcd transaction for many). release and fence are as Acquire's.
type InstanceClaimer interface {
	Claim(ctx context.Context, id string) (release func(), fence any, err error)
}

// releasingFence is a fence that can give up its lock in the run's last
// checkpoint (cluster.Lock): finish asks it to, for the runs whose last
// commit it is (instance.foldRelease); release then has nothing left to
// do, or does it as usual if that commit failed.
type releasingFence interface{ ReleaseWithNext() }
