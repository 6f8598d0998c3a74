package process

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/interp"
	"github.com/orchd/orchd/internal/soap"
)

// Issue 34's items 5 and 7, as betsy (the BPEL conformance suite) runs
// them: over the SOAP front door on loopback HTTP, with betsy's message
// shapes (document/literal, xsd:int elements, SOAPAction "sync" and
// "async"), in both modes. Run in process like this, and against the
// binary (orchd serve with betsy's own files and a copy of its test
// partner), they pass: these tests keep them so.

// TestBetsyOneWayStartOnEventOverSOAP: a one-way message starts an
// instance that initiates a correlation set, and a request-response
// message for an onEvent correlated on that set, sent once the first was
// accepted (HTTP 202), finds the instance and gets the handler's reply
// (WS-BPEL 2.0 12.7.1; betsy's Scope-EventHandlers-InitAsync,
// -Scope-MessageExchange-InitAsync and -Parts,
// testdata/bundles/rt-betsy-onevent). It also sends the request first,
// as a client that does not wait for the 202 might: the request waits
// (held) for the instance the one-way message then starts.
func TestBetsyOneWayStartOnEventOverSOAP(t *testing.T) {
	for _, mode := range []string{"memory", "persistent"} {
		t.Run(mode, func(t *testing.T) {
			e, procs := deployInMode(t, "testdata/bundles/rt-betsy-onevent", mode, Options{MessageHold: 5 * time.Second})
			defer e.Close()
			srv := frontDoor(t, e, procs)
			for _, p := range procs {
				path := p.Endpoints[0].Path
				t.Run(p.Name.Local, func(t *testing.T) {
					if code, body := postSOAP(t, srv.URL+path, "async", "startIn", "5"); code != http.StatusAccepted {
						t.Fatalf("one-way start: HTTP %d %s", code, body)
					}
					code, body := postSOAP(t, srv.URL+path, "sync", "askIn", "5")
					if code != http.StatusOK || !regexp.MustCompile(`askOut[^>]*>5<`).MatchString(body) {
						t.Fatalf("request for the onEvent: HTTP %d %s", code, body)
					}
					// The request first: it waits for the instance.
					type answer struct {
						code int
						body string
					}
					got := make(chan answer, 1)
					go func() {
						code, body := postSOAP(t, srv.URL+path, "sync", "askIn", "6")
						got <- answer{code, body}
					}()
					time.Sleep(100 * time.Millisecond)
					if code, body := postSOAP(t, srv.URL+path, "async", "startIn", "6"); code != http.StatusAccepted {
						t.Fatalf("one-way start after the request: HTTP %d %s", code, body)
					}
					a := <-got
					if a.code != http.StatusOK || !regexp.MustCompile(`askOut[^>]*>6<`).MatchString(a.body) {
						t.Fatalf("request sent before the start: HTTP %d %s", a.code, a.body)
					}
				})
			}
		})
	}
}

// TestBetsyParallelForEachCallsOverSOAP: the branches of a parallel
// forEach (betsy's WCP12-MultipleInstancesWithoutSynchronization,
// testdata/bundles/rt-betsy-multi) call a real partner over HTTP at
// once: request-response calls into a variable the branches share, and
// one-way calls, in both modes. The partner holds every request until
// both branches' are in flight (bounded: after 3s it answers anyway, and
// the test fails on the peak it saw), as betsy's partner holds each call
// a second to see whether another comes meanwhile.
func TestBetsyParallelForEachCallsOverSOAP(t *testing.T) {
	for _, mode := range []string{"memory", "persistent"} {
		for _, proc := range []string{"MultiSync", "MultiOneWay"} {
			t.Run(mode+"/"+proc, func(t *testing.T) {
				h := &holdPartner{want: 2, open: make(chan struct{})}
				psrv := httptest.NewServer(h)
				defer psrv.Close()
				client := soap.NewClient(soap.ClientOptions{Timeout: 10 * time.Second})
				e, procs := deployInMode(t, "testdata/bundles/rt-betsy-multi", mode, Options{Partners: func(ep *exchange.Endpoint) exchange.Partner {
					c := *ep
					c.Address = psrv.URL + "/bpel-testpartner"
					return client.Partner(&c)
				}})
				defer e.Close()
				srv := frontDoor(t, e, procs)
				var path string
				for _, p := range procs {
					if p.Name.Local == proc {
						path = p.Endpoints[0].Path
					}
				}
				// 1: the counter runs from 0 to 1, two branches.
				code, body := postSOAP(t, srv.URL+path, "sync", "askIn", "1")
				if code != http.StatusOK || !regexp.MustCompile(`askOut[^>]*>1<`).MatchString(body) {
					t.Fatalf("HTTP %d %s", code, body)
				}
				// One-way calls of a persistent instance leave after its
				// commit (the outbox): wait for both.
				deadline := time.Now().Add(10 * time.Second)
				for h.total() < 2 && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
				if n, peak := h.total(), h.maxInFlight(); n != 2 || peak != 2 {
					t.Fatalf("partner got %d calls, at most %d at once; want 2, both at once", n, peak)
				}
			})
		}
	}
}

// frontDoor serves the endpoints of procs on e through a SOAP server on
// loopback, as orchd serve does (its default admission bound).
func frontDoor(t *testing.T, e *Engine, procs []*interp.Version) *httptest.Server {
	t.Helper()
	fd := soap.NewServer(soap.ServerOptions{MaxInflight: 64})
	for _, p := range procs {
		if err := fd.Handle(p.Endpoints[0], e); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(fd)
	t.Cleanup(srv.Close)
	return srv
}

// postSOAP posts a betsy-style SOAP 1.1 request whose body is the one
// element local (of the test interface's namespace) holding value, and
// returns the HTTP status and body.
func postSOAP(t *testing.T, url, action, local, value string) (int, string) {
	body := `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:tes="urn:test:betsy:iface">` +
		"\n   <soapenv:Header/>\n   <soapenv:Body>\n      " +
		`<tes:` + local + `>` + value + `</tes:` + local + `>` +
		"\n   </soapenv:Body>\n</soapenv:Envelope>"
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	req.Header.Set("Content-Type", "text/xml;charset=UTF-8")
	req.Header.Set("SOAPAction", `"`+action+`"`)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// holdPartner is betsy's test partner as far as these tests need it: it
// holds each request until want are in flight (or 3s pass), then answers
// a call with callOut 100 and a one-way note with HTTP 202.
type holdPartner struct {
	want     int
	mu       sync.Mutex
	inFlight int
	peak     int
	calls    int
	open     chan struct{}
	opened   bool
}

func (h *holdPartner) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.calls++
	h.inFlight++
	h.peak = max(h.peak, h.inFlight)
	if h.inFlight >= h.want && !h.opened {
		h.opened = true
		close(h.open)
	}
	h.mu.Unlock()
	select {
	case <-h.open:
	case <-time.After(3 * time.Second):
	}
	h.mu.Lock()
	h.inFlight--
	h.mu.Unlock()
	if strings.Contains(string(b), "noteIn") {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	fmt.Fprint(w, `<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body>`+
		`<callOut xmlns="urn:test:betsy:partner">100</callOut></S:Body></S:Envelope>`)
}

func (h *holdPartner) total() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls
}

func (h *holdPartner) maxInFlight() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.peak
}
