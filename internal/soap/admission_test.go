package soap

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/orchd/orchd/internal/exchange"
)

// blockingDispatcher holds the purchase orders whose poId is BLOCK until
// release is closed, and answers the rest as testDispatcher does.
type blockingDispatcher struct {
	testDispatcher
	entered chan struct{}
	release chan struct{}
}

func (d *blockingDispatcher) Dispatch(ctx context.Context, ex *exchange.Exchange) error {
	if ex.Operation.Name == "submitPurchaseOrder" && ex.Input.Part("order").FindElement("poId").Text() == "BLOCK" {
		d.entered <- struct{}{}
		<-d.release
	}
	return d.testDispatcher.Dispatch(ctx, ex)
}

// waitFor polls cond until it holds, failing the test after a few seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestServerAdmission: with MaxInflight exchanges in flight, a request
// waits up to QueueWait for a slot; one that gets none is shed with HTTP
// 503, Retry-After and a Server (SOAP 1.2: Receiver) fault saying the
// server is overloaded, counted in orchd_shed_total; once a slot is free,
// requests are served again.
func TestServerAdmission(t *testing.T) {
	for _, tc := range []struct {
		name      string
		queueWait time.Duration
		maxQueue  int
		queued    bool // the second request waits for the slot and is served
	}{
		{"no queue: shed at once", 0, 0, false},
		{"short queue: shed after the wait", 20 * time.Millisecond, 0, false},
		{"no room in the queue: shed at once", 10 * time.Second, -1, false},
		{"long queue: served when the slot frees", 10 * time.Second, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			s := NewServer(ServerOptions{MaxInflight: 1, QueueWait: tc.queueWait, MaxQueue: tc.maxQueue, Registerer: reg})
			d := &blockingDispatcher{entered: make(chan struct{}, 1), release: make(chan struct{})}
			for _, ep := range []*exchange.Endpoint{poEndpoint(), calcEndpoint()} {
				if err := s.Handle(ep, d); err != nil {
					t.Fatal(err)
				}
			}
			hs := httptest.NewServer(s)
			defer hs.Close()

			var wg sync.WaitGroup
			var first, second response
			block, secondReq := poRequest(t, "BLOCK"), poRequest(t, "SECOND")
			wg.Go(func() { first = postAsync(hs.URL+"/po", "text/xml", block) })
			<-d.entered // the only slot is taken
			if tc.queued {
				wg.Go(func() { second = postAsync(hs.URL+"/po", "text/xml", secondReq) })
				waitFor(t, "the second request to queue", func() bool { return s.lim.queued.Load() == 1 })
				// The queue holds one: a third request is shed at once.
				if r := post(t, hs.URL+"/po", "text/xml", "", poRequest(t, "THIRD")); r.status != http.StatusServiceUnavailable {
					t.Errorf("third request, the queue full: HTTP %d %s", r.status, r.body)
				}
				close(d.release)
				wg.Wait()
				for i, r := range []response{first, second} {
					if r.status != http.StatusOK {
						t.Errorf("request %d: HTTP %d %s", i+1, r.status, r.body)
					}
				}
				if n := testutil.ToFloat64(s.metrics.shedTotal.WithLabelValues("poProcess")); n != 1 {
					t.Errorf("orchd_shed_total = %v, want 1", n)
				}
				return
			}
			for _, req := range []struct {
				path, ct, body, code string
			}{
				{"/po", "text/xml", poRequest(t, "SHED"), "Server"},
				{"/calc", "application/soap+xml", addRequest, "Receiver"},
			} {
				r := post(t, hs.URL+req.path, req.ct, "", req.body)
				f := r.fault(t)
				if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" {
					t.Errorf("%s: HTTP %d, Retry-After %q; want 503, 1", req.path, r.status, r.header.Get("Retry-After"))
				}
				if f.Code != FaultServer || f.CodeName.Local != req.code {
					t.Errorf("%s: fault code %q, want %s", req.path, f.CodeValue, req.code)
				}
				if !strings.Contains(f.Reason, "server overloaded: 1 exchanges in flight") || !strings.Contains(f.Reason, "retry later") {
					t.Errorf("%s: reason %q", req.path, f.Reason)
				}
			}
			if n := s.lim.queued.Load(); n != 0 {
				t.Errorf("%d requests still queued", n)
			}
			close(d.release)
			wg.Wait()
			if first.status != http.StatusOK {
				t.Errorf("admitted request: HTTP %d %s", first.status, first.body)
			}
			if r := post(t, hs.URL+"/po", "text/xml", "", poRequest(t, "AFTER")); r.status != http.StatusOK {
				t.Errorf("after the overload: HTTP %d %s", r.status, r.body)
			}
			for proc, want := range map[string]float64{"poProcess": 1, "calcService": 1} {
				if n := testutil.ToFloat64(s.metrics.shedTotal.WithLabelValues(proc)); n != want {
					t.Errorf("orchd_shed_total{process=%q} = %v, want %v", proc, n, want)
				}
			}
		})
	}
}
