package main

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/mockpartner"
)

// otlpReceiver is an OTLP/HTTP collector: it decodes what orchd exports
// and keeps the spans.
type otlpReceiver struct {
	url   string
	mu    sync.Mutex
	spans []*tracepb.Span
	bad   []string
}

func startOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	rc := &otlpReceiver{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rc.url = "http://" + ln.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(rc.serve), ReadHeaderTimeout: time.Minute}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return rc
}

func (rc *otlpReceiver) serve(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	var req coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(b, &req)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || err != nil {
		rc.bad = append(rc.bad, r.URL.Path+" "+r.Header.Get("Content-Type")+" "+errString(err))
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	for _, rs := range req.ResourceSpans {
		if svc := attr(rs.GetResource().GetAttributes(), "service.name"); svc != "orchd" {
			rc.bad = append(rc.bad, "service.name "+svc)
		}
		for _, ss := range rs.ScopeSpans {
			rc.spans = append(rc.spans, ss.Spans...)
		}
	}
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// named returns the received spans of trace whose name starts with
// prefix.
func (rc *otlpReceiver) named(trace []byte, prefix string) []*tracepb.Span {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range rc.spans {
		if bytes.Equal(s.TraceId, trace) && strings.HasPrefix(s.Name, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// waitSpan waits for the span of trace named name and returns it; a
// second such span fails t.
func (rc *otlpReceiver) waitSpan(t *testing.T, trace []byte, name string) *tracepb.Span {
	t.Helper()
	waitUntil(t, "span "+name, func() bool { return len(rc.named(trace, name)) > 0 })
	spans := rc.named(trace, name)
	if len(spans) != 1 {
		t.Fatalf("%d spans named %q, want 1", len(spans), name)
	}
	return spans[0]
}

// attr is the string (or integer, formatted) value of attribute key.
func attr(kvs []*commonpb.KeyValue, key string) string {
	for _, kv := range kvs {
		if kv.Key != key {
			continue
		}
		if v, ok := kv.Value.Value.(*commonpb.AnyValue_IntValue); ok {
			return strconv.FormatInt(v.IntValue, 10)
		}
		return kv.Value.GetStringValue()
	}
	return ""
}

// traceparentOf builds a W3C traceparent and returns its ids.
func traceparentOf(t *testing.T, traceHex, spanHex string) (header string, trace, span []byte) {
	t.Helper()
	trace, err := hex.DecodeString(traceHex)
	if err != nil {
		t.Fatal(err)
	}
	span, err = hex.DecodeString(spanHex)
	if err != nil {
		t.Fatal(err)
	}
	return "00-" + traceHex + "-" + spanHex + "-01", trace, span
}

// tracedPost posts a SOAP request with a traceparent.
func tracedPost(t *testing.T, url, action, traceparent string, body []byte) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", textXML)
	req.Header.Set("SOAPAction", action)
	req.Header.Set("traceparent", traceparent)
	req.Header.Set("tracestate", "client=1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, body: string(b)}
}

// A client's trace goes through orchd: the exchange's span continues it,
// each partner call is a child span, and the partners receive the trace
// context of theirs.
func TestTraceCrossesOrchd(t *testing.T) {
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50") // export at once, not every 5 s
	rc := startOTLPReceiver(t)
	var mu sync.Mutex
	got := map[string][2]string{} // partner -> traceparent, tracestate
	mocks := mockpartner.New(nil)
	record := func(name string, h http.Handler) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{ReadHeaderTimeout: time.Minute, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			got[name] = [2]string{r.Header.Get("traceparent"), r.Header.Get("tracestate")}
			mu.Unlock()
			h.ServeHTTP(w, r)
		})}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
		return ln.Addr().String()
	}
	crm, erp := record("crm", mocks.CRM()), record("erp", mocks.ERP())
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", crm, erp, nil)
	o := startOrchd(t, "--deploy", deploy, "--otel-endpoint", rc.url)

	tp, traceID, clientSpan := traceparentOf(t, "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
	checkAck(t, tracedPost(t, o.base+"/processes/PurchaseOrder", poAction, tp, readWorkload(t, "po-request.xml")), map[string]string{"status": "ACCEPTED"})

	var ex *tracepb.Span
	var calls []*tracepb.Span
	waitUntil(t, "the exchange's spans at the collector", func() bool {
		exs := rc.named(traceID, "PurchaseOrder ")
		calls = append(rc.named(traceID, "crm "), rc.named(traceID, "erp ")...)
		if len(exs) == 1 {
			ex = exs[0]
		}
		return ex != nil && len(calls) == 2
	})
	if !bytes.Equal(ex.ParentSpanId, clientSpan) || ex.Kind != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("exchange span parent %x kind %v, want the client's span %x, server", ex.ParentSpanId, ex.Kind, clientSpan)
	}
	if ex.TraceState != "client=1" {
		t.Errorf("exchange span tracestate %q, want the client's", ex.TraceState)
	}
	for key, want := range map[string]string{"orchd.process": "{urn:example:po:process}PurchaseOrder", "orchd.version": "1", "rpc.method": "submitPurchaseOrder",
		"orchd.outcome": "ok", "http.response.status_code": "200"} {
		if v := attr(ex.Attributes, key); v != want {
			t.Errorf("exchange span %s = %q, want %q", key, v, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, c := range calls {
		pl := strings.Fields(c.Name)[0]
		if !bytes.Equal(c.ParentSpanId, ex.SpanId) || c.Kind != tracepb.Span_SPAN_KIND_CLIENT {
			t.Errorf("partner span %q parent %x kind %v, want the exchange's %x, client", c.Name, c.ParentSpanId, c.Kind, ex.SpanId)
		}
		addr := map[string]string{"crm": crm, "erp": erp}[pl]
		if u := attr(c.Attributes, "url.full"); !strings.Contains(u, addr) || attr(c.Attributes, "http.response.status_code") != "200" ||
			attr(c.Attributes, "orchd.partner_link") != pl {
			t.Errorf("partner span %q: url %q status %q link %q, want %s, 200, %s", c.Name, u, attr(c.Attributes, "http.response.status_code"),
				attr(c.Attributes, "orchd.partner_link"), addr, pl)
		}
		want := "00-" + hex.EncodeToString(traceID) + "-" + hex.EncodeToString(c.SpanId) + "-01"
		if got[pl][0] != want || got[pl][1] != "client=1" {
			t.Errorf("partner %s received traceparent %q tracestate %q, want %q, client=1", pl, got[pl][0], got[pl][1], want)
		}
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.bad) > 0 {
		t.Errorf("bad exports: %v", rc.bad)
	}
}

// approvalCall posts the approval example's request file to operation
// op in trace traceHex, and returns the trace id.
func approvalCall(t *testing.T, o *orchd, op, file, traceHex string) []byte {
	t.Helper()
	body, err := os.ReadFile("../../deploy/order-approval/" + file)
	if err != nil {
		t.Fatal(err)
	}
	tp, trace, _ := traceparentOf(t, traceHex, traceHex[:16])
	if r := tracedPost(t, o.base+approvalPath, `"urn:example:approval#`+op+`"`, tp, body); r.status != http.StatusOK {
		t.Fatalf("%s: %d %s", op, r.status, r.body)
	}
	return trace
}

// A persistent instance's commits are spans of its exchange, and a
// message that resumes it after a restart, in another trace, links to
// the span of its first exchange.
func TestTraceLinksResumedInstance(t *testing.T) {
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	rc := startOTLPReceiver(t)
	deploy, data := t.TempDir(), t.TempDir()
	copyBundleFrom(t, "../../deploy/order-approval", deploy, "order-approval", "", "", nil)
	o := startOrchd(t, "--deploy", deploy, "--data", data, "--otel-endpoint", rc.url)
	trace1 := approvalCall(t, o, "requestApproval", "request-approval.xml", "11111111111111111111111111111111")
	first := rc.waitSpan(t, trace1, "OrderApproval requestApproval")
	waitUntil(t, "the first exchange's commit span", func() bool { return len(rc.named(trace1, "commit")) > 0 })
	for _, c := range rc.named(trace1, "commit") {
		if !bytes.Equal(c.ParentSpanId, first.SpanId) || attr(c.Attributes, "orchd.instance") == "" {
			t.Errorf("commit span parent %x instance %q, want the exchange's %x and an instance id", c.ParentSpanId, attr(c.Attributes, "orchd.instance"), first.SpanId)
		}
	}
	// The stored trace is no variable of the instance.
	for _, in := range listInstances(t, o, mgmt.Query{}) {
		for name := range in.Variables {
			if strings.HasPrefix(name, "slot") {
				t.Errorf("instance %s lists variable %q", in.ID, name)
			}
		}
	}

	o.stop(t)
	o = startOrchd(t, "--deploy", deploy, "--data", data, "--otel-endpoint", rc.url)
	trace2 := approvalCall(t, o, "decide", "decide.xml", "22222222222222222222222222222222")
	second := rc.waitSpan(t, trace2, "OrderApproval decide")
	if len(second.Links) != 1 || !bytes.Equal(second.Links[0].TraceId, trace1) || !bytes.Equal(second.Links[0].SpanId, first.SpanId) {
		t.Errorf("resumed exchange's links = %v, want one to the first exchange's span %x/%x", second.Links, trace1, first.SpanId)
	}
	if attr(second.Attributes, "orchd.instance") != attr(first.Attributes, "orchd.instance") {
		t.Errorf("instance %q resumed, %q started", attr(second.Attributes, "orchd.instance"), attr(first.Attributes, "orchd.instance"))
	}
}
