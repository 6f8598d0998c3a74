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
	k := in.proc.Name.String() + "#" + pl.Name
	if as := in.eprs[pl]; as != nil {
		k += " " + as.Addr
	}
	return k
}

// reliableInvoke reports whether a invoke of the instance goes through the
// outbox.
func reliableInvoke(a *plan.Invoke, in *Instance) bool {
	return a.Op.OneWay() && !in.proc.InMemory && in.host.Stored()
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
	payload = appendOutboxExtras(payload, in.outboxExtras(a.Pl))
	if in.tr != nil && in.tr.Run.IsValid() {
		payload = appendOutboxTrace(payload, in.tr.Run)
	}
	in.outbox = append(in.outbox, persist.OutboxMessage{InstanceID: in.id, Partner: outboxKey(in, a.Pl), Operation: a.Op.Name, Payload: payload})
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
		b = appendString(b, name)
		b = appendString(b, s)
	}
	return b, nil
}

// OutboxExtras is what a call sent from the outbox carries besides its
// message, as the instance's own call would (partnerOf): the session's
// header blocks and the ReplyTo of a process that waits for a callback
// there (sessionCall), and the reference parameters of an endpoint
// assigned to the partner link.
type OutboxExtras struct {
	Headers []*etree.Element
	ReplyTo *exchange.EndpointReference
	Params  []*etree.Element
}

// outboxExtras is the OutboxExtras of a one-way call over pl now.
func (in *Instance) outboxExtras(pl *plan.PartnerLink) OutboxExtras {
	var x OutboxExtras
	addressing := pl.PartnerEP != nil && pl.PartnerEP.Addressing
	if as := in.eprs[pl]; as != nil {
		x.Params = as.Params
		addressing = pl.PartnerDesc.Addressing || len(as.Params) > 0
	}
	if pl.Provided != nil && addressing {
		x.Headers, x.ReplyTo = in.sessionCall(pl)
	}
	return x
}

// outboxExtrasTag starts the trailer of an outbox payload that carries
// its OutboxExtras, before the trace trailer: the tag, then the header
// blocks, a flag and the ReplyTo, and the reference parameters, each
// list in AppendParams' form. A payload without it (a call that carries
// none, or written before it existed) has none.
const outboxExtrasTag = 'x'

// appendOutboxExtras appends x's trailer to an outbox payload, when x
// holds anything.
func appendOutboxExtras(b []byte, x OutboxExtras) []byte {
	if len(x.Headers) == 0 && x.ReplyTo == nil && len(x.Params) == 0 {
		return b
	}
	b = append(b, outboxExtrasTag)
	b = appendString(b, appendParams(&AssignedEPR{Params: x.Headers}))
	if x.ReplyTo == nil {
		b = binary.AppendUvarint(b, 0)
	} else {
		b = binary.AppendUvarint(b, 1)
		b = appendString(b, appendParams(&AssignedEPR{Addr: x.ReplyTo.Address, Params: x.ReplyTo.ReferenceParams}))
	}
	return appendString(b, appendParams(&AssignedEPR{Params: x.Params}))
}

// readOutboxExtras reads the extras trailer at the start of rest, if
// there is one, and returns what follows it.
func readOutboxExtras(rest []byte) (OutboxExtras, []byte, error) {
	var x OutboxExtras
	if len(rest) == 0 || rest[0] != outboxExtrasTag {
		return x, rest, nil
	}
	r := newReader(rest[1:])
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
	if _, x.Headers, err = readParams(hs); err != nil {
		return x, nil, fmt.Errorf("outbox message headers: %w", ErrBadFrames)
	}
	if hasReplyTo {
		addr, params, err := readParams(rt)
		if err != nil {
			return x, nil, fmt.Errorf("outbox message ReplyTo: %w", ErrBadFrames)
		}
		x.ReplyTo = &exchange.EndpointReference{Address: addr, ReferenceParams: params}
	}
	if _, x.Params, err = readParams(ps); err != nil {
		return x, nil, fmt.Errorf("outbox message reference parameters: %w", ErrBadFrames)
	}
	return x, r.B, nil
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
	m, _, _, err := DecodeOutbox(b, name)
	return m, err
}

// DecodeOutbox decodes an outbox payload: its message (named name), what
// its call carries besides (OutboxExtras) and the span of the run that
// enqueued it (invalid when it carries none).
func DecodeOutbox(b []byte, name exchange.QName) (*exchange.Message, OutboxExtras, trace.SpanContext, error) {
	m, rest, err := decodeParts(b, name)
	if err != nil {
		return nil, OutboxExtras{}, trace.SpanContext{}, err
	}
	x, rest, err := readOutboxExtras(rest)
	if err != nil || len(rest) == 0 {
		return m, x, trace.SpanContext{}, err
	}
	if len(rest) != outboxTraceLen || rest[0] != outboxTraceTag {
		return nil, OutboxExtras{}, trace.SpanContext{}, fmt.Errorf("outbox message: %w (%d bytes after the parts)", ErrBadFrames, len(rest))
	}
	var c trace.SpanContextConfig
	copy(c.TraceID[:], rest[1:17])
	copy(c.SpanID[:], rest[17:25])
	c.TraceFlags = trace.TraceFlags(rest[25])
	return m, x, trace.NewSpanContext(c), nil
}

// decodeParts decodes what encodeMessage wrote, and returns what follows.
func decodeParts(b []byte, name exchange.QName) (*exchange.Message, []byte, error) {
	r := newReader(b)
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
