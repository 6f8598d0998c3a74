package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Lock is this node's hold on one instance: the key /orchd/<cluster>/locks/<id>
// created with the node's lease. It lasts until Release, or until the
// node's lease expires.
type Lock struct {
	n   *Node
	key string
	rev int64 // create revision of the lock key: the fencing token
	// releaseNext says the next commit that carries the lock deletes its
	// key (ReleaseWithNext), released that one did. They are used by one
	// run at a time, and by the commit it waits for.
	releaseNext, released bool
}

// Fence is the comparison a commit of the instance must carry in its etcd
// transaction: it holds only while this very lock key exists (same create
// revision), so a node whose lease expired in the middle of a run, and
// whose instance another node has since taken, cannot commit stale state.
func (l *Lock) Fence() clientv3.Cmp {
	return clientv3.Compare(clientv3.CreateRevision(l.key), "=", l.rev)
}

// FenceOps are the writes of the lock in the commit that carries it: the
// delete of its key when it is released with that commit
// (ReleaseWithNext), under the commit's fence.
func (l *Lock) FenceOps() []clientv3.Op {
	if l.releaseNext && !l.released {
		return []clientv3.Op{clientv3.OpDelete(l.key)}
	}
	return nil
}

// FenceDone takes the outcome of the commit that carried the lock: a
// release with it happened if err is nil; else Release deletes the key as
// usual (and settles it when etcd does not answer).
func (l *Lock) FenceDone(_ int64, err error) {
	if l.releaseNext && err == nil {
		l.released = true
	}
	l.releaseNext = false
}

// ReleaseWithNext makes the next commit that carries the lock delete its
// key in that commit's transaction: a run's last checkpoint releases the
// lock without a transaction of its own.
func (l *Lock) ReleaseWithNext() { l.releaseNext = true }

// Revision is the lock's fencing token: the etcd revision that created it.
// It grows with every acquisition of any lock.
func (l *Lock) Revision() int64 { return l.rev }

// Release deletes the lock key if it is still this lock. Releasing twice,
// after the lease expired, or after a commit released it
// (ReleaseWithNext), is not an error.
func (l *Lock) Release(ctx context.Context) error {
	if l.released {
		return nil
	}
	ctx, cancel := l.n.opCtx(ctx)
	defer cancel()
	_, err := l.n.cli.Txn(ctx).If(l.Fence()).Then(clientv3.OpDelete(l.key)).Commit()
	if err = unavailable("cluster: release "+l.key, err); errors.Is(err, ErrUnavailable) {
		// Not released, or released: either way it must go, and not
		// only when the lease ends (never, while this node lives).
		l.n.settle(l.key, l.Fence())
	}
	return err
}

// settleRetry is how long settle waits between two tries.
const settleRetry = 500 * time.Millisecond

// settle deletes, in the background, the lock key of an acquisition or
// release whose outcome this node does not know (etcd did not answer in
// time: a Txn proposed without quorum may still be applied when quorum
// returns), if cmp holds: a lock left held by this node that no run of it
// knows about would keep every other node from the instance for as long
// as this node lives. It tries until etcd answers or the session ends;
// meanwhile acquisitions of the instance on this node wait (try), so a
// lock taken back with Reentrant is never deleted under its run. Raft
// applies the delete after any earlier proposal of the lost request. (If
// the lease ended meanwhile, the key went with it and cmp fails.)
func (n *Node) settle(key string, cmp clientv3.Cmp) {
	n.settleMu.Lock()
	if n.settling == nil {
		n.settling = map[string]chan struct{}{}
	}
	if n.settling[key] != nil {
		n.settleMu.Unlock()
		return
	}
	done := make(chan struct{})
	n.settling[key] = done
	n.settleMu.Unlock()
	go func() {
		defer func() {
			n.settleMu.Lock()
			delete(n.settling, key)
			n.settleMu.Unlock()
			close(done)
		}()
		for {
			ctx, cancel := context.WithTimeout(context.Background(), n.opts.OpTimeout)
			_, err := n.cli.Txn(ctx).If(cmp).Then(clientv3.OpDelete(key)).Commit()
			cancel()
			if err == nil {
				return
			}
			select {
			case <-n.closing.Done():
				return // Close revokes the lease, and every key held with it
			case <-time.After(settleRetry):
			}
		}
	}()
}

// settled waits until no settle of key is in progress, or ctx ends.
func (n *Node) settled(ctx context.Context, key string) error {
	n.settleMu.Lock()
	done := n.settling[key]
	n.settleMu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (n *Node) lockKey(id string) string { return n.pfx + "locks/" + id }

// TryAcquire takes instance id for this node if no node holds it, in one
// etcd transaction (create the lock key with the node's lease if it does
// not exist). If another node holds it, the error wraps ErrHeld.
// Acquiring an instance this node already holds also fails with ErrHeld,
// unless Options.Reentrant.
func (n *Node) TryAcquire(ctx context.Context, id string) (*Lock, error) {
	ctx, cancel := n.opCtx(ctx)
	defer cancel()
	l, _, err := n.try(ctx, id)
	return l, err
}

// try returns the lock, or the revision at which it was seen held.
func (n *Node) try(ctx context.Context, id string) (*Lock, int64, error) {
	if id == "" || strings.Contains(id, "\x00") {
		return nil, 0, fmt.Errorf("cluster: acquire: bad instance ID %q", id)
	}
	lease, err := n.lease("cluster: acquire " + id)
	if err != nil {
		return nil, 0, err
	}
	key := n.lockKey(id)
	if err := n.settled(ctx, key); err != nil {
		return nil, 0, unavailable("cluster: acquire "+id+": an earlier lock not settled", err)
	}
	resp, err := n.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, n.opts.ID, clientv3.WithLease(lease))).
		Else(clientv3.OpGet(key)).
		Commit()
	if errors.Is(err, rpctypes.ErrLeaseNotFound) {
		// The lease ended on the server before this node noticed.
		return nil, 0, fmt.Errorf("cluster: acquire %s: %w", id, ErrLost)
	}
	if err = unavailable("cluster: acquire "+id, err); err != nil {
		if errors.Is(err, ErrUnavailable) && n.opts.Reentrant {
			// The lock may have been created; no run of this node has
			// it. (Without Reentrant a lock of another run of this node
			// could not be told from it: it stays until the lease ends.)
			n.settle(key, clientv3.Compare(clientv3.LeaseValue(key), "=", lease))
		}
		return nil, 0, err
	}
	if resp.Succeeded {
		return &Lock{n: n, key: key, rev: resp.Header.Revision}, 0, nil
	}
	owner := "?"
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
		kv := kvs[0]
		if n.opts.Reentrant && clientv3.LeaseID(kv.Lease) == lease {
			return &Lock{n: n, key: key, rev: kv.CreateRevision}, 0, nil
		}
		owner = string(kv.Value)
	}
	return nil, resp.Header.Revision, fmt.Errorf("cluster: acquire %s: %w (%s)", id, ErrHeld, owner)
}

// Acquire takes instance id for this node, waiting while another node
// holds it (until that node releases it or its lease expires) or until
// ctx ends. Unlike TryAcquire it is not bounded by Options.OpTimeout: the
// caller's context says how long a message may wait for its instance.
func (n *Node) Acquire(ctx context.Context, id string) (*Lock, error) {
	for {
		octx, cancel := n.opCtx(ctx)
		l, rev, err := n.try(octx, id)
		cancel()
		if err == nil || rev == 0 {
			return l, err
		}
		// Held: wait for the key's deletion after the revision we saw.
		done := n.Done()
		wctx, wcancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		wch := n.cli.Watch(wctx, n.lockKey(id), clientv3.WithRev(rev+1), clientv3.WithFilterPut())
		select {
		case <-wch:
		case <-done:
		case <-ctx.Done():
		}
		wcancel()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("cluster: acquire %s: %w", id, ctx.Err())
		}
	}
}

// Holders maps every instance whose lock is held now to the ID of the
// node holding it (one read of the locks' prefix).
func (n *Node) Holders(ctx context.Context) (map[string]string, error) {
	ctx, cancel := n.opCtx(ctx)
	defer cancel()
	pfx := n.pfx + "locks/"
	resp, err := n.cli.Get(ctx, pfx, clientv3.WithPrefix())
	if err != nil {
		return nil, unavailable("cluster: lock holders", err)
	}
	out := make(map[string]string, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		out[strings.TrimPrefix(string(kv.Key), pfx)] = string(kv.Value)
	}
	return out, nil
}
