package clusterview

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/orchd/orchd/internal/admin"
	"github.com/orchd/orchd/internal/cluster"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/mgmtclient"
)

// The cluster view of the management backend (docs/cluster.md, "The
// cluster view"). Any node answers for the whole cluster:
//
//   - persistent instances come from the shared store, read once by the
//     node asked; a running one names its lock holder as its node;
//   - in-memory instances live on one node each; their IDs are qualified
//     with it ("m12@node-b", the engine's "m12" on node-b), and the node
//     asked fetches the others' from their APIs (GET
//     /api/v1/instances?scope=local) in parallel, bounded by the fan-out
//     timeout; a node that does not answer is named in Page.Partial;
//   - an action or a detail of another node's in-memory instance is
//     forwarded to that node's API with the caller's Authorization;
//   - process versions and counters are summed over the nodes' answers
//     (GET /api/v1/processes?scope=local), with each node's share.
//
// # Paging across nodes
//
// A listing is in-memory instances node by node (nodes sorted by ID,
// newest first within a node), then the store's, newest first. So a
// cursor is a position in one node's sequence or in the store:
// "m<seq>@<node>" continues below seq on node, then with the following
// nodes; "m@<node>" starts node from its newest; "~" or a stored ID
// continues in the store, as on one node. A page asks every node from
// the cursor's on for at most the page size at once, and keeps them in
// node order up to the page size (the rest is fetched again on the next
// page: an overfetch of at most nodes x limit small records, for one
// round trip of latency). A node that joins behind the cursor is not
// listed on that walk; one that fails is skipped and named in Partial.

// Local is this node's own part of the management backend
// (internal/mgmtbackend): what the view adds the other nodes' parts to.
type Local interface {
	// LocalProcesses are this node's process versions and counters.
	LocalProcesses(ctx context.Context) ([]mgmt.Process, error)
	// LocalInstances lists the instances the engine knows: this node's
	// in-memory ones, then the store's (Engine.QueryInstances).
	LocalInstances(ctx context.Context, q mgmt.Query) (*mgmt.Page, error)
	// LocalInstance describes an instance the engine knows, with its
	// timeline.
	LocalInstance(ctx context.Context, id string) (*mgmt.InstanceDetail, error)
	// LocalAct acts on an instance the engine knows.
	LocalAct(ctx context.Context, id string, a mgmt.Action) error
	// LocalNode is this node's counters and served versions (its ID and
	// URLs are the view's to fill in).
	LocalNode() mgmt.Node
}

// Options configure a View.
type Options struct {
	// Name is the cluster's name (--cluster).
	Name string
	// Node is this node's membership.
	Node *cluster.Node
	// Local answers for this node.
	Local Local
	// TLS is what the other nodes' https APIs are asked with (the
	// partner client's: --partner-ca); nil means the system roots.
	TLS *tls.Config
	// Timeout bounds one node's answer to a fan-out; zero means 2s.
	Timeout time.Duration
}

// View answers the management API for the whole cluster: the
// membership, this node's Local part, and the other nodes' APIs asked
// through one mgmtclient each.
type View struct {
	name    string
	node    *cluster.Node
	local   Local
	client  *http.Client
	timeout time.Duration // bound on one fan-out
}

// New returns the view of the cluster o.Node joined.
func New(o Options) *View {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = o.TLS
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	return &View{name: o.Name, node: o.Node, local: o.Local, client: &http.Client{Transport: tr}, timeout: timeout}
}

// Cluster is mgmt.ClusterBackend's Cluster: the live nodes with their
// counters, each from its own API; local: this node alone.
func (cv *View) Cluster(ctx context.Context, local bool) (*mgmt.Cluster, error) {
	self := cv.self()
	out := &mgmt.Cluster{Name: cv.name}
	if local {
		out.Nodes = []mgmt.Node{self}
		return out, nil
	}
	members := cv.members()
	answers := cv.fanOut(ctx, members, func(ctx context.Context, m cluster.Member) (any, error) {
		var c mgmt.Cluster
		if err := cv.get(ctx, m, "/cluster", scopeLocal(), &c); err != nil {
			return nil, err
		}
		if len(c.Nodes) != 1 {
			return nil, fmt.Errorf("answered %d nodes for scope=local", len(c.Nodes))
		}
		return c.Nodes[0], nil
	})
	for i, m := range members {
		n := mgmt.Node{ID: m.ID, URL: m.URL, Admin: m.Admin, Versions: m.Versions}
		switch {
		case m.ID == self.ID:
			n = self
		case answers[i].err != nil:
			out.Partial = append(out.Partial, m.ID+": "+answers[i].err.Error())
		default:
			got := answers[i].v.(mgmt.Node)
			n.Stats = got.Stats
			if len(got.Versions) > 0 {
				n.Versions = got.Versions
			}
		}
		out.Nodes = append(out.Nodes, n)
	}
	return out, nil
}

// self describes this node: its counters and served versions, its ID
// and URLs in the membership.
func (cv *View) self() mgmt.Node {
	n := cv.local.LocalNode()
	n.ID, n.Self = cv.node.ID(), true
	if m, ok := cv.node.Member(n.ID); ok {
		n.URL, n.Admin = m.URL, m.Admin
	}
	return n
}

// members are the live members as this node sees them, sorted by ID,
// itself always included (while it rejoins after a lost session it is
// missing from its own view, but its in-memory instances are not gone).
func (cv *View) members() []cluster.Member {
	ms, _ := cv.node.Members()
	if !slices.ContainsFunc(ms, func(m cluster.Member) bool { return m.ID == cv.node.ID() }) {
		ms = append(ms, cluster.Member{ID: cv.node.ID()})
		slices.SortFunc(ms, func(a, b cluster.Member) int { return cmp.Compare(a.ID, b.ID) })
	}
	return ms
}

// scopeLocal is the query asking a node for its own part only.
func scopeLocal() url.Values { return url.Values{"scope": {mgmt.ScopeLocal}} }

// nodeAnswer is one node's answer to a fan-out.
type nodeAnswer struct {
	v   any
	err error
}

// fanOut calls fn for every member but this node, in parallel, each
// bounded by the fan-out timeout; answers are in members' order (this
// node's is empty).
func (cv *View) fanOut(ctx context.Context, members []cluster.Member, fn func(context.Context, cluster.Member) (any, error)) []nodeAnswer {
	out := make([]nodeAnswer, len(members))
	var wg sync.WaitGroup
	for i, m := range members {
		if m.ID == cv.node.ID() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, cv.timeout)
			defer cancel()
			v, err := fn(cctx, m)
			if err != nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
				err = fmt.Errorf("timeout (%s)", cv.timeout)
			}
			out[i] = nodeAnswer{v, err}
		}()
	}
	wg.Wait()
	return out
}

// call sends a request to member m's API (path under /api/v1) with the
// caller's Authorization, and decodes a 2xx answer into out (nil:
// discard).
func (cv *View) call(ctx context.Context, m cluster.Member, method, path string, query url.Values, out any) error {
	if m.Admin == "" {
		return fmt.Errorf("node %s publishes no management API: %w", m.ID, mgmt.ErrUnavailable)
	}
	c, err := mgmtclient.New(m.Admin, mgmtclient.Options{HTTP: cv.client, ForwardAuthorization: true})
	if err != nil {
		return fmt.Errorf("node %s: management API %w: %w", m.ID, err, mgmt.ErrUnavailable)
	}
	if _, err := c.Do(ctx, method, path, query, nil, out); err != nil {
		return fmt.Errorf("node %s: %w", m.ID, err)
	}
	return nil
}

func (cv *View) get(ctx context.Context, m cluster.Member, path string, query url.Values, out any) error {
	return cv.call(ctx, m, http.MethodGet, path, query, out)
}

// splitMemID splits a qualified in-memory ID "m12@node-b" into "m12"
// and "node-b"; ok is false for any other ID.
func splitMemID(id string) (local, node string, ok bool) {
	local, node, ok = strings.Cut(id, "@")
	if !ok || node == "" || !strings.HasPrefix(local, "m") {
		return id, "", false
	}
	return local, node, true
}

// qualify names this node in its in-memory instances' IDs and node.
func (cv *View) qualify(in *mgmt.Instance) {
	if in.InMemory {
		if _, _, ok := splitMemID(in.ID); !ok {
			in.ID += "@" + cv.node.ID()
		}
		in.Node = cv.node.ID()
	}
}

// pageLimit is the page size QueryInstances uses for q.Limit.
func pageLimit(n int) int {
	switch {
	case n <= 0:
		return admin.DefaultLimit
	case n > admin.MaxLimit:
		return admin.MaxLimit
	}
	return n
}

// Instances is mgmt.Backend's Instances over the cluster (see the
// paging notes above).
func (cv *View) Instances(ctx context.Context, q mgmt.Query) (*mgmt.Page, error) {
	if q.Scope == mgmt.ScopeLocal {
		lq := q
		if local, node, ok := splitMemID(q.After); ok {
			if node != cv.node.ID() {
				return nil, fmt.Errorf("cursor %q is node %s's, not this node's: %w", q.After, node, mgmt.ErrInvalid)
			}
			lq.After = local
		}
		if lq.After == "m" {
			lq.After = ""
		}
		p, err := cv.local.LocalInstances(ctx, lq)
		if err != nil {
			return nil, err
		}
		for i := range p.Instances {
			cv.qualify(&p.Instances[i])
		}
		if p.Next != "" {
			p.Next += "@" + cv.node.ID()
		}
		return p, nil
	}
	limit := pageLimit(q.Limit)
	page := &mgmt.Page{Instances: []mgmt.Instance{}}
	after := q.After
	if after == "" || after[0] == 'm' {
		// The in-memory part: nodes from the cursor's on.
		local, from, ok := splitMemID(after)
		if after != "" && !ok {
			local, from = after, cv.node.ID() // a one-node cursor "m12"
		}
		members := cv.members()
		start := slices.IndexFunc(members, func(m cluster.Member) bool { return m.ID >= from })
		if start < 0 {
			start = len(members)
		}
		members = members[start:]
		sub := q
		sub.Scope, sub.Limit = mgmt.ScopeLocal, limit
		pages := make([]*mgmt.Page, len(members))
		answers := cv.fanOut(ctx, members, func(ctx context.Context, m cluster.Member) (any, error) {
			sq := sub
			sq.After = ""
			if m.ID == from && local != "" {
				sq.After = local + "@" + m.ID
			}
			var p mgmt.Page
			err := cv.get(ctx, m, "/instances", admin.Values(sq), &p)
			return &p, err
		})
		for i, m := range members {
			if m.ID == cv.node.ID() {
				sq := sub
				sq.After = ""
				if m.ID == from {
					sq.After = local
				}
				p, err := cv.Instances(ctx, sq)
				if err != nil {
					return nil, err
				}
				pages[i] = p
				continue
			}
			if answers[i].err != nil {
				page.Partial = append(page.Partial, m.ID+": "+answers[i].err.Error())
				continue
			}
			pages[i] = answers[i].v.(*mgmt.Page)
		}
		for i, p := range pages {
			if p == nil {
				continue
			}
			page.Scanned += p.Scanned
			for j, in := range p.Instances {
				if len(page.Instances) >= limit {
					page.Next = "m@" + members[i].ID // this node from its newest
					if j > 0 {
						page.Next = p.Instances[j-1].ID // qualified: "m<seq>@<node>"
					}
					return page, nil
				}
				in.Node = members[i].ID
				page.Instances = append(page.Instances, in)
			}
			if p.Next != "" {
				page.Next = p.Next
				return page, nil
			}
		}
		if len(page.Instances) >= limit {
			page.Next = "~"
			return page, nil
		}
		after = "~"
	}
	sq := q
	sq.After, sq.Limit = after, limit-len(page.Instances)
	sp, err := cv.local.LocalInstances(ctx, sq)
	if err != nil {
		return nil, err
	}
	holders := map[string]string{}
	if len(sp.Instances) > 0 {
		if holders, err = cv.node.Holders(ctx); err != nil {
			return nil, fmt.Errorf("instance listing: %w", err)
		}
	}
	for _, in := range sp.Instances {
		in.Node = holders[in.ID]
		page.Instances = append(page.Instances, in)
	}
	page.Scanned += sp.Scanned
	page.Next = sp.Next
	return page, nil
}

// owner is the live member an in-memory instance ID names, or an error
// (ErrNotFound: that node is gone, and its in-memory instances with it).
func (cv *View) owner(id, node string) (cluster.Member, error) {
	m, ok := cv.node.Member(node)
	if !ok {
		return m, fmt.Errorf("instance %s: node %s is not a live member (its in-memory instances ended with it): %w", id, node, mgmt.ErrNotFound)
	}
	return m, nil
}

// Instance is mgmt.Backend's Instance over the cluster: another node's
// in-memory instance is described by that node.
func (cv *View) Instance(ctx context.Context, id string) (*mgmt.InstanceDetail, error) {
	local, node, ok := splitMemID(id)
	if ok && node != cv.node.ID() {
		m, err := cv.owner(id, node)
		if err != nil {
			return nil, err
		}
		var d mgmt.InstanceDetail
		if err := cv.get(ctx, m, "/instances/"+url.PathEscape(id), nil, &d); err != nil {
			return nil, err
		}
		d.Node = node
		return &d, nil
	}
	d, err := cv.local.LocalInstance(ctx, local)
	if err != nil {
		return nil, err
	}
	if d.InMemory {
		cv.qualify(&d.Instance)
		return d, nil
	}
	if holders, err := cv.node.Holders(ctx); err == nil {
		d.Node = holders[d.ID]
	}
	return d, nil
}

// Act is mgmt.Backend's Act over the cluster: another node's in-memory
// instance is acted on by that node.
func (cv *View) Act(ctx context.Context, id string, a mgmt.Action) error {
	local, node, ok := splitMemID(id)
	if ok && node != cv.node.ID() {
		m, err := cv.owner(id, node)
		if err != nil {
			return err
		}
		actx, cancel := context.WithTimeout(ctx, cv.timeout+actionWait)
		defer cancel()
		return cv.call(actx, m, http.MethodPost, "/instances/"+url.PathEscape(id)+"/"+string(a), nil, nil)
	}
	return cv.local.LocalAct(ctx, local, a)
}

// actionWait is how long an action may wait for a run of its instance
// on the node that does it (process's actWait), beyond the fan-out
// timeout, when it is forwarded.
const actionWait = 2 * time.Second

// Processes sums the process versions of every node that answers
// (GET /api/v1/processes?scope=local), naming the nodes of each version
// and their share of the counters. A version is a definition
// (Fingerprint): each node numbers its own deploys, so one definition may
// be version 2 on one node and 3 on another; Version and the other
// fields are this node's when it has the version, else the first
// answering node's.
func (cv *View) Processes(ctx context.Context) ([]mgmt.Process, error) {
	members := cv.members()
	answers := cv.fanOut(ctx, members, func(ctx context.Context, m cluster.Member) (any, error) {
		var ps []mgmt.Process
		err := cv.get(ctx, m, "/processes", scopeLocal(), &ps)
		return ps, err
	})
	type key struct {
		name        string
		fingerprint string // version numbers are per node
	}
	byKey := map[key]int{}
	var out []mgmt.Process
	add := func(node string, ps []mgmt.Process) {
		for _, p := range ps {
			k := key{p.Name, p.Fingerprint}
			i, seen := byKey[k]
			if !seen {
				i = len(out)
				byKey[k] = i
				q := p
				q.Stats, q.Nodes, q.NodeStats = mgmt.Stats{}, nil, nil
				out = append(out, q)
			}
			o := &out[i]
			if node == cv.node.ID() && seen {
				// This node's description wins: links to
				// /processes/{name}?version=N are followed on this node.
				keep := *o
				*o = p
				o.State, o.Nodes, o.NodeStats, o.Stats = keep.State, keep.Nodes, keep.NodeStats, keep.Stats
			}
			if p.State == "active" {
				o.State = "active" // active on some node
			}
			o.Nodes = append(o.Nodes, node)
			o.NodeStats = append(o.NodeStats, mgmt.NodeStats{Node: node, Version: p.Version, Stats: p.Stats})
			s := &o.Stats
			s.Started += p.Stats.Started
			s.Completed += p.Stats.Completed
			s.Faulted += p.Stats.Faulted
			s.Terminated += p.Stats.Terminated
			s.Suspended += p.Stats.Suspended
			s.Exchanges += p.Stats.Exchanges
			s.ExchangeNanos += p.Stats.ExchangeNanos
		}
	}
	for i, m := range members {
		switch {
		case m.ID == cv.node.ID():
			ps, err := cv.local.LocalProcesses(ctx)
			if err != nil {
				return nil, err
			}
			add(m.ID, ps)
		case answers[i].err == nil:
			add(m.ID, answers[i].v.([]mgmt.Process))
		}
	}
	slices.SortFunc(out, func(a, b mgmt.Process) int {
		if c := cmp.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return cmp.Compare(b.Version, a.Version)
	})
	return out, nil
}
