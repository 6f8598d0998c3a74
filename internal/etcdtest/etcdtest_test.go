package etcdtest_test

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/orchd/orchd/internal/etcdtest"
)

func client(t *testing.T, eps []string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

func TestSingleMemberStopRestart(t *testing.T) {
	c := etcdtest.Start(t, 1)
	cli := client(t, c.Endpoints())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Put(ctx, "k", "v1"); err != nil {
		t.Fatal(err)
	}
	c.Stop(0)
	short, cancel2 := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err := cli.Put(short, "k", "v2")
	cancel2()
	if err == nil {
		t.Fatal("put succeeded with the only member stopped")
	}
	c.Restart(0)
	resp, err := cli.Get(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v1" {
		t.Fatalf("after restart k = %v, want v1", resp.Kvs)
	}
}

func TestThreeMembersQuorum(t *testing.T) {
	if testing.Short() {
		t.Skip("3-member cluster")
	}
	c := etcdtest.Start(t, 3)
	if len(c.Endpoints()) != 3 {
		t.Fatalf("endpoints %v", c.Endpoints())
	}
	cli := client(t, c.Endpoints())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c.Stop(2)
	if _, err := cli.Put(ctx, "k", "with-two"); err != nil {
		t.Fatalf("put with 2 of 3 members: %v", err)
	}
	c.Restart(2)
	one := client(t, c.Endpoints()[2:])
	// Linearizable read on the restarted member sees the write made without it.
	resp, err := one.Get(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "with-two" {
		t.Fatalf("restarted member reads %v", resp.Kvs)
	}
}
