package interp

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/orchd/orchd/internal/process/plan"
)

// Activity spans (issue 25, OpenTelemetry): an instance the engine
// samples for activity timing (Sampler, one in Options.SampleEvery) gets,
// in a run whose span is sampled, a child span of that run's span per
// activity it runs there, named by the activity's element and name
// ("invoke placeOrder") with its position in the BPEL file. A span covers
// the part of its activity inside the run: an activity that began
// earlier (the process root, a receive that waited) starts at the run's
// start, and one still running when the run ends (a receive waiting
// again) ends with it, marked orchd.activity.unfinished. Constructs the
// compiler made (no element) have no span. Without a Tracer, or in an
// instance not sampled, none of this runs.

// Activity span attribute keys.
const (
	attrActivity   = attribute.Key("orchd.activity")
	attrPosition   = attribute.Key("orchd.position")
	attrUnfinished = attribute.Key("orchd.activity.unfinished")
)

// actTracer starts the activity spans of one traced run.
type actTracer struct {
	tracer trace.Tracer
	parent context.Context
	from   time.Time
}

// TraceActivities starts giving the activities of this run spans,
// children of run, through tracer; the activities already running get
// theirs now. EndActivities ends the run's tracing.
func (s *sampler) TraceActivities(tracer trace.Tracer, run trace.SpanContext) {
	s.tr = &actTracer{tracer: tracer, parent: trace.ContextWithSpanContext(context.Background(), run), from: time.Now()}
	for i := range s.marks {
		if m := &s.marks[i]; m.span == nil && m.a != nil {
			m.span = s.tr.start(m.a, s.tr.from)
		}
	}
}

// EndActivities ends the spans of the activities still running at the
// end of a traced run, and the run's tracing.
func (s *sampler) EndActivities() {
	if s.tr == nil {
		return
	}
	now := time.Now()
	for i := range s.marks {
		if m := &s.marks[i]; m.span != nil {
			m.span.SetAttributes(attrUnfinished.Bool(true))
			m.span.End(trace.WithTimestamp(now))
			m.span = nil
		}
	}
	s.tr = nil
}

// start begins the span of activity a at at, or returns nil for a
// construct the compiler made.
func (t *actTracer) start(a plan.Activity, at time.Time) trace.Span {
	tg, ok := a.(EvTagger)
	if !ok {
		return nil
	}
	tag, name, pos := tg.EvTag()
	if tag == "" {
		return nil
	}
	if at.Before(t.from) {
		at = t.from
	}
	spanName := tag
	if name != "" {
		spanName += " " + name
	}
	_, sp := t.tracer.Start(t.parent, spanName, trace.WithSpanKind(trace.SpanKindInternal), trace.WithTimestamp(at),
		trace.WithAttributes(attrActivity.String(tag), attrPosition.String(pos)))
	return sp
}
