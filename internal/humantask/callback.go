package humantask

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
)

// callbackTimeout bounds one delivery of a task's outcome.
const callbackTimeout = 30 * time.Second

// maxCallbackAttempts is how many times a failing callback is tried
// before the engine gives up until its next start.
const maxCallbackAttempts = 12

// deliverLater sends task id's outcome to its callback after the retry
// delay of attempt (0: now), in its own goroutine.
func (e *Engine) deliverLater(id string, attempt int) {
	if e.opts.Callbacks == nil {
		return
	}
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
		if err := e.deliver(id); err != nil {
			if attempt+1 >= maxCallbackAttempts {
				e.log.Error("task outcome not delivered; given up until the next start", slog.String("task", id), slog.Int("attempts", attempt+1), slog.Any("err", err))
				return
			}
			e.log.Warn("task outcome not delivered; trying again", slog.String("task", id), slog.Int("attempt", attempt+1), slog.Any("err", err))
			e.deliverLater(id, attempt+1)
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
	rec, ok, err := e.store.Task(id)
	if err != nil || !ok {
		return err
	}
	t, err := decodeTask(rec)
	if err != nil {
		return err
	}
	cb := t.Callback
	if cb == nil || cb.Delivered || t.State != Completed {
		return nil
	}
	out, err := parseXML(t.Output)
	if err != nil {
		return fmt.Errorf("task output: %w", err)
	}
	var hs []*etree.Element
	for _, h := range cb.Headers {
		el, err := parseXML(h)
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
	ep := &exchange.Endpoint{Address: cb.Address, Operations: []*exchange.Operation{op}}
	partner := e.opts.Callbacks(ep)
	ctx, cancel := context.WithTimeout(context.Background(), callbackTimeout)
	defer cancel()
	if _, err := partner.Invoke(ctx, &exchange.Call{Operation: op, Input: msg, Headers: hs}); err != nil {
		_ = e.store.UpdateTask(id, func(old []byte) ([]byte, error) {
			t, err := decodeTask(old)
			if err != nil || t.Callback == nil {
				return nil, errNothing
			}
			t.Callback.Attempts++
			return encodeTask(t)
		})
		return fmt.Errorf("callback to %s: %w", cb.Address, err)
	}
	err = e.store.UpdateTask(id, func(old []byte) ([]byte, error) {
		if old == nil {
			return nil, errNothing
		}
		t, err := decodeTask(old)
		if err != nil || t.Callback == nil {
			return nil, errNothing
		}
		t.Callback.Delivered = true
		return encodeTask(t)
	})
	if err != nil && err != errNothing {
		return err
	}
	e.log.Info("task outcome delivered", slog.String("task", id), slog.String("address", cb.Address), slog.String("operation", cb.Operation))
	return nil
}
