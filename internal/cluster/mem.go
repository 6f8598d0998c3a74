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
	return Member{ID: id, URL: string(nr.Kvs[0].Value)}, true, nil
}

// ForwardedHeader marks a request forwarded by another node; a node
// never forwards such a request again (no loops during membership
// changes).
const ForwardedHeader = "X-Orchd-Forwarded-By"

// Forwarder is an http.Handler in front of the SOAP handler: a request
// whose route key (RouteKey) is registered to another live node is proxied
// to that node's URL; one registered to a node that is gone or does not
// answer gets a SOAP Server fault saying so; every other request goes to
// Next.
type Forwarder struct {
	Node *Node
	Next http.Handler
	// RouteKey computes the in-memory route key of a request from its
	// path and body (the process's correlation properties); ok false
	// means the request correlates with no in-memory instance.
	RouteKey func(r *http.Request, body []byte) (key string, ok bool)
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
	if r.Method != http.MethodPost || r.Header.Get(ForwardedHeader) != "" {
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
	restore := func() {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	}
	if int64(len(body)) > limit {
		// Too large to inspect: let the SOAP handler refuse it.
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
		f.Next.ServeHTTP(w, r)
		return
	}
	key, ok := f.RouteKey(r, body)
	if !ok {
		restore()
		f.Next.ServeHTTP(w, r)
		return
	}
	owner, found, err := f.Node.Owner(r.Context(), key)
	switch {
	case err != nil:
		f.fault(w, r, err.Error())
		return
	case !found || owner.ID == f.Node.ID():
		restore()
		f.Next.ServeHTTP(w, r)
		return
	}
	target, err := url.Parse(owner.URL)
	if err != nil {
		f.fault(w, r, fmt.Sprintf("cluster: owner node %s has a bad URL %q: %v", owner.ID, owner.URL, err))
		return
	}
	restore()
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
			f.fault(w, r, fmt.Sprintf("cluster: the node owning this conversation (%s at %s) does not answer: %v", owner.ID, owner.URL, err))
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
