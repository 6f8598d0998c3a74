package process

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/partnerallow"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/outboxmsg"
	"github.com/orchd/orchd/internal/process/plan"
)

// RELIABLE invocation: a persistent process's one-way invoke is not made
// inline. It is recorded in the outbox of the instance's next checkpoint,
// in the same commit as the state that follows it, and sent after that
// commit by a background sender that retries until the partner accepts
// it. At start, Recover sends what the outbox still holds. A message may
// thus be delivered more than once (after a crash between sending and
// acknowledging), never lost.

// sendOutbox delivers one outbox message in the background, retrying with
// a growing delay until the partner accepts it or the engine stops. It
// reports false, and does nothing, when the message is already being sent
// by this engine.
func (e *Engine) sendOutbox(msg persist.OutboxMessage) bool {
	if !e.sending.add(msg.Seq) {
		return false // already being sent here (AdoptOutbox)
	}
	go func() {
		defer e.sending.remove(msg.Seq)
		delay := e.retryDelay()
		for attempt := 1; ; attempt++ {
			err := e.deliverOutbox(msg, attempt)
			if err == nil {
				if err := e.store.AckOutbox(msg.Seq); err != nil {
					e.log.Error("outbox: acknowledging a sent message", slog.Uint64("seq", msg.Seq), slog.Any("err", err))
				}
				return
			}
			if errors.Is(err, errNoOutboxPartner) {
				e.log.Error("outbox: message kept for a partner that is not deployed", slog.Uint64("seq", msg.Seq), slog.String("partner", msg.Partner), slog.Any("err", err))
				return
			}
			if errors.Is(err, outboxmsg.ErrDamaged) {
				// Retrying cannot mend a damaged payload.
				e.log.Error("outbox: message kept, not sent: its stored payload cannot be decoded", slog.Uint64("seq", msg.Seq), slog.String("partner", msg.Partner), slog.Any("err", err))
				return
			}
			e.log.Warn("outbox: send failed; will retry", slog.Uint64("seq", msg.Seq), slog.String("partner", msg.Partner),
				slog.String("op", msg.Operation), slog.Int("attempt", attempt), slog.Any("err", err))
			select {
			case <-e.baseCtx.Done():
				return
			case <-time.After(delay):
			}
			if delay < time.Minute {
				delay *= 2
			}
		}
	}()
	return true
}

var errNoOutboxPartner = errors.New("no such partner")

// damagedOutbox reports whether m is a stored outbox record that cannot be
// decoded, the record (persist.OutboxMessage.Err) or its payload, logging
// it: such a record is kept for an operator and not sent, and the others
// are sent as usual.
func (e *Engine) damagedOutbox(m persist.OutboxMessage) bool {
	err := m.Err
	if err == nil {
		_, err = outboxmsg.DecodeMessage(m.Payload, exchange.QName{})
	}
	if err == nil {
		return false
	}
	e.log.Error("outbox: damaged record kept, not sent", slog.Uint64("seq", m.Seq), slog.Any("err", err))
	return true
}

// deliverOutbox makes the attempt-th try at sending msg. With a Tracer
// each try is a span (traceOutbox).
func (e *Engine) deliverOutbox(msg persist.OutboxMessage, attempt int) error {
	key, addr, assigned := strings.Cut(msg.Partner, " ")
	procName, plName, _ := strings.Cut(key, "#")
	var pl *plan.PartnerLink
	var partner exchange.Partner
	var timeout time.Duration
	var only *partnerallow.List
	for _, p := range e.Processes() {
		if p.Name.String() == procName {
			only = p.PartnerAllow
			if pl = p.Plinks[plName]; pl != nil {
				partner = p.Partners[pl.Idx]
			}
			timeout = p.CallTimeout(plName, msg.Operation)
		}
	}
	if pl == nil || pl.PartnerDesc == nil || (!assigned && partner == nil) {
		return fmt.Errorf("%w: %s", errNoOutboxPartner, msg.Partner)
	}

	var op *exchange.Operation
	for _, o := range pl.PartnerDesc.Operations {
		if o.Name == msg.Operation {
			op = o
		}
	}
	if op == nil {
		return fmt.Errorf("%w: %s has no operation %s", errNoOutboxPartner, msg.Partner, msg.Operation)
	}
	m, x, enqueued, err := outboxmsg.Decode(msg.Payload, op.Input.Name)
	if err != nil {
		return err
	}
	if assigned {
		partner = e.addressed(pl, addr, x.Params, only)
	}
	ctx := e.baseCtx
	var end func(error)
	if e.opts.Tracer != nil {
		ctx, end = e.traceOutbox(ctx, msg, pl.Name, attempt, enqueued)
	}
	start := time.Now()
	_, err = partner.Invoke(ctx, &exchange.Call{Operation: op, Input: m, Timeout: timeout, Headers: x.Headers, ReplyTo: x.ReplyTo})
	e.metrics.partner(procName[strings.LastIndexByte(procName, '}')+1:], pl.Name, op.Name).Observe(err, time.Since(start))
	if end != nil {
		end(err)
	}
	return err
}
