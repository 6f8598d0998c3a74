package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/soap"
)

func (n *Node) memKey(route string) string { return n.pfx + "mem/" + route }

// RegisterRoute records that the waiting in-memory instance reachable by
// route key lives on this node: /orchd/<cluster>/mem/<route> = node ID,
// held with the node's lease, so it disappears with the node. Register
// before the reply that lets the partner send the correlated message.
func (n *Node) RegisterRoute(ctx context.Context, route string) error {
	ctx, cancel := n.opCtx(ctx)
	defer cancel()
	lease, err := n.lease("cluster: register route")
	if err != nil {
		return err
	}
	_, err = n.cli.Put(ctx, n.memKey(route), n.opts.ID, clientv3.WithLease(lease))
	return unavailable("cluster: register route", err)
}

// maxTxnOps is etcd's default limit of operations in one transaction.
const maxTxnOps = 128

// RegisterRoutes is RegisterRoute for several routes, in transactions
// of up to 128 puts: one round trip for a batch of waiting instances.
func (n *Node) RegisterRoutes(ctx context.Context, routes []string) error {
	lease, err := n.lease("cluster: register routes")
	if err != nil {
		return err
	}
	ctx, cancel := n.opCtx(ctx)
	defer cancel()
	for len(routes) > 0 {
		k := min(len(routes), maxTxnOps)
		ops := make([]clientv3.Op, k)
		for i, r := range routes[:k] {
			ops[i] = clientv3.OpPut(n.memKey(r), n.opts.ID, clientv3.WithLease(lease))
		}
		if _, err := n.cli.Txn(ctx).Then(ops...).Commit(); err != nil {
			return unavailable("cluster: register routes", err)
		}
		routes = routes[k:]
	}
	return nil
}

// UnregisterRoute removes route if this node still owns it.
func (n *Node) UnregisterRoute(ctx context.Context, route string) error {
	ctx, cancel := n.opCtx(ctx)
	defer cancel()
	key := n.memKey(route)
	_, err := n.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.Value(key), "=", n.opts.ID)).
		Then(clientv3.OpDelete(key)).
		Commit()
	return unavailable("cluster: unregister route", err)
}

// Owner returns the node owning route. ok is false when no node has
// registered it. When the route names a node that is not live any more,
// the error wraps ErrOwnerGone.
func (n *Node) Owner(ctx context.Context, route string) (m Member, ok bool, err error) {
	ctx, cancel := n.opCtx(ctx)
	defer cancel()
	key := n.memKey(route)
	resp, err := n.cli.Get(ctx, key)
	if err != nil {
		return Member{}, false, unavailable("cluster: route owner", err)
	}
	kvs := resp.Kvs
	if len(kvs) == 0 {
		return Member{}, false, nil
	}
	id := string(kvs[0].Value)
	nk := n.pfx + "nodes/" + id
	nr, err := n.cli.Get(ctx, nk)
	if err != nil {
		return Member{}, false, unavailable("cluster: route owner", err)
	}
	if len(nr.Kvs) == 0 {
		return Member{ID: id}, true, fmt.Errorf("cluster: route %q: node %s: %w", route, id, ErrOwnerGone)
	}
	return parseMember(id, nr.Kvs[0].Value), true, nil
}

// ForwardedHeader marks a request forwarded by another node; a node
// never forwards such a request again (no loops during membership
// changes).
const ForwardedHeader = "X-Orchd-Forwarded-By"

// Routing says where a request must run, as far as the Forwarder is
// concerned.
type Routing struct {
	// Keys are the in-memory route keys the request would be found
	// under: it goes to the node that registered one of them
	// (RegisterRoute).
	Keys []string
	// Version, when set, is the process version the request's
	// (persistent) instance runs on: a node that does not serve it
	// forwards the request to a live member that does (Member.Serves).
	Version string
}

// Forwarder is an http.Handler in front of the SOAP handler: a request
// whose in-memory route key (Route) is registered to another live node,
// or whose instance's process version this node does not serve, is
// proxied to the node that has it; one registered to a node that is gone
// or does not answer, or for a version no live node serves, gets a SOAP
// Server fault saying so; every other request goes to Next.
type Forwarder struct {
	Node *Node
	Next http.Handler
	// Route computes where a request must run from its path and body
	// (the process's correlation properties); ok false means the
	// request correlates with no in-memory instance and needs no
	// particular version: it is handled here.
	Route func(r *http.Request, body []byte) (rt Routing, ok bool)
	// Inspect, when set, says from the request line and headers alone
	// whether a request may need Route; one that does not goes to Next
	// without its body being read here. Nil means every POST may.
	Inspect func(r *http.Request) bool
	// MaxBody caps the body read to compute the key. Zero means 10 MiB.
	MaxBody int64
	// Transport carries forwarded requests. Nil means
	// http.DefaultTransport.
	Transport http.RoundTripper
	// Logger receives forwarding failures. Nil means slog.Default().
	Logger *slog.Logger
}

// ServeHTTP implements http.Handler.
func (f *Forwarder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Header.Get(ForwardedHeader) != "" || (f.Inspect != nil && !f.Inspect(r)) {
		f.Next.ServeHTTP(w, r)
		return
	}
	limit := f.MaxBody
	if limit == 0 {
		limit = 10 << 20
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		http.Error(w, "read request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if int64(len(body)) > limit {
		// Too large to inspect: let the SOAP handler refuse it.
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
		f.Next.ServeHTTP(w, r)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	rt, ok := f.Route(r, body)
	if !ok {
		f.Next.ServeHTTP(w, r)
		return
	}
	owner, local, reason := f.target(r.Context(), rt)
	switch {
	case reason != "":
		f.fault(w, r, reason)
	case local:
		f.Next.ServeHTTP(w, r)
	default:
		f.proxy(w, r, owner)
	}
}

// target picks the node a request routed as rt runs on: local, or
// owner, or neither (reason says why it cannot run anywhere).
func (f *Forwarder) target(ctx context.Context, rt Routing) (owner Member, local bool, reason string) {
	for _, key := range rt.Keys {
		m, found, err := f.Node.Owner(ctx, key)
		switch {
		case errors.Is(err, ErrOwnerGone):
			return Member{}, false, fmt.Sprintf("cluster: the node owning this in-memory conversation, %s, is gone (its instance ended with it)", m.ID)
		case err != nil:
			return Member{}, false, err.Error()
		case !found:
			continue
		case m.ID == f.Node.ID():
			return Member{}, true, ""
		}
		return m, false, ""
	}
	if rt.Version == "" || f.Node.Serves(rt.Version) {
		return Member{}, true, ""
	}
	ms, _ := f.Node.Members()
	for _, m := range ms {
		if m.ID != f.Node.ID() && m.Serves(rt.Version) && m.URL != "" {
			return m, false, ""
		}
	}
	return Member{}, false, fmt.Sprintf("cluster: no live node serves version %s, which this instance runs on", rt.Version)
}

// proxy forwards r to owner and copies its answer, faults included.
func (f *Forwarder) proxy(w http.ResponseWriter, r *http.Request, owner Member) {
	target, err := url.Parse(owner.URL)
	if err != nil {
		f.fault(w, r, fmt.Sprintf("cluster: node %s has a bad URL %q: %v", owner.ID, owner.URL, err))
		return
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host
			pr.Out.Header.Set(ForwardedHeader, f.Node.ID())
		},
		Transport: f.Transport,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
				return // the client hung up
			}
			f.fault(w, r, fmt.Sprintf("cluster: the node this message must run on (%s at %s) does not answer: %v", owner.ID, owner.URL, err))
		},
	}
	rp.ServeHTTP(w, r)
}

// fault answers a SOAP Server fault in the request's SOAP version.
func (f *Forwarder) fault(w http.ResponseWriter, r *http.Request, reason string) {
	log := f.Logger
	if log == nil {
		log = slog.Default()
	}
	log.Warn("cluster forward", "path", r.URL.Path, "err", reason)
	v, ct := exchange.SOAP11, "text/xml; charset=utf-8"
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/soap+xml") {
		v, ct = exchange.SOAP12, "application/soap+xml; charset=utf-8"
	}
	var buf bytes.Buffer
	if err := soap.EncodeFault(&buf, v, soap.FaultServer, reason, nil); err != nil {
		http.Error(w, reason, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusInternalServerError)
	w.Write(buf.Bytes())
}
