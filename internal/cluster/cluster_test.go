package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/orchd/orchd/internal/cluster"
	"github.com/orchd/orchd/internal/etcdtest"
)

// TestCluster runs the tests that can share one embedded 3-member etcd
// cluster (each under its own cluster name), to keep startup time down.
func TestCluster(t *testing.T) {
	ec := etcdtest.Start(t, 3)
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, *etcdtest.Cluster)
	}{
		{"Membership", testMembership},
		{"OwnershipExclusive", testOwnershipExclusive},
		{"Handover", testHandover},
		{"TimersOnce", testTimersOnce},
		{"Forwarder", testForwarder},
		{"Reentrant", testReentrant},
		{"Holders", testHolders},
		{"Routes", testRoutes},
		{"Rejoin", testRejoin},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, ec) })
	}
}

func testMembership(t *testing.T, ec *etcdtest.Cluster) {
	a := join(t, ec, "m", "a", "http://a", cluster.Options{})
	b := join(t, ec, "m", "b", "http://b", cluster.Options{Admin: "http://b-admin", Versions: []string{"p-1"}})
	c := join(t, ec, "m", "c", "http://c", cluster.Options{})
	for _, n := range []*testNode{a, b, c} {
		waitFor(t, 5*time.Second, n.ID()+" sees 3 members", func() bool {
			ms, _ := n.Members()
			return len(ms) == 3
		})
	}
	if m, ok := a.Member("b"); !ok || m.URL != "http://b" || m.Admin != "http://b-admin" || !m.Serves("p-1") || m.Serves("p-2") {
		t.Fatalf("a.Member(b) = %+v, %v", m, ok)
	}
	// Metadata changes reach the others through the watch.
	if err := b.SetVersions(context.Background(), []string{"p-1", "p-2"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "a sees b serve p-2", func() bool {
		m, ok := a.Member("b")
		return ok && m.Serves("p-2") && m.Admin == "http://b-admin"
	})
	// b alone serves p-2: its instances' timers are b's.
	waitFor(t, 5*time.Second, "b sees its own p-2", func() bool { m, ok := b.Member("b"); return ok && m.Serves("p-2") })
	if a.SameVersions() || b.SameVersions() {
		t.Fatal("a (no versions) and b (p-1, p-2) serve the same versions")
	}
	for i := range 8 {
		id := "inst-" + strconv.Itoa(i)
		if !b.ResponsibleFor(id, "p-2") || a.ResponsibleFor(id, "p-2") || c.ResponsibleFor(id, "p-2") {
			t.Fatalf("%s of p-2: responsible a=%v b=%v c=%v", id, a.ResponsibleFor(id, "p-2"), b.ResponsibleFor(id, "p-2"), c.ResponsibleFor(id, "p-2"))
		}
	}
	// A plain-URL value (an older node) is read as the URL.
	if _, err := a.cli.Put(context.Background(), "/orchd/m/nodes/old", "http://old"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "a sees old", func() bool {
		m, ok := a.Member("old")
		return ok && m.URL == "http://old" && len(m.Versions) == 0
	})
	if _, err := a.cli.Delete(context.Background(), "/orchd/m/nodes/old"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "old gone", func() bool { _, ok := a.Member("old"); return !ok })
	// A second live node with the same ID is refused.
	cli := newClient(t, ec.Endpoints())
	if _, err := cluster.Join(context.Background(), cli, cluster.Options{Cluster: "m", ID: "b", URL: "http://b2", TTL: ttl}); err == nil {
		t.Fatal("joined a second node b")
	}
	// A clean leave is seen at once, a crash when the lease expires.
	_, changed := a.Members()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no membership change after b left")
	}
	c.kill()
	start := time.Now()
	waitFor(t, 3*ttl, "a sees c gone", func() bool {
		ms, _ := a.Members()
		return len(ms) == 1
	})
	t.Logf("crash of c seen after %v (TTL %v); members %s", time.Since(start).Round(time.Millisecond), ttl, memberIDs(a.Node))
	// Other clusters are separate.
	x := join(t, ec, "other", "a", "http://xa", cluster.Options{})
	if ms, _ := x.Members(); len(ms) != 1 {
		t.Fatalf("cluster other members %v", ms)
	}
}

// testOwnershipExclusive runs many goroutines on two nodes that all want
// the same instances; the fenced read-modify-write of a counter per
// instance loses no update and no two runs of one instance overlap.
func testOwnershipExclusive(t *testing.T, ec *etcdtest.Cluster) {
	nodes := []*testNode{
		join(t, ec, "own", "a", "http://a", cluster.Options{}),
		join(t, ec, "own", "b", "http://b", cluster.Options{}),
	}
	const instances, workers, rounds = 3, 4, 8
	var running [instances]atomic.Int32
	var wg sync.WaitGroup
	errc := make(chan error, len(nodes)*workers)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, n := range nodes {
		for w := range workers {
			wg.Go(func() {
				for r := range rounds {
					i := (w + r) % instances
					id := "inst-" + strconv.Itoa(i)
					if err := runOnce(ctx, n, id, &running[i]); err != nil {
						errc <- fmt.Errorf("%s worker %d: %w", n.ID(), w, err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	total := 0
	for i := range instances {
		resp, err := nodes[0].cli.Get(ctx, "/test/own/count/inst-"+strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		v, _ := strconv.Atoi(string(resp.Kvs[0].Value))
		total += v
	}
	if want := len(nodes) * workers * rounds; total != want {
		t.Fatalf("counted %d runs, want %d (lost updates)", total, want)
	}
}

// runOnce is one "run" of instance id: acquire, read the counter, write
// it back plus one in a transaction fenced by the lock, release.
// Within one node the engine serialises runs of an instance itself; here
// the goroutines of one node model that by retrying on ErrHeld.
func runOnce(ctx context.Context, n *testNode, id string, running *atomic.Int32) error {
	var l *cluster.Lock
	for {
		var err error
		l, err = n.Acquire(ctx, id)
		if err == nil {
			break
		}
		if !errors.Is(err, cluster.ErrHeld) {
			return err
		}
		// Held by this very node: wait for our own release.
		time.Sleep(time.Millisecond)
	}
	defer l.Release(ctx)
	if r := running.Add(1); r != 1 {
		return fmt.Errorf("%d runs of %s at once", r, id)
	}
	defer running.Add(-1)
	key := "/test/own/count/" + id
	resp, err := n.cli.Get(ctx, key)
	if err != nil {
		return err
	}
	v := 0
	if len(resp.Kvs) > 0 {
		v, _ = strconv.Atoi(string(resp.Kvs[0].Value))
	}
	tr, err := n.cli.Txn(ctx).If(l.Fence()).Then(clientv3.OpPut(key, strconv.Itoa(v+1))).Commit()
	if err != nil {
		return err
	}
	if !tr.Succeeded {
		return fmt.Errorf("fenced commit of %s refused while holding the lock", id)
	}
	return nil
}

// testHandover kills a node holding an instance lock, the outbox
// leadership and timers: each moves to a live node within the lease time,
// and the dead node's stale fence no longer commits.
func testHandover(t *testing.T, ec *etcdtest.Cluster) {
	a := join(t, ec, "ho", "a", "http://a", cluster.Options{})
	b := join(t, ec, "ho", "b", "http://b", cluster.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	la, err := a.TryAcquire(ctx, "i1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.TryAcquire(ctx, "i1"); !errors.Is(err, cluster.ErrHeld) {
		t.Fatalf("b.TryAcquire(i1) while a holds it = %v, want ErrHeld", err)
	}

	// Outbox: a leads (it campaigned first), b waits.
	var leaders sync.Map
	var active atomic.Int32
	lead := func(n *testNode) {
		go n.Lead(ctx, "outbox", func(lctx context.Context) {
			if active.Add(1) > 1 {
				t.Errorf("two outbox drainers at once")
			}
			leaders.Store(n.ID(), true)
			<-lctx.Done()
			active.Add(-1)
		})
	}
	lead(a)
	waitFor(t, 5*time.Second, "a leads the outbox", func() bool { _, ok := leaders.Load("a"); return ok })
	lead(b)
	if got, err := b.Leader(ctx, "outbox"); err != nil || got != "a" {
		t.Fatalf("outbox leader = %q, %v; want a", got, err)
	}

	acquired := make(chan error, 1)
	go func() {
		l, err := b.Acquire(ctx, "i1")
		if err == nil && l.Revision() <= la.Revision() {
			err = fmt.Errorf("fencing token did not grow: %d after %d", l.Revision(), la.Revision())
		}
		acquired <- err
	}()
	killed := time.Now()
	a.kill()
	select {
	case err := <-acquired:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(3 * ttl):
		t.Fatal("b did not take i1 over from the dead a")
	}
	t.Logf("lock handed over after %v", time.Since(killed).Round(time.Millisecond))
	waitFor(t, 3*ttl, "b leads the outbox", func() bool { _, ok := leaders.Load("b"); return ok })
	// a's late commit, fenced by its old lock, is refused.
	tr, err := b.cli.Txn(ctx).If(la.Fence()).Then(clientv3.OpPut("/test/ho/state/i1", "stale")).Commit()
	if err != nil {
		t.Fatal(err)
	}
	if tr.Succeeded {
		t.Fatal("a commit fenced by the dead node's lock went through")
	}
	// Timers: every instance is now b's.
	for i := range 20 {
		if id := "t" + strconv.Itoa(i); !b.Responsible(id) {
			t.Fatalf("b not responsible for %s with a dead; members %s", id, memberIDs(b.Node))
		}
	}
}

// testTimersOnce fires timers from three nodes that scan concurrently;
// one node dies halfway; every timer fires exactly once.
func testTimersOnce(t *testing.T, ec *etcdtest.Cluster) {
	nodes := []*testNode{
		join(t, ec, "tm", "a", "http://a", cluster.Options{}),
		join(t, ec, "tm", "b", "http://b", cluster.Options{}),
		join(t, ec, "tm", "c", "http://c", cluster.Options{}),
	}
	for _, n := range nodes {
		waitFor(t, 5*time.Second, "3 members", func() bool { ms, _ := n.Members(); return len(ms) == 3 })
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	const timers = 40
	now := time.Now()
	for i := range timers {
		due := now // half due now, half after the kill
		if i%2 == 1 {
			due = now.Add(time.Second)
		}
		if _, err := nodes[0].cli.Put(ctx, "/test/tm/timers/t"+strconv.Itoa(i), strconv.FormatInt(due.UnixNano(), 10)); err != nil {
			t.Fatal(err)
		}
	}
	scanCtx, stopScan := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Go(func() { scanTimers(scanCtx, t, n) })
	}
	// c dies once some timers have fired.
	waitFor(t, 10*time.Second, "first timers fired", func() bool { return countPrefix(t, nodes[0], "/test/tm/fired/") > 0 })
	nodes[2].kill()
	waitFor(t, 10*time.Second+3*ttl, "all timers fired", func() bool {
		return countPrefix(t, nodes[0], "/test/tm/timers/") == 0
	})
	stopScan()
	wg.Wait()
	resp, err := nodes[0].cli.Get(ctx, "/test/tm/fired/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	byTimer := map[string][]string{}
	for _, kv := range resp.Kvs {
		// key /test/tm/fired/<timer>/<node>/<rev>
		parts := strings.SplitN(strings.TrimPrefix(string(kv.Key), "/test/tm/fired/"), "/", 3)
		timer, node, rev := parts[0], parts[1], parts[2]
		byTimer[timer] = append(byTimer[timer], node+"@"+rev)
	}
	perNode := map[string]int{}
	for i := range timers {
		id := "t" + strconv.Itoa(i)
		if f := byTimer[id]; len(f) != 1 {
			t.Errorf("timer %s fired %d times: %v", id, len(f), f)
		} else {
			perNode[f[0][:1]]++
		}
	}
	t.Logf("timers fired per node: %v", perNode)
}

func countPrefix(t *testing.T, n *testNode, pfx string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	resp, err := n.cli.Get(ctx, pfx, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return -1
	}
	return int(resp.Count)
}

// scanTimers is the engine's timer loop reduced to etcd: every few
// milliseconds, fire the due timers this node is responsible for. A
// firing commits, fenced by the instance lock, the removal of the timer
// and a record of who fired it.
func scanTimers(ctx context.Context, t *testing.T, n *testNode) {
	for ctx.Err() == nil {
		select {
		case <-n.Done():
			return
		default:
		}
		resp, err := n.cli.Get(ctx, "/test/tm/timers/", clientv3.WithPrefix())
		if err != nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		for _, kv := range resp.Kvs {
			due, _ := strconv.ParseInt(string(kv.Value), 10, 64)
			if due > time.Now().UnixNano() {
				continue
			}
			key := string(kv.Key)
			id := key[len("/test/tm/timers/"):]
			_, err := n.FireTimer(ctx, id, func(ctx context.Context, l *cluster.Lock) error {
				tr, err := n.cli.Txn(ctx).
					If(l.Fence(), clientv3.Compare(clientv3.CreateRevision(key), ">", 0)).
					Then(clientv3.OpDelete(key), clientv3.OpPut(fmt.Sprintf("/test/tm/fired/%s/%s/%d", id, n.ID(), l.Revision()), "")).
					Commit()
				if err == nil && !tr.Succeeded {
					return nil // already fired by another node
				}
				return err
			})
			if err != nil && ctx.Err() == nil {
				select {
				case <-n.Done():
				default:
					if !errors.Is(err, cluster.ErrUnavailable) {
						t.Logf("%s: fire %s: %v", n.ID(), id, err)
					}
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// testReentrant: with Options.Reentrant, a lock this node still holds
// (its release failed) is taken back, not waited for; without, ErrHeld.
func testReentrant(t *testing.T, ec *etcdtest.Cluster) {
	ctx := context.Background()
	for _, tc := range []struct {
		reentrant bool
		wantErr   error
	}{{true, nil}, {false, cluster.ErrHeld}} {
		n := join(t, ec, "re"+strconv.FormatBool(tc.reentrant), "a", "http://a", cluster.Options{Reentrant: tc.reentrant})
		l1, err := n.TryAcquire(ctx, "i")
		if err != nil {
			t.Fatal(err)
		}
		l2, err := n.TryAcquire(ctx, "i")
		if !errors.Is(err, tc.wantErr) {
			t.Fatalf("reentrant=%v: second TryAcquire = %v, want %v", tc.reentrant, err, tc.wantErr)
		}
		if err == nil && l2.Revision() != l1.Revision() {
			t.Fatalf("reentrant lock has another fencing token: %d, %d", l2.Revision(), l1.Revision())
		}
		if err := l1.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// Holders names the node holding each held lock, and forgets a lock once
// released.
func testHolders(t *testing.T, ec *etcdtest.Cluster) {
	ctx := context.Background()
	a := join(t, ec, "h", "a", "http://a", cluster.Options{})
	b := join(t, ec, "h", "b", "http://b", cluster.Options{})
	la, err := a.TryAcquire(ctx, "i1")
	if err != nil {
		t.Fatal(err)
	}
	lb, err := b.TryAcquire(ctx, "i2")
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.Holders(ctx)
	if err != nil || len(got) != 2 || got["i1"] != "a" || got["i2"] != "b" {
		t.Fatalf("holders: %v %v", got, err)
	}
	if err := la.Release(ctx); err != nil {
		t.Fatal(err)
	}
	got, err = a.Holders(ctx)
	if err != nil || len(got) != 1 || got["i2"] != "b" {
		t.Fatalf("holders after a released i1: %v %v", got, err)
	}
	if err := lb.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// testRejoin: a node with Rejoin whose lease is gone on the server fails
// its runs at once while it cannot register again (here its node key is
// taken meanwhile), then rejoins by itself with a new lease: the others
// see it again, it takes locks again with higher fencing tokens, and the
// lock it held under the old lease no longer fences a commit.
func testRejoin(t *testing.T, ec *etcdtest.Cluster) {
	ctx := context.Background()
	a := join(t, ec, "rj", "a", "http://a", cluster.Options{Rejoin: true, Reentrant: true})
	b := join(t, ec, "rj", "b", "http://b", cluster.Options{})
	waitFor(t, 5*time.Second, "b sees a", func() bool { _, ok := b.Member("a"); return ok })
	l, err := a.TryAcquire(ctx, "I1")
	if err != nil {
		t.Fatal(err)
	}
	// An in-memory route and the versions a publishes come back with it.
	rs := cluster.NewRoutes(a.Node, 0)
	t.Cleanup(rs.Close)
	rs.Add("r1")
	if err := rs.Wait(ctx, []string{"r1"}); err != nil {
		t.Fatal(err)
	}
	if err := a.SetVersions(ctx, []string{"v-1"}); err != nil {
		t.Fatal(err)
	}
	old := a.Lease()
	// a's node key passes to b's lease, then a's lease ends on the server
	// (as when a was cut off for longer than its TTL): a cannot register
	// again until the key is free.
	if _, err := b.cli.Put(ctx, "/orchd/rj/nodes/a", "http://impostor", clientv3.WithLease(b.Lease())); err != nil {
		t.Fatal(err)
	}
	if _, err := b.cli.Revoke(ctx, old); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "a's runs fail at once with ErrLost while it rejoins", func() bool {
		_, err := a.TryAcquire(ctx, "I2")
		return errors.Is(err, cluster.ErrLost) && strings.Contains(err.Error(), "rejoining")
	})
	select {
	case <-a.Joined():
		t.Fatal("Joined is closed while a has no session")
	case <-a.Done():
	}
	if _, err := b.cli.Delete(ctx, "/orchd/rj/nodes/a"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.Joined():
	case <-time.After(10 * time.Second):
		t.Fatal("a did not rejoin")
	}
	if lease := a.Lease(); lease == old || lease == clientv3.NoLease {
		t.Fatalf("a rejoined with lease %x (old %x)", lease, old)
	}
	waitFor(t, 5*time.Second, "b sees a again, with its versions", func() bool {
		m, ok := b.Member("a")
		return ok && m.URL == "http://a" && m.Serves("v-1")
	})
	waitFor(t, 5*time.Second, "a's route registered again", func() bool {
		m, ok, err := b.Owner(ctx, "r1")
		return err == nil && ok && m.ID == "a"
	})
	if resp, err := b.cli.Txn(ctx).If(l.Fence()).Commit(); err != nil || resp.Succeeded {
		t.Fatalf("the lock of the old session still fences a commit: %v, %v", resp, err)
	}
	l2, err := a.TryAcquire(ctx, "I1")
	if err != nil {
		t.Fatalf("a after rejoining: %v", err)
	}
	if l2.Revision() <= l.Revision() {
		t.Fatalf("fencing token %d after rejoining, %d before", l2.Revision(), l.Revision())
	}
}
