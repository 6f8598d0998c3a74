package cluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/cluster"
	"github.com/orchd/orchd/internal/etcdtest"
)

// TestQuorum stops etcd members under a node: with one of three gone the
// node goes on; with two gone its calls fail with ErrUnavailable within
// OpTimeout; once they are back it works again, and its session (lease
// longer than the outage) survived.
func TestQuorum(t *testing.T) {
	ec := etcdtest.Start(t, 3)
	// The TTL is well over the outage: restarting two embedded members
	// under -race beside the rest of make test once took over 10s, and
	// the session then (rightly) ended.
	n := join(t, ec, "q", "a", "http://a", cluster.Options{TTL: 40 * time.Second, OpTimeout: time.Second})
	cycle := func(id string) error {
		l, err := n.TryAcquire(context.Background(), id)
		if err != nil {
			return err
		}
		return l.Release(context.Background())
	}
	// eventually allows the client a few tries to move off a stopped
	// member's endpoint.
	eventually := func(what, id string) {
		t.Helper()
		var err error
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if err = cycle(id); err == nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("%s: %v", what, err)
	}
	eventually("all members up", "i0")

	ec.Stop(0)
	eventually("one member stopped", "i1")

	ec.Stop(1)
	start := time.Now()
	err := cycle("i2")
	if !errors.Is(err, cluster.ErrUnavailable) {
		t.Fatalf("acquire without quorum = %v, want ErrUnavailable", err)
	}
	t.Logf("without quorum: %v after %v", err, time.Since(start).Round(time.Millisecond))

	ec.Restart(1)
	ec.Restart(0)
	eventually("quorum back", "i3")
	select {
	case <-n.Done():
		t.Fatal("session lost over an outage shorter than its TTL")
	default:
	}
}

// TestQuorumSettlesLocks: a lock whose acquisition or release got no
// answer without quorum (the request may still be applied when quorum
// returns) is not left held by the node that asked: once quorum is back,
// another node takes both instances well before the first node's lease
// would end.
func TestQuorumSettlesLocks(t *testing.T) {
	ec := etcdtest.Start(t, 3)
	opts := cluster.Options{TTL: 30 * time.Second, OpTimeout: time.Second, Reentrant: true}
	a := join(t, ec, "s", "a", "http://a", opts)
	b := join(t, ec, "s", "b", "http://b", opts)
	ctx := context.Background()
	held, err := a.TryAcquire(ctx, "released")
	if err != nil {
		t.Fatal(err)
	}
	ec.Stop(0)
	ec.Stop(1)
	if _, err := a.TryAcquire(ctx, "acquired"); !errors.Is(err, cluster.ErrUnavailable) {
		t.Fatalf("acquire without quorum = %v, want ErrUnavailable", err)
	}
	if err := held.Release(ctx); !errors.Is(err, cluster.ErrUnavailable) {
		t.Fatalf("release without quorum = %v, want ErrUnavailable", err)
	}
	ec.Restart(1)
	ec.Restart(0)
	for _, id := range []string{"acquired", "released"} {
		var err error
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			var l *cluster.Lock
			if l, err = b.TryAcquire(ctx, id); err == nil {
				_ = l.Release(ctx)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			t.Errorf("%s: the other node cannot take it after quorum returned: %v", id, err)
		}
	}
	// a can take them too.
	for _, id := range []string{"acquired", "released"} {
		l, err := a.TryAcquire(ctx, id)
		if err != nil {
			t.Fatalf("%s on a: %v", id, err)
		}
		_ = l.Release(ctx)
	}
}
