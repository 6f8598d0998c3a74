package process

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// BenchmarkPurchaseOrderTracedActivities is BenchmarkPurchaseOrderTraced
// with every instance sampled for activity timing (SampleEvery 1), so
// every run has a span per activity too: their cost.
func BenchmarkPurchaseOrderTracedActivities(b *testing.B) {
	procs, err := loadBundle(exampleBundle)
	if err != nil {
		b.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discard{}))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	ip := &inProcessPartners{}
	e := NewEngine(Options{Partners: ip.bind, Tracer: tp.Tracer("bench"), SampleEvery: 1})
	if err := e.Deploy(procs...); err != nil {
		b.Fatal(err)
	}
	benchPO(b, e, procs[0])
}
