package interp

import (
	"context"
	"net/http"

	"github.com/orchd/orchd/internal/redact"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/plan"
)

// Tracing (Options.Tracer): a run of an instance adds its process,
// version and instance to the span of the exchange it serves (the front
// door's), or has a span of its own (a timer, recovery, an exchange
// that came with none); each partner call, REST call and commit of the
// run is a child of that span, and a run of an instance whose first
// run was in another trace links to that first span. With no Tracer
// none of this runs: instance.tr stays nil.

// instTrace is what tracing keeps of an instance.
type instTrace struct {
	// Run is the span this run's calls and commits are children of.
	Run trace.SpanContext
	// First is the span of the instance's first run; stored (in
	// variable slot traceSlot) once a checkpoint holding it committed.
	First  trace.SpanContext
	Stored bool
}

// TraceSlot is the variable slot the first span of a persistent
// instance is stored under: slot 0 names no variable (slots are 1-based)
// and decode skips it.
const TraceSlot = 0

// Span attribute keys.
const (
	AttrProcess  = attribute.Key("orchd.process")
	attrVersion  = attribute.Key("orchd.version")
	AttrInstance = attribute.Key("orchd.instance")
	attrPartner  = attribute.Key("orchd.partner_link")
	attrOp       = attribute.Key("rpc.method")
	attrState    = attribute.Key("orchd.state")
	attrBytes    = attribute.Key("orchd.stored_bytes")
	attrURL      = attribute.Key("url.full")
	attrStatus   = attribute.Key("http.response.status_code")
	attrMethod   = attribute.Key("http.request.method")
)

// traceCommit starts the span of a commit of in's checkpoint cp (nil
// without tracing) and adds the instance's first span to cp if the store
// does not hold it yet.
func (in *Instance) traceCommit(cp *persist.Checkpoint, st persist.State, n int) trace.Span {
	if in.tr == nil || in.host.Tracer() == nil {
		return nil
	}
	if !in.tr.Stored && in.tr.First.IsValid() && !cp.Delete {
		tid, sid := in.tr.First.TraceID(), in.tr.First.SpanID()
		b := append(append(make([]byte, 0, 25), tid[:]...), sid[:]...)
		cp.Vars[TraceSlot] = append(b, byte(in.tr.First.TraceFlags()))
	}
	_, sp := in.host.Tracer().Start(trace.ContextWithSpanContext(context.Background(), in.tr.Run), "commit",
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(AttrInstance.String(in.id), attrState.String(st.String()), attrBytes.Int(n)))
	return sp
}

// tracedCommit ends a commit's span.
func (in *Instance) tracedCommit(sp trace.Span, cp *persist.Checkpoint, err error) {
	if sp == nil {
		return
	}
	if err == nil && cp.Vars[TraceSlot] != nil {
		in.tr.Stored = true
	}
	endSpan(sp, err)
}

// endSpan ends sp, with err as its error status.
func endSpan(sp trace.Span, err error) {
	if err != nil {
		sp.RecordError(err)
		sp.SetStatus(codes.Error, err.Error())
	}
	sp.End()
}

// tracePartner is partner with a span per call, a child of the run's
// span (partner itself: without tracing).
func (in *Instance) tracePartner(partner exchange.Partner, a *plan.Invoke) exchange.Partner {
	if in.tr == nil || in.host.Tracer() == nil || partner == nil {
		return partner
	}
	return &tracedPartner{Partner: partner, tracer: in.host.Tracer(), parent: in.tr.Run, pl: a.Pl.Name, op: a.Op.Name}
}

// tracedPartner is a partner whose calls are spans.
type tracedPartner struct {
	exchange.Partner
	tracer trace.Tracer
	parent trace.SpanContext
	pl, op string
}

// Invoke implements exchange.Partner. The partner binding adds what it
// knows (the address, the HTTP status) to the span in ctx, and sends it
// on (traceparent).
func (t *tracedPartner) Invoke(ctx context.Context, call *exchange.Call) (*exchange.Message, error) {
	ctx, sp := t.tracer.Start(trace.ContextWithSpanContext(ctx, t.parent), t.pl+" "+t.op,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrPartner.String(t.pl), attrOp.String(t.op)))
	msg, err := t.Partner.Invoke(context.WithValue(ctx, CallSpanKey{}, sp), call)
	endSpan(sp, err)
	return msg, err
}

// CallSpanKey marks the context of a partner call with the call's
// span: a run of this engine serving it (an in-process partner) is a
// child span, not an addition to the call's.
type CallSpanKey struct{}

// traceParent is the span a call of in is a child of (invalid without
// tracing).
func (in *Instance) traceParent() trace.SpanContext {
	if in.tr == nil {
		return trace.SpanContext{}
	}
	return in.tr.Run
}

// startREST starts the span of a REST call of r (nil without tracing)
// and puts its trace context on req.
func (c *RestClient) startREST(ctx context.Context, r *restRequest, req *http.Request) trace.Span {
	if c.tracer == nil || !r.parent.IsValid() {
		return nil
	}
	ctx, sp := c.tracer.Start(trace.ContextWithSpanContext(ctx, r.parent), "REST "+r.method,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrMethod.String(r.method), attrURL.String(redactURL(r.url))))
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	return sp
}

// endREST ends a REST call's span.
func endREST(sp trace.Span, resp *http.Response, err error) {
	if sp == nil {
		return
	}
	if resp != nil {
		sp.SetAttributes(attrStatus.Int(resp.StatusCode))
	}
	endSpan(sp, err)
}

// redactURL is u without credentials: its user information and query
// are left out, at the string level (an unparsable u is redacted too).
func redactURL(u string) string { return redact.AddressNoQuery(u) }

// traceRun begins the tracing of a run serving ex (nil: a timer or
// recovery) and returns what ends it. Called only with a Tracer.
func (in *Instance) traceRun(ex *exchange.Exchange) func() {
	tracer := in.host.Tracer()
	if in.tr == nil {
		in.tr = &instTrace{}
	}
	sp := trace.SpanFromContext(in.ctx)
	// A run with no span, or one serving a call of a process of this
	// engine (the span is the caller's call), has a span of its own.
	parent := context.Background()
	if call, _ := in.ctx.Value(CallSpanKey{}).(trace.Span); call != nil && call == sp {
		parent = trace.ContextWithSpan(parent, sp)
	}
	own := !sp.SpanContext().IsValid() || parent != context.Background()
	if own {
		name := in.proc.Name.Local + " timer"
		kind := trace.SpanKindInternal
		if ex != nil {
			name, kind = in.proc.Name.Local+" "+ex.Operation.Name, trace.SpanKindServer
		}
		opts := []trace.SpanStartOption{trace.WithSpanKind(kind)}
		if in.tr.First.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: in.tr.First}))
		}
		_, sp = tracer.Start(parent, name, opts...)
	} else if in.tr.First.IsValid() && in.tr.First.TraceID() != sp.SpanContext().TraceID() {
		sp.AddLink(trace.Link{SpanContext: in.tr.First})
	}
	in.tr.Run = sp.SpanContext()
	if !in.tr.First.IsValid() {
		in.tr.First = in.tr.Run
	}
	// A sampled instance's activities are spans too, when this run's
	// span is sampled (actspans.go).
	acts := in.timing != nil && in.tr.Run.IsSampled()
	if acts {
		in.timing.TraceActivities(tracer, in.tr.Run)
	}
	return func() {
		if acts {
			in.timing.EndActivities()
		}
		if sp.IsRecording() {
			sp.SetAttributes(AttrProcess.String(in.proc.Name.String()), attrVersion.Int(in.proc.Number))
			if in.id != "" {
				sp.SetAttributes(AttrInstance.String(in.id))
			}
		}
		if own {
			sp.End()
		}
	}
}

// LoadTrace reads the first span of a loaded persistent instance from
// its stored variables, vars (Decode's), for the runs it serves.
func (in *Instance) LoadTrace(vars map[int][]byte) {
	if in.host.Tracer() == nil {
		return
	}
	in.tr = &instTrace{Stored: true}
	b := vars[TraceSlot]
	if len(b) != 25 {
		return
	}
	var c trace.SpanContextConfig
	copy(c.TraceID[:], b[:16])
	copy(c.SpanID[:], b[16:24])
	c.TraceFlags = trace.TraceFlags(b[24])
	in.tr.First = trace.NewSpanContext(c)
}
