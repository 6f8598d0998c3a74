package etcdstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/orchd/orchd/internal/persist"
)

// ErrUnavailable wraps every error that comes from etcd not answering
// (unreachable, no quorum, timeout): the instance store is unavailable.
var ErrUnavailable = errors.New("instance store unavailable")

// ErrFenced is the failure of a checkpoint whose Fence no longer holds:
// the lock under which its instance ran is gone (this node's cluster
// session expired while it ran, and another node may have run the
// instance since). Nothing of the checkpoint was written; the error names
// the instance.
var ErrFenced = errors.New("this node lost the instance: its lock expired while it ran (fence failed), so its state was not stored")

// Fence is what a checkpoint's Fence must hold for this store: something
// that gives the etcd comparison under which the checkpoint may commit,
// such as *cluster.Lock (the comparison holds while that lock key is the
// one this node created). It is one more comparison in the checkpoint's
// transaction: no extra round trip.
type Fence interface {
	Fence() clientv3.Cmp
}

// FoldedFence is a Fence that also takes or gives up its lock inside the
// checkpoint's transaction (*cluster.Lock does: a new instance's lock is
// put by its first checkpoint, and any run's is deleted by its last), so
// that owning an instance costs no transaction of its own.
type FoldedFence interface {
	Fence
	// FenceOps are the writes the fence adds to the transaction, under
	// its comparison; they must not touch the store's own keys.
	FenceOps() []clientv3.Op
	// FenceDone tells the fence the outcome of the commit that carried
	// it, before Commit returns: the revision of the transaction that
	// wrote it, or the commit's error (ErrUnavailable: it may have been
	// written).
	FenceDone(rev int64, err error)
}

// Defaults of Options.
const (
	DefaultPrefix          = "/orchd/default/"
	DefaultDialTimeout     = 5 * time.Second
	DefaultRequestTimeout  = 5 * time.Second
	DefaultMaxBatchDelay   = 2 * time.Millisecond
	DefaultMaxTxnOps       = 128                 // etcd's --max-txn-ops default
	DefaultMaxRequestBytes = 3 * 1024 * 1024 / 2 // etcd's --max-request-bytes default
)

// Options configure Open. Zero values mean the defaults above.
type Options struct {
	Endpoints      []string // host:port or URLs of the etcd members
	Prefix         string   // key prefix of this store, e.g. /orchd/<cluster>/; a missing final "/" is added
	DialTimeout    time.Duration
	RequestTimeout time.Duration // bound on each etcd request of Commit and the reads
	MaxBatchDelay  time.Duration // negative: do not wait for more commits to join a group
	// MaxTxnOps and MaxRequestBytes must not exceed the etcd cluster's
	// --max-txn-ops and --max-request-bytes.
	MaxTxnOps       int
	MaxRequestBytes int
}

// Store is the instance store on etcd. Its methods are safe for concurrent
// use.
type Store struct {
	cli    *clientv3.Client
	opts   Options
	prefix string

	reqs     chan *call
	stop     chan struct{}
	done     chan struct{}
	closeMu  sync.Mutex
	closed   bool
	inflight sync.WaitGroup
	claims   []clientv3.LeaseID // Claim's leases, revoked by Close

	commits, checkpoints, bytesWritten, commitNanos, commitErrors, readTxns, writeTxns, fenceFailures atomic.Uint64
}

// Open connects to etcd and checks (or writes) the schema version under
// the prefix. It fails with an error wrapping ErrUnavailable when etcd does
// not answer within the timeouts, and with persist.ErrSchemaTooNew when a
// newer orchd wrote the prefix.
func Open(opts Options) (*Store, error) {
	if len(opts.Endpoints) == 0 {
		return nil, fmt.Errorf("etcdstore: no endpoints")
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if !strings.HasSuffix(opts.Prefix, "/") {
		opts.Prefix += "/"
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&opts.DialTimeout, DefaultDialTimeout)
	def(&opts.RequestTimeout, DefaultRequestTimeout)
	def(&opts.MaxBatchDelay, DefaultMaxBatchDelay)
	if opts.MaxTxnOps <= 0 {
		opts.MaxTxnOps = DefaultMaxTxnOps
	}
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = DefaultMaxRequestBytes
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   opts.Endpoints,
		DialTimeout: opts.DialTimeout,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("etcdstore: %w: %w", ErrUnavailable, err)
	}
	s := &Store{cli: cli, opts: opts, prefix: opts.Prefix, reqs: make(chan *call, 1024),
		stop: make(chan struct{}), done: make(chan struct{})}
	if err := s.checkSchema(); err != nil {
		cli.Close()
		return nil, err
	}
	go s.committer()
	return s, nil
}

func (s *Store) checkSchema() error {
	key := s.prefix + "meta/schema"
	want := string(binary.BigEndian.AppendUint64(nil, persist.SchemaVersion))
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.DialTimeout+s.opts.RequestTimeout)
	defer cancel()
	resp, err := s.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, want)).
		Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		return fmt.Errorf("etcdstore: open %v: %w: %w", s.opts.Endpoints, ErrUnavailable, err)
	}
	if resp.Succeeded {
		return nil
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) != 1 || len(kvs[0].Value) != 8 {
		return fmt.Errorf("etcdstore: %w: bad schema key %s", persist.ErrCorrupt, key)
	}
	if v := binary.BigEndian.Uint64(kvs[0].Value); v > persist.SchemaVersion {
		return fmt.Errorf("etcdstore: prefix %s has schema %d, this orchd knows %d: %w", s.prefix, v, persist.SchemaVersion, persist.ErrSchemaTooNew)
	}
	return nil
}

// Prefix returns the store's key prefix (ending in "/").
func (s *Store) Prefix() string { return s.prefix }

// Path names the store for logs: etcd://endpoints/prefix.
func (s *Store) Path() string {
	return "etcd://" + strings.Join(s.opts.Endpoints, ",") + s.prefix
}

// Client returns the etcd client the store uses (for tests and for the
// cluster layer sharing the connection).
func (s *Store) Client() *clientv3.Client { return s.cli }

// Stats returns the cumulative counters, as persist.Store's: Commits counts
// etcd write transactions (a group counts once), BytesWritten the key and
// value bytes they put, keys with their prefix (what etcd stores, more
// than persist counts for the same checkpoints).
func (s *Store) Stats() persist.Stats {
	return persist.Stats{
		Commits:      s.commits.Load(),
		Checkpoints:  s.checkpoints.Load(),
		BytesWritten: s.bytesWritten.Load(),
		CommitNanos:  s.commitNanos.Load(),
		CommitErrors: s.commitErrors.Load(),
	}
}

// ReadTxns returns the number of read round trips Commit made (the reads
// before the write transactions); with Stats().Commits it gives the etcd
// round trips of the commits.
func (s *Store) ReadTxns() uint64 { return s.readTxns.Load() }

// WriteTxns returns the number of write transactions Commit sent,
// including those whose comparisons failed (a route or outbox conflict,
// a fence) and that were sent again; Stats().Commits counts only those
// that committed.
func (s *Store) WriteTxns() uint64 { return s.writeTxns.Load() }

// FenceFailures returns the number of Commit calls that failed because a
// checkpoint's fence no longer held (ErrFenced).
func (s *Store) FenceFailures() uint64 { return s.fenceFailures.Load() }

// Close stops the committer after the commits in flight and closes the
// client. Calls after Close fail with persist.ErrClosed.
func (s *Store) Close() error {
	s.closeMu.Lock()
	if s.closed {
		s.closeMu.Unlock()
		return nil
	}
	s.closed = true
	s.closeMu.Unlock()
	s.inflight.Wait()
	close(s.stop)
	<-s.done
	s.releaseClaims()
	return s.cli.Close()
}

// enter registers a method call; it fails after Close.
func (s *Store) enter() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return persist.ErrClosed
	}
	s.inflight.Add(1)
	return nil
}

func (s *Store) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.opts.RequestTimeout)
}

// unavailable wraps an etcd client error.
func unavailable(what string, err error) error {
	return fmt.Errorf("etcdstore: %s: %w: %w", what, ErrUnavailable, err)
}

// key prefixes of the buckets
const (
	bInstances = "instances/"
	bVars      = "vars/"
	bRoutes    = "routes/"
	bTimers    = "timers/"
	bOutbox    = "outbox/"
	bIndex     = "index/"
	kOutboxSeq = "meta/outboxseq"
)

func (s *Store) k(bucket string, key []byte) string { return s.prefix + bucket + string(key) }
