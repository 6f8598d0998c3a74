package cluster

import (
	"context"
	"errors"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestUnavailable: every way the etcd client says "no answer" becomes
// ErrUnavailable, including etcd's own errors, which the client turns
// into rpctypes.EtcdError; other errors do not.
func TestUnavailable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{context.DeadlineExceeded, true},
		{status.Error(codes.Unavailable, "connection refused"), true},
		{rpctypes.ErrTimeout, true}, // "etcdserver: request timed out", without quorum
		{rpctypes.ErrNoLeader, true},
		{rpctypes.ErrTimeoutDueToLeaderFail, true},
		{rpctypes.ErrKeyNotFound, false},
		{errors.New("other"), false},
	} {
		if got := errors.Is(unavailable("op", c.err), ErrUnavailable); got != c.want {
			t.Errorf("unavailable(%v) is ErrUnavailable: %v, want %v", c.err, got, c.want)
		}
	}
}
