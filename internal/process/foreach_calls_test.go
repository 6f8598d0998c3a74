package process

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/soap"
)

// TestParallelForEachCallsOverlap: the three branches of a parallel
// forEach (testdata/bundles/rt-foreach-calls) call a real partner over
// HTTP at once, one-way and request-response, in both modes. The
// partner holds each request until all three are in flight (bounded:
// after 5s it answers anyway and the test fails on the peak it saw),
// so calls made one after another show as a peak of one.
func TestParallelForEachCallsOverlap(t *testing.T) {
	for _, mode := range []string{"memory", "persistent"} {
		for _, style := range []string{"oneway", "twoway"} {
			t.Run(mode+"/"+style, func(t *testing.T) {
				g := &gatePartner{want: 3, open: make(chan struct{})}
				srv := httptest.NewServer(g)
				defer srv.Close()
				client := soap.NewClient(soap.ClientOptions{Timeout: 10 * time.Second})
				e, procs := deployInMode(t, "testdata/bundles/rt-foreach-calls", mode, Options{Partners: func(ep *exchange.Endpoint) exchange.Partner {
					c := *ep
					c.Address = srv.URL + "/partner"
					return client.Partner(&c)
				}})
				defer e.Close()
				r := dispatch(t, e, procs[0], testReq("F1", "1", style))
				if r.err != nil || r.fault != nil || r.out == nil || childText(r.out.Part("payload"), "a") != "done" {
					t.Fatalf("err %v, fault %v, reply %v", r.err, r.fault, r.out)
				}
				// One-way calls of a persistent instance leave after its
				// commit (the outbox): wait for the three.
				deadline := time.Now().Add(10 * time.Second)
				for g.total() < 3 && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
				if n, peak := g.total(), g.maxInFlight(); n != 3 || peak != 3 {
					t.Fatalf("partner got %d calls, at most %d at once; want 3, all at once", n, peak)
				}
			})
		}
	}
}

// gatePartner is a SOAP partner that holds each request until want are
// in flight (or 5s pass), then answers them all with a tns:resp (which
// the client takes as the acknowledgement of a one-way call).
type gatePartner struct {
	want     int
	mu       sync.Mutex
	inFlight int
	peak     int
	calls    int
	open     chan struct{}
	opened   bool
}

func (g *gatePartner) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	g.calls++
	g.inFlight++
	g.peak = max(g.peak, g.inFlight)
	if g.inFlight >= g.want && !g.opened {
		g.opened = true
		close(g.open)
	}
	g.mu.Unlock()
	select {
	case <-g.open:
	case <-time.After(5 * time.Second):
	}
	g.mu.Lock()
	g.inFlight--
	g.mu.Unlock()
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	fmt.Fprint(w, `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>`+
		`<t:resp xmlns:t="urn:test"><t:a>P-ok</t:a></t:resp></s:Body></s:Envelope>`)
}

func (g *gatePartner) total() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls
}

func (g *gatePartner) maxInFlight() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.peak
}
