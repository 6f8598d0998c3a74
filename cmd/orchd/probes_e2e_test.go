package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/health"
	"github.com/orchd/orchd/internal/mockpartner"
)

// gatedPartners serves the example's CRM and ERP mocks; a CRM call waits
// for gate after telling arrived.
func gatedPartners(t *testing.T, arrived chan<- struct{}, gate <-chan struct{}) (crm, erp string) {
	t.Helper()
	mocks := mockpartner.New(nil)
	serve := func(h http.Handler) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: time.Minute}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
		return ln.Addr().String()
	}
	crm = serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-gate
		mocks.CRM().ServeHTTP(w, r)
	}))
	return crm, serve(mocks.ERP())
}

// probe GETs path on a connection of its own (none kept alive, so that a
// closed listener shows) and decodes the report.
func probe(base, path string) (int, health.Report, error) {
	c := &http.Client{Timeout: time.Minute, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(base + path)
	if err != nil {
		return 0, health.Report{}, err
	}
	defer resp.Body.Close()
	var r health.Report
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return 0, r, fmt.Errorf("%s: %w", path, err)
	}
	return resp.StatusCode, r, nil
}

// At SIGTERM /readyz turns 503 while the listener still serves; the
// exchange in flight then drains: a second signal ends --drain-delay,
// the listener closes, and the exchange still gets its answer.
func TestReadyzDrainsAtSIGTERM(t *testing.T) {
	arrived, gate := make(chan struct{}, 1), make(chan struct{})
	crm, erp := gatedPartners(t, arrived, gate)
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", crm, erp, nil)
	o := startOrchd(t, "--deploy", deploy, "--drain-delay", "1h", "--shutdown-timeout", "10m")
	if status, r, err := probe(o.base, "/readyz"); err != nil || status != http.StatusOK || r.Status != "ready" {
		t.Fatalf("/readyz before SIGTERM = %d %+v (%v), want 200 ready", status, r, err)
	}

	type answer struct {
		status int
		body   string
		err    error
	}
	inflight := make(chan answer, 1)
	go func() {
		resp, err := http.Post(o.base+"/processes/PurchaseOrder", textXML, bytes.NewReader(readWorkload(t, "po-request.xml")))
		if err != nil {
			inflight <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		inflight <- answer{resp.StatusCode, string(b), err}
	}()
	<-arrived // the exchange is in flight, held at the CRM call

	if err := o.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var drained health.Report
	waitUntil(t, "/readyz to answer 503", func() bool {
		status, r, err := probe(o.base, "/readyz")
		if err != nil {
			t.Fatalf("/readyz after SIGTERM: %v (the listener closed before /readyz turned 503?)\n%s", err, o.log())
		}
		drained = r
		return status == http.StatusServiceUnavailable
	})
	if drained.Status != "draining" || !slices.Equal(drained.Failing, []string{health.CheckShutdown}) {
		t.Errorf("/readyz while draining = %+v, want status draining, failing [shutdown]", drained)
	}
	if status, _, err := probe(o.base, "/healthz"); err != nil || status != http.StatusOK {
		t.Errorf("/healthz while draining = %d (%v), want 200", status, err)
	}
	if strings.Contains(o.log(), "msg=\"shutting down\"") {
		t.Errorf("shut down before the drain delay ended:\n%s", o.log())
	}

	// The second signal ends the drain: the listener closes while the
	// exchange is still held at its partner.
	if err := o.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the listener to close", func() bool {
		_, _, err := probe(o.base, "/healthz")
		return err != nil
	})
	select {
	case a := <-inflight:
		t.Fatalf("the exchange in flight ended before its partner answered: %+v", a)
	default:
	}
	close(gate)
	a := <-inflight
	if a.err != nil || a.status != http.StatusOK || !strings.Contains(a.body, "ACCEPTED") {
		t.Errorf("in-flight exchange = %d %q (%v), want its ACCEPTED acknowledgment", a.status, a.body, a.err)
	}
	err := <-o.done
	o.done <- err // for the cleanup
	if err != nil || !strings.Contains(o.log(), "msg=stopped") {
		t.Errorf("orchd exit %v, want a clean stop:\n%s", err, o.log())
	}
}
