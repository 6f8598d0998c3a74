package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/orchd/orchd/internal/mockpartner"
	"github.com/orchd/orchd/internal/process"
)

// anyNamed returns the received spans, of any trace, whose name starts
// with prefix.
func (rc *otlpReceiver) anyNamed(prefix string) []*tracepb.Span {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range rc.spans {
		if strings.HasPrefix(s.Name, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// An instance sampled for activity timing (--sample-every 1: all) has a
// span per activity, a child of its exchange's span, named by the
// activity's element and name and giving its position; the partner
// calls stay children of the exchange.
func TestTraceActivitySpans(t *testing.T) {
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	rc := startOTLPReceiver(t)
	mocks := mockpartner.New(nil)
	serve := func(h http.Handler) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{ReadHeaderTimeout: time.Minute, Handler: h}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
		return ln.Addr().String()
	}
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", serve(mocks.CRM()), serve(mocks.ERP()), nil)
	o := startOrchd(t, "--deploy", deploy, "--otel-endpoint", rc.url, "--sample-every", "1")

	tp, traceID, _ := traceparentOf(t, "5bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
	checkAck(t, tracedPost(t, o.base+"/processes/PurchaseOrder", poAction, tp, readWorkload(t, "po-request.xml")), map[string]string{"status": "ACCEPTED"})
	ex := rc.waitSpan(t, traceID, "PurchaseOrder ")
	want := map[string]*regexp.Regexp{ // span name -> its position
		"sequence main":                regexp.MustCompile(`PurchaseOrder\.bpel:106$`),
		"receive receivePurchaseOrder": regexp.MustCompile(`PurchaseOrder\.bpel:107$`),
		"invoke invokeCRM":             regexp.MustCompile(`PurchaseOrder\.bpel:238$`),
		"invoke invokeERP":             regexp.MustCompile(`PurchaseOrder\.bpel:271$`),
		"reply replyAck":               regexp.MustCompile(`PurchaseOrder\.bpel:300$`),
	}
	for name, pos := range want {
		sp := rc.waitSpan(t, traceID, name)
		if !bytes.Equal(sp.ParentSpanId, ex.SpanId) || sp.Kind != tracepb.Span_SPAN_KIND_INTERNAL {
			t.Errorf("span %q: parent %x kind %v, want the exchange's %x, internal", name, sp.ParentSpanId, sp.Kind, ex.SpanId)
		}
		if p := attr(sp.Attributes, "orchd.position"); !pos.MatchString(p) {
			t.Errorf("span %q: orchd.position %q, want %s", name, p, pos)
		}
		if a := attr(sp.Attributes, "orchd.activity"); a != strings.Fields(name)[0] {
			t.Errorf("span %q: orchd.activity %q", name, a)
		}
		if sp.StartTimeUnixNano < ex.StartTimeUnixNano || sp.EndTimeUnixNano > ex.EndTimeUnixNano || sp.EndTimeUnixNano < sp.StartTimeUnixNano {
			t.Errorf("span %q [%d, %d] is not within the exchange's [%d, %d]", name, sp.StartTimeUnixNano, sp.EndTimeUnixNano, ex.StartTimeUnixNano, ex.EndTimeUnixNano)
		}
	}
	if calls := rc.named(traceID, "crm "); len(calls) != 1 || !bytes.Equal(calls[0].ParentSpanId, ex.SpanId) {
		t.Errorf("CRM call spans %v, want one, a child of the exchange", calls)
	}
}

// The instances not sampled have no activity spans: by default the first
// 16 of a version are, then one in 64 (the 17th is not).
func TestTraceActivitySpansSampledOnly(t *testing.T) {
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	rc := startOTLPReceiver(t)
	deploy := t.TempDir()
	writeProcess(t, deploy, "Plain", "127.0.0.1:1", runBody(``), true)
	o := startOrchd(t, "--deploy", deploy, "--otel-endpoint", rc.url)
	for i := range process.SampleFirst {
		if r := callRun(t, o.base, "Plain", fmt.Sprint("F", i), "1"); r.status != http.StatusOK {
			t.Fatalf("instance %d: status %d body %s", i, r.status, r.body)
		}
	}
	tp, traceID, _ := traceparentOf(t, "6bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
	if r := tracedPost(t, o.base+"/processes/Plain", `"urn:e2e#run"`, tp, e2eRequest("S1", "1")); r.status != http.StatusOK {
		t.Fatalf("status %d body %s", r.status, r.body)
	}
	rc.waitSpan(t, traceID, "Plain run")
	time.Sleep(200 * time.Millisecond) // the batch after the exchange's
	for _, kind := range []string{"receive", "reply", "sequence"} {
		if sp := rc.named(traceID, kind); len(sp) != 0 {
			t.Errorf("an instance not sampled has activity span %q", sp[0].Name)
		}
	}
}

// A persistent process's one-way invoke goes through the outbox, sent
// after the commit: each send is a span of its own (a root: it may run
// after a restart), client kind, naming the instance, with a link to
// the span of the exchange whose run enqueued it; the partner receives
// the send span's trace context.
func TestTraceOutboxSend(t *testing.T) {
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	rc := startOTLPReceiver(t)
	var mu sync.Mutex
	var got []string // traceparent of each call the partner got
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: time.Minute, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("traceparent"))
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	deploy := t.TempDir()
	writeProcess(t, deploy, "Notify", ln.Addr().String(), runBody(`
    <invoke partnerLink="partner" operation="ask" inputVariable="in"/>`), false)
	addAskOperation(t, filepath.Join(deploy, "Notify"))
	o := startOrchd(t, "--deploy", deploy, "--data", t.TempDir(), "--otel-endpoint", rc.url)

	tp, traceID, _ := traceparentOf(t, "7bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
	if r := tracedPost(t, o.base+"/processes/Notify", `"urn:e2e#run"`, tp, e2eRequest("N1", "1")); r.status != http.StatusOK {
		t.Fatalf("status %d body %s\n%s", r.status, r.body, o.log())
	}
	ex := rc.waitSpan(t, traceID, "Notify run")
	var send *tracepb.Span
	waitUntil(t, "the outbox send's span", func() bool {
		spans := rc.anyNamed("outbox partner ask")
		if len(spans) > 0 {
			send = spans[0]
		}
		return send != nil
	})
	if bytes.Equal(send.TraceId, traceID) || len(send.ParentSpanId) != 0 || send.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("send span trace %x parent %x kind %v, want a root of its own trace, client", send.TraceId, send.ParentSpanId, send.Kind)
	}
	if len(send.Links) != 1 || !bytes.Equal(send.Links[0].TraceId, traceID) || !bytes.Equal(send.Links[0].SpanId, ex.SpanId) {
		t.Errorf("send span links %v, want one to the exchange's span %x/%x", send.Links, traceID, ex.SpanId)
	}
	if id := attr(send.Attributes, "orchd.instance"); id == "" || id != attr(ex.Attributes, "orchd.instance") {
		t.Errorf("send span instance %q, exchange's %q", id, attr(ex.Attributes, "orchd.instance"))
	}
	for key, want := range map[string]string{"orchd.partner_link": "partner", "rpc.method": "ask", "orchd.outbox.attempt": "1"} {
		if v := attr(send.Attributes, key); v != want {
			t.Errorf("send span %s = %q, want %q", key, v, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	wantTP := "00-" + hex.EncodeToString(send.TraceId) + "-" + hex.EncodeToString(send.SpanId) + "-01"
	if len(got) != 1 || got[0] != wantTP {
		t.Errorf("partner received traceparent %q, want %q", got, wantTP)
	}
}
