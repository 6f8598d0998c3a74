package process

import (
	"encoding/binary"
	"fmt"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/plan"
)

// outboxKey names the partner of an outbox message: process and partner
// link, and after a space (no URL holds one) the address assigned to the
// partner link at run time, if any.
func outboxKey(in *instance, pl *plan.PartnerLink) string {
	k := in.p.Name.String() + "#" + pl.Name
	if as := in.eprs[pl]; as != nil {
		k += " " + as.addr
	}
	return k
}

// reliableInvoke reports whether a invoke of the instance goes through the
// outbox.
func reliableInvoke(a *plan.Invoke, in *instance) bool {
	return a.Op.OneWay() && !in.p.InMemory && in.e.stored()
}

// enqueueInvoke records a one-way invoke in the instance's pending outbox.
func enqueueInvoke(a *plan.Invoke, in *instance) error {
	var m *exchange.Message
	if a.In != nil {
		m = in.message(a.In)
		if err := in.applyCorrelations(a.Corrs, m, true, a.Pos); err != nil {
			return err
		}
	}
	payload, err := encodeMessage(m)
	if err != nil {
		return fmt.Errorf("invoke %s.%s at %s: %w", a.Pl.Name, a.Op.Name, a.Pos, err)
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

func decodeMessage(b []byte, name exchange.QName) (*exchange.Message, error) {
	r := &reader{b: b}
	n := r.uvarint()
	m := exchange.NewMessage(name)
	for i := uint64(0); i < n && r.err == nil; i++ {
		part, text := r.string(), r.string()
		el, err := parseStored(text)
		if err != nil {
			return nil, fmt.Errorf("outbox message part %s: %w", part, errBadFrames)
		}
		m.Parts[part] = el
	}
	if r.err != nil {
		return nil, fmt.Errorf("outbox message: %w", r.err)
	}
	return m, nil
}
