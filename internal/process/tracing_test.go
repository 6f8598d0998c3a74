package process

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/orchd/orchd/internal/process/interp"
)

// A REST call is a child span of its run's, sends its trace context, and
// names its URL without credentials; a run whose exchange came without
// a span has one of its own.
func TestTraceREST(t *testing.T) {
	var mu sync.Mutex
	var got string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = r.Header.Get("traceparent")
		mu.Unlock()
		fmt.Fprint(w, "<ok/>")
	}))
	defer hs.Close()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	procs, err := loadBundle(restBundle(t, fmt.Sprintf(restBody, restAct(`<rest:GET uri="$bpelvar[url]" response="rsp" statusCode="code"/>`))))
	if err != nil {
		t.Fatal(err)
	}
	// Not sampled: a timed instance traces its activities too (actspans),
	// and this test is about the run's and the REST call's spans.
	e := NewEngine(Options{HTTPTimeout: 5 * time.Second, Tracer: tp.Tracer("test"), SampleFirst: -1, SampleEvery: -1})
	t.Cleanup(e.Close)
	if err := e.Deploy(procs...); err != nil {
		t.Fatal(err)
	}
	url := strings.Replace(hs.URL, "http://", "http://ann:secret@", 1) + "/x?token=t0"
	if r := dispatch(t, e, procs[0], testReq("I", "1", url)); r.err != nil || r.fault != nil {
		t.Fatalf("err=%v fault=%v", r.err, r.fault)
	}
	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want the run's and the REST call's", len(spans))
	}
	call, run := spans[0], spans[1]
	if run.SpanKind() != trace.SpanKindServer || run.Name() != procs[0].Name.Local+" run" || run.Parent().IsValid() {
		t.Errorf("run span %q kind %v parent %v, want a root server span", run.Name(), run.SpanKind(), run.Parent())
	}
	if call.Parent().SpanID() != run.SpanContext().SpanID() || call.SpanKind() != trace.SpanKindClient {
		t.Errorf("REST span parent %v kind %v, want the run's span, client", call.Parent().SpanID(), call.SpanKind())
	}
	attrs := map[string]string{}
	for _, kv := range call.Attributes() {
		attrs[string(kv.Key)] = kv.Value.Emit()
	}
	if u := attrs["url.full"]; u != hs.URL+"/x" || attrs["http.response.status_code"] != "200" || attrs["http.request.method"] != "GET" {
		t.Errorf("REST span attributes %v, want url %s/x (no credentials, no query), status 200, GET", attrs, hs.URL)
	}
	want := fmt.Sprintf("00-%s-%s-01", call.SpanContext().TraceID(), call.SpanContext().SpanID())
	mu.Lock()
	defer mu.Unlock()
	if got != want {
		t.Errorf("the REST server got traceparent %q, want %q", got, want)
	}
}

// discard is a span exporter that drops what it is given.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkPurchaseOrderTraced is BenchmarkPurchaseOrder with every
// exchange traced (sampled) through a batching provider whose exporter
// drops the spans: the cost of tracing on, less the OTLP encoding.
func BenchmarkPurchaseOrderTraced(b *testing.B) {
	procs, err := loadBundle(exampleBundle)
	if err != nil {
		b.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discard{}))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	ip := &inProcessPartners{}
	e := NewEngine(Options{Partners: ip.bind, Tracer: tp.Tracer("bench")})
	if err := e.Deploy(procs...); err != nil {
		b.Fatal(err)
	}
	benchPO(b, e, procs[0])
}

// A call to a process of the same engine is a client span of the
// caller's run, and the callee's run a server span under it, with the
// callee's own attributes (not written onto the call's span).
func TestTraceInProcessCall(t *testing.T) {
	procs, err := loadBundle(filepath.Join(bundlesDir, "rt-call"))
	if err != nil {
		t.Fatal(err)
	}
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	e := NewEngine(Options{Tracer: tp.Tracer("test")})
	t.Cleanup(e.Close)
	if err := e.Deploy(procs...); err != nil {
		t.Fatal(err)
	}
	var caller *interp.Version
	for _, p := range procs {
		if p.Name.Local == "Caller" {
			caller = p
		}
	}
	if r := dispatch(t, e, caller, testReq("A-1", "3", "")); r.err != nil || r.fault != nil {
		t.Fatalf("err=%v fault=%v", r.err, r.fault)
	}
	// The callee's run ends its span after its reply reached the
	// caller, in the goroutine the in-process call made: wait for it
	// (counting runs and calls only: a timed instance's activities end
	// internal spans too).
	var byKind map[trace.SpanKind][]sdktrace.ReadOnlySpan
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		byKind = map[trace.SpanKind][]sdktrace.ReadOnlySpan{}
		for _, s := range rec.Ended() {
			byKind[s.SpanKind()] = append(byKind[s.SpanKind()], s)
		}
		if len(byKind[trace.SpanKindServer]) >= 2 || time.Now().After(deadline) {
			break
		}
	}
	if len(byKind[trace.SpanKindServer]) != 2 || len(byKind[trace.SpanKindClient]) != 1 {
		t.Fatalf("spans by kind %v, want two runs and one call", byKind)
	}
	call := byKind[trace.SpanKindClient][0]
	var callerRun, calleeRun sdktrace.ReadOnlySpan
	for _, s := range byKind[trace.SpanKindServer] {
		if s.Parent().IsValid() {
			calleeRun = s
		} else {
			callerRun = s
		}
	}
	if callerRun == nil || calleeRun == nil || call.Parent().SpanID() != callerRun.SpanContext().SpanID() ||
		calleeRun.Parent().SpanID() != call.SpanContext().SpanID() {
		t.Fatalf("want caller run <- call <- callee run; got caller %v, call parent %v, callee %v", callerRun, call.Parent(), calleeRun)
	}
	for _, kv := range call.Attributes() {
		if kv.Key == interp.AttrProcess {
			t.Errorf("the call's span has the process attribute %v", kv.Value.Emit())
		}
	}
	named := ""
	for _, kv := range calleeRun.Attributes() {
		if kv.Key == interp.AttrProcess {
			named = kv.Value.Emit()
		}
	}
	if !strings.Contains(named, "Callee") {
		t.Errorf("the callee's run names process %q, want the Callee", named)
	}
}
