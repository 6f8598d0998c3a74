package interp

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

// DecodeMessage decodes a message encodeMessage encoded, as message type
// name.
func DecodeMessage(b []byte, name exchange.QName) (*exchange.Message, error) {
	r := &Reader{B: b}
	n := r.Uvarint()
	m := exchange.NewMessage(name)
	for i := uint64(0); i < n && r.Err == nil; i++ {
		part, text := r.String(), r.String()
		el, err := ParseStored(text)
		if err != nil {
			return nil, fmt.Errorf("outbox message part %s: %w", part, ErrBadFrames)
		}
		m.Parts[part] = el
	}
	if r.Err != nil {
		return nil, fmt.Errorf("outbox message: %w", r.Err)
	}
	return m, nil
}
