package clusterview_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/orchd/orchd/internal/admin"
	"github.com/orchd/orchd/internal/cluster"
	"github.com/orchd/orchd/internal/clusterview"
	"github.com/orchd/orchd/internal/echotest"
	"github.com/orchd/orchd/internal/etcdtest"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/mgmtbackend"
	"github.com/orchd/orchd/internal/mgmttest"
)

// The cluster view's tests run two nodes in the test process: each a
// real backend (engine, hot deployer, the echo bundle in memory) whose
// management API is served on loopback, a member of a real etcd
// cluster, with its view over its backend.

const token = "tok"

// reader is a caller's context carrying the token: with one configured,
// every read of the API needs it, and the view forwards it to the nodes.
func reader() context.Context {
	return mgmt.WithAuthorization(context.Background(), "Bearer "+token)
}

// node is one member: its view, its SOAP base URL, its API server.
type node struct {
	id   string
	view *clusterview.View
	soap string
	api  *httptest.Server
}

func startNode(t *testing.T, ec *etcdtest.Cluster, id string) *node {
	t.Helper()
	b, s := mgmttest.Backend(t, nil)
	var h atomic.Pointer[http.Handler]
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*h.Load()).ServeHTTP(w, r) }))
	t.Cleanup(api.Close)
	cli, err := clientv3.New(clientv3.Config{Endpoints: ec.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := cluster.Join(ctx, cli, cluster.Options{Cluster: "c", ID: id, URL: s.SOAP, Admin: api.URL, TTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close() })
	v := clusterview.New(clusterview.Options{Name: "c", Node: n, Local: b, Timeout: 5 * time.Second})
	b.UseCluster(v)
	var ah http.Handler = admin.New(admin.Options{Backend: b, Token: token})
	h.Store(&ah)
	return &node{id: id, view: v, soap: s.SOAP, api: api}
}

// twoNodes starts a and b and waits until each sees the other.
func twoNodes(t *testing.T) (a, b *node) {
	t.Helper()
	ec := etcdtest.Start(t, 1)
	a, b = startNode(t, ec, "a"), startNode(t, ec, "b")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		ca, _ := a.view.Cluster(reader(), true)
		cb, err := b.view.Cluster(reader(), false)
		if err == nil && ca != nil && len(cb.Nodes) == 2 && len(cb.Partial) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the nodes do not see each other: %+v, %v", cb, err)
		}
	}
	return a, b
}

// settle waits until v lists want instances: an instance registers as
// waiting for its second run only after it has answered the first.
func settle(t *testing.T, v *clusterview.View, want int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		p, err := v.Instances(reader(), mgmt.Query{})
		if err == nil && len(p.Instances) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the view lists %+v (%v), want %d instances", p, err, want)
		}
	}
}

// start starts an echo instance on n with id and checks its answer.
func (n *node) start(t *testing.T, id string) {
	t.Helper()
	if got := echotest.Call(t, n.soap, id); got != "one-"+id {
		t.Fatalf("run(%s) on %s answered %q", id, n.id, got)
	}
}

// all lists every instance through v, by pages of limit.
func all(t *testing.T, v *clusterview.View, limit int) ([]mgmt.Instance, []string) {
	t.Helper()
	var out []mgmt.Instance
	var partial []string
	q := mgmt.Query{Limit: limit}
	for range 100 {
		p, err := v.Instances(reader(), q)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Instances...)
		partial = append(partial, p.Partial...)
		if p.Next == "" {
			return out, partial
		}
		q.After = p.Next
	}
	t.Fatal("the listing does not end")
	return nil, nil
}

func TestViewListsEveryNodesInstances(t *testing.T) {
	a, b := twoNodes(t)
	a.start(t, "a1")
	a.start(t, "a2")
	b.start(t, "b1")
	settle(t, a.view, 3)
	for _, limit := range []int{1, 2, 50} {
		for _, v := range []*node{a, b} {
			ins, partial := all(t, v.view, limit)
			var nodes []string
			for _, in := range ins {
				if !strings.HasSuffix(in.ID, "@"+in.Node) {
					t.Errorf("instance %s of node %s: the ID does not name its node", in.ID, in.Node)
				}
				nodes = append(nodes, in.Node)
			}
			slices.Sort(nodes)
			if len(partial) != 0 || !slices.Equal(nodes, []string{"a", "a", "b"}) {
				t.Fatalf("%s's listing by pages of %d: nodes %v (partial %v)", v.id, limit, nodes, partial)
			}
		}
	}
}

func TestViewSumsProcessesAndNodes(t *testing.T) {
	a, b := twoNodes(t)
	a.start(t, "a1")
	b.start(t, "b1")
	b.start(t, "b2")
	// An exchange is counted once its reply is written.
	var ps []mgmt.Process
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var err error
		if ps, err = a.view.Processes(reader()); err != nil {
			t.Fatal(err)
		}
		if len(ps) == 1 && ps[0].Stats.Exchanges == 3 {
			break
		}
	}
	if len(ps) != 1 || !slices.Equal(ps[0].Nodes, []string{"a", "b"}) || ps[0].Stats.Exchanges != 3 || len(ps[0].NodeStats) != 2 {
		t.Fatalf("processes %+v, want Echo on a and b with 3 exchanges in all", ps)
	}
	c, err := b.view.Cluster(reader(), false)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "c" || len(c.Nodes) != 2 || c.Nodes[0].ID != "a" || c.Nodes[0].Self || !c.Nodes[1].Self || c.Nodes[0].Stats == nil || c.Nodes[0].Admin != a.api.URL {
		t.Fatalf("cluster seen from b: %+v", c)
	}
}

func TestViewForwardsToTheOwningNode(t *testing.T) {
	a, b := twoNodes(t)
	a.start(t, "a1")
	settle(t, b.view, 1)
	ins, _ := all(t, b.view, 50)
	if len(ins) != 1 || ins[0].Node != "a" {
		t.Fatalf("instances seen from b: %+v", ins)
	}
	id := ins[0].ID
	ctx := context.Background()
	d, err := b.view.Instance(reader(), id)
	if err != nil || d.Node != "a" || d.State != "waiting" {
		t.Fatalf("b's detail of a's %s: %+v, %v", id, d, err)
	}
	// Acting needs the caller's token, which b forwards to a.
	if err := b.view.Act(ctx, id, mgmt.Terminate); !errors.Is(err, mgmt.ErrUnauthorized) || !strings.Contains(err.Error(), "node a") {
		t.Fatalf("terminate without a token: %v, want a's refusal, named", err)
	}
	if err := b.view.Act(mgmt.WithAuthorization(ctx, "Bearer "+token), id, mgmt.Terminate); err != nil {
		t.Fatalf("terminate with the caller's token: %v", err)
	}
	settle(t, a.view, 0) // the terminate is done when a lists nothing
	if _, err := b.view.Instance(ctx, "m1@gone"); !errors.Is(err, mgmt.ErrNotFound) || !strings.Contains(err.Error(), "not a live member") {
		t.Fatalf("an instance of a node that is not a member: %v, want ErrNotFound", err)
	}
	if _, err := b.view.Instances(ctx, mgmt.Query{Scope: mgmt.ScopeLocal, After: "m3@a"}); !errors.Is(err, mgmt.ErrInvalid) {
		t.Fatalf("a local listing with another node's cursor: %v, want ErrInvalid", err)
	}
}

func TestViewNamesANodeThatDoesNotAnswer(t *testing.T) {
	a, b := twoNodes(t)
	a.start(t, "a1")
	b.start(t, "b1")
	settle(t, b.view, 2)
	a.api.Close() // a stays a member, its API is gone
	ins, partial := all(t, b.view, 50)
	if len(ins) != 1 || ins[0].Node != "b" || len(partial) != 1 || !strings.HasPrefix(partial[0], "a: ") {
		t.Fatalf("b's listing with a's API gone: %+v, partial %v; want b's instance and a named", ins, partial)
	}
	c, err := b.view.Cluster(reader(), false)
	if err != nil || len(c.Nodes) != 2 || len(c.Partial) != 1 {
		t.Fatalf("cluster with a's API gone: %+v, %v; want both nodes, a in partial", c, err)
	}
}

// The view's backend is the real one.
var _ clusterview.Local = (*mgmtbackend.Backend)(nil)
