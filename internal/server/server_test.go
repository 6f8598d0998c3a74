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
	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/process/interp"
	"github.com/orchd/orchd/internal/soap"
)

// The handler routes / and /metrics itself and everything else
// to the SOAP front door.
func TestRouting(t *testing.T) {
	e, front, reg := purchaseOrder(t)
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
	// Instances are listed by the management API only (/api/v1/instances):
	// /instances is a path as any other, the front door's.
	if code, _, body := get("/instances", ""); code != 404 || !strings.Contains(body, "Fault") {
		t.Errorf("/instances: %d %s", code, body)
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

// An admin handler gets /api/v1/ and /console/; the SOAP endpoints, / and
// /metrics are as before.
func TestAdminMounted(t *testing.T) {
	e, front, reg := purchaseOrder(t)
	admin := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "admin "+r.URL.Path) })
	srv := httptest.NewServer(New(Options{Engine: e, SOAP: front, Gatherer: reg, Admin: admin}))
	defer srv.Close()
	tests := []struct {
		path, want string
	}{
		{"/api/v1/", "admin /api/v1/"},
		{"/api/v1/instances?state=waiting", "admin /api/v1/instances"},
		{"/console/", "admin /console/"},
		{"/api/v1/processes/%7Bhttp:%2F%2Fx%2Fy%7DP", "admin /api/v1/processes/{http://x/y}P"},
		{"/processes/PurchaseOrder?wsdl", "PurchaseOrderService"},
		{"/metrics", "orchd_instances_started_total"},
		{"/", "PurchaseOrder"},
	}
	for _, tc := range tests {
		resp, err := http.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s: %d %.200s, want %q", tc.path, resp.StatusCode, b, tc.want)
		}
	}
}

// purchaseOrder deploys the example's purchase order and serves its
// endpoints.
func purchaseOrder(t *testing.T) (*process.Engine, *soap.Server, *prometheus.Registry) {
	t.Helper()
	procs, err := compile.LoadBundle("../../deploy/purchase-order")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	e := process.NewEngine(process.Options{Registerer: reg})
	if err := e.Deploy(interp.NewVersions(procs)...); err != nil {
		t.Fatal(err)
	}
	front := soap.NewServer(soap.ServerOptions{Registerer: reg})
	for _, ep := range procs[0].Endpoints {
		if err := front.Handle(ep, e); err != nil {
			t.Fatal(err)
		}
	}
	return e, front, reg
}
