package outboxmsg

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/beevik/etree"
	"go.opentelemetry.io/otel/trace"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/epr"
	"github.com/orchd/orchd/internal/xmlparse"
)

// ErrDamaged marks a stored outbox payload that does not decode.
var ErrDamaged = errors.New("damaged outbox payload")

// Encode is the outbox payload of a call: m's parts, x when it holds
// anything, and run (the span of the run that enqueued the call) when it
// is valid.
func Encode(m *exchange.Message, x Extras, run trace.SpanContext) ([]byte, error) {
	b, err := encodeMessage(m)
	if err != nil {
		return nil, err
	}
	b = appendExtras(b, x)
	if run.IsValid() {
		b = appendTrace(b, run)
	}
	return b, nil
}

// encodeMessage writes a message's parts as (name, XML) pairs.
func encodeMessage(m *exchange.Message) ([]byte, error) {
	var b []byte
	if m == nil {
		return binary.AppendUvarint(b, 0), nil
	}
	b = binary.AppendUvarint(b, uint64(len(m.Parts)))
	for name, el := range m.Parts {
		doc := xmlparse.NewDocument()
		doc.SetRoot(el.Copy())
		s, err := doc.WriteToString()
		if err != nil {
			return nil, err
		}
		b = persist.AppendString(b, name)
		b = persist.AppendString(b, s)
	}
	return b, nil
}

// Extras is what a call sent from the outbox carries besides its
// message, as the instance's own call would: the session's
// header blocks and the ReplyTo of a process that waits for a callback
// there (sessionCall), and the reference parameters of an endpoint
// assigned to the partner link.
type Extras struct {
	Headers []*etree.Element
	ReplyTo *exchange.EndpointReference
	Params  []*etree.Element
}

// extrasTag starts the trailer of an outbox payload that carries
// its Extras, before the trace trailer: the tag, then the header
// blocks, a flag and the ReplyTo, and the reference parameters, each
// list in epr.Encode's form. A payload without it (a call that carries
// none, or written before it existed) has none.
const extrasTag = 'x'

// appendExtras appends x's trailer to an outbox payload, when x
// holds anything.
func appendExtras(b []byte, x Extras) []byte {
	if len(x.Headers) == 0 && x.ReplyTo == nil && len(x.Params) == 0 {
		return b
	}
	b = append(b, extrasTag)
	b = persist.AppendString(b, epr.Encode("", x.Headers))
	if x.ReplyTo == nil {
		b = binary.AppendUvarint(b, 0)
	} else {
		b = binary.AppendUvarint(b, 1)
		b = persist.AppendString(b, epr.Encode(x.ReplyTo.Address, x.ReplyTo.ReferenceParams))
	}
	return persist.AppendString(b, epr.Encode("", x.Params))
}

// readExtras reads the extras trailer at the start of rest, if
// there is one, and returns what follows it.
func readExtras(rest []byte) (Extras, []byte, error) {
	var x Extras
	if len(rest) == 0 || rest[0] != extrasTag {
		return x, rest, nil
	}
	r := &persist.Reader{B: rest[1:], Bad: ErrDamaged}
	hs := r.String()
	var rt string
	hasReplyTo := r.Uvarint() == 1
	if hasReplyTo {
		rt = r.String()
	}
	ps := r.String()
	if r.Err != nil {
		return x, nil, fmt.Errorf("outbox message extras: %w", r.Err)
	}
	var err error
	if _, x.Headers, err = epr.Decode(hs); err != nil {
		return x, nil, fmt.Errorf("outbox message headers: %w", ErrDamaged)
	}
	if hasReplyTo {
		addr, params, err := epr.Decode(rt)
		if err != nil {
			return x, nil, fmt.Errorf("outbox message ReplyTo: %w", ErrDamaged)
		}
		x.ReplyTo = &exchange.EndpointReference{Address: addr, ReferenceParams: params}
	}
	if _, x.Params, err = epr.Decode(ps); err != nil {
		return x, nil, fmt.Errorf("outbox message reference parameters: %w", ErrDamaged)
	}
	return x, r.B, nil
}

// traceTag starts the trailer of an outbox payload that carries
// the span of the run that enqueued it: the tag, then the trace id (16
// bytes), span id (8) and trace flags (1). A payload without it (written
// without tracing, or before the trailer existed) ends after its parts.
const traceTag = 't'

// traceLen is the trailer's length.
const traceLen = 1 + 16 + 8 + 1

// appendTrace appends the trailer carrying sc to an outbox
// payload.
func appendTrace(b []byte, sc trace.SpanContext) []byte {
	tid, sid := sc.TraceID(), sc.SpanID()
	b = append(b, traceTag)
	b = append(b, tid[:]...)
	b = append(b, sid[:]...)
	return append(b, byte(sc.TraceFlags()))
}

// DecodeMessage decodes a message encodeMessage encoded, as message type
// name, from an outbox payload (Decode).
func DecodeMessage(b []byte, name exchange.QName) (*exchange.Message, error) {
	m, _, _, err := Decode(b, name)
	return m, err
}

// Decode decodes an outbox payload: its message (named name), what
// its call carries besides (Extras) and the span of the run that
// enqueued it (invalid when it carries none).
func Decode(b []byte, name exchange.QName) (*exchange.Message, Extras, trace.SpanContext, error) {
	m, rest, err := decodeParts(b, name)
	if err != nil {
		return nil, Extras{}, trace.SpanContext{}, err
	}
	x, rest, err := readExtras(rest)
	if err != nil || len(rest) == 0 {
		return m, x, trace.SpanContext{}, err
	}
	if len(rest) != traceLen || rest[0] != traceTag {
		return nil, Extras{}, trace.SpanContext{}, fmt.Errorf("outbox message: %w (%d bytes after the parts)", ErrDamaged, len(rest))
	}
	var c trace.SpanContextConfig
	copy(c.TraceID[:], rest[1:17])
	copy(c.SpanID[:], rest[17:25])
	c.TraceFlags = trace.TraceFlags(rest[25])
	return m, x, trace.NewSpanContext(c), nil
}

// decodeParts decodes what encodeMessage wrote, and returns what follows.
func decodeParts(b []byte, name exchange.QName) (*exchange.Message, []byte, error) {
	r := &persist.Reader{B: b, Bad: ErrDamaged}
	n := r.Uvarint()
	m := exchange.NewMessage(name)
	for i := uint64(0); i < n && r.Err == nil; i++ {
		part, text := r.String(), r.String()
		el, err := xmlparse.Stored(text)
		if err != nil {
			return nil, nil, fmt.Errorf("outbox message part %s: %w", part, ErrDamaged)
		}
		m.Parts[part] = el
	}
	if r.Err != nil {
		return nil, nil, fmt.Errorf("outbox message: %w", r.Err)
	}
	return m, r.B, nil
}
