package cluster

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

var (
	// ErrUnavailable wraps a failed etcd operation that did not get an
	// answer in time: etcd has no quorum, or this node cannot reach it.
	// Nothing was changed by the failed call; it may be retried.
	ErrUnavailable = errors.New("cluster: etcd unavailable (no quorum or unreachable)")
	// ErrHeld is returned by TryAcquire when another node holds the
	// instance; the error text names that node.
	ErrHeld = errors.New("cluster: instance held by another node")
	// ErrLost means the node's session (its lease) expired: every lock,
	// route and election it held is gone and may already be taken by
	// another node. The node must stop running instances and rejoin.
	ErrLost = errors.New("cluster session lost (lease expired)")
	// ErrOwnerGone is returned by Owner when an in-memory route is
	// registered to a node that is no longer live.
	ErrOwnerGone = errors.New("cluster: owner node is gone")
)

// unavailable turns a timeout or an unavailability error of an etcd call
// into ErrUnavailable, keeping the cause; other errors pass unchanged.
func unavailable(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w: %w", op, ErrUnavailable, err)
	}
	code := status.Code(err)
	// The client turns etcd's own errors ("etcdserver: request timed
	// out", "no leader") into rpctypes.EtcdError, which status.Code does
	// not see through.
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		code = ee.Code()
	}
	switch code {
	case codes.Unavailable, codes.DeadlineExceeded:
		return fmt.Errorf("%s: %w: %w", op, ErrUnavailable, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}
