package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// Options configure a Node. Zero values take the defaults given.
type Options struct {
	// Cluster names the cluster; every key lives under /orchd/<Cluster>/.
	// Empty means "default".
	Cluster string
	// ID names this node; it must be unique among live nodes. Required.
	ID string
	// URL is this node's SOAP base URL (http://host:port), where other
	// nodes forward messages for its in-memory instances. Required.
	URL string
	// TTL is the lease time: a node that stops renewing for this long is
	// dead, and its locks, routes and leadership are released. Whole
	// seconds (etcd's lease unit), at least 1. Zero means 5s.
	TTL time.Duration
	// OpTimeout bounds each etcd call a Node makes on its own (register,
	// acquire, release, lookups) when the caller's context has no earlier
	// deadline; a call that runs out of time fails with ErrUnavailable.
	// Zero means 3s.
	OpTimeout time.Duration
	// Reentrant says the caller serialises the runs of an instance
	// within this node itself (the engine does, with its per-instance
	// locks): a lock key found held with this node's own lease (left
	// behind by a Release that failed) is then taken back by Acquire and
	// TryAcquire instead of failing with ErrHeld or waiting for a lease
	// that never ends while the node lives; and a lock whose acquisition
	// got no answer (ErrUnavailable) is deleted once etcd answers again,
	// as one whose release got none always is (Lock.Release).
	Reentrant bool
	// Logger receives membership changes and background failures. Nil
	// means slog.Default().
	Logger *slog.Logger
}

// Prefix returns the key prefix under which the nodes of the named
// cluster keep their keys (doc.go, "Keys"): /orchd/<name>/, with
// "default" for an empty name.
func Prefix(name string) string {
	if name == "" {
		name = "default"
	}
	return "/orchd/" + name + "/"
}

// Member is one live node.
type Member struct {
	ID  string
	URL string
}

// Node is this orchd process's membership in a cluster: a session (an
// etcd lease kept alive in the background) and the keys held with it.
// Its methods are safe for concurrent use.
type Node struct {
	cli  *clientv3.Client
	sess *concurrency.Session
	opts Options
	pfx  string
	log  *slog.Logger

	stop    context.CancelFunc
	watched chan struct{} // closed when the membership watch has ended

	smu      sync.Mutex
	settling map[string]chan struct{} // lock key -> closed when its settle ends

	mu      sync.Mutex
	members []Member      // live nodes, sorted by ID
	changed chan struct{} // closed and replaced on each membership change
}

// Join registers the node under /orchd/<cluster>/nodes/<id> with a fresh
// lease and starts watching the membership. The client stays the caller's:
// Close does not close it.
func Join(ctx context.Context, cli *clientv3.Client, opts Options) (*Node, error) {
	if opts.ID == "" || opts.URL == "" {
		return nil, errors.New("cluster: join: node ID and URL are required")
	}
	if strings.Contains(opts.ID, "/") {
		return nil, fmt.Errorf("cluster: join: node ID %q contains '/'", opts.ID)
	}
	if opts.TTL == 0 {
		opts.TTL = 5 * time.Second
	}
	if opts.TTL < time.Second {
		return nil, fmt.Errorf("cluster: join: TTL %v is below etcd's 1s lease unit", opts.TTL)
	}
	if opts.OpTimeout == 0 {
		opts.OpTimeout = 3 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	n := &Node{
		cli: cli, opts: opts, pfx: Prefix(opts.Cluster),
		log: opts.Logger.With("node", opts.ID), changed: make(chan struct{}),
		watched: make(chan struct{}),
	}
	gctx, cancel := n.opCtx(ctx)
	defer cancel()
	sess, err := concurrency.NewSession(cli, concurrency.WithTTL(int(opts.TTL/time.Second)), concurrency.WithContext(context.WithoutCancel(ctx)))
	if err != nil {
		return nil, unavailable("cluster: join: session", err)
	}
	n.sess = sess
	key := n.pfx + "nodes/" + opts.ID
	resp, err := cli.Txn(gctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, opts.URL, clientv3.WithLease(sess.Lease()))).
		Commit()
	if err != nil {
		sess.Close()
		return nil, unavailable("cluster: join: register", err)
	}
	if !resp.Succeeded {
		sess.Close()
		return nil, fmt.Errorf("cluster: join: node ID %q is already live", opts.ID)
	}
	wctx, stop := context.WithCancel(context.Background())
	n.stop = stop
	rev, err := n.loadMembers(gctx)
	if err != nil {
		stop()
		sess.Close()
		return nil, err
	}
	go n.watchMembers(wctx, rev)
	return n, nil
}

// ID is the node's ID.
func (n *Node) ID() string { return n.opts.ID }

// Lease is the etcd lease every key of this node is held with.
func (n *Node) Lease() clientv3.LeaseID { return n.sess.Lease() }

// Done is closed when the node's session ends: Close was called, or the
// lease expired (the node was cut off from etcd for longer than its TTL).
// After that its locks are no longer its own.
func (n *Node) Done() <-chan struct{} { return n.sess.Done() }

// Close revokes the lease, which releases every lock, route and
// leadership of this node at once, and stops the membership watch.
func (n *Node) Close() error {
	n.stop()
	err := n.sess.Close()
	<-n.watched
	if err != nil {
		return unavailable("cluster: close", err)
	}
	return nil
}

// opCtx bounds ctx by Options.OpTimeout.
func (n *Node) opCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, n.opts.OpTimeout)
}

func (n *Node) loadMembers(ctx context.Context) (int64, error) {
	resp, err := n.cli.Get(ctx, n.pfx+"nodes/", clientv3.WithPrefix())
	if err != nil {
		return 0, unavailable("cluster: list nodes", err)
	}
	ms := make([]Member, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		ms = append(ms, Member{ID: strings.TrimPrefix(string(kv.Key), n.pfx+"nodes/"), URL: string(kv.Value)})
	}
	n.setMembers(ms)
	return resp.Header.Revision, nil
}

func (n *Node) setMembers(ms []Member) {
	slices.SortFunc(ms, func(a, b Member) int { return cmp.Compare(a.ID, b.ID) })
	n.mu.Lock()
	defer n.mu.Unlock()
	if slices.Equal(ms, n.members) {
		return
	}
	n.members = ms
	close(n.changed)
	n.changed = make(chan struct{})
}

// watchMembers follows joins and leaves from revision rev on; when the
// watch breaks (compaction, etcd restart) it reloads the list and goes on.
func (n *Node) watchMembers(ctx context.Context, rev int64) {
	defer close(n.watched)
	for ctx.Err() == nil {
		wch := n.cli.Watch(clientv3.WithRequireLeader(ctx), n.pfx+"nodes/", clientv3.WithPrefix(), clientv3.WithRev(rev+1))
		for wr := range wch {
			if wr.Err() != nil {
				break
			}
			n.mu.Lock()
			ms := slices.Clone(n.members)
			n.mu.Unlock()
			for _, ev := range wr.Events {
				id := strings.TrimPrefix(string(ev.Kv.Key), n.pfx+"nodes/")
				ms = slices.DeleteFunc(ms, func(m Member) bool { return m.ID == id })
				if ev.Type == clientv3.EventTypePut {
					ms = append(ms, Member{ID: id, URL: string(ev.Kv.Value)})
				}
				n.log.Info("cluster membership", "member", id, "event", ev.Type.String())
			}
			n.setMembers(ms)
			rev = wr.Header.Revision
		}
		if ctx.Err() != nil {
			return
		}
		// Resynchronise: the watch ended (no leader, compaction, ...).
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
		lctx, cancel := n.opCtx(ctx)
		r, err := n.loadMembers(lctx)
		cancel()
		if err == nil {
			rev = r
		}
	}
}

// Members returns the live nodes as last seen by the membership watch,
// sorted by ID, and a channel that is closed at the next change.
func (n *Node) Members() ([]Member, <-chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.members), n.changed
}

// Member returns the live node with the given ID.
func (n *Node) Member(id string) (Member, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, m := range n.members {
		if m.ID == id {
			return m, true
		}
	}
	return Member{}, false
}

// Responsible reports whether this node is the one that schedules the
// timers of instance id under the current membership: rendezvous hashing
// of the ID over the live members, so a join or a leave moves only the
// instances of the node that came or went. It is a partition of work, not
// a lock: during a membership change two nodes may both answer true for a
// moment, which is why a timer fires under the instance's lock (Acquire)
// and its commit removes it (see the package doc).
func (n *Node) Responsible(id string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return rendezvous(n.members, id) == n.opts.ID
}

// rendezvous returns the member with the highest hash of (member, key).
func rendezvous(ms []Member, key string) string {
	var best string
	var bestH uint64
	for _, m := range ms {
		h := fnv.New64a()
		h.Write([]byte(m.ID))
		h.Write([]byte{0})
		h.Write([]byte(key))
		if s := mix(h.Sum64()); best == "" || s > bestH {
			best, bestH = m.ID, s
		}
	}
	return best
}

// mix is splitmix64's finalizer: FNV alone spreads keys that differ in
// their last bytes poorly across members.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
