package cluster_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/cluster"
	"github.com/orchd/orchd/internal/etcdtest"
)

// testForwarder sends correlated messages to the node that does not own
// the in-memory conversation: it is proxied to the owner; once the owner
// stops answering, the sender gets a SOAP Server fault that says so.
func testForwarder(t *testing.T, ec *etcdtest.Cluster) {
	type srv struct {
		ts *httptest.Server
		n  *testNode
	}
	start := func(id string, versions ...string) *srv {
		s := &srv{}
		s.ts = httptest.NewUnstartedServer(nil)
		s.ts.Start()
		t.Cleanup(s.ts.Close)
		s.n = join(t, ec, "fw", id, s.ts.URL, cluster.Options{Versions: versions})
		local := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			io.WriteString(w, id+" got "+string(b)+" via "+r.Header.Get(cluster.ForwardedHeader))
		})
		s.ts.Config.Handler = &cluster.Forwarder{
			Node: s.n.Node, Next: local,
			// The route key is the message body's "key=" value, the
			// version its "ver=" value.
			Route: func(r *http.Request, body []byte) (cluster.Routing, bool) {
				if v, ok := strings.CutPrefix(string(body), "ver="); ok {
					return cluster.Routing{Version: v}, true
				}
				k, ok := strings.CutPrefix(string(body), "key=")
				return cluster.Routing{Keys: []string{k}}, ok
			},
		}
		return s
	}
	a, b := start("a", "p-1"), start("b", "p-1", "p-2")
	waitFor(t, 5*time.Second, "a sees b", func() bool { _, ok := a.n.Member("b"); return ok })
	ctx := context.Background()
	if err := b.n.RegisterRoute(ctx, "po-7"); err != nil {
		t.Fatal(err)
	}
	post := func(s *srv, body string) (int, string) {
		t.Helper()
		resp, err := http.Post(s.ts.URL+"/svc", "text/xml", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		rb, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(rb)
	}
	tests := []struct {
		name string
		to   *srv
		body string
		want string
	}{
		{"owner elsewhere: forwarded", a, "key=po-7", "b got key=po-7 via a"},
		{"owner here: local", b, "key=po-7", "b got key=po-7 via "},
		{"unregistered: local", a, "key=po-8", "a got key=po-8 via "},
		{"no key: local", a, "hello", "a got hello via "},
		{"version elsewhere: forwarded", a, "ver=p-2", "b got ver=p-2 via a"},
		{"version here: local", a, "ver=p-1", "a got ver=p-1 via "},
		{"version here too: local", b, "ver=p-1", "b got ver=p-1 via "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if code, got := post(tc.to, tc.body); code != http.StatusOK || got != tc.want {
				t.Fatalf("got %d %q, want %q", code, got, tc.want)
			}
		})
	}
	if code, got := post(a, "ver=p-3"); code != http.StatusInternalServerError || !strings.Contains(got, "no live node serves version p-3") {
		t.Fatalf("version nowhere: %d %s", code, got)
	}
	if err := b.n.UnregisterRoute(ctx, "po-7"); err != nil {
		t.Fatal(err)
	}
	if _, got := post(a, "key=po-7"); got != "a got key=po-7 via " {
		t.Fatalf("after unregister: %q", got)
	}
	// b's process dies while its lease still runs: a answers with a fault.
	if err := b.n.RegisterRoute(ctx, "po-9"); err != nil {
		t.Fatal(err)
	}
	b.ts.Close()
	code, got := post(a, "key=po-9")
	if code != http.StatusInternalServerError || !strings.Contains(got, "faultcode") || !strings.Contains(got, "Server") || !strings.Contains(got, "(b at "+b.ts.URL+") does not answer") {
		t.Fatalf("owner gone: %d %s", code, got)
	}
}

// testRoutes checks the background writer of in-memory routes: added
// keys are registered once Wait returns; a key removed and added again at
// once is not rewritten; a removed key goes after the grace period.
func testRoutes(t *testing.T, ec *etcdtest.Cluster) {
	a := join(t, ec, "rt", "a", "http://a", cluster.Options{})
	b := join(t, ec, "rt", "b", "http://b", cluster.Options{})
	rs := cluster.NewRoutes(a.Node, 300*time.Millisecond)
	t.Cleanup(rs.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	keys := []string{"k1", "k2", "k3"}
	for _, k := range keys {
		rs.Add(k)
	}
	if err := rs.Wait(ctx, keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if m, ok, err := b.Owner(ctx, k); err != nil || !ok || m.ID != "a" {
			t.Fatalf("owner of %s seen from b: %v %v %v", k, m, ok, err)
		}
	}
	rev := func(k string) int64 {
		resp, err := a.cli.Get(ctx, "/orchd/rt/mem/"+k)
		if err != nil || len(resp.Kvs) == 0 {
			return 0
		}
		return resp.Kvs[0].ModRevision
	}
	r1 := rev("k1")
	rs.Remove("k1")
	rs.Add("k1") // the instance took a message and waits again
	rs.Remove("k2")
	waitFor(t, 5*time.Second, "k2 unregistered", func() bool { return rev("k2") == 0 })
	if r := rev("k1"); r != r1 {
		t.Fatalf("k1 rewritten (mod revision %d, was %d) or removed", r, r1)
	}
	if err := rs.Wait(ctx, []string{"k1", "k3"}); err != nil {
		t.Fatal(err)
	}
}
