package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orchd/orchd/internal/process"
	"github.com/orchd/orchd/internal/soap"
)

// The handler routes /, /instances and /metrics itself and everything else
// to the SOAP front door.
func TestRouting(t *testing.T) {
	procs, err := process.LoadBundle("../../deploy/purchase-order")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	e := process.NewEngine(process.Options{Registerer: reg})
	if err := e.Deploy(procs...); err != nil {
		t.Fatal(err)
	}
	front := soap.NewServer(soap.ServerOptions{Registerer: reg})
	for _, ep := range procs[0].Endpoints {
		if err := front.Handle(ep, e); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(New(Options{Engine: e, SOAP: front, Gatherer: reg}))
	defer srv.Close()

	get := func(path, accept string) (int, string, string) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}
	code, ctype, body := get("/", "application/json")
	var list []ProcessInfo
	if code != 200 || !strings.HasPrefix(ctype, "application/json") || json.Unmarshal([]byte(body), &list) != nil {
		t.Fatalf("JSON listing: %d %s %s", code, ctype, body)
	}
	if len(list) != 1 || list[0].Name != "PurchaseOrder" || !list[0].InMemory || list[0].Endpoints[0].Path != "/processes/PurchaseOrder" ||
		list[0].Endpoints[0].Operations[0] != "submitPurchaseOrder" || list[0].Endpoints[0].WSDL != "/processes/PurchaseOrder?wsdl" {
		t.Errorf("listing: %+v", list)
	}
	if code, ctype, body := get("/", ""); code != 200 || !strings.HasPrefix(ctype, "text/html") || !strings.Contains(body, "PurchaseOrder") {
		t.Errorf("HTML listing: %d %s", code, ctype)
	}
	if code, _, body := get("/instances", ""); code != 200 || strings.TrimSpace(body) != "[]" {
		t.Errorf("instances without a store: %d %q", code, body)
	}
	if code, _, body := get("/metrics", ""); code != 200 || !strings.Contains(body, "orchd_instances_started_total") {
		t.Errorf("metrics: %d", code)
	}
	if code, _, body := get("/processes/PurchaseOrder?wsdl", ""); code != 200 || !strings.Contains(body, "PurchaseOrderService") {
		t.Errorf("wsdl through the front door: %d", code)
	}
	if code, _, body := get("/nope", ""); code != 404 || !strings.Contains(body, "Fault") {
		t.Errorf("unknown path: %d %s", code, body)
	}
}
