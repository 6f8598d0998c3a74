package process

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/interp"
)

// traceRun begins the tracing of a run of in serving ex (nil: a timer
// or recovery) and returns what ends it. Called only with a Tracer.
func (e *Engine) traceRun(in *interp.Instance, ex *exchange.Exchange) func() {
	if in.Tr == nil {
		in.Tr = &interp.InstTrace{}
	}
	sp := trace.SpanFromContext(in.Ctx)
	// A run with no span, or one serving a call of a process of this
	// engine (the span is the caller's call), has a span of its own.
	parent := context.Background()
	if call, _ := in.Ctx.Value(interp.CallSpanKey{}).(trace.Span); call != nil && call == sp {
		parent = trace.ContextWithSpan(parent, sp)
	}
	own := !sp.SpanContext().IsValid() || parent != context.Background()
	if own {
		name := in.Proc.Name.Local + " timer"
		kind := trace.SpanKindInternal
		if ex != nil {
			name, kind = in.Proc.Name.Local+" "+ex.Operation.Name, trace.SpanKindServer
		}
		opts := []trace.SpanStartOption{trace.WithSpanKind(kind)}
		if in.Tr.First.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: in.Tr.First}))
		}
		_, sp = e.opts.Tracer.Start(parent, name, opts...)
	} else if in.Tr.First.IsValid() && in.Tr.First.TraceID() != sp.SpanContext().TraceID() {
		sp.AddLink(trace.Link{SpanContext: in.Tr.First})
	}
	in.Tr.Run = sp.SpanContext()
	if !in.Tr.First.IsValid() {
		in.Tr.First = in.Tr.Run
	}
	// A sampled instance's activities are spans too, when this run's
	// span is sampled (interp/actspans.go).
	acts := in.Timing != nil && in.Tr.Run.IsSampled()
	if acts {
		in.Timing.TraceActivities(e.opts.Tracer, in.Tr.Run)
	}
	return func() {
		if acts {
			in.Timing.EndActivities()
		}
		if sp.IsRecording() {
			sp.SetAttributes(interp.AttrProcess.String(in.Proc.Name.String()), interp.AttrVersion.Int(in.Proc.Number))
			if in.ID != "" {
				sp.SetAttributes(interp.AttrInstance.String(in.ID))
			}
		}
		if own {
			sp.End()
		}
	}
}

// loadTrace reads the first span of a persistent instance from its
// stored variables.
func (e *Engine) loadTrace(in *interp.Instance, vars map[int][]byte) {
	if e.opts.Tracer == nil {
		return
	}
	in.Tr = &interp.InstTrace{Stored: true}
	b := vars[interp.TraceSlot]
	if len(b) != 25 {
		return
	}
	var c trace.SpanContextConfig
	copy(c.TraceID[:], b[:16])
	copy(c.SpanID[:], b[16:24])
	c.TraceFlags = trace.TraceFlags(b[24])
	in.Tr.First = trace.NewSpanContext(c)
}

// Outbox span attribute keys.
const (
	attrOutboxSeq     = attribute.Key("orchd.outbox.seq")
	attrOutboxAttempt = attribute.Key("orchd.outbox.attempt")
	attrPartnerLink   = attribute.Key("orchd.partner_link")
	attrMethod        = attribute.Key("rpc.method")
)

// traceOutbox starts the span of one try at sending outbox message msg
// on partner link pl, and returns its context (the partner binding adds
// the address and HTTP status to the span there, and sends it on as
// traceparent) and what ends it. The send runs after the commit, maybe
// after a restart, outside the run that enqueued it: its span is a root
// of its own, linked to that run's span when the message carries it
// (enqueued; interp.DecodeOutbox), and names the instance.
func (e *Engine) traceOutbox(ctx context.Context, msg persist.OutboxMessage, pl string, attempt int, enqueued trace.SpanContext) (context.Context, func(error)) {
	opts := []trace.SpanStartOption{
		trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(interp.AttrInstance.String(msg.InstanceID), attrPartnerLink.String(pl), attrMethod.String(msg.Operation),
			attrOutboxSeq.Int64(int64(msg.Seq)), attrOutboxAttempt.Int(attempt)),
	}
	if enqueued.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: enqueued}))
	}
	ctx, sp := e.opts.Tracer.Start(ctx, "outbox "+pl+" "+msg.Operation, opts...)
	return ctx, func(err error) {
		if err != nil {
			sp.RecordError(err)
			sp.SetStatus(codes.Error, err.Error())
		}
		sp.End()
	}
}
