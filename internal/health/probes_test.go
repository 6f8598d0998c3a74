package health

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/clusternode"
	"github.com/orchd/orchd/internal/etcdstore"
	"github.com/orchd/orchd/internal/etcdtest"
	"github.com/orchd/orchd/internal/instancestore"
	"github.com/orchd/orchd/internal/process"
	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/process/interp"
)

// get asks the probes for path and decodes the answer.
func get(t *testing.T, p *Probes, path string) (int, Report) {
	t.Helper()
	srv := httptest.NewServer(p)
	defer srv.Close()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q", path, ct)
	}
	var r Report
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return resp.StatusCode, r
}

// persistentEngine deploys the persistent purchase order on an engine
// over a bbolt store in a temporary directory, not opened yet.
func persistentEngine(t *testing.T) (*process.Engine, *instancestore.Lazy) {
	t.Helper()
	plans, err := compile.LoadBundle("../../deploy/purchase-order-persistent")
	if err != nil {
		t.Fatal(err)
	}
	store := instancestore.NewLazy(instancestore.Config{Dir: t.TempDir()}, nil, nil)
	t.Cleanup(func() { _ = store.Close() })
	e := process.NewEngine(process.Options{Store: store})
	t.Cleanup(e.Close)
	if err := e.Deploy(interp.NewVersions(plans)...); err != nil {
		t.Fatal(err)
	}
	return e, store
}

func TestReadiness(t *testing.T) {
	e, store := persistentEngine(t)
	p := New(Options{Engine: e, Store: store})
	tests := []struct {
		name    string
		step    func()
		status  int
		state   string
		failing []string
	}{
		{"starting, store closed", func() {}, http.StatusServiceUnavailable, "not ready", []string{CheckDeploy, CheckStore}},
		{"started, store closed", p.Started, http.StatusServiceUnavailable, "not ready", []string{CheckStore}},
		{"store open", func() {
			if _, err := store.Open(); err != nil {
				t.Fatal(err)
			}
		}, http.StatusOK, "ready", nil},
		{"draining", func() { p.Drain(0, nil) }, http.StatusServiceUnavailable, "draining", []string{CheckShutdown}},
		{"store closed while draining", func() { _ = store.Close() }, http.StatusServiceUnavailable, "draining", []string{CheckStore, CheckShutdown}},
	}
	for _, tt := range tests {
		tt.step()
		status, r := get(t, p, "/readyz")
		if status != tt.status || r.Status != tt.state || !slices.Equal(r.Failing, tt.failing) {
			t.Errorf("%s: /readyz = %d %q failing %v, want %d %q failing %v (%+v)", tt.name, status, r.Status, r.Failing, tt.status, tt.state, tt.failing, r.Checks)
		}
		for _, c := range r.Checks {
			if c.OK == (c.Error != "") {
				t.Errorf("%s: check %s: ok %v with error %q", tt.name, c.Name, c.OK, c.Error)
			}
		}
		if status, r := get(t, p, "/healthz"); status != http.StatusOK || r.Status != "alive" {
			t.Errorf("%s: /healthz = %d %q, want 200 alive", tt.name, status, r.Status)
		}
	}
}

// An in-memory engine needs no store: an unopened one is no failure.
func TestReadyWithoutPersistentProcess(t *testing.T) {
	store := instancestore.NewLazy(instancestore.Config{Dir: t.TempDir()}, nil, nil)
	p := New(Options{Engine: process.NewEngine(process.Options{}), Store: store})
	p.Started()
	if status, r := get(t, p, "/readyz"); status != http.StatusOK || len(r.Failing) > 0 {
		t.Errorf("/readyz = %d %+v, want 200 with nothing failing", status, r)
	}
}

// A signal ends the drain's wait; without one it would last an hour.
func TestDrainEndsOnSignal(t *testing.T) {
	p := New(Options{})
	sig := make(chan os.Signal, 1)
	sig <- os.Interrupt
	done := make(chan struct{})
	go func() {
		p.Drain(time.Hour, sig)
		close(done)
	}()
	<-done
	if r := p.Ready(); !slices.Contains(r.Failing, CheckShutdown) {
		t.Errorf("after Drain, Ready = %+v, want the shutdown check failing", r)
	}
}

// The cluster check holds while the node has its etcd session and fails
// once it is gone.
func TestReadinessCluster(t *testing.T) {
	ec := etcdtest.Start(t, 1)
	st, err := etcdstore.Open(etcdstore.Options{Endpoints: ec.Endpoints(), Prefix: "/orchd/health/"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := clusternode.Join(ctx, st, clusternode.Options{Cluster: "c", NodeID: "a", Listen: "127.0.0.1:1", URL: "http://a", TTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	p := New(Options{Node: n})
	p.Started()
	if status, r := get(t, p, "/readyz"); status != http.StatusOK || len(r.Failing) > 0 {
		t.Fatalf("joined: /readyz = %d %+v, want ready", status, r)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	status, r := get(t, p, "/readyz")
	if status != http.StatusServiceUnavailable || !slices.Equal(r.Failing, []string{CheckCluster}) {
		t.Errorf("session gone: /readyz = %d %+v, want 503 failing [cluster]", status, r)
	}
}
