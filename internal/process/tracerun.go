package process

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/orchd/orchd/internal/exchange"
)

// traceRun begins the tracing of a run of in serving ex (nil: a timer
// or recovery) and returns what ends it. Called only with a Tracer.
func (e *Engine) traceRun(in *instance, ex *exchange.Exchange) func() {
	if in.tr == nil {
		in.tr = &instTrace{}
	}
	sp := trace.SpanFromContext(in.ctx)
	// A run with no span, or one serving a call of a process of this
	// engine (the span is the caller's call), has a span of its own.
	parent := context.Background()
	if call, _ := in.ctx.Value(callSpanKey{}).(trace.Span); call != nil && call == sp {
		parent = trace.ContextWithSpan(parent, sp)
	}
	own := !sp.SpanContext().IsValid() || parent != context.Background()
	if own {
		name := in.p.Name.Local + " timer"
		kind := trace.SpanKindInternal
		if ex != nil {
			name, kind = in.p.Name.Local+" "+ex.Operation.Name, trace.SpanKindServer
		}
		opts := []trace.SpanStartOption{trace.WithSpanKind(kind)}
		if in.tr.first.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: in.tr.first}))
		}
		_, sp = e.opts.Tracer.Start(parent, name, opts...)
	} else if in.tr.first.IsValid() && in.tr.first.TraceID() != sp.SpanContext().TraceID() {
		sp.AddLink(trace.Link{SpanContext: in.tr.first})
	}
	in.tr.run = sp.SpanContext()
	if !in.tr.first.IsValid() {
		in.tr.first = in.tr.run
	}
	return func() {
		if sp.IsRecording() {
			sp.SetAttributes(attrProcess.String(in.p.Name.String()), attrVersion.Int(in.p.Version))
			if in.id != "" {
				sp.SetAttributes(attrInstance.String(in.id))
			}
		}
		if own {
			sp.End()
		}
	}
}

// loadTrace reads the first span of a persistent instance from its
// stored variables.
func (e *Engine) loadTrace(in *instance, vars map[int][]byte) {
	if e.opts.Tracer == nil {
		return
	}
	in.tr = &instTrace{stored: true}
	b := vars[traceSlot]
	if len(b) != 25 {
		return
	}
	var c trace.SpanContextConfig
	copy(c.TraceID[:], b[:16])
	copy(c.SpanID[:], b[16:24])
	c.TraceFlags = trace.TraceFlags(b[24])
	in.tr.first = trace.NewSpanContext(c)
}
