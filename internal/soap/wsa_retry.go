package soap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/redact"
)

// Delivery of callbacks (the replies and faults of requests whose
// wsa:ReplyTo or wsa:FaultTo is not anonymous). The client was answered
// 202 already, so a callback that fails is lost unless orchd tries it
// again. It is tried again only where doing so cannot deliver it twice
// or where the address asked for it: the connection was refused
// (nothing was sent), the address answered 5xx (it did not take the
// message; 503 with its Retry-After), or 429 (with its Retry-After).
// Any other failure is final at once: a 4xx (the address refused the
// message, and would refuse it again), the partner address policy, a
// timeout or a connection cut after the request was sent (the address
// may have taken it). Waits double from CallbackRetry.Backoff up to
// CallbackRetry.MaxWait; a Retry-After longer than MaxWait gives up.
// The attempts run in the goroutine of the request (after its 202), so
// they are bounded in time by Attempts x (the call timeout + MaxWait).

// CallbackRetry bounds the attempts at a callback.
type CallbackRetry struct {
	// Attempts is the most POSTs of one callback, the first included;
	// one means no retry. Zero means DefaultCallbackRetry's.
	Attempts int
	// Backoff is the wait before the second attempt; each later wait
	// doubles it. Zero means DefaultCallbackRetry's.
	Backoff time.Duration
	// MaxWait caps a wait, and the Retry-After honoured: an address
	// asking to wait longer is given up on. Zero means
	// DefaultCallbackRetry's.
	MaxWait time.Duration
}

// DefaultCallbackRetry is the retry of ServerOptions' zero value: four
// attempts, waiting 1s, 2s and 4s between them (or the address's
// Retry-After, up to 30s).
var DefaultCallbackRetry = CallbackRetry{Attempts: 4, Backoff: time.Second, MaxWait: 30 * time.Second}

// withDefaults fills the zero fields of r from DefaultCallbackRetry.
func (r CallbackRetry) withDefaults() CallbackRetry {
	if r.Attempts <= 0 {
		r.Attempts = DefaultCallbackRetry.Attempts
	}
	if r.Backoff <= 0 {
		r.Backoff = DefaultCallbackRetry.Backoff
	}
	if r.MaxWait <= 0 {
		r.MaxWait = DefaultCallbackRetry.MaxWait
	}
	return r
}

// retryable is a failed callback attempt that may be made again, after
// at least after (the address's Retry-After; zero when it gave none).
type retryable struct {
	err   error
	after time.Duration
}

func (r *retryable) Error() string { return r.err.Error() }
func (r *retryable) Unwrap() error { return r.err }

// sendCallback posts the deferred reply or fault to its address, under
// the partner address policy, trying again as CallbackRetry allows; a
// callback given up on is logged once (the client was answered 202
// already) and counted.
func (rp *reply) sendCallback(ctx context.Context) {
	cb := rp.cb
	hc := rp.s.callbacks.policedSOAP
	if rp.s.callbackRules != nil {
		hc = rp.s.callbacks.assignedHTTP(rp.s.callbackRules(rp.rt.ep))
	}
	ctx = context.WithoutCancel(ctx)
	rt := rp.s.callbackRetry
	wait := rt.Backoff
	var err error
	attempt := 1
	for ; ; attempt++ {
		err = rp.s.callbacks.postCallback(ctx, hc, rp.ver, cb)
		if err == nil {
			rp.s.metrics.callback(rp.rt.process, callbackDelivered)
			rp.s.log.Debug("wsa:ReplyTo callback sent", logKeyProcess, rp.rt.process, logKeyOp, rp.op.Name,
				logKeyPartner, Redact(cb.to.Address), "attempts", attempt)
			return
		}
		var r *retryable
		if !errors.As(err, &r) || attempt >= rt.Attempts {
			break
		}
		d := max(wait, r.after)
		if r.after > rt.MaxWait {
			err = fmt.Errorf("%w (Retry-After %s is past the %s orchd waits)", err, r.after, rt.MaxWait)
			break
		}
		d = min(d, rt.MaxWait)
		rp.s.metrics.callback(rp.rt.process, callbackRetried)
		time.Sleep(d)
		wait *= 2
	}
	// The log line first: whoever sees the count sees the line too.
	rp.s.log.Warn("wsa:ReplyTo callback failed", logKeyProcess, rp.rt.process, logKeyOp, rp.op.Name,
		logKeyPartner, Redact(cb.to.Address), "attempts", attempt, logKeyErr, err)
	rp.s.metrics.callback(rp.rt.process, callbackFailed)
}

// postCallback POSTs cb through hc within the client's call timeout: an
// error unless the address answered 2xx, a *retryable one when the
// attempt may be made again (connection refused, 5xx, 429).
func (c *Client) postCallback(ctx context.Context, hc *http.Client, v exchange.SOAPVersion, cb *callback) error {
	ctx, cancel := context.WithTimeoutCause(ctx, c.timeout, errCallTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cb.to.Address, bytes.NewReader(cb.body))
	if err != nil {
		return fmt.Errorf("callback to %s: %w", Redact(cb.to.Address), redact.Error(err))
	}
	setSOAPHeaders(req, v, cb.action)
	resp, err := hc.Do(req)
	if err != nil {
		err = fmt.Errorf("callback to %s: %w", Redact(cb.to.Address), transportError(ctx, err, c.timeout))
		if errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, ErrPartnerNotAllowed) {
			return &retryable{err: err}
		}
		return err
	}
	_, _ = io.CopyN(io.Discard, resp.Body, maxDrain)
	_ = resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		return nil
	}
	err = fmt.Errorf("callback to %s: %w: HTTP %s", Redact(cb.to.Address), ErrPartnerResponse, resp.Status)
	if resp.StatusCode/100 == 5 || resp.StatusCode == http.StatusTooManyRequests {
		return &retryable{err: err, after: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
	}
	return err
}

// parseRetryAfter reads a Retry-After header (seconds, or an HTTP date) at
// now: zero when absent or unreadable.
func parseRetryAfter(h string, now time.Time) time.Duration {
	if h == "" {
		return 0
	}
	if n, err := strconv.Atoi(h); err == nil {
		if n < 0 {
			return 0
		}
		return time.Duration(min(n, 1<<20)) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
