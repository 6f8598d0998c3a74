package soap

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/partnerallow"
)

// AssignedPartnerUnder is AssignedPartner under the partner address
// policy narrowed to only, a bundle's deploy.xml rules
// (PartnerPolicy.Narrow): the call may connect where both the operator's
// policy and one of the bundle's rules allow. Nil only is AssignedPartner.
// Each distinct only gets a transport (and connection pool) of its own,
// so a connection one process's rules allowed is never reused for
// another's call.
func (c *Client) AssignedPartnerUnder(ep *exchange.Endpoint, only *partnerallow.List) exchange.Partner {
	return &partner{c: c, ep: ep, hc: c.assignedHTTP(only), assigned: true}
}

// assignedHTTP is the HTTP client of SOAP calls to addresses chosen at
// run time under the partner address policy narrowed to only (nil: the
// policy as it is).
func (c *Client) assignedHTTP(only *partnerallow.List) *http.Client {
	if only == nil || c.policy == nil {
		return c.policedSOAP
	}
	// Keyed by the rules, not the list: every deploy of a process parses
	// its deploy.xml into a new list, and a client (with its idle
	// connections) per deploy would never be let go.
	key := only.Key()
	if v, ok := c.narrowed.Load(key); ok {
		return v.(*http.Client)
	}
	n := &http.Client{Transport: newTransport(c.conns, c.tls, c.policy.Narrow(only)), CheckRedirect: noRedirects}
	v, _ := c.narrowed.LoadOrStore(key, n)
	return v.(*http.Client)
}

// failLate makes a failed call to an address chosen at run time (other
// than the policy's refusal, which connects nowhere) end no sooner than
// its timeout would: a refused connection, a reset, an answer that is no
// SOAP response and a partner that never answers all fail with the same
// error after the same time, so a client cannot tell a closed port from
// an open or a filtered one through a process. The exchange waits (as
// for a partner: no CPU slot held) until the call's deadline, measured
// from start, or until ctx ends.
func (c *Client) failLate(ctx context.Context, call *exchange.Call, start time.Time) {
	deadline := start.Add(c.callTimeout(call))
	if time.Until(deadline) <= 0 {
		return
	}
	if id := exchange.IdlerOf(ctx); id != nil {
		id.Idle(exchange.WaitPartner)
		defer id.Busy(exchange.WaitPartner)
	}
	waitUntil(ctx, deadline)
}

// waitUntil returns at deadline, or when ctx ends.
func waitUntil(ctx context.Context, deadline time.Time) {
	left := time.Until(deadline)
	if left <= 0 {
		return
	}
	t := time.NewTimer(left)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// AssignedHTTPClient is the HTTP client of REST calls to URIs chosen at
// run time, under the partner address policy narrowed to only (nil: the
// policy as it is), following redirects to the same host only. A call
// that gets no response, whatever the reason (the policy refused the
// address, the port refused or cut the connection, nobody answered),
// fails with the one error ErrAssignedFailed, logged with its detail,
// no sooner than its request's deadline: a client cannot tell a
// forbidden address, a closed port and a silent one apart through a
// process. The caller bounds each request with a deadline (the
// exchange is then already waiting for a partner).
func (c *Client) AssignedHTTPClient(only *partnerallow.List) *http.Client {
	key := only.Key()
	if v, ok := c.narrowedREST.Load(key); ok {
		return v.(*http.Client)
	}
	rt := c.policed.Transport
	if only != nil && c.policy != nil {
		rt = newTransport(c.conns, c.tls, c.policy.Narrow(only))
	}
	if rt == nil {
		rt = http.DefaultTransport
	}
	n := &http.Client{Transport: &lateTransport{rt: rt, log: c.log}, CheckRedirect: sameHostRedirects}
	v, _ := c.narrowedREST.LoadOrStore(key, n)
	return v.(*http.Client)
}

// ErrAssignedFailed is the whole of what a client learns of a failed
// call to an address chosen at run time.
var ErrAssignedFailed = errors.New("the call failed (the server log has the detail)")

// lateTransport is the transport of AssignedHTTPClient: every failure
// is ErrAssignedFailed at the request's deadline.
type lateTransport struct {
	rt  http.RoundTripper
	log *slog.Logger
}

func (t *lateTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err == nil {
		return resp, nil
	}
	t.log.Warn("call to a partner address chosen at run time failed", logKeyPartner, Redact(req.URL.String()),
		"method", req.Method, logKeyErr, RedactText(err.Error()))
	if d, ok := req.Context().Deadline(); ok {
		waitUntil(req.Context(), d)
	}
	return nil, ErrAssignedFailed
}
