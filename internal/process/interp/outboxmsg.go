package interp

import (
	"encoding/binary"
	"fmt"

	"github.com/beevik/etree"
	"go.opentelemetry.io/otel/trace"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/plan"
)

// outboxKey names the partner of an outbox message: process and partner
// link, and after a space (no URL holds one) the address assigned to the
// partner link at run time, if any.
func outboxKey(in *Instance, pl *plan.PartnerLink) string {
	k := in.Proc.Name.String() + "#" + pl.Name
	if as := in.eprs[pl]; as != nil {
		k += " " + as.Addr
	}
	return k
}

// reliableInvoke reports whether a invoke of the instance goes through the
// outbox.
func reliableInvoke(a *plan.Invoke, in *Instance) bool {
	return a.Op.OneWay() && !in.Proc.InMemory && in.Host.Stored()
}

// enqueueInvoke records a one-way invoke in the instance's pending outbox.
func enqueueInvoke(a *plan.Invoke, in *Instance) error {
	m, err := in.invokeInput(a)
	if err != nil {
		return err
	}
	payload, err := encodeMessage(m)
	if err != nil {
		return fmt.Errorf("invoke %s.%s at %s: %w", a.Pl.Name, a.Op.Name, a.Pos, err)
	}
	if in.Tr != nil && in.Tr.Run.IsValid() {
		payload = appendOutboxTrace(payload, in.Tr.Run)
	}
	in.outbox = append(in.outbox, persist.OutboxMessage{InstanceID: in.ID, Partner: outboxKey(in, a.Pl), Operation: a.Op.Name, Payload: payload})
	return nil
}

// encodeMessage writes a message's parts as (name, XML) pairs.
func encodeMessage(m *exchange.Message) ([]byte, error) {
	var b []byte
	if m == nil {
		return binary.AppendUvarint(b, 0), nil
	}
	b = binary.AppendUvarint(b, uint64(len(m.Parts)))
	for name, el := range m.Parts {
		doc := etree.NewDocument()
		doc.SetRoot(el.Copy())
		s, err := doc.WriteToString()
		if err != nil {
			return nil, err
		}
		b = AppendString(b, name)
		b = AppendString(b, s)
	}
	return b, nil
}

// outboxTraceTag starts the trailer of an outbox payload that carries
// the span of the run that enqueued it: the tag, then the trace id (16
// bytes), span id (8) and trace flags (1). A payload without it (written
// without tracing, or before the trailer existed) ends after its parts.
const outboxTraceTag = 't'

// outboxTraceLen is the trailer's length.
const outboxTraceLen = 1 + 16 + 8 + 1

// appendOutboxTrace appends the trailer carrying sc to an outbox
// payload.
func appendOutboxTrace(b []byte, sc trace.SpanContext) []byte {
	tid, sid := sc.TraceID(), sc.SpanID()
	b = append(b, outboxTraceTag)
	b = append(b, tid[:]...)
	b = append(b, sid[:]...)
	return append(b, byte(sc.TraceFlags()))
}

// DecodeMessage decodes a message encodeMessage encoded, as message type
// name, from an outbox payload (DecodeOutbox).
func DecodeMessage(b []byte, name exchange.QName) (*exchange.Message, error) {
	m, _, err := DecodeOutbox(b, name)
	return m, err
}

// DecodeOutbox decodes an outbox payload: its message (named name) and
// the span of the run that enqueued it (invalid when it carries none).
func DecodeOutbox(b []byte, name exchange.QName) (*exchange.Message, trace.SpanContext, error) {
	m, rest, err := decodeParts(b, name)
	if err != nil || len(rest) == 0 {
		return m, trace.SpanContext{}, err
	}
	if len(rest) != outboxTraceLen || rest[0] != outboxTraceTag {
		return nil, trace.SpanContext{}, fmt.Errorf("outbox message: %w (%d bytes after the parts)", ErrBadFrames, len(rest))
	}
	var c trace.SpanContextConfig
	copy(c.TraceID[:], rest[1:17])
	copy(c.SpanID[:], rest[17:25])
	c.TraceFlags = trace.TraceFlags(rest[25])
	return m, trace.NewSpanContext(c), nil
}

// decodeParts decodes what encodeMessage wrote, and returns what follows.
func decodeParts(b []byte, name exchange.QName) (*exchange.Message, []byte, error) {
	r := &Reader{B: b}
	n := r.Uvarint()
	m := exchange.NewMessage(name)
	for i := uint64(0); i < n && r.Err == nil; i++ {
		part, text := r.String(), r.String()
		el, err := ParseStored(text)
		if err != nil {
			return nil, nil, fmt.Errorf("outbox message part %s: %w", part, ErrBadFrames)
		}
		m.Parts[part] = el
	}
	if r.Err != nil {
		return nil, nil, fmt.Errorf("outbox message: %w", r.Err)
	}
	return m, r.B, nil
}
