package outboxmsg

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
// nsODESession is the namespace of ODE's session header blocks.
const nsODESession = "http://www.apache.org/ode/type/session"

func TestOutboxTraceTrailer(t *testing.T) {
	m := exchange.NewMessage(exchange.QName{Local: "req"})
	m.Parts["payload"] = etree.NewElement("x")
	old, err := encodeMessage(m)
	if err != nil {
		t.Fatal(err)
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5}, TraceFlags: trace.FlagsSampled})
	withTrace := appendTrace(append([]byte(nil), old...), sc)
	for name, tc := range map[string]struct {
		b    []byte
		want trace.SpanContext
	}{"without": {old, trace.SpanContext{}}, "with": {withTrace, sc}} {
		got, _, gotSC, err := Decode(tc.b, m.Name)
		if err != nil || got.Parts["payload"] == nil || !gotSC.Equal(tc.want) {
			t.Errorf("%s: parts %v span %v err %v, want the part and %v", name, got, gotSC, err, tc.want)
		}
	}
	for _, bad := range [][]byte{append(old, 'x'), withTrace[:len(withTrace)-1], append(append([]byte(nil), withTrace...), 0)} {
		if _, _, _, err := Decode(bad, m.Name); !errors.Is(err, ErrDamaged) {
			t.Errorf("payload with %d bytes after the parts: %v, want ErrDamaged", len(bad)-len(old), err)
		}
	}
}

// TestExtras: what an outbox call carries besides its message (the
// session's header blocks, the ReplyTo with its reference parameters, an
// assigned endpoint's reference parameters) round-trips through the
// payload, before the trace trailer and with none; a payload without it
// decodes with none.
func TestExtras(t *testing.T) {
	m := exchange.NewMessage(exchange.QName{Local: "req"})
	m.Parts["payload"] = etree.NewElement("x")
	old, err := encodeMessage(m)
	if err != nil {
		t.Fatal(err)
	}
	el := func(tag, ns, text string) *etree.Element {
		e := etree.NewElement(tag)
		e.CreateAttr("xmlns:s", ns)
		e.SetText(text)
		return e
	}
	x := Extras{
		Headers: []*etree.Element{el("s:callback", nsODESession, "h")},
		ReplyTo: &exchange.EndpointReference{Address: "http://orchd/p", ReferenceParams: []*etree.Element{el("s:session", nsODESession, "tok")}},
		Params:  []*etree.Element{el("s:key", "urn:k", "k1")},
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}})
	with := appendExtras(append([]byte(nil), old...), x)
	for name, b := range map[string][]byte{"extras": with, "extras and trace": appendTrace(append([]byte(nil), with...), sc)} {
		got, gx, _, err := Decode(b, m.Name)
		if err != nil || got.Parts["payload"] == nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(gx.Headers) != 1 || gx.Headers[0].Text() != "h" || gx.ReplyTo == nil || gx.ReplyTo.Address != "http://orchd/p" ||
			len(gx.ReplyTo.ReferenceParams) != 1 || gx.ReplyTo.ReferenceParams[0].Text() != "tok" || gx.ReplyTo.ReferenceParams[0].NamespaceURI() != nsODESession ||
			len(gx.Params) != 1 || gx.Params[0].Text() != "k1" {
			t.Errorf("%s: extras %+v, want %+v", name, gx, x)
		}
	}
	if _, gx, _, err := Decode(old, m.Name); err != nil || gx.ReplyTo != nil || gx.Headers != nil || gx.Params != nil {
		t.Errorf("no extras: %+v, %v", gx, err)
	}
	if b := appendExtras(append([]byte(nil), old...), Extras{}); len(b) != len(old) {
		t.Errorf("empty extras wrote %d bytes", len(b)-len(old))
	}
}
