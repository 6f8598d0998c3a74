package process

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/interp"
)

// heldMsg is a message for a correlated operation that arrived when no
// instance waited for it: its instance may still be running toward the
// receive (a partner's callback overtaking the caller), or not wait yet.
// ODE kept such messages in its correlator; orchd holds them in memory,
// for Options.MessageHold, and gives each to the first instance that
// comes to wait under one of its keys.
//
// A one-way message to an in-memory process is acknowledged at once (the
// instance it is for lives in memory too); any other message is not
// answered until an instance took it, so nothing acknowledged is lost.
type heldMsg struct {
	p    *interp.Version
	ex   *exchange.Exchange
	ctx  context.Context
	keys []string
	// done, when its sender waits, receives the outcome of the delivery.
	done  chan error
	timer *time.Timer
	tried []string
}

// hold keeps ex until an instance waits under one of keys, or its time
// runs out. Before holding, it looks again (under the registry lock that
// registration takes) for an instance that came to wait meanwhile.
func (e *Engine) hold(ctx context.Context, p *interp.Version, ex *exchange.Exchange, keys, tried []string, h *heldMsg) error {
	if e.messageHold() < 0 {
		if h != nil {
			return errHeldAgain
		}
		return noInstance(p, ex.Operation.Name, tried)
	}
	e.reg.mu.Lock()
	behind := false
	for _, k := range keys {
		behind = behind || (h == nil && e.queuedBehindLocked(k))
	}
	for _, k := range keys {
		if !behind && e.registeredLocked(p, k) {
			e.reg.mu.Unlock()
			return e.deliver(ctx, p, ex, h)
		}
	}
	again := h != nil
	if !again && e.reg.heldCount >= e.messageHoldMax() {
		e.reg.mu.Unlock()
		p.Metrics.HeldRefused.Inc()
		return holdFull(p, ex.Operation.Name, tried, e.messageHoldMax())
	}
	if again {
		h.timer = time.AfterFunc(e.messageHold(), func() { e.expire(h) })
	} else {
		h = &heldMsg{p: p, ex: ex, ctx: ctx, keys: keys, tried: tried}
		e.countHeldLocked(1)
		if !(p.InMemory && ex.Operation.OneWay()) {
			h.done = make(chan error, 1)
		} else {
			h.ctx = e.baseCtx
		}
	}
	if e.reg.held == nil {
		e.reg.held = map[string][]*heldMsg{}
	}
	for _, k := range keys {
		if again {
			// First in line again: messages are offered in arrival order.
			e.reg.held[k] = append([]*heldMsg{h}, e.reg.held[k]...)
		} else {
			e.reg.held[k] = append(e.reg.held[k], h)
		}
	}
	if !again {
		h.timer = time.AfterFunc(e.messageHold(), func() { e.expire(h) })
	}
	e.reg.mu.Unlock()
	if again {
		return errHeldAgain
	}
	if h.done == nil {
		return nil
	}
	if id := exchange.IdlerOf(ctx); id != nil {
		id.Idle(exchange.WaitMessage)
		defer id.Busy(exchange.WaitMessage)
	}
	select {
	case err := <-h.done:
		return err
	case <-ctx.Done():
		if e.unhold(h) {
			return ctx.Err()
		}
		return <-h.done
	}
}

// holdFull is the error of a message that would be held while limit
// messages are held already: refused at once (the server is overloaded,
// the sender may try again), not held and not acknowledged.
func holdFull(p *interp.Version, op string, tried []string, limit int) error {
	return &exchange.Error{Kind: exchange.KindUnavailable, Err: fmt.Errorf(
		"message %s for process %s with correlation %v refused: no instance waits for it yet, and the limit of %d held messages is reached (--message-hold-max)",
		op, p.Name.Local, tried, limit)}
}

// countHeldLocked adds d to the count of held messages. The caller holds
// e.reg.mu.
func (e *Engine) countHeldLocked(d int) {
	e.reg.heldCount += d
	e.metrics.heldNow.Set(float64(e.reg.heldCount))
}

// errHeldAgain is redeliver's outcome when the instance moved on before
// taking the message, which is held again.
var errHeldAgain = errors.New("held again")

// queuedBehind reports whether messages held under key (or one handed
// back to its instance and not yet taken) came before a new one.
func (e *Engine) queuedBehind(key string) bool {
	e.reg.mu.Lock()
	defer e.reg.mu.Unlock()
	return e.queuedBehindLocked(key)
}

func (e *Engine) queuedBehindLocked(key string) bool {
	return len(e.reg.held[key]) > 0 || e.reg.offering[key] > 0
}

// registeredLocked reports whether an instance is found under key now.
// The caller holds e.reg.mu.
func (e *Engine) registeredLocked(p *interp.Version, key string) bool {
	if p.InMemory {
		return e.reg.routes[key] != nil
	}
	if e.store == nil {
		return false
	}
	_, ok, err := e.store.Route(key)
	return ok || err != nil
}

// unhold takes h out of the table for good (its hold ended, or its
// sender gave up); false when an instance took it first.
func (e *Engine) unhold(h *heldMsg) bool {
	e.reg.mu.Lock()
	defer e.reg.mu.Unlock()
	if !e.unholdLocked(h) {
		return false
	}
	e.countHeldLocked(-1)
	return true
}

func (e *Engine) unholdLocked(h *heldMsg) bool {
	found := false
	for _, k := range h.keys {
		list := e.reg.held[k]
		for i, x := range list {
			if x == h {
				list = append(list[:i], list[i+1:]...)
				found = true
				break
			}
		}
		if len(list) == 0 {
			delete(e.reg.held, k)
		} else {
			e.reg.held[k] = list
		}
	}
	return found
}

// expire ends the hold of a message no instance took in time.
func (e *Engine) expire(h *heldMsg) {
	if !e.unhold(h) {
		return
	}
	h.p.Metrics.HeldExpired.Inc()
	if h.done != nil && e.answerEnded(h.p, h.ex, h.tried, exchange.QName{}) {
		h.done <- nil
		return
	}
	err := exchange.ClientError("no instance of process %s came to wait for %s with correlation %v within %s, and %s does not start an instance",
		h.p.Name.Local, h.ex.Operation.Name, h.tried, e.messageHold(), h.ex.Operation.Name)
	if h.done != nil {
		h.done <- err
		return
	}
	e.log.Warn("held one-way message dropped", slog.String(logProcess, h.p.Name.Local), slog.Any("err", err))
}

// releaseHeldLocked hands the oldest message held under each of keys to
// the instance that now waits there, delivered again on its own goroutine
// (the instance is locked by the run that registered it). One at a time:
// the next is offered when the instance waits again, so messages are
// taken in the order they came. The caller holds e.reg.mu.
func (e *Engine) releaseHeldLocked(keys []string) {
	if len(e.reg.held) == 0 {
		return
	}
	for _, k := range keys {
		if list := e.reg.held[k]; len(list) > 0 {
			h := list[0]
			e.unholdLocked(h)
			h.timer.Stop()
			if e.reg.offering == nil {
				e.reg.offering = map[string]int{}
			}
			for _, hk := range h.keys {
				e.reg.offering[hk]++
			}
			go e.redeliver(h)
		}
	}
}

// redeliver offers a held message again; if the instance moved on before
// taking it, it is held again (its timer still runs).
func (e *Engine) redeliver(h *heldMsg) {
	err := e.deliver(h.ctx, h.p, h.ex, h)
	taken := !errors.Is(err, errHeldAgain)
	e.reg.mu.Lock()
	if taken {
		e.countHeldLocked(-1)
	}
	var ready []string
	for _, k := range h.keys {
		if e.reg.offering[k]--; e.reg.offering[k] <= 0 {
			delete(e.reg.offering, k)
			// A message that came while this one was offered was held
			// behind it (queuedBehind). If the instance took this one
			// and waits under k again already, its registration found
			// nothing to release then: hand the next one over now, or
			// it would wait for a registration that has happened.
			if len(e.reg.held[k]) > 0 && e.registeredLocked(h.p, k) {
				ready = append(ready, k)
			}
		}
	}
	e.releaseHeldLocked(ready)
	e.reg.mu.Unlock()
	if !taken {
		return
	}
	h.p.Metrics.HeldTaken.Inc()
	if h.done != nil {
		h.done <- err
		return
	}
	if err = interp.WaitForReply(context.Background(), err); err != nil {
		e.log.Warn("held one-way message failed", slog.String(logProcess, h.p.Name.Local), slog.Any("err", err))
	}
}
