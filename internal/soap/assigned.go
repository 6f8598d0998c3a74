package soap

import (
	"context"
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
	left := time.Until(start.Add(c.callTimeout(call)))
	if left <= 0 {
		return
	}
	if id := exchange.IdlerOf(ctx); id != nil {
		id.Idle(exchange.WaitPartner)
		defer id.Busy(exchange.WaitPartner)
	}
	t := time.NewTimer(left)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
