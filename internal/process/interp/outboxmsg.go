package interp

import (
	"fmt"

	"go.opentelemetry.io/otel/trace"

	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/outboxmsg"
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
	var run trace.SpanContext
	if in.tr != nil {
		run = in.tr.Run
	}
	payload, err := outboxmsg.Encode(m, in.outboxExtras(a.Pl), run)
	if err != nil {
		return fmt.Errorf("invoke %s.%s at %s: %w", a.Pl.Name, a.Op.Name, a.Pos, err)
	}
	in.outbox = append(in.outbox, persist.OutboxMessage{InstanceID: in.id, Partner: outboxKey(in, a.Pl), Operation: a.Op.Name, Payload: payload})
	return nil
}

// outboxExtras is what a one-way call over pl carries now besides its
// message: the outbox's copy of what partnerOf and sessionCall give the
// instance's own call. It is the outboxmsg.Extras of a one-way call over pl now.
func (in *Instance) outboxExtras(pl *plan.PartnerLink) outboxmsg.Extras {
	var x outboxmsg.Extras
	addressing := in.sessionBound(pl)
	if as := in.eprs[pl]; as != nil {
		x.Params = as.Params
		addressing = pl.PartnerDesc.Addressing || len(as.Params) > 0
	}
	if pl.Provided != nil && addressing {
		x.Headers, x.ReplyTo = in.sessionCall(pl)
	}
	return x
}
