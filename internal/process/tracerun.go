package process

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/interp"
)

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
// (enqueued; outboxmsg.Decode), and names the instance.
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
