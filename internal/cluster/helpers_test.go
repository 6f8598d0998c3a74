package cluster_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/orchd/orchd/internal/cluster"
	"github.com/orchd/orchd/internal/etcdtest"
)

// ttl is the lease time of test nodes: etcd's smallest useful lease with
// the embedded servers' default election timeout.
const ttl = 2 * time.Second

// testNode is one "orchd node" in the test process: its own etcd client
// (so killing it cuts only its connection) and its cluster membership.
type testNode struct {
	*cluster.Node
	cli *clientv3.Client
}

func newClient(t *testing.T, eps []string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 5 * time.Second, Logger: nil})
	if err != nil {
		t.Fatalf("etcd client: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

func join(t *testing.T, ec *etcdtest.Cluster, name, id, url string, opts cluster.Options) *testNode {
	t.Helper()
	cli := newClient(t, ec.Endpoints())
	opts.Cluster, opts.ID, opts.URL = name, id, url
	if opts.TTL == 0 {
		opts.TTL = ttl
	}
	if opts.OpTimeout == 0 {
		opts.OpTimeout = 2 * time.Second
	}
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := cluster.Join(ctx, cli, opts)
	if err != nil {
		t.Fatalf("join %s: %v", id, err)
	}
	tn := &testNode{Node: n, cli: cli}
	t.Cleanup(func() {
		select {
		case <-n.Done():
		default:
			n.Close()
		}
	})
	return tn
}

// kill simulates a crashed node: its connection to etcd goes away without
// revoking its lease, so everything it held stays until the lease expires.
func (tn *testNode) kill() { tn.cli.Close() }

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func memberIDs(n *cluster.Node) string {
	ms, _ := n.Members()
	return fmt.Sprint(ms)
}
