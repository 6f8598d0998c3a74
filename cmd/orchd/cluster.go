package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/orchd/orchd/internal/cluster"
	"github.com/orchd/orchd/internal/etcdstore"
	"github.com/orchd/orchd/internal/process"
)

// clusterConfig makes this node one of several sharing persistent
// instances through the etcd store (docs/cluster.md).
type clusterConfig struct {
	name   string
	nodeID string
	ttl    time.Duration
}

func clusterFlags(fs *flag.FlagSet, c *clusterConfig) {
	fs.StringVar(&c.name, "cluster", "", "with --store etcd: join this cluster of orchd nodes sharing the store: each persistent instance runs on one node at a time (an etcd lock per instance, whose fence every checkpoint carries, so a node paused past --cluster-ttl cannot commit over another's state), a node that leaves has its timers and outbox taken over by the others, and a node whose session expired rejoins by itself. Not yet: forwarding in-memory conversations; see docs/cluster.md")
	fs.StringVar(&c.nodeID, "node-id", "", "with --cluster: this node's unique name (default: host name and listen port)")
	fs.DurationVar(&c.ttl, "cluster-ttl", 5*time.Second, "with --cluster: a node silent this long is dead and its instance locks are released (whole seconds)")
}

// clusterOwners adapts a cluster node to the engine's InstanceOwners.
type clusterOwners struct {
	n   *cluster.Node
	log *slog.Logger
}

// The lock is the fence of the run's checkpoints: the etcd store adds
// its comparison (Lock.Fence) to their transaction.
var _ etcdstore.Fence = (*cluster.Lock)(nil)

// Acquire takes the instance's etcd lock and returns it as the fence of
// the run's checkpoints.
func (o clusterOwners) Acquire(ctx context.Context, id string) (func(), any, error) {
	l, err := o.n.Acquire(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return func() {
		if err := l.Release(context.Background()); err != nil {
			// The lock stays until this node takes it again
			// (Reentrant) or its lease ends.
			o.log.Warn("cluster: release instance lock", slog.String("instance", id), slog.Any("err", err))
		}
	}, l, nil
}

// joinCluster joins cfg's cluster through the etcd store's client, with
// url as this node's SOAP base URL. It returns nil when --cluster is not
// set.
func joinCluster(ctx context.Context, cfg *clusterConfig, st instanceStore, url, listen string, log *slog.Logger) (*cluster.Node, error) {
	if cfg.name == "" {
		return nil, nil
	}
	es, ok := st.(*etcdstore.Store)
	if !ok {
		return nil, fmt.Errorf("--cluster needs --store etcd (and a persistent process deployed)")
	}
	id := cfg.nodeID
	if id == "" {
		host, _ := os.Hostname()
		id = host + "-" + listen
	}
	n, err := cluster.Join(ctx, es.Client(), cluster.Options{Cluster: cfg.name, ID: id, URL: url,
		TTL: cfg.ttl, Reentrant: true, Rejoin: true, Logger: log})
	if err != nil {
		return nil, err
	}
	log.Info("cluster joined", slog.String("cluster", cfg.name), slog.String("node", id))
	return n, nil
}

// adoptTimers takes over the timers of nodes that leave: at each
// membership change where a node left, the engine schedules the stored
// timers this node is now Responsible for. While the node's session is
// lost it waits for the rejoin, and then adopts once: timers it failed
// to fire meanwhile (it could not take their locks), and those written
// by others that are now its own. It returns when ctx ends.
func adoptTimers(ctx context.Context, n *cluster.Node, e *process.Engine, log *slog.Logger) {
	adopt := func() {
		k, err := e.AdoptTimers(n.Responsible)
		if err != nil {
			log.Warn("cluster: adopt timers", slog.Any("err", err))
		} else if k > 0 {
			log.Info("cluster: adopted timers", slog.Int("timers", k))
		}
	}
	for rejoined := false; ; rejoined = true {
		select {
		case <-ctx.Done():
			return
		case <-n.Joined():
		}
		if rejoined {
			adopt()
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
				adopt()
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

// leadOutbox campaigns for the outbox election; while this node leads,
// it sends the stored outbox messages it is not sending already when it
// becomes leader and whenever a member leaves, so a dead node's RELIABLE
// sends go out. When the session is lost it campaigns again once the
// node has rejoined. It returns when ctx ends.
func leadOutbox(ctx context.Context, n *cluster.Node, e *process.Engine, log *slog.Logger) {
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

// leadOutboxOnce is leadOutbox for one session.
func leadOutboxOnce(ctx context.Context, n *cluster.Node, e *process.Engine, log *slog.Logger) error {
	return n.Lead(ctx, "outbox", func(lctx context.Context) {
		log.Info("cluster: this node leads the outbox")
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
