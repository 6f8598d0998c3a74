package soap

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/orchd/orchd/internal/exchange"
)

// Tracing: with ServerOptions.Tracer, an exchange is a server span,
// continuing the trace of the request's traceparent and tracestate
// headers (W3C Trace Context); the dispatcher adds what it knows to it
// (trace.SpanFromContext). A partner call made under a context with a
// span sends that span's trace context and records on the span the
// partner's address (without credentials) and HTTP status. Without a
// tracer, and for calls whose context holds no span, none of this
// costs anything but a context look-up.

// Span attribute keys.
const (
	attrProcess = attribute.Key("orchd.process")
	attrOp      = attribute.Key("rpc.method")
	attrOutcome = attribute.Key("orchd.outcome")
	attrPath    = attribute.Key("url.path")
	attrStatus  = attribute.Key("http.response.status_code")
	attrURL     = attribute.Key("url.full")
	attrSystem  = attribute.Key("rpc.system")
)

// startExchange starts the span of an exchange of op at rt (a nil span
// without a tracer).
func (s *Server) startExchange(ctx context.Context, r *http.Request, rt *route, op *exchange.Operation) (context.Context, trace.Span) {
	if s.tracer == nil {
		return ctx, nil
	}
	ctx = propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(r.Header))
	return s.tracer.Start(ctx, rt.process+" "+op.Name, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attrSystem.String("soap"), attrProcess.String(rt.process), attrOp.String(op.Name), attrPath.String(rt.ep.Path)))
}

// endExchange ends an exchange's span with its outcome.
func endExchange(sp trace.Span, rp *reply) {
	if sp == nil {
		return
	}
	sp.SetAttributes(attrOutcome.String(rp.outcome), attrStatus.Int(rp.status))
	if rp.outcome == outcomeServerError {
		sp.SetStatus(codes.Error, "server error")
	}
	sp.End()
}

// traceCall sends the trace context of the span in ctx, if there is
// one, on req, and records address on the span.
func traceCall(ctx context.Context, sp trace.Span, req *http.Request, address string) {
	if !sp.SpanContext().IsValid() {
		return
	}
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	if sp.IsRecording() {
		sp.SetAttributes(attrURL.String(Redact(address)))
	}
}

// traceStatus records a partner's HTTP status on the call's span sp.
func traceStatus(sp trace.Span, status int) {
	if sp.IsRecording() {
		sp.SetAttributes(attrStatus.Int(status))
	}
}
