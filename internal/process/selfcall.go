package process

import (
	"context"
	"net"
	"net/url"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
)

// selfHosts reads Options.Self into the set of "scheme://host:port"
// keys (host lower-cased, the scheme's port made explicit) that name
// this engine's front door.
func selfHosts(urls []string) map[string]bool {
	m := map[string]bool{}
	for _, s := range urls {
		if k, ok := originKey(s); ok {
			m[k] = true
		}
	}
	return m
}

// originKey is the "scheme://host:port" of address s, with the host
// lower-cased and the scheme's default port made explicit; false when s
// is no absolute http or https URL.
func originKey(s string) (string, bool) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	switch {
	case scheme != "http" && scheme != "https":
		return "", false
	case port == "" && scheme == "http":
		port = "80"
	case port == "":
		port = "443"
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port), true
}

// ownEndpoint returns the endpoint of this engine that the address addr
// names, for a call to it to stay in process as Apache ODE routed it:
// addr's scheme, host and port are one of Options.Self and its path is
// the path a deployed process serves. Nil when addr names another
// server, no served path, or an endpoint that checks the WS-Security
// header of its callers (Auth): a call at a run-time address carries no
// credentials, and in process it would skip that check.
func (e *Engine) ownEndpoint(addr string) *exchange.Endpoint {
	if len(e.self) == 0 {
		return nil
	}
	k, ok := originKey(addr)
	if !ok || !e.self[k] {
		return nil
	}
	u, err := url.Parse(addr)
	if err != nil {
		return nil
	}
	snap := e.served.Load()
	if snap == nil {
		return nil
	}
	for ep := range *snap {
		if ep.Path == u.Path {
			if ep.Auth != nil {
				return nil
			}
			return ep
		}
	}
	return nil
}

// addressedLocal is the partner of an endpoint reference assigned at run
// time that names one of this engine's own endpoints: an in-process call
// (localPartner) whose exchange carries the reference's parameters as
// header blocks, as the SOAP call would have.
func (e *Engine) addressedLocal(served *exchange.Endpoint, params []*etree.Element) exchange.Partner {
	return &localPartner{e: e, ep: served, headers: params}
}

// copyElements deep-copies es (nil for none), so that the callee's
// exchange shares no tree with the caller's endpoint reference.
func copyElements(es []*etree.Element) []*etree.Element {
	if len(es) == 0 {
		return nil
	}
	out := make([]*etree.Element, len(es))
	for i, x := range es {
		out[i] = x.Copy()
	}
	return out
}

// CallbackPartner binds a call that a component beside the engine (the
// task engine, answering a process that waits for a task's outcome)
// makes to ep.Address: the endpoint of this engine at that address, or
// serving ep's service and port, or at that address's path, called in
// process with the message's one part renamed to the served operation's
// (a document/literal part's name is not on the wire); else through
// Options.AssignedPartners, under the partner address policy.
func (e *Engine) CallbackPartner(ep *exchange.Endpoint) exchange.Partner {
	if served := e.ownEndpoint(ep.Address); served != nil {
		return partFit{e: e, ep: served}
	}
	// An address of this server as it listened before a restart (on
	// another port), or of another node of the cluster: the endpoint
	// this engine serves for the same service and port, or at the same
	// path, takes it (a persistent instance is served by any node).
	// On a cluster, not an in-memory process's: its instance lives in
	// the memory of the node whose address it is, so the call goes
	// there over HTTP, where the cluster's forwarding finds it.
	e.mu.RLock()
	served := e.localEndpoint(ep)
	remote := served != nil && e.opts.MemRoutes != nil && ep.Address != "" && e.byEndpoint[served] != nil && e.byEndpoint[served].InMemory
	e.mu.RUnlock()
	if served != nil && served.Auth == nil && !remote {
		return partFit{e: e, ep: served}
	}
	if bind := e.opts.AssignedPartners; bind != nil {
		return bind(ep, nil)
	}
	if bind := e.opts.Partners; bind != nil {
		return bind(ep)
	}
	return unbound{ep}
}

// partFit calls a served endpoint in process with the call's header
// blocks (the session that routes it), renaming a one-part message to
// the part of the served operation's input.
type partFit struct {
	e  *Engine
	ep *exchange.Endpoint
}

func (p partFit) Invoke(ctx context.Context, c *exchange.Call) (*exchange.Message, error) {
	local := p.e.addressedLocal(p.ep, c.Headers)
	op := endpointOp(p.ep, c.Operation.Name)
	if op != nil && op.Input != nil && len(op.Input.Parts) == 1 && c.Input != nil && len(c.Input.Parts) == 1 {
		m := exchange.NewMessage(op.Input.Name)
		for _, el := range c.Input.Parts {
			m.Parts[op.Input.Parts[0].Name] = el
		}
		cc := *c
		cc.Input = m
		return local.Invoke(ctx, &cc)
	}
	return local.Invoke(ctx, c)
}
