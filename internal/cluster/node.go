package cluster

import (
	"cmp"
	"context"
	"encoding/json"
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
	// Admin is the base URL of this node's management API (/api/v1 lives
	// under it), published in the membership so any node can reach any
	// other's API. Empty when the node serves no API.
	Admin string
	// Versions are the process versions this node serves at join, in
	// the engine's naming (a deployment's version id). Update them with
	// SetVersions after every deploy, undeploy or retire.
	Versions []string
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
	// Rejoin makes the node join again by itself when its session is
	// lost (the lease expired: the node was cut off from etcd, or
	// paused, for longer than TTL): it revokes the old lease, creates a
	// new session and registers its node key again, retrying until it
	// succeeds or Close. Meanwhile Acquire and TryAcquire fail at once
	// with ErrLost ("rejoining"), Done is closed, and Joined returns a
	// channel that closes once the node is back. What the old session
	// held (locks, routes, leadership) is lost for good: the fences of
	// its locks fail. Without Rejoin a lost node stays lost until Close.
	Rejoin bool
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

// Member is one live node and the metadata it published under its
// membership key (nodes/<id>, a JSON object; a plain URL from an older
// node is read as URL alone).
type Member struct {
	ID string `json:"-"`
	// URL is the node's SOAP base URL.
	URL string `json:"url"`
	// Admin is the base URL of the node's management API; empty when it
	// serves none.
	Admin string `json:"admin,omitempty"`
	// Versions are the process versions the node serves.
	Versions []string `json:"versions,omitempty"`
}

// Serves reports whether m serves process version v.
func (m Member) Serves(v string) bool { return slices.Contains(m.Versions, v) }

// equal compares members field by field (Member has a slice, so no ==).
func (m Member) equal(o Member) bool {
	return m.ID == o.ID && m.URL == o.URL && m.Admin == o.Admin && slices.Equal(m.Versions, o.Versions)
}

// parseMember reads the value of nodes/<id>.
func parseMember(id string, v []byte) Member {
	m := Member{ID: id}
	if len(v) == 0 || v[0] != '{' {
		m.URL = string(v) // an older node: the value is the URL
		return m
	}
	if err := json.Unmarshal(v, &m); err != nil {
		m.URL = "" // unreadable: live, but nothing to forward to
	}
	m.ID = id
	return m
}

// Node is this orchd process's membership in a cluster: a session (an
// etcd lease kept alive in the background) and the keys held with it.
// Its methods are safe for concurrent use.
type Node struct {
	cli  *clientv3.Client
	opts Options
	pfx  string
	log  *slog.Logger

	stop    context.CancelFunc
	watched chan struct{} // closed when the membership watch has ended
	kept    chan struct{} // closed when the rejoin loop has ended (Options.Rejoin)
	gone    chan struct{} // closed: Done while the node has no session

	smu    sync.Mutex
	sess   *concurrency.Session // nil while rejoining
	joined chan struct{}        // closed while sess is live; an open one while rejoining

	settleMu sync.Mutex
	settling map[string]chan struct{} // lock key -> closed when its settle ends
	closing  context.Context          // ends when Close is called

	mu      sync.Mutex
	members []Member      // live nodes, sorted by ID
	changed chan struct{} // closed and replaced on each membership change

	metaMu sync.Mutex // serialises SetVersions (opts.Versions is under mu)

	newLocks newLocks // batched acquisitions of new instances' locks
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
	opts.Versions = slices.Clone(opts.Versions)
	n := &Node{
		cli: cli, opts: opts, pfx: Prefix(opts.Cluster),
		log: opts.Logger.With("node", opts.ID), changed: make(chan struct{}),
		watched: make(chan struct{}), kept: make(chan struct{}), gone: make(chan struct{}),
		joined: make(chan struct{}),
	}
	close(n.gone)
	close(n.joined)
	sess, err := n.register(ctx)
	if err != nil {
		return nil, err
	}
	n.sess = sess
	wctx, stop := context.WithCancel(context.Background())
	n.stop, n.closing = stop, wctx
	gctx, cancel := n.opCtx(ctx)
	defer cancel()
	rev, err := n.loadMembers(gctx)
	if err != nil {
		stop()
		sess.Close()
		return nil, err
	}
	go n.watchMembers(wctx, rev)
	if opts.Rejoin {
		go n.keepJoined(wctx, sess)
	} else {
		close(n.kept)
	}
	return n, nil
}

// errAlive is register's failure when the node key is held by a live
// session.
var errAlive = errors.New("already live")

// register creates a session and, with its lease, the node key, only if
// no live node holds it.
func (n *Node) register(ctx context.Context) (*concurrency.Session, error) {
	gctx, cancel := n.opCtx(ctx)
	defer cancel()
	// The lease is granted here, bounded; the session keeps it alive
	// until Close, whatever ctx does.
	ttl := int(n.opts.TTL / time.Second)
	g, err := n.cli.Grant(gctx, int64(ttl))
	if err != nil {
		return nil, unavailable("cluster: join: lease", err)
	}
	sess, err := concurrency.NewSession(n.cli, concurrency.WithLease(g.ID), concurrency.WithTTL(ttl), concurrency.WithContext(context.WithoutCancel(ctx)))
	if err != nil {
		_, _ = n.cli.Revoke(gctx, g.ID)
		return nil, unavailable("cluster: join: session", err)
	}
	key := n.pfx + "nodes/" + n.opts.ID
	resp, err := n.cli.Txn(gctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, n.memberValue(), clientv3.WithLease(sess.Lease()))).
		Commit()
	if err != nil {
		sess.Close()
		return nil, unavailable("cluster: join: register", err)
	}
	if !resp.Succeeded {
		sess.Close()
		return nil, fmt.Errorf("cluster: join: node ID %q is %w", n.opts.ID, errAlive)
	}
	return sess, nil
}

// keepJoined is the rejoin loop of Options.Rejoin: when the session sess
// ends other than by Close, it drops it and registers again until it
// succeeds.
func (n *Node) keepJoined(ctx context.Context, sess *concurrency.Session) {
	defer close(n.kept)
	for {
		select {
		case <-ctx.Done():
			return
		case <-sess.Done():
		}
		if ctx.Err() != nil {
			return
		}
		n.log.Error("cluster session lost; rejoining", "lease", int64(sess.Lease()))
		n.smu.Lock()
		n.dropLocked(sess)
		n.smu.Unlock()
		// Revoke the old lease (bounded by the TTL): whatever it still
		// holds on the server goes now rather than at its expiry; this
		// node has given it up either way.
		_ = sess.Close()
		for delay := 100 * time.Millisecond; ; delay = min(2*delay, n.opts.TTL) {
			s, err := n.register(ctx)
			if err == nil {
				n.smu.Lock()
				n.sess, sess = s, s
				close(n.joined)
				n.smu.Unlock()
				n.log.Info("cluster rejoined", "lease", int64(s.Lease()))
				break
			}
			if ctx.Err() != nil {
				return
			}
			// errAlive: the old node key lingers until its lease
			// expires on the server.
			n.log.Warn("cluster rejoin failed; retrying", "err", err, "in", delay)
			select {
			case <-ctx.Done():
				return
			case <-time.After(delay):
			}
		}
	}
}

// session is the node's session, nil while it rejoins. With
// Options.Rejoin a session seen ended is dropped at once (whoever sees it
// first, the rejoin loop or a caller), so that session, Done and Joined
// agree.
func (n *Node) session() *concurrency.Session {
	n.smu.Lock()
	defer n.smu.Unlock()
	if n.opts.Rejoin && n.sess != nil {
		select {
		case <-n.sess.Done():
			n.dropLocked(n.sess)
		default:
		}
	}
	return n.sess
}

// dropLocked puts the node in the rejoining state if sess is still its
// session. The caller holds smu.
func (n *Node) dropLocked(sess *concurrency.Session) {
	if n.sess == sess {
		n.sess, n.joined = nil, make(chan struct{})
	}
}

// lease is the lease of the node's session, or ErrLost while it has none.
func (n *Node) lease(op string) (clientv3.LeaseID, error) {
	sess := n.session()
	if sess == nil {
		return clientv3.NoLease, fmt.Errorf("%s: %w; rejoining", op, ErrLost)
	}
	select {
	case <-sess.Done():
		return clientv3.NoLease, fmt.Errorf("%s: %w", op, ErrLost)
	default:
	}
	return sess.Lease(), nil
}

// ID is the node's ID.
func (n *Node) ID() string { return n.opts.ID }

// Serves reports whether this node serves process version v (as last
// published: Options.Versions, SetVersions).
func (n *Node) Serves(v string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Contains(n.opts.Versions, v)
}

// memberValue is the JSON value of this node's membership key.
func (n *Node) memberValue() string {
	n.mu.Lock()
	m := Member{URL: n.opts.URL, Admin: n.opts.Admin, Versions: n.opts.Versions}
	n.mu.Unlock()
	b, _ := json.Marshal(m)
	return string(b)
}

// SetVersions publishes the process versions this node serves now,
// rewriting its membership key under its lease; call it after every
// deploy, undeploy and retire. The other nodes see it through their
// membership watch.
func (n *Node) SetVersions(ctx context.Context, versions []string) error {
	n.metaMu.Lock()
	defer n.metaMu.Unlock()
	n.mu.Lock()
	n.opts.Versions = slices.Clone(versions)
	n.mu.Unlock()
	lease, err := n.lease("cluster: set versions")
	if err != nil {
		return err // rejoining: register publishes the versions set here
	}
	ctx, cancel := n.opCtx(ctx)
	defer cancel()
	key := n.pfx + "nodes/" + n.opts.ID
	// Only while the key is still this node's (same lease): a node whose
	// session ended must not bring itself back to life.
	resp, err := n.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.LeaseValue(key), "=", lease)).
		Then(clientv3.OpPut(key, n.memberValue(), clientv3.WithLease(lease))).
		Commit()
	if err != nil {
		return unavailable("cluster: set versions", err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("cluster: set versions: node %s is no longer a member (session lost)", n.opts.ID)
	}
	return nil
}

// Lease is the etcd lease every key of this node is held with, or
// clientv3.NoLease while the node rejoins (Options.Rejoin).
func (n *Node) Lease() clientv3.LeaseID {
	if sess := n.session(); sess != nil {
		return sess.Lease()
	}
	return clientv3.NoLease
}

// Done is closed when the node's current session ends: Close was called,
// or the lease expired (the node was cut off from etcd for longer than
// its TTL). After that the locks it took are no longer its own. With
// Options.Rejoin, Done called after the node rejoined is the new
// session's, and while it rejoins a closed channel.
func (n *Node) Done() <-chan struct{} {
	if sess := n.session(); sess != nil {
		return sess.Done()
	}
	return n.gone
}

// Joined returns a channel that is closed while the node has a session:
// at once, except while it rejoins (Options.Rejoin), when it closes once
// the node has joined again.
func (n *Node) Joined() <-chan struct{} {
	n.session() // drops an ended session
	n.smu.Lock()
	defer n.smu.Unlock()
	return n.joined
}

// Close revokes the lease, which releases every lock, route and
// leadership of this node at once, and stops the membership watch and
// the rejoin loop.
func (n *Node) Close() error {
	n.stop()
	<-n.kept
	var err error
	if sess := n.session(); sess != nil {
		err = sess.Close()
	}
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
		ms = append(ms, parseMember(strings.TrimPrefix(string(kv.Key), n.pfx+"nodes/"), kv.Value))
	}
	n.setMembers(ms)
	return resp.Header.Revision, nil
}

func (n *Node) setMembers(ms []Member) {
	slices.SortFunc(ms, func(a, b Member) int { return cmp.Compare(a.ID, b.ID) })
	n.mu.Lock()
	defer n.mu.Unlock()
	if slices.EqualFunc(ms, n.members, Member.equal) {
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
					ms = append(ms, parseMember(id, ev.Kv.Value))
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
