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
	n := join(t, ec, "q", "a", "http://a", cluster.Options{TTL: 10 * time.Second, OpTimeout: time.Second})
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
		deadline := time.Now().Add(15 * time.Second)
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
