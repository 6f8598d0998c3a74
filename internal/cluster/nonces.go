package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Nonces is the replay store of WS-Security UsernameToken nonces that
// the nodes of a cluster share (a wssec.ReplayStore): a token accepted
// by one node is refused when it is sent again to any node, as one
// orchd refuses it. Each nonce is a key nonces/<key> under the
// cluster's prefix, put only if absent in one Txn (the comparison and
// the put are one round trip, so two nodes taking the same token at
// once accept it once), attached to a lease that ends after the
// nonce's window. Leases are shared: nonces whose windows end within
// the same nonceLeaseStep share one lease, so steady traffic grants one
// lease per step, not one per token. The keys are no node's: a node
// that leaves takes none of them with it.
type Nonces struct {
	cli     *clientv3.Client
	pfx     string
	timeout time.Duration
	now     func() time.Time

	mu     sync.Mutex
	leases map[int64]clientv3.LeaseID // by the step (Unix seconds / nonceLeaseStep) their lease ends at
}

// nonceLeaseStep is the granularity of the nonces' leases: a nonce is
// remembered up to this much longer than asked.
const nonceLeaseStep = 10 * time.Second

// NewNonces returns the nonce store of cluster name (keys under
// Prefix(name)) through cli, each etcd call bounded by timeout (zero:
// 3s).
func NewNonces(cli *clientv3.Client, name string, timeout time.Duration) *Nonces {
	if timeout <= 0 {
		timeout = 3 * time.Second
	}
	return &Nonces{cli: cli, pfx: Prefix(name) + "nonces/", timeout: timeout, now: time.Now, leases: map[int64]clientv3.LeaseID{}}
}

// Add records key until until (put if absent, under a lease lasting at
// least that long) and reports whether another Add, on any node,
// recorded it already.
func (n *Nonces) Add(key string, until time.Time) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), n.timeout)
	defer cancel()
	for attempt := 0; ; attempt++ {
		lease, err := n.lease(ctx, until)
		if err != nil {
			return false, err
		}
		k := n.pfx + key
		resp, err := n.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(k), "=", 0)).
			Then(clientv3.OpPut(k, "", clientv3.WithLease(lease))).
			Commit()
		if errors.Is(err, rpctypes.ErrLeaseNotFound) && attempt == 0 {
			n.forget(lease) // expired or revoked under us: grant another
			continue
		}
		if err != nil {
			return false, fmt.Errorf("cluster nonces: %w", err)
		}
		return !resp.Succeeded, nil
	}
}

// lease returns a lease that lasts at least until until, granting one
// for until's step when there is none yet.
func (n *Nonces) lease(ctx context.Context, until time.Time) (clientv3.LeaseID, error) {
	step := int64(nonceLeaseStep / time.Second)
	end := until.Unix()/step + 1 // the lease ends at the step after until's
	n.mu.Lock()
	if id, ok := n.leases[end]; ok {
		n.mu.Unlock()
		return id, nil
	}
	n.mu.Unlock()
	now := n.now()
	ttl := end*step - now.Unix() + 1
	resp, err := n.cli.Grant(ctx, ttl)
	if err != nil {
		return 0, fmt.Errorf("cluster nonces: grant a lease of %ds: %w", ttl, err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if id, ok := n.leases[end]; ok {
		// Another Add granted one meanwhile: use it, and let this
		// one expire (it holds nothing).
		return id, nil
	}
	n.leases[end] = resp.ID
	for e := range n.leases {
		if e*step < now.Unix() {
			delete(n.leases, e) // ended
		}
	}
	return resp.ID, nil
}

// forget drops lease from the cache.
func (n *Nonces) forget(lease clientv3.LeaseID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for e, id := range n.leases {
		if id == lease {
			delete(n.leases, e)
		}
	}
}
