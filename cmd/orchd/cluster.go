package main

import (
	"context"
	"flag"
	"log/slog"
	"time"

	"github.com/orchd/orchd/internal/cluster"
	"github.com/orchd/orchd/internal/clusternode"
	"github.com/orchd/orchd/internal/process"
)

// clusterConfig makes this node one of several sharing persistent
// instances through the etcd store (docs/cluster.md).
type clusterConfig struct {
	name   string
	nodeID string
	ttl    time.Duration
	// fanout bounds a management API request to another node (the
	// cluster view).
	fanout time.Duration
}

func clusterFlags(fs *flag.FlagSet, c *clusterConfig) {
	fs.StringVar(&c.name, "cluster", "", "with --store etcd: join this cluster of orchd nodes sharing the store: each persistent instance runs on one node at a time (an etcd lock per instance, whose fence every checkpoint carries, so a node paused past --cluster-ttl cannot commit over another's state), a node that leaves has its timers and outbox taken over by the others, a node whose session expired rejoins by itself, a message for an in-memory conversation living on another node is forwarded to it, and one for a persistent instance whose process version this node lacks goes to a node that has it (rolling upgrades); see docs/cluster.md")
	fs.StringVar(&c.nodeID, "node-id", "", "with --cluster: this node's unique name (default: host name and listen port)")
	fs.DurationVar(&c.fanout, "cluster-fanout-timeout", 2*time.Second, "with --cluster: how long the management API waits for another node's answer (its in-memory instances, counters); a node slower than this is named in the answer's partial")
	fs.DurationVar(&c.ttl, "cluster-ttl", 5*time.Second, "with --cluster: a node silent this long is dead and its instance locks are released (whole seconds)")
}

// joinCluster joins cfg's cluster through the etcd store st, with url as
// this node's SOAP base URL and adminURL as its management API's. It
// returns nil when --cluster is not set.
func joinCluster(ctx context.Context, cfg *clusterConfig, st process.Store, url, adminURL, listen string, log *slog.Logger) (*cluster.Node, error) {
	if cfg.name == "" {
		return nil, nil
	}
	return clusternode.Join(ctx, st, clusternode.Options{Cluster: cfg.name, NodeID: cfg.nodeID, Listen: listen,
		URL: url, Admin: adminURL, TTL: cfg.ttl, Logger: log})
}
