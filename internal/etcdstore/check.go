package etcdstore

import (
	"context"
	"fmt"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/orchd/orchd/internal/persist"
)

// CheckReport is what Check found: persist's report on the store's
// buckets, and the cluster's keys.
type CheckReport struct {
	persist.VerifyReport
	// Revision is the etcd revision every key was read at.
	Revision int64
	// Members counts the live nodes of the cluster, Locks the instance
	// locks held (zero without a cluster prefix).
	Members, Locks int
	// OutboxOrphans counts outbox messages whose instance does not exist.
	// They are not problems: an instance deleted on completion records its
	// last RELIABLE sends in the same commit, and they outlive it until
	// sent (persist.Checkpoint); where nothing is deleted they are.
	OutboxOrphans int
}

// String summarizes the report on one line.
func (r CheckReport) String() string {
	return fmt.Sprintf("%s members=%d locks=%d outbox-orphans=%d", r.VerifyReport, r.Members, r.Locks, r.OutboxOrphans)
}

// Check reads the whole store at one etcd revision and cross-checks it as
// persist.Check does a bbolt file (persist.VerifyBuckets: routes and
// timers of missing or finished instances, index entries and variables of
// missing instances, undecodable records). With clusterPrefix (the
// cluster's key prefix, cluster.Prefix) it also checks the cluster's
// instance locks at that revision: a lock whose node is not a live member,
// or that is held with another lease than the member's, is stale. It reads
// every key, so it is for tests and operators, not for a hot path.
//
// The error is nil when nothing was found, wraps persist.ErrCorrupt
// naming the first problems when something was, and wraps ErrUnavailable
// when etcd does not answer.
func (s *Store) Check(ctx context.Context, clusterPrefix string) (CheckReport, error) {
	var rep CheckReport
	if err := s.enter(); err != nil {
		return rep, err
	}
	defer s.inflight.Done()
	read := func(pre string) (*snapBucket, error) {
		b := &snapBucket{m: map[string][]byte{}}
		err := s.scan(ctx, pre, &rep.Revision, false, func(k, v []byte) (bool, error) {
			if v == nil {
				v = []byte{} // present, as bbolt's Get has it (etcd returns nil for empty values)
			}
			b.keys = append(b.keys, string(k))
			b.m[string(k)] = v
			return true, nil
		})
		return b, err
	}
	var bk [6]*snapBucket
	for i, name := range []string{bInstances, bVars, bRoutes, bTimers, bIndex, bOutbox} {
		b, err := read(s.prefix + name)
		if err != nil {
			return rep, err
		}
		bk[i] = b
	}
	rep.VerifyReport = persist.VerifyBuckets(persist.Buckets{Instances: bk[0], Vars: bk[1], Routes: bk[2],
		Timers: bk[3], Index: bk[4], Outbox: bk[5]})
	for _, k := range bk[5].keys {
		if m, err := persist.DecodeOutbox([]byte(k), bk[5].m[k]); err == nil && bk[0].m[m.InstanceID] == nil {
			rep.OutboxOrphans++
		}
	}
	if clusterPrefix != "" {
		if err := s.checkLocks(ctx, clusterPrefix, &rep); err != nil {
			return rep, err
		}
	}
	if rep.NProblems > 0 {
		return rep, fmt.Errorf("etcdstore: %w: %s at revision %d: %d inconsistencies: %s", persist.ErrCorrupt,
			s.Path(), rep.Revision, rep.NProblems, strings.Join(rep.Problems, "; "))
	}
	return rep, nil
}

// checkLocks finds the stale instance locks under the cluster prefix.
func (s *Store) checkLocks(ctx context.Context, pre string, rep *CheckReport) error {
	leases := map[string]int64{} // live node ID -> its lease
	get := func(sub string) (*clientv3.GetResponse, error) {
		ctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
		defer cancel()
		resp, err := s.cli.Get(ctx, pre+sub, clientv3.WithPrefix(), clientv3.WithRev(rep.Revision))
		if err != nil {
			return nil, unavailable("check "+pre+sub, err)
		}
		return resp, nil
	}
	nodes, err := get("nodes/")
	if err != nil {
		return err
	}
	for _, kv := range nodes.Kvs {
		leases[strings.TrimPrefix(string(kv.Key), pre+"nodes/")] = kv.Lease
	}
	rep.Members = len(leases)
	locks, err := get("locks/")
	if err != nil {
		return err
	}
	for _, kv := range locks.Kvs {
		rep.Locks++
		id, node := strings.TrimPrefix(string(kv.Key), pre+"locks/"), string(kv.Value)
		switch lease, live := leases[node]; {
		case !live:
			rep.Problem("lock of instance %q is held by %q, which is not a live node", id, node)
		case lease != kv.Lease:
			rep.Problem("lock of instance %q is held by %q with lease %x, not the node's lease %x", id, node, kv.Lease, lease)
		}
	}
	return nil
}

// snapBucket is one bucket read by Check, in key order.
type snapBucket struct {
	keys []string
	m    map[string][]byte
}

func (b *snapBucket) Get(key []byte) []byte { return b.m[string(key)] }

func (b *snapBucket) ForEach(fn func(k, v []byte) error) error {
	for _, k := range b.keys {
		if err := fn([]byte(k), b.m[k]); err != nil {
			return err
		}
	}
	return nil
}
