package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// maxNewLocks bounds the lock keys one transaction of AcquireNew creates
// (etcd's default limit is 128 operations per transaction).
const maxNewLocks = 64

// newLocks batches the acquisitions of new instances' locks: while one
// transaction is in flight, those asked for meanwhile wait and go
// together in the next, as the store's group commit does; a lone one
// goes at once.
type newLocks struct {
	mu      sync.Mutex
	queue   []*newLock
	running bool
}

// newLock is one AcquireNew waiting for its batch.
type newLock struct {
	id   string
	l    *Lock
	err  error
	done chan struct{}
}

// AcquireNew takes the lock of a new instance id: one that no other node
// can know of yet (it is in no store), so that nobody holds its lock.
// Concurrent calls share one etcd transaction, a Raft proposal for many
// instances. If the lock is held after all, it waits as Acquire does.
func (n *Node) AcquireNew(ctx context.Context, id string) (*Lock, error) {
	if id == "" || strings.Contains(id, "\x00") {
		return nil, fmt.Errorf("cluster: acquire: bad instance ID %q", id)
	}
	r := &newLock{id: id, done: make(chan struct{})}
	b := &n.newLocks
	b.mu.Lock()
	b.queue = append(b.queue, r)
	lead := !b.running
	b.running = true
	b.mu.Unlock()
	if lead {
		go n.acquireBatches()
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		// Its batch goes on; a lock it got is released.
		go func() {
			<-r.done
			if r.l != nil {
				_ = r.l.Release(context.Background())
			}
		}()
		return nil, fmt.Errorf("cluster: acquire %s: %w", id, ctx.Err())
	}
	if r.err == nil && r.l == nil {
		// Held (the ID was not new after all): wait for it.
		return n.Acquire(ctx, id)
	}
	return r.l, r.err
}

// acquireBatches runs batches until none waits (on its own goroutine:
// no caller waits for others' batches).
func (n *Node) acquireBatches() {
	b := &n.newLocks
	for {
		b.mu.Lock()
		batch := b.queue
		if len(batch) > maxNewLocks {
			batch = batch[:maxNewLocks]
		}
		b.queue = b.queue[len(batch):]
		if len(batch) == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		n.acquireBatch(batch)
		if err := batch[0].err; errors.Is(err, ErrUnavailable) {
			// Those that queued behind it would wait as long for the
			// same answer: they get it now, as when each acquisition
			// was its own Txn.
			b.mu.Lock()
			for _, r := range b.queue {
				r.err = err
			}
			batch = append(batch, b.queue...)
			b.queue = nil
			b.mu.Unlock()
		}
		for _, r := range batch {
			close(r.done)
		}
	}
}

// acquireBatch creates the lock keys of batch in one transaction, if none
// exists. A key that exists leaves its request without a lock (and the
// others are tried one by one).
func (n *Node) acquireBatch(batch []*newLock) {
	fail := func(err error) {
		for _, r := range batch {
			r.err = err
		}
	}
	lease, err := n.lease("cluster: acquire")
	if err != nil {
		fail(err)
		return
	}
	ctx, cancel := n.opCtx(context.Background())
	defer cancel()
	cmps := make([]clientv3.Cmp, len(batch))
	puts := make([]clientv3.Op, len(batch))
	for i, r := range batch {
		key := n.lockKey(r.id)
		cmps[i] = clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
		puts[i] = clientv3.OpPut(key, n.opts.ID, clientv3.WithLease(lease))
	}
	resp, err := n.cli.Txn(ctx).If(cmps...).Then(puts...).Commit()
	if errors.Is(err, rpctypes.ErrLeaseNotFound) {
		fail(fmt.Errorf("cluster: acquire: %w", ErrLost))
		return
	}
	if err = unavailable("cluster: acquire", err); err != nil {
		if errors.Is(err, ErrUnavailable) {
			// The keys may have been created; no run has them.
			for _, r := range batch {
				n.settle(n.lockKey(r.id), clientv3.Compare(clientv3.LeaseValue(n.lockKey(r.id)), "=", lease))
			}
		}
		fail(err)
		return
	}
	if resp.Succeeded {
		for _, r := range batch {
			r.l = &Lock{n: n, key: n.lockKey(r.id), rev: resp.Header.Revision}
		}
		return
	}
	// Some key exists: each request takes its lock on its own.
	for _, r := range batch {
		l, _, err := n.try(ctx, r.id)
		if errors.Is(err, ErrHeld) {
			continue // AcquireNew waits for it
		}
		r.l, r.err = l, err
	}
}
