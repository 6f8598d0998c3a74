package clusternode

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/orchd/orchd/internal/cluster"
)

// Replay is the UsernameToken replay store of a cluster node
// (compile.LoadOptions.Replay, a wssec.ReplayStore): the cluster's,
// shared by every node (cluster.Nonces), once the node joined (Attach).
// The bundles are compiled, and their Authenticators made, before the
// node joins; until then (no request is served yet) a token with a
// nonce is refused.
type Replay struct {
	nonces atomic.Pointer[cluster.Nonces]
}

// errNotJoined is a nonce checked before the node joined its cluster.
var errNotJoined = errors.New("this node has not joined its cluster yet")

// Add implements wssec.ReplayStore.
func (r *Replay) Add(key string, until time.Time) (bool, error) {
	n := r.nonces.Load()
	if n == nil {
		return false, errNotJoined
	}
	return n.Add(key, until)
}

// Attach makes n the store's nonces: from now on a nonce one node took
// is refused on every node.
func (r *Replay) Attach(n *cluster.Nonces) { r.nonces.Store(n) }
