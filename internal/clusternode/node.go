package clusternode

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/orchd/orchd/internal/cluster"
	"github.com/orchd/orchd/internal/etcdstore"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process"
)

// Owners adapts a cluster node to the engine's InstanceOwners
// (process.Options.Owners): an instance runs on the node holding its
// etcd lock.
type Owners struct {
	Node   *cluster.Node
	Logger *slog.Logger
}

// The lock is the fence of the run's checkpoints: the etcd store adds
// its comparison (Lock.Fence) to their transaction.
var _ etcdstore.Fence = (*cluster.Lock)(nil)

// Acquire takes the instance's etcd lock and returns it as the fence of
// the run's checkpoints.
func (o Owners) Acquire(ctx context.Context, id string) (func(), any, error) {
	l, err := o.Node.Acquire(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return o.releaser(id, l), l, nil
}

// releaser is the release of lock l on instance id.
func (o Owners) releaser(id string, l *cluster.Lock) func() {
	return func() {
		if err := l.Release(context.Background()); err != nil {
			// The lock stays until this node takes it again
			// (Reentrant) or its lease ends.
			o.Logger.Warn("cluster: release instance lock", slog.String("instance", id), slog.Any("err", err))
		}
	}
}

// Claim owns a new instance (process.InstanceClaimer): its lock is taken
// with those of the other new instances asked for meanwhile, in one etcd
// transaction (cluster.Node.AcquireNew).
func (o Owners) Claim(ctx context.Context, id string) (func(), any, error) {
	l, err := o.Node.AcquireNew(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return o.releaser(id, l), l, nil
}

// The lock can give itself up inside a checkpoint (ReleaseWithNext).
var (
	_ etcdstore.FoldedFence   = (*cluster.Lock)(nil)
	_ process.InstanceClaimer = Owners{}
)

// Options say how a node joins its cluster.
type Options struct {
	// Cluster is the cluster's name (--cluster).
	Cluster string
	// NodeID is this node's unique name; empty means the host name and
	// Listen.
	NodeID string
	// Listen is the address the SOAP listener is bound to.
	Listen string
	// URL is this node's SOAP base URL, Admin its management API's, both
	// published in its membership.
	URL, Admin string
	// TTL is how long a silent node stays a member (--cluster-ttl).
	TTL time.Duration
	// Logger receives the node's logs; nil discards them.
	Logger *slog.Logger
}

// Join joins o.Cluster through the etcd store's client; st must be the
// etcd store (*etcdstore.Store), else the error says what to set.
func Join(ctx context.Context, st process.Store, o Options) (*cluster.Node, error) {
	es, ok := st.(*etcdstore.Store)
	if !ok {
		return nil, fmt.Errorf("--cluster needs --store etcd (and a persistent process deployed)")
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	id := o.NodeID
	if id == "" {
		host, _ := os.Hostname()
		id = host + "-" + o.Listen
	}
	n, err := cluster.Join(ctx, es.Client(), cluster.Options{Cluster: o.Cluster, ID: id, URL: o.URL, Admin: o.Admin,
		TTL: o.TTL, Reentrant: true, Rejoin: true, Logger: log})
	if err != nil {
		return nil, err
	}
	log.Info("cluster joined", slog.String("cluster", o.Cluster), slog.String("node", id))
	return n, nil
}

// AdoptTimers takes over the timers of nodes that leave: at each
// membership change where a node left, the engine schedules the stored
// timers this node is now Responsible for. While the node's session is
// lost it waits for the rejoin, and then adopts once: timers it failed
// to fire meanwhile (it could not take their locks), and those written
// by others that are now its own. It returns when ctx ends.
func AdoptTimers(ctx context.Context, n *cluster.Node, e *process.Engine, log *slog.Logger) {
	adopt := func() {
		var k int
		var err error
		if n.SameVersions() {
			k, err = e.AdoptTimers(n.Responsible)
		} else {
			// A rolling upgrade: each timer to a node that has its
			// instance's version.
			k, err = e.AdoptTimersOf(n.ResponsibleFor)
		}
		if err != nil {
			log.Warn("cluster: adopt timers", slog.Any("err", err))
		} else if k > 0 {
			log.Info("cluster: adopted timers", slog.Int("timers", k))
		}
		// The runs a departed node was inside: resumed by the node
		// responsible for each (by any node that has its version during
		// an upgrade; the lock and the state check under it let one go
		// on).
		mine := n.Responsible
		if !n.SameVersions() {
			mine = func(string) bool { return true }
		}
		if k, err := e.AdoptInterrupted(mine); err != nil {
			log.Warn("cluster: adopt interrupted runs", slog.Any("err", err))
		} else if k > 0 {
			log.Info("cluster: resuming interrupted runs", slog.Int("instances", k))
		}
	}
	OnMemberLeft(ctx, n, adopt)
}

// OnMemberLeft calls fn whenever a member leaves the cluster and when
// this node rejoins after losing its session (members may have left
// meanwhile): the task engine schedules the departed node's task
// deadlines (humantask.Engine.Reschedule). It returns when ctx ends.
func OnMemberLeft(ctx context.Context, n *cluster.Node, fn func()) {
	for rejoined := false; ; rejoined = true {
		select {
		case <-ctx.Done():
			return
		case <-n.Joined():
		}
		if rejoined {
			fn()
		}
		before, changed := n.Members()
		done := n.Done()
	session:
		for {
			select {
			case <-ctx.Done():
				return
			case <-done:
				break session
			case <-changed:
			}
			var now []cluster.Member
			now, changed = n.Members()
			if left(before, now) {
				fn()
			}
			before = now
		}
	}
}

// left reports whether a member of before is not in now.
func left(before, now []cluster.Member) bool {
	for _, b := range before {
		if !slices.ContainsFunc(now, func(m cluster.Member) bool { return m.ID == b.ID }) {
			return true
		}
	}
	return false
}

// LeadOutbox campaigns for the outbox election; while this node leads,
// it sends the stored outbox messages it is not sending already when it
// becomes leader and whenever a member leaves, so a dead node's RELIABLE
// sends go out. When the session is lost it campaigns again once the
// node has rejoined. While it leads, it also runs the engine's retention
// sweep (Engine.RunRetention): one node of the cluster sweeps. It
// returns when ctx ends.
func LeadOutbox(ctx context.Context, n *cluster.Node, e *process.Engine, log *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.Joined():
		}
		if err := leadOutboxOnce(ctx, n, e, log); err != nil {
			// Session lost (campaign again once rejoined) or etcd
			// unavailable (again after a pause).
			log.Error("cluster: outbox election ended", slog.Any("err", err))
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
	}
}

// leadOutboxOnce is LeadOutbox for one session.
func leadOutboxOnce(ctx context.Context, n *cluster.Node, e *process.Engine, log *slog.Logger) error {
	return n.Lead(ctx, "outbox", func(lctx context.Context) {
		log.Info("cluster: this node leads the outbox")
		go e.RunRetention(lctx, process.SweepStore) // one node sweeps the store: the outbox's leader
		before, changed := n.Members()
		for adopt := true; ; {
			if adopt {
				if k, err := e.AdoptOutbox(); err != nil {
					log.Warn("cluster: adopt outbox", slog.Any("err", err))
				} else if k > 0 {
					log.Info("cluster: adopted outbox messages", slog.Int("messages", k))
				}
			}
			select {
			case <-lctx.Done():
				return
			case <-changed:
			}
			var now []cluster.Member
			now, changed = n.Members()
			adopt, before = left(before, now), now
		}
	})
}

// PublishVersions keeps the process versions this node serves
// (Engine.VersionIDs) in its membership: at start and after every
// change signalled on changed (Options.VersionsChanged), coalesced; a
// node that rejoins publishes the last versions set with its new
// membership key. It returns when ctx ends.
func PublishVersions(ctx context.Context, n *cluster.Node, e *process.Engine, changed <-chan struct{}, log *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
		if err := n.SetVersions(ctx, e.VersionIDs()); err != nil {
			log.Warn("cluster: versions not published", slog.Any("err", err))
		}
	}
}

// Front is the SOAP front door the forwarder stands before
// (*soap.Server implements it): it serves what is not forwarded, and
// finds and decodes a request's endpoint and message.
type Front interface {
	http.Handler
	Endpoint(path string) *exchange.Endpoint
	Decode(r *http.Request, body []byte) (*exchange.Endpoint, *exchange.Operation, *exchange.Message, error)
}

// Forwarder puts a cluster.Forwarder in front of the SOAP handler. Only what may run elsewhere is read and decoded before
// dispatch: a correlated message for an in-memory process (its route
// keys: which node holds the conversation), and, while some live member
// serves a version of the process that this node does not (a rolling
// upgrade), a correlated message for a persistent one (its instance's
// version, read from the store).
func Forwarder(n *cluster.Node, e *process.Engine, front Front, log *slog.Logger) *cluster.Forwarder {
	mayRoute := func(ep *exchange.Endpoint) (inMemory, ok bool) {
		if ep == nil || !e.Correlated(ep) {
			return false, false
		}
		name, inMemory, served := e.EndpointProcess(ep)
		return inMemory, served && (inMemory || upgrading(n, name))
	}
	return &cluster.Forwarder{Node: n, Next: front, Logger: log,
		Inspect: func(r *http.Request) bool {
			_, ok := mayRoute(front.Endpoint(r.URL.Path))
			return ok
		},
		Route: func(r *http.Request, body []byte) (cluster.Routing, bool) {
			ep, op, msg, err := front.Decode(r, body)
			if err != nil {
				return cluster.Routing{}, false // the SOAP handler answers it
			}
			inMemory, ok := mayRoute(ep)
			switch {
			case !ok:
				return cluster.Routing{}, false
			case inMemory:
				keys := e.RouteKeysFor(ep, op.Name, msg)
				return cluster.Routing{Keys: keys}, len(keys) > 0
			}
			v, found, err := e.InstanceVersionFor(ep, op.Name, msg)
			if err != nil || !found {
				return cluster.Routing{}, false // run here: the run meets the same store
			}
			return cluster.Routing{Version: v}, true
		},
	}
}

// upgrading reports whether a live member serves a version of process
// name ({ns}local) that this node does not.
func upgrading(n *cluster.Node, name string) bool {
	ms, _ := n.Members()
	for _, m := range ms {
		for _, v := range m.Versions {
			if strings.HasPrefix(v, name+"#") && !n.Serves(v) {
				return true
			}
		}
	}
	return false
}
