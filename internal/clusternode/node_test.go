package clusternode

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/cluster"
	"github.com/orchd/orchd/internal/etcdstore"
	"github.com/orchd/orchd/internal/etcdtest"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process"
)

func TestLeft(t *testing.T) {
	a, b, c := cluster.Member{ID: "a"}, cluster.Member{ID: "b"}, cluster.Member{ID: "c"}
	for _, tc := range []struct {
		name        string
		before, now []cluster.Member
		want        bool
	}{
		{"same", []cluster.Member{a, b}, []cluster.Member{a, b}, false},
		{"one joined", []cluster.Member{a}, []cluster.Member{a, b}, false},
		{"one left", []cluster.Member{a, b}, []cluster.Member{a}, true},
		{"one left, one joined", []cluster.Member{a, b}, []cluster.Member{a, c}, true},
		{"from none", nil, []cluster.Member{a}, false},
		{"all left", []cluster.Member{a}, nil, true},
	} {
		if got := left(tc.before, tc.now); got != tc.want {
			t.Errorf("%s: left = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestJoinNeedsEtcdStore(t *testing.T) {
	st, err := persist.Open(filepath.Join(t.TempDir(), "orchd.db"), persist.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, s := range []process.Store{nil, st} {
		if _, err := Join(context.Background(), s, Options{Cluster: "c"}); err == nil || !strings.Contains(err.Error(), "--store etcd") {
			t.Errorf("Join over %T = %v, want an error naming --store etcd", s, err)
		}
	}
}

// join joins node id of cluster "c" over a real etcd store.
func join(t *testing.T, ec *etcdtest.Cluster, id string) *cluster.Node {
	t.Helper()
	st, err := etcdstore.Open(etcdstore.Options{Endpoints: ec.Endpoints(), Prefix: "/orchd/test/"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := Join(ctx, st, Options{Cluster: "c", NodeID: id, Listen: "127.0.0.1:1", URL: "http://" + id, TTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close() })
	return n
}

// eventually polls cond for up to 30s.
func eventually(cond func() bool) bool {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

func TestOwnersLockInstances(t *testing.T) {
	ec := etcdtest.Start(t, 1)
	a, b := Owners{Node: join(t, ec, "a")}, Owners{Node: join(t, ec, "b")}
	ctx := context.Background()
	release, fence, err := a.Acquire(ctx, "i1")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fence.(*cluster.Lock); !ok {
		t.Fatalf("fence %T, want the instance's *cluster.Lock", fence)
	}
	// b cannot take i1 while a holds it.
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, _, err = b.Acquire(short, "i1")
	cancel()
	if err == nil {
		t.Fatal("b acquired i1 while a held it")
	}
	// ... but another instance, yes.
	rel2, _, err := b.Acquire(ctx, "i2")
	if err != nil {
		t.Fatalf("b acquiring i2: %v", err)
	}
	rel2()
	release()
	got := make(chan error, 1)
	go func() {
		r, _, err := b.Acquire(ctx, "i1")
		if err == nil {
			r()
		}
		got <- err
	}()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("b acquiring i1 after a released it: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("b did not get i1 after a released it")
	}
}

func TestUpgradingSeesAnotherNodesVersion(t *testing.T) {
	ec := etcdtest.Start(t, 1)
	a, b := join(t, ec, "a"), join(t, ec, "b")
	const name = "{urn:p}P"
	if err := a.SetVersions(context.Background(), []string{name + "#fp2"}); err != nil {
		t.Fatal(err)
	}
	if !eventually(func() bool { return upgrading(b, name) }) {
		t.Fatal("b does not see a serving a version of P that b lacks")
	}
	if upgrading(a, name) {
		t.Fatal("a sees an upgrade while it serves the only version")
	}
	if err := b.SetVersions(context.Background(), []string{name + "#fp2"}); err != nil {
		t.Fatal(err)
	}
	if !eventually(func() bool { return !upgrading(b, name) }) {
		t.Fatal("b still upgrading once it serves the same version")
	}
	if upgrading(b, "{urn:p}Other") {
		t.Fatal("an upgrade of a process no node serves")
	}
}
