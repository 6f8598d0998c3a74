package humantask

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
)

// callbackTimeout bounds one delivery of a task's outcome.
const callbackTimeout = 30 * time.Second

// maxCallbackAttempts is how many times a failing callback (or Ended)
// is tried before the engine gives up until its next start.
const maxCallbackAttempts = 12

// deliverLater sends task id's outcome to its callback after the retry
// delay of attempt (0: now), in its own goroutine.
func (e *Engine) deliverLater(id string, attempt int) {
	if e.opts.Callbacks != nil {
		e.retryLater(id, "task outcome not delivered", attempt, e.deliver)
	}
}

// endLater hands task id's end to Options.Ended after the retry delay
// of attempt (0: now), in its own goroutine.
func (e *Engine) endLater(id string, attempt int) {
	if e.opts.Ended != nil {
		e.retryLater(id, "task end not taken by its instance", attempt, e.end)
	}
}

// retryLater runs send(id) after the retry delay of attempt (0: now), in
// its own goroutine, and again with back-off while it fails, up to
// maxCallbackAttempts; failed names what did not happen in the logs.
func (e *Engine) retryLater(id, failed string, attempt int, send func(id string) error) {
	delay := time.Duration(0)
	if attempt > 0 {
		delay = e.opts.CallbackRetry << min(attempt-1, 6)
		if delay > time.Minute {
			delay = time.Minute
		}
	}
	run := func() {
		e.mu.RLock()
		closed := e.closed
		e.mu.RUnlock()
		if closed {
			return
		}
		if err := send(id); err != nil {
			if attempt+1 >= maxCallbackAttempts {
				e.log.Error(failed+"; given up until the next start", slog.String("task", id), slog.Int("attempts", attempt+1), slog.Any("err", err))
				return
			}
			e.log.Warn(failed+"; trying again", slog.String("task", id), slog.Int("attempt", attempt+1), slog.Any("err", err))
			e.retryLater(id, failed, attempt+1, send)
		}
	}
	if delay == 0 {
		go run()
		return
	}
	time.AfterFunc(delay, run)
}

// deliver sends task id's output to its callback as the message of the
// response operation, with the header blocks that route it to the
// waiting instance, and marks it delivered.
func (e *Engine) deliver(id string) error {
	t, err := e.stored(id)
	if err != nil || t == nil {
		return err
	}
	cb := t.Callback
	if cb == nil || cb.Delivered || t.State != Completed {
		return nil
	}
	out, err := ParseXML(t.Output)
	if err != nil {
		return fmt.Errorf("task output: %w", err)
	}
	var hs []*etree.Element
	for _, h := range cb.Headers {
		el, err := ParseXML(h)
		if err != nil {
			return fmt.Errorf("callback header: %w", err)
		}
		hs = append(hs, el)
	}
	pt := exchange.QName{Space: cb.PortType.Space, Local: cb.PortType.Local}
	msg := exchange.NewMessage(exchange.QName{})
	op := &exchange.Operation{Name: cb.Operation, PortType: pt, Style: exchange.Document, Input: &exchange.MessageDesc{}}
	if out != nil {
		msg.Parts["payload"] = out
		op.Input.Parts = []exchange.PartDesc{{Name: "payload", Element: exchange.QName{Space: out.NamespaceURI(), Local: out.Tag}}}
	}
	ep := &exchange.Endpoint{Address: cb.Address, Service: exchange.QName{Space: cb.Service.Space, Local: cb.Service.Local},
		Port: cb.Port, Operations: []*exchange.Operation{op}}
	partner := e.opts.Callbacks(ep)
	ctx, cancel := context.WithTimeout(context.Background(), callbackTimeout)
	defer cancel()
	if _, err := partner.Invoke(ctx, &exchange.Call{Operation: op, Input: msg, Headers: hs}); err != nil {
		return fmt.Errorf("callback to %s: %w", cb.Address, err)
	}
	if err := e.mark(id, func(t *Task) bool {
		if t.Callback == nil {
			return false
		}
		t.Callback.Delivered = true
		return true
	}); err != nil {
		return err
	}
	e.log.Info("task outcome delivered", slog.String("task", id), slog.String("address", cb.Address), slog.String("operation", cb.Operation))
	return nil
}

// end hands task id's end to Options.Ended, if it is still pending, and
// marks it taken.
func (e *Engine) end(id string) error {
	t, err := e.stored(id)
	if err != nil || t == nil || !t.EndPending {
		return err
	}
	if err := e.opts.Ended(*t); err != nil {
		return err
	}
	return e.mark(id, func(t *Task) bool {
		done := t.EndPending
		t.EndPending = false
		return done
	})
}

// stored reads task id from the store; nil when there is none.
func (e *Engine) stored(id string) (*Task, error) {
	rec, ok, err := e.store.Task(id)
	if err != nil || !ok {
		return nil, err
	}
	return decodeTask(rec)
}

// mark changes stored task id with set in one store transaction, when
// set reports a change (a task gone or unreadable is left alone).
func (e *Engine) mark(id string, set func(*Task) bool) error {
	err := e.store.UpdateTask(id, func(old []byte) ([]byte, error) {
		if old == nil {
			return nil, errNothing
		}
		t, err := decodeTask(old)
		if err != nil || !set(t) {
			return nil, errNothing
		}
		return encodeTask(t)
	})
	if errors.Is(err, errNothing) {
		return nil
	}
	return err
}
