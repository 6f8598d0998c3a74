package process

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/orchd/orchd/internal/exchange"
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
			sp.SetAttributes(interp.AttrProcess.String(in.Proc.Name.String()), interp.AttrVersion.Int(in.Proc.Version))
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
