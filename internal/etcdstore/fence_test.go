package etcdstore_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/cluster"
	"github.com/orchd/orchd/internal/etcdstore"
	"github.com/orchd/orchd/internal/etcdtest"
	"github.com/orchd/orchd/internal/persist"
)

// TestGroupCommitFenced: concurrent checkpoints, each fenced by its
// instance's cluster lock, share transactions; the two whose lock another
// node has taken since fail alone with ErrFenced naming their instance,
// and the others of their group commit, with a gapless outbox sequence.
func TestGroupCommitFenced(t *testing.T) {
	c := etcdtest.Start(t, 1)
	st, err := etcdstore.Open(etcdstore.Options{Endpoints: c.Endpoints(), Prefix: "/orchd/fence", MaxBatchDelay: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() }) // after the nodes' (they use its client)
	ctx := context.Background()
	join := func(id string) *cluster.Node {
		n, err := cluster.Join(ctx, st.Client(), cluster.Options{Cluster: "fence", ID: id, URL: "http://" + id, TTL: 2 * time.Second,
			Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		return n
	}
	a, b := join("a"), join("b")

	const n = 32
	lost := map[int]bool{5: true, 20: true}
	locks := make([]*cluster.Lock, n)
	for i := range n {
		id := fmt.Sprintf("F%02d", i)
		if locks[i], err = a.TryAcquire(ctx, id); err != nil {
			t.Fatal(err)
		}
		if lost[i] {
			// a's hold ends (as when its lease expires) and b takes the
			// instance: a's lock no longer fences a commit.
			if err := locks[i].Release(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := b.TryAcquire(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
	}
	before, wbefore, rbefore := st.Stats(), st.WriteTxns(), st.ReadTxns()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = st.Commit(&persist.Checkpoint{Instance: inst(fmt.Sprintf("F%02d", i), persist.Waiting),
				Vars:      map[int][]byte{1: []byte("v")},
				AddRoutes: []persist.Route{{Key: fmt.Sprintf("f%d", i)}},
				Outbox:    []persist.OutboxMessage{{Partner: "p", Operation: "o"}},
				Fence:     locks[i]})
		})
	}
	wg.Wait()
	for i, err := range errs {
		id := fmt.Sprintf("F%02d", i)
		if !lost[i] {
			if err != nil {
				t.Fatalf("commit %s: %v", id, err)
			}
			continue
		}
		if !errors.Is(err, etcdstore.ErrFenced) || !strings.Contains(err.Error(), id) {
			t.Fatalf("commit %s under a lost lock: %v, want ErrFenced naming it", id, err)
		}
		if _, _, err := st.Instance(id); !errors.Is(err, persist.ErrNotFound) {
			t.Fatalf("fenced checkpoint of %s written: %v", id, err)
		}
		if owner, ok, _ := st.Route(fmt.Sprintf("f%d", i)); ok {
			t.Fatalf("fenced checkpoint of %s bound its route to %s", id, owner)
		}
	}
	after := st.Stats()
	txns, cps := after.Commits-before.Commits, after.Checkpoints-before.Checkpoints
	if cps != n-2 || txns >= n-2 {
		t.Fatalf("%d checkpoints in %d transactions: no grouping", cps, txns)
	}
	if f := st.FenceFailures(); f != 2 {
		t.Fatalf("fence failures %d, want 2", f)
	}
	t.Logf("%d fenced checkpoints committed in %d etcd transactions, 2 refused; %d write round trips, %d reads",
		cps, txns, st.WriteTxns()-wbefore, st.ReadTxns()-rbefore)
	if ob := outbox(t, st); len(ob) != n-2 || ob[0] != 1 || ob[len(ob)-1] != n-2 {
		t.Fatalf("outbox seqs %v, want 1..%d", ob, n-2)
	}

	// A fence the store does not understand is refused before anything
	// is tried; the bbolt store ignores fences altogether.
	if err := st.Commit(&persist.Checkpoint{Instance: inst("X", persist.Waiting), Fence: "token"}); !errors.Is(err, persist.ErrInvalid) {
		t.Fatalf("commit with a foreign fence: %v, want ErrInvalid", err)
	}
}

// TestFenceCostsNoRoundTrip: a fenced checkpoint costs what an unfenced
// one does, one write transaction and no read (the fence is a comparison
// in it); one whose fence failed costs that transaction and no other.
func TestFenceCostsNoRoundTrip(t *testing.T) {
	c := etcdtest.Start(t, 1)
	st, err := etcdstore.Open(etcdstore.Options{Endpoints: c.Endpoints(), Prefix: "/orchd/fencecost"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	n, err := cluster.Join(ctx, st.Client(), cluster.Options{Cluster: "fencecost", ID: "a", URL: "http://a", TTL: 2 * time.Second,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	l, err := n.TryAcquire(ctx, "I1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		fence any
		fails bool
	}{
		{"unfenced", nil, false},
		{"fenced", l, false},
		{"lost", l, true},
	} {
		if tc.fails {
			if err := l.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
		w, r := st.WriteTxns(), st.ReadTxns()
		err := st.Commit(&persist.Checkpoint{Instance: inst("I1", persist.Running), Vars: map[int][]byte{1: []byte("v")}, Fence: tc.fence})
		if tc.fails != errors.Is(err, etcdstore.ErrFenced) || (!tc.fails && err != nil) {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if dw, dr := st.WriteTxns()-w, st.ReadTxns()-r; dw != 1 || dr != 0 {
			t.Fatalf("%s checkpoint: %d write and %d read round trips, want 1 and 0", tc.name, dw, dr)
		}
	}
}

// TestCommitReleasesLocks: concurrent checkpoints whose locks go with
// them (cluster.Lock.ReleaseWithNext) commit in shared transactions that
// stay within etcd's operation limit with the locks' deletes counted
// (each transaction here is filled to the limit by the checkpoints'
// own writes), and leave no lock held.
func TestCommitReleasesLocks(t *testing.T) {
	c := etcdtest.Start(t, 1)
	// etcd's own limit: 128 operations per transaction.
	st, err := etcdstore.Open(etcdstore.Options{Endpoints: c.Endpoints(), Prefix: "/orchd/release", MaxTxnOps: 128, MaxBatchDelay: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	node, err := cluster.Join(ctx, st.Client(), cluster.Options{Cluster: "release", ID: "a", URL: "http://a", TTL: 2 * time.Second,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	const n = 96
	locks := make([]*cluster.Lock, n)
	for i := range n {
		if locks[i], err = node.AcquireNew(ctx, fmt.Sprintf("R%02d", i)); err != nil {
			t.Fatal(err)
		}
		locks[i].ReleaseWithNext()
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = st.Commit(&persist.Checkpoint{Instance: inst(fmt.Sprintf("R%02d", i), persist.Waiting),
				Vars: map[int][]byte{1: []byte("v"), 2: []byte("w")}, Fence: locks[i]})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("commit R%02d: %v", i, err)
		}
	}
	held, err := node.Holders(ctx)
	if err != nil || len(held) != 0 {
		t.Fatalf("locks still held after the commits that released them: %v %v", held, err)
	}
	for _, l := range locks {
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
