package interp

import (
	"errors"
	"testing"

	"github.com/beevik/etree"
	"go.opentelemetry.io/otel/trace"

	"github.com/orchd/orchd/internal/exchange"
)

// TestOutboxTraceTrailer: an outbox payload carries the span of the
// run that enqueued it after its parts; one written without (no tracing,
// or before the trailer existed) decodes with no span; bytes after the
// parts that are not the trailer are corrupt.
func TestOutboxTraceTrailer(t *testing.T) {
	m := exchange.NewMessage(exchange.QName{Local: "req"})
	m.Parts["payload"] = etree.NewElement("x")
	old, err := encodeMessage(m)
	if err != nil {
		t.Fatal(err)
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5}, TraceFlags: trace.FlagsSampled})
	withTrace := appendOutboxTrace(append([]byte(nil), old...), sc)
	for name, tc := range map[string]struct {
		b    []byte
		want trace.SpanContext
	}{"without": {old, trace.SpanContext{}}, "with": {withTrace, sc}} {
		got, gotSC, err := DecodeOutbox(tc.b, m.Name)
		if err != nil || got.Parts["payload"] == nil || !gotSC.Equal(tc.want) {
			t.Errorf("%s: parts %v span %v err %v, want the part and %v", name, got, gotSC, err, tc.want)
		}
	}
	for _, bad := range [][]byte{append(old, 'x'), withTrace[:len(withTrace)-1], append(append([]byte(nil), withTrace...), 0)} {
		if _, _, err := DecodeOutbox(bad, m.Name); !errors.Is(err, ErrBadFrames) {
			t.Errorf("payload with %d bytes after the parts: %v, want ErrBadFrames", len(bad)-len(old), err)
		}
	}
}
