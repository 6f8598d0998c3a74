package soap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beevik/etree"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/orchd/orchd/internal/exchange"
)

// dispatchFunc adapts a function to exchange.Dispatcher.
type dispatchFunc func(ctx context.Context, ex *exchange.Exchange) error

func (f dispatchFunc) Dispatch(ctx context.Context, ex *exchange.Exchange) error { return f(ctx, ex) }

// testDispatcher answers the test operations. For submitPurchaseOrder the
// poId selects the behavior.
type testDispatcher struct {
	notified atomic.Int64
	late     chan func() // receives a Respond to call after Dispatch returned
}

func (d *testDispatcher) Dispatch(_ context.Context, ex *exchange.Exchange) error {
	switch ex.Operation.Name {
	case "notify":
		d.notified.Add(1)
		return nil
	case "add":
		a, _ := strconv.Atoi(ex.Input.Part("a").Text())
		b, _ := strconv.Atoi(ex.Input.Part("b").Text())
		out := exchange.NewMessage(ex.Operation.Output.Name)
		sum := etree.NewElement("sum")
		sum.SetText(strconv.Itoa(a + b))
		out.Parts["sum"] = sum
		ex.Respond(out, nil)
		return nil
	}
	po := ex.Input.Part("order")
	id := po.FindElement("poId").Text()
	switch id {
	case "FAULT":
		f := mustElementNoT(`<po:orderFault xmlns:po="urn:example:po"><po:why>no items</po:why></po:orderFault>`)
		msg := exchange.NewMessage(ex.Operation.Faults["invalidOrder"].Name)
		msg.Parts["detail"] = f
		ex.Respond(nil, &exchange.Fault{Name: ex.Operation.FaultName("invalidOrder"), Message: msg, Reason: "no items"})
		return nil
	case "CLIENT":
		return exchange.ClientError("customer %s unknown", "C-1")
	case "SERVER":
		return errors.New("database on fire")
	case "UNAVAILABLE":
		return &exchange.Error{Kind: exchange.KindUnavailable, Err: errors.New("shutting down")}
	case "PANIC":
		panic("boom")
	case "NOREPLY":
		return nil
	}
	ack := mustElementNoT(`<po:purchaseOrderAck xmlns:po="urn:example:po"><po:poId>` + id + `</po:poId><po:status>ACCEPTED</po:status></po:purchaseOrderAck>`)
	out := exchange.NewMessage(ex.Operation.Output.Name)
	out.Parts["ack"] = ack
	ex.Respond(out, nil)
	switch id {
	case "TWICE":
		ex.Respond(out, nil)
	case "LATE":
		if d.late != nil {
			d.late <- func() { ex.Respond(out, nil) }
		}
	}
	return nil
}

func mustElementNoT(s string) *etree.Element {
	doc := etree.NewDocument()
	if err := doc.ReadFromString(s); err != nil {
		panic(err)
	}
	root := doc.Root()
	root.Remove()
	return root
}

func poEndpoint() *exchange.Endpoint {
	return &exchange.Endpoint{
		Process:    exchange.QName{Space: nsPO, Local: "poProcess"},
		Service:    exchange.QName{Space: nsPO, Local: "poService"},
		Port:       "poPort",
		Path:       "/po",
		Version:    exchange.SOAP11,
		Operations: []*exchange.Operation{poOp(), notifyOp()},
		WSDL: &exchange.WSDLDocs{Main: "po.wsdl", Docs: map[string][]byte{
			"po.wsdl": []byte(`<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:xsd="http://www.w3.org/2001/XMLSchema">` +
				`<wsdl:import namespace="urn:c" location="common/types.wsdl"/><wsdl:import namespace="urn:x" location="http://elsewhere/x.wsdl"/>` +
				`<wsdl:types><xsd:schema><xsd:import namespace="urn:example:po" schemaLocation="po.xsd"/></xsd:schema></wsdl:types></wsdl:definitions>`),
			"po.xsd":            []byte(`<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:example:po"/>`),
			"common/types.wsdl": []byte(`<definitions xmlns="http://schemas.xmlsoap.org/wsdl/"><types><schema xmlns="http://www.w3.org/2001/XMLSchema"><include schemaLocation="../po.xsd"/></schema></types></definitions>`),
		}},
	}
}

func calcEndpoint() *exchange.Endpoint {
	return &exchange.Endpoint{
		Service:    exchange.QName{Space: nsCalc, Local: "calcService"},
		Path:       "/calc",
		Version:    exchange.SOAP12,
		Operations: []*exchange.Operation{addOp()},
	}
}

// newTestServer serves the PO and calc endpoints.
func newTestServer(t *testing.T, opts ServerOptions) (*Server, *httptest.Server, *testDispatcher) {
	t.Helper()
	s := NewServer(opts)
	d := &testDispatcher{}
	for _, ep := range []*exchange.Endpoint{poEndpoint(), calcEndpoint()} {
		if err := s.Handle(ep, d); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return s, hs, d
}

func poRequest(t testing.TB, id string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "po-request.xml"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Replace(string(data), "PO-000123", id, 1)
}

const addRequest = `<env:Envelope xmlns:env="` + NS12 + `" xmlns:c="urn:example:calc"><env:Body><c:add><a>2</a><b><c:operand>3</c:operand></b></c:add></env:Body></env:Envelope>`

const notifyRequest = `<s:Envelope xmlns:s="` + NS11 + `"><s:Body><n:notification xmlns:n="urn:example:po"/></s:Body></s:Envelope>`

type response struct {
	status int
	header http.Header
	body   string
	env    *Envelope
}

func post(t *testing.T, url, ct, action, body string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	if action != "" {
		req.Header.Set("SOAPAction", action)
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) response {
	t.Helper()
	return doWith(t, http.DefaultClient, req)
}

// doWith sends req with c and reads the response.
func doWith(t *testing.T, c *http.Client, req *http.Request) response {
	t.Helper()
	r, err := send(c, req)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// send sends req with c and reads the response, from any goroutine.
func send(c *http.Client, req *http.Request) (response, error) {
	resp, err := c.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, err
	}
	r := response{status: resp.StatusCode, header: resp.Header, body: string(b)}
	if len(b) > 0 && strings.Contains(resp.Header.Get("Content-Type"), "xml") {
		r.env, _ = DecodeEnvelope(bytes.NewReader(b))
	}
	return r, nil
}

// postAsync is post for a goroutine other than the test's, which must
// not call t.Fatal: a failure comes back as status 0 with the error as
// the body, for the test's goroutine to report.
func postAsync(url, ct, body string) response {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return response{body: err.Error()}
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	r, err := send(http.DefaultClient, req)
	if err != nil {
		return response{body: err.Error()}
	}
	return r
}

func (r response) fault(t *testing.T) *Fault {
	t.Helper()
	if r.env == nil {
		t.Fatalf("HTTP %d, not an envelope: %s", r.status, r.body)
	}
	f := r.env.Fault()
	if f == nil {
		t.Fatalf("HTTP %d, not a fault: %s", r.status, r.body)
	}
	return f
}

func TestServerExchanges(t *testing.T) {
	_, hs, _ := newTestServer(t, ServerOptions{})
	const ct11, ct12 = "text/xml; charset=utf-8", "application/soap+xml; charset=utf-8"
	tests := []struct {
		name       string
		path       string
		ct, action string
		body       string
		status     int
		code       FaultCode // when a fault is expected
		reason     string    // fault reason substring, "" for a reply
		check      func(t *testing.T, env *Envelope)
	}{
		{name: "doc 1.1 reply", path: "/po", ct: ct11, action: `"urn:example:po#submitPurchaseOrder"`, body: poRequest(t, "PO-1"), status: 200,
			check: func(t *testing.T, env *Envelope) {
				if got := env.Body[0].FindElement("poId").Text(); got != "PO-1" {
					t.Errorf("poId = %q", got)
				}
			}},
		{name: "rpc 1.2 reply", path: "/calc", ct: ct12 + `; action="urn:example:calc#add"`, body: addRequest, status: 200,
			check: func(t *testing.T, env *Envelope) {
				w := env.Body[0]
				if qnameOf(w) != (exchange.QName{Space: nsCalc, Local: "addResponse"}) || w.SelectElement("sum").Text() != "5" {
					t.Errorf("response %s", xmlString(t, w))
				}
			}},
		{name: "one-way", path: "/po", ct: ct11, body: notifyRequest, status: 202},
		{name: "declared fault", path: "/po", ct: ct11, body: poRequest(t, "FAULT"), status: 500, code: FaultServer, reason: "invalidOrder: no items",
			check: func(t *testing.T, env *Envelope) {
				f := env.Fault()
				if len(f.Detail) != 1 || qnameOf(f.Detail[0]) != (exchange.QName{Space: nsPO, Local: "orderFault"}) {
					t.Errorf("detail %v", f.Detail)
				}
			}},
		{name: "client error", path: "/po", ct: ct11, body: poRequest(t, "CLIENT"), status: 500, code: FaultClient, reason: "customer C-1 unknown"},
		{name: "server error", path: "/po", ct: ct11, body: poRequest(t, "SERVER"), status: 500, code: FaultServer, reason: "database on fire"},
		{name: "unavailable", path: "/po", ct: ct11, body: poRequest(t, "UNAVAILABLE"), status: 503, code: FaultServer, reason: "shutting down"},
		{name: "panic", path: "/po", ct: ct11, body: poRequest(t, "PANIC"), status: 500, code: FaultServer, reason: "internal error"},
		{name: "no reply", path: "/po", ct: ct11, body: poRequest(t, "NOREPLY"), status: 500, code: FaultServer,
			reason: "process completed without replying to submitPurchaseOrder"},
		{name: "respond twice", path: "/po", ct: ct11, body: poRequest(t, "TWICE"), status: 200},
		{name: "1.2 sender fault is 400", path: "/calc", ct: ct12, body: strings.Replace(addRequest, "<a>2</a>", "", 1), status: 400,
			code: FaultClient, reason: "missing part accessor a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := post(t, hs.URL+tt.path, tt.ct, tt.action, tt.body)
			if r.status != tt.status {
				t.Fatalf("status = %d, want %d: %s", r.status, tt.status, r.body)
			}
			switch {
			case tt.reason != "":
				f := r.fault(t)
				if f.Code != tt.code || !strings.Contains(f.Reason, tt.reason) {
					t.Errorf("fault %v %q, want %v %q", f.Code, f.Reason, tt.code, tt.reason)
				}
			case tt.status == 202:
				if r.body != "" {
					t.Errorf("202 with body %q", r.body)
				}
			default:
				if r.env == nil || r.env.Fault() != nil {
					t.Fatalf("not a reply: %s", r.body)
				}
			}
			if tt.check != nil {
				tt.check(t, r.env)
			}
		})
	}
}

// TestServerBadInput sends bad requests, each followed by a good one that
// must still succeed.
func TestServerBadInput(t *testing.T) {
	_, hs, _ := newTestServer(t, ServerOptions{MaxBodyBytes: 4096})
	const ct11 = "text/xml; charset=utf-8"
	tests := []struct {
		name   string
		method string
		path   string
		ct     string
		body   string
		status int
		code   FaultCode
		reason string
	}{
		{"malformed xml", "POST", "/po", ct11, "<s:Envelope xmlns:s=\"" + NS11 + "\">\n<s:Body>\n</s:Envelope>", 500, FaultClient, "line 3"},
		{"wrong envelope namespace", "POST", "/po", ct11, `<s:Envelope xmlns:s="urn:soap"><s:Body/></s:Envelope>`, 500, FaultVersionMismatch, "urn:soap"},
		{"not an envelope", "POST", "/po", ct11, `<po:purchaseOrder xmlns:po="urn:example:po"/>`, 500, FaultClient, "not a SOAP envelope"},
		{"no body", "POST", "/po", ct11, `<s:Envelope xmlns:s="` + NS11 + `"/>`, 500, FaultClient, "no Body"},
		{"unknown operation", "POST", "/po", ct11, `<s:Envelope xmlns:s="` + NS11 + `"><s:Body><x:nope xmlns:x="urn:x"/></s:Body></s:Envelope>`, 500, FaultClient,
			`{urn:x}nope, SOAPAction "urn:what"; endpoint /po offers: submitPurchaseOrder, notify`},
		{"wrong content type", "POST", "/po", "application/json", `{}`, 415, FaultClient, "unsupported content type"},
		{"soap 1.2 content type at 1.1 endpoint", "POST", "/po", "application/soap+xml", poRequest(t, "X"), 415, FaultClient, "speaks SOAP 1.1"},
		{"1.2 envelope as text/xml", "POST", "/calc", ct11, addRequest, 415, FaultClient, "speaks SOAP 1.2"},
		{"body too large", "POST", "/po", ct11, poRequest(t, strings.Repeat("X", 5000)), 413, FaultClient, "exceeds 4096 bytes"},
		{"empty body", "POST", "/po", ct11, "", 500, FaultClient, "empty document"},
		{"DOCTYPE", "POST", "/po", ct11, `<!DOCTYPE s:Envelope [<!ENTITY x "y">]>` + poRequest(t, "X"), 500, FaultClient, "DTD (DOCTYPE) not allowed"},
		{"undefined entity", "POST", "/po", ct11, poRequest(t, "&x;"), 500, FaultClient, "undefined entity &x;"},
		{"duplicate attribute", "POST", "/po", ct11, strings.Replace(poRequest(t, "X"), "<po:purchaseOrder", `<po:purchaseOrder xmlns:p="urn:p" xmlns:q="urn:p" p:a="1" q:a="2"`, 1), 500, FaultClient, "repeats attribute {urn:p}a"},
		{"unbound prefix", "POST", "/po", ct11, strings.Replace(poRequest(t, "X"), "<po:purchaseOrder", `<po:purchaseOrder><q:x/`, 1), 500, FaultClient, "prefix q is not bound"},
		{"unknown path", "POST", "/nowhere", ct11, poRequest(t, "X"), 404, FaultClient, "/nowhere"},
		{"GET unknown path", "GET", "/nowhere?wsdl", "", "", 404, FaultClient, "/nowhere"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, hs.URL+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if tt.ct != "" {
				req.Header.Set("Content-Type", tt.ct)
			}
			req.Header.Set("SOAPAction", `"urn:what"`)
			r := do(t, req)
			if r.status != tt.status {
				t.Fatalf("status = %d, want %d: %s", r.status, tt.status, r.body)
			}
			f := r.fault(t)
			if f.Code != tt.code || !strings.Contains(f.Reason, tt.reason) {
				t.Errorf("fault %v %q, want %v containing %q", f.Code, f.Reason, tt.code, tt.reason)
			}
			good := post(t, hs.URL+"/po", ct11, "", poRequest(t, "PO-OK"))
			if good.status != 200 || good.env == nil || good.env.Fault() != nil {
				t.Errorf("next good request: %d %s", good.status, good.body)
			}
		})
	}
	req, _ := http.NewRequest(http.MethodPut, hs.URL+"/po", nil)
	if r := do(t, req); r.status != 405 || r.header.Get("Allow") == "" {
		t.Errorf("PUT: %d Allow=%q", r.status, r.header.Get("Allow"))
	}
}

func TestServerResolveByAction(t *testing.T) {
	// Two operations taking the same element: the SOAPAction decides.
	op1, op2 := poOp(), poOp()
	op2.Name, op2.Action = "resubmit", "urn:example:po#resubmit"
	ep := poEndpoint()
	ep.Operations = []*exchange.Operation{op1, op2}
	var got atomic.Value
	s := NewServer(ServerOptions{})
	err := s.Handle(ep, dispatchFunc(func(_ context.Context, ex *exchange.Exchange) error {
		got.Store(ex.Operation.Name)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	for _, action := range []string{"urn:example:po#resubmit", "urn:example:po#submitPurchaseOrder"} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/po", strings.NewReader(poRequest(t, "A")))
		req.Header.Set("Content-Type", "text/xml")
		req.Header.Set("SOAPAction", `"`+action+`"`)
		s.ServeHTTP(rec, req)
		if !strings.HasSuffix(action, "#"+got.Load().(string)) {
			t.Errorf("action %s dispatched %v", action, got.Load())
		}
	}
}

// Two operations taking the same element with the same (here empty)
// SOAPAction: the request is refused naming both, never given to one of
// them by chance.
func TestServerAmbiguousOperation(t *testing.T) {
	op1, op2 := poOp(), poOp()
	op1.Action, op2.Name, op2.Action = "", "resubmit", ""
	ep := poEndpoint()
	ep.Operations = []*exchange.Operation{op1, op2}
	var calls atomic.Int32
	s := NewServer(ServerOptions{})
	if err := s.Handle(ep, dispatchFunc(func(context.Context, *exchange.Exchange) error {
		calls.Add(1)
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/po", strings.NewReader(poRequest(t, "A")))
	req.Header.Set("Content-Type", "text/xml")
	s.ServeHTTP(rec, req)
	body := rec.Body.String()
	if calls.Load() != 0 || rec.Code != http.StatusInternalServerError || !strings.Contains(body, "submitPurchaseOrder and resubmit") {
		t.Errorf("dispatched %d times; status %d body %s", calls.Load(), rec.Code, body)
	}
}

func TestServerHandle(t *testing.T) {
	s := NewServer(ServerOptions{})
	d := &testDispatcher{}
	if err := s.Handle(poEndpoint(), d); err != nil {
		t.Fatal(err)
	}
	if err := s.Handle(poEndpoint(), d); !errors.Is(err, ErrPathTaken) {
		t.Errorf("second Handle: %v", err)
	}
	if err := s.Handle(calcEndpoint(), d); err != nil {
		t.Fatal(err)
	}
	eps := s.Endpoints()
	if len(eps) != 2 || eps[0].Path != "/calc" || eps[1].Path != "/po" {
		t.Errorf("Endpoints = %v", eps)
	}
}

// TestServerReplaceRemove: Replace serves a new endpoint at a taken path
// (a redeploy), Remove stops serving a path (an undeploy: 404 after).
func TestServerReplaceRemove(t *testing.T) {
	s, hs, d := newTestServer(t, ServerOptions{})
	next := poEndpoint()
	if err := s.Replace(next, d); err != nil {
		t.Fatal(err)
	}
	if eps := s.Endpoints(); len(eps) != 2 || eps[1] != next {
		t.Fatalf("after Replace: %v", eps)
	}
	if r := post(t, hs.URL+"/po", "text/xml", "", poRequest(t, "R1")); r.status != 200 {
		t.Fatalf("after Replace: %d %s", r.status, r.body)
	}
	if !s.Remove("/po") || s.Remove("/po") {
		t.Fatalf("Remove: want true, then false")
	}
	if r := post(t, hs.URL+"/po", "text/xml", "", poRequest(t, "R2")); r.status != 404 {
		t.Fatalf("after Remove: %d %s", r.status, r.body)
	}
	if r := post(t, hs.URL+"/calc", "application/soap+xml", "", "junk"); r.status == 404 {
		t.Fatalf("Remove took another path too")
	}
}

// TestServerLateRespond checks that a Respond after Dispatch returned, from
// another goroutine, is ignored.
func TestServerLateRespond(t *testing.T) {
	_, hs, d := newTestServer(t, ServerOptions{})
	d.late = make(chan func(), 1)
	r := post(t, hs.URL+"/po", "text/xml", "", poRequest(t, "LATE"))
	if r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	(<-d.late)() // must neither panic nor race
}

func TestServerWSDL(t *testing.T) {
	_, hs, _ := newTestServer(t, ServerOptions{})
	get := func(q string) response {
		req, _ := http.NewRequest(http.MethodGet, hs.URL+"/po"+q, nil)
		return do(t, req)
	}
	main := get("?wsdl")
	if main.status != 200 || !strings.HasPrefix(main.header.Get("Content-Type"), "application/xml") {
		t.Fatalf("?wsdl: %d %s", main.status, main.header.Get("Content-Type"))
	}
	// A bundle's file is data, never an active page of this origin.
	if h := main.header; h.Get("X-Content-Type-Options") != "nosniff" || !strings.HasPrefix(h.Get("Content-Security-Policy"), "sandbox") {
		t.Errorf("?wsdl headers: nosniff %q, CSP %q", h.Get("X-Content-Type-Options"), h.Get("Content-Security-Policy"))
	}
	for _, want := range []string{
		`location="po?wsdl=common%2Ftypes.wsdl"`,
		`location="http://elsewhere/x.wsdl"`,
		`schemaLocation="po?wsdl=po.xsd"`,
	} {
		if !strings.Contains(main.body, want) {
			t.Errorf("?wsdl lacks %s:\n%s", want, main.body)
		}
	}
	types := get("?wsdl=common%2Ftypes.wsdl")
	if types.status != 200 || !strings.Contains(types.body, `schemaLocation="po?wsdl=po.xsd"`) {
		t.Errorf("?wsdl=common/types.wsdl: %d %s", types.status, types.body)
	}
	if r := get("?wsdl=po.xsd"); r.status != 200 || !strings.Contains(r.body, "targetNamespace") {
		t.Errorf("?wsdl=po.xsd: %d %s", r.status, r.body)
	}
	if r := get("?wsdl=nope.xsd"); r.status != 404 {
		t.Errorf("?wsdl=nope.xsd: %d", r.status)
	}
	if r := get(""); r.status != 405 {
		t.Errorf("GET without ?wsdl: %d", r.status)
	}
}

func TestServerMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	_, hs, _ := newTestServer(t, ServerOptions{Registerer: reg})
	post(t, hs.URL+"/po", "text/xml", "", poRequest(t, "A"))
	post(t, hs.URL+"/po", "text/xml", "", poRequest(t, "FAULT"))
	post(t, hs.URL+"/po", "text/xml", "", notifyRequest)
	post(t, hs.URL+"/po", "text/xml", "", "junk")
	post(t, hs.URL+"/po", "text/xml", "", poRequest(t, "SERVER"))
	// A second server on the same registry shares the collectors.
	NewServer(ServerOptions{Registerer: reg})

	want := map[string]float64{
		"poProcess/submitPurchaseOrder/ok":           1,
		"poProcess/submitPurchaseOrder/fault":        1,
		"poProcess/submitPurchaseOrder/server_error": 1,
		"poProcess/notify/accepted":                  1,
		"poProcess/unknown/client_error":             1,
		"calcService/add/ok":                         0,
	}
	// The handler records an exchange just after writing its response, so
	// the last one may still be in flight: poll briefly.
	var counts map[string]float64
	var stages int
	for range 100 {
		counts, stages = gatherExchanges(t, reg)
		if maps.Equal(pick(counts, want), want) && stages == 2 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("exchanges = %v, want %v; %d stage series, want 2", counts, want, stages)
}

// gatherExchanges returns orchd_exchanges_total by process/operation/outcome
// and the number of stage series.
func gatherExchanges(t *testing.T, reg *prometheus.Registry) (map[string]float64, int) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]float64{}
	var stages int
	for _, mf := range mfs {
		switch mf.GetName() {
		case "orchd_exchanges_total":
			for _, m := range mf.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				key := labels["process"] + "/" + labels["operation"] + "/" + labels["outcome"]
				counts[key] = m.GetCounter().GetValue()
			}
		case "orchd_exchange_stage_seconds":
			stages = len(mf.GetMetric())
		}
	}
	return counts, stages
}

func pick(m, keys map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(keys))
	for k := range keys {
		out[k] = m[k]
	}
	return out
}

func BenchmarkServerPO(b *testing.B) {
	s := NewServer(ServerOptions{})
	if err := s.Handle(poEndpoint(), &testDispatcher{}); err != nil {
		b.Fatal(err)
	}
	body := poRequest(b, "PO-1")
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/po", strings.NewReader(body))
		req.Header.Set("Content-Type", "text/xml")
		s.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(fmt.Sprint(rec.Code, rec.Body.String()))
		}
	}
}
