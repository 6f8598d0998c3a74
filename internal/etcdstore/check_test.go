package etcdstore_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/orchd/orchd/internal/cluster"
	"github.com/orchd/orchd/internal/etcdstore"
	"github.com/orchd/orchd/internal/etcdtest"
	"github.com/orchd/orchd/internal/persist"
)

// TestCheck builds a consistent store with a cluster node holding a lock,
// checks it clean, then writes one orphan of each kind Check must find
// with a raw client and checks that each is named.
func TestCheck(t *testing.T) {
	c := etcdtest.Start(t, 1)
	const pfx = "/orchd/chk/"
	st, err := etcdstore.Open(etcdstore.Options{Endpoints: c.Endpoints(), Prefix: pfx})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	node, err := cluster.Join(ctx, st.Client(), cluster.Options{Cluster: "chk", ID: "n1", URL: "http://n1",
		TTL: 10 * time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()

	due := time.Unix(1800000000, 0)
	commit(t, st, &persist.Checkpoint{Instance: inst("W", persist.Waiting), Vars: map[int][]byte{1: []byte("<v/>")},
		AddRoutes: []persist.Route{{Key: "rw"}}, AddTimers: []persist.Timer{{Due: due, Tag: "t"}}})
	commit(t, st, &persist.Checkpoint{Instance: inst("C", persist.Completed)})
	commit(t, st, &persist.Checkpoint{Instance: inst("D", persist.Waiting)})
	commit(t, st, &persist.Checkpoint{Instance: persist.Instance{ID: "D"}, Delete: true,
		Outbox: []persist.OutboxMessage{{Partner: "p", Operation: "o"}}})
	l, err := node.TryAcquire(ctx, "W")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := st.Check(ctx, cluster.Prefix("chk"))
	if err != nil {
		t.Fatalf("consistent store: %v", err)
	}
	if rep.Instances != 2 || rep.Routes != 1 || rep.Timers != 1 || rep.Outbox != 1 || rep.OutboxOrphans != 1 ||
		rep.Members != 1 || rep.Locks != 1 || rep.NProblems != 0 {
		t.Fatalf("consistent store: %s", rep)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}

	// One orphan of each kind, written behind the store's back.
	cli := st.Client()
	lease, err := cli.Grant(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	gone := persist.TimerKey(&persist.Timer{Due: due, InstanceID: "gone", Tag: "t"})
	late := persist.TimerKey(&persist.Timer{Due: due, InstanceID: "C", Tag: "t"})
	raw := []clientv3.Op{
		clientv3.OpPut(pfx+"routes/rx", "gone"),
		clientv3.OpPut(pfx+"routes/rc", "C"),
		clientv3.OpPut(pfx+"timers/"+string(gone), ""),
		clientv3.OpPut(pfx+"timers/"+string(late), ""),
		clientv3.OpPut(pfx+"index/"+string(persist.IndexKey("C", persist.IndexTimer, late)), ""),
		clientv3.OpPut(pfx+"vars/"+string(persist.VarKey("gone", 1)), "<v/>"),
		clientv3.OpPut(cluster.Prefix("chk")+"locks/X", "ghost"),
		clientv3.OpPut(cluster.Prefix("chk")+"locks/Y", "n1", clientv3.WithLease(lease.ID)),
	}
	if _, err := cli.Txn(ctx).Then(raw...).Commit(); err != nil {
		t.Fatal(err)
	}
	rep, err = st.Check(ctx, cluster.Prefix("chk"))
	if !errors.Is(err, persist.ErrCorrupt) {
		t.Fatalf("store with orphans: %v, want ErrCorrupt", err)
	}
	for _, want := range []string{
		`route "rx" points to missing instance "gone"`,
		`route "rc" points to instance "C" in state completed`,
		`points to missing instance "gone"`,  // the timer
		`of instance "C" in state completed`, // the timer of a finished instance
		`variable "\x00\x00\x00\x01" belongs to missing instance "gone"`,
		`lock of instance "X" is held by "ghost", which is not a live node`,
		`lock of instance "Y" is held by "n1" with lease`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Check did not report %q:\n%v", want, err)
		}
	}
	if rep.NProblems != 7 || rep.Locks != 2 {
		t.Errorf("report %s, want 7 problems and 2 locks:\n%v", rep, err)
	}
	// Without the cluster prefix, locks are not looked at.
	if rep, _ := st.Check(ctx, ""); rep.NProblems != 5 || rep.Locks != 0 {
		t.Errorf("without cluster prefix: %s", rep)
	}
}
