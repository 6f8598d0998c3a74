package persist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// SchemaVersion is the data file schema this package writes and reads. Open
// refuses a file with a higher version (ErrSchemaTooNew).
const SchemaVersion uint64 = 1

// Limits enforced by Commit (ErrInvalid).
const (
	MaxIDLen  = 255  // longest instance ID, in bytes
	MaxKeyLen = 8192 // longest route key or timer tag, in bytes
)

// Bucket names. See doc.go, "Layout".
const (
	bucketMeta      = "meta"
	bucketInstances = "instances"
	bucketVars      = "vars"
	bucketRoutes    = "routes"
	bucketTimers    = "timers"
	bucketOutbox    = "outbox"
	bucketIndex     = "index"
	bucketTasks     = "tasks"
)

// defaultLockTimeout is how long Open waits for another process's lock when
// Options.LockTimeout is zero.
const defaultLockTimeout = time.Second

// closeTimeout bounds how long a failed Open waits for bbolt to close a file
// it panicked on, so that Open never hangs.
const closeTimeout = time.Second

// Options configure Open. The zero value is usable and safe (fsync on).
type Options struct {
	// LockTimeout is how long Open waits for the file lock another process
	// holds before it fails with ErrLocked. Zero means 1s.
	LockTimeout time.Duration

	// NoSync skips fsync after each commit. A crash may then lose or tear
	// recent commits. For tests and benchmarks only.
	NoSync bool

	// MaxBatchDelay is the group-commit window: how long the first Commit of
	// a group waits for others before the shared write transaction starts.
	// Zero means bbolt's default (10ms). It adds latency only under
	// concurrency: a Commit that finds no other Commit in flight does not
	// wait (see Store.Commit).
	MaxBatchDelay time.Duration

	// MaxBatchSize is the most Commit calls one write transaction takes; a
	// full group starts at once. Zero means bbolt's default (1000).
	MaxBatchSize int

	// ReadOnly opens the file without writing to it, under a shared lock
	// (other read-only opens may share it, a writer may not): for tools
	// and tests that look at a file, e.g. at what a crash left before a
	// restart recovers it. Commit and AckOutbox then fail. The file must
	// exist and have been initialized by a read-write Open.
	ReadOnly bool

	// NoVerify skips the walk over every record that Open does to find a
	// damaged file before it is used. Damage then surfaces later, as
	// ErrCorrupt from the read or Commit that meets it.
	NoVerify bool
}

// Store is an open data file. All methods are safe for concurrent use.
type Store struct {
	db       *bolt.DB
	path     string
	readOnly bool

	closed   atomic.Bool
	inflight atomic.Int64 // write transactions requested and not finished

	// hooked is the write transaction that already has the commit counter
	// attached. Only touched inside write transactions, which bbolt
	// serializes.
	hooked *bolt.Tx

	commits      atomic.Uint64
	checkpoints  atomic.Uint64
	bytesWritten atomic.Uint64
	commitNanos  atomic.Uint64
	commitErrors atomic.Uint64
}

// Open opens the data file at path, creating it and its buckets if needed.
//
// It fails with ErrLocked if another process holds the file for longer than
// opts.LockTimeout, with ErrSchemaTooNew if the file was written by a newer
// schema, and with ErrCorrupt if the file is damaged. Open never panics on a
// bad file and returns within about LockTimeout plus the time to read the
// file.
func Open(path string, opts Options) (*Store, error) {
	timeout := opts.LockTimeout
	if timeout <= 0 {
		timeout = defaultLockTimeout
	}
	db, err := openBolt(path, &bolt.Options{Timeout: timeout, NoSync: opts.NoSync, ReadOnly: opts.ReadOnly})
	if err != nil {
		return nil, err
	}
	if opts.MaxBatchDelay > 0 {
		db.MaxBatchDelay = opts.MaxBatchDelay
	}
	if opts.MaxBatchSize > 0 {
		db.MaxBatchSize = opts.MaxBatchSize
	}
	s := &Store{db: db, path: path, readOnly: opts.ReadOnly}
	if err := s.init(!opts.NoVerify, opts.ReadOnly); err != nil {
		closeBolt(db)
		return nil, err
	}
	return s, nil
}

// openBolt opens the file and maps bbolt's failures (and panics) to ours.
func openBolt(path string, bo *bolt.Options) (db *bolt.DB, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			db, err = nil, corrupt(path, fmt.Errorf("bbolt panicked: %v", p))
		}
	}()
	db, err = bolt.Open(path, 0o600, bo)
	switch {
	case err == nil:
		return db, nil
	case errors.Is(err, berrors.ErrTimeout):
		return nil, &fileError{
			msg:   fmt.Sprintf("data file %s is locked by another process (another orchd?)", path),
			kind:  ErrLocked,
			cause: err,
		}
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum),
		errors.Is(err, berrors.ErrVersionMismatch), errors.Is(err, berrors.ErrInvalidMapping):
		return nil, corrupt(path, err)
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return nil, fmt.Errorf("persist: open data file: %w", err)
	}
	// Anything else bbolt reports while reading a non-empty file (a short
	// read of a truncated file, for one) means the file is not usable.
	return nil, corrupt(path, err)
}

func corrupt(path string, cause error) error {
	return &fileError{
		msg:   fmt.Sprintf("data file %s is corrupt: %v", path, cause),
		kind:  ErrCorrupt,
		cause: cause,
	}
}

// closeBolt closes db, giving up after closeTimeout: after a panic inside
// bbolt its locks may be left held, and a failed Open must not hang.
func closeBolt(db *bolt.DB) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { _ = recover() }()
		_ = db.Close()
	}()
	select {
	case <-done:
	case <-time.After(closeTimeout):
	}
}

// init checks the schema version and the records, then creates what is
// missing. It writes nothing to a file it refuses.
func (s *Store) init(verify, readOnly bool) error {
	var version uint64
	err := s.view(func(tx *bolt.Tx) error {
		if b := tx.Bucket([]byte(bucketMeta)); b != nil {
			v := b.Get([]byte(schemaKey))
			if len(v) != schemaLen {
				return fmt.Errorf("schema version of %d bytes", len(v))
			}
			version = binary.BigEndian.Uint64(v)
		} else if tx.Bucket([]byte(bucketInstances)) != nil {
			return errors.New("no schema version")
		}
		if version > SchemaVersion {
			return nil
		}
		if verify {
			return verifyTx(tx)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if version > SchemaVersion {
		return &fileError{
			msg:  fmt.Sprintf("data file schema version %d is newer than this orchd supports (%d)", version, SchemaVersion),
			kind: ErrSchemaTooNew,
		}
	}
	if readOnly {
		if version == 0 {
			return corrupt(s.path, errors.New("not initialized (no schema version)"))
		}
		return nil
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		for _, name := range []string{bucketMeta, bucketInstances, bucketVars, bucketRoutes, bucketTimers, bucketOutbox, bucketIndex, bucketTasks} {
			if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
				return fmt.Errorf("create bucket %s: %w", name, err)
			}
		}
		if version == 0 {
			return tx.Bucket([]byte(bucketMeta)).Put([]byte(schemaKey), binary.BigEndian.AppendUint64(nil, SchemaVersion))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("persist: initialize data file %s: %w", s.path, err)
	}
	return nil
}

// verifyTx reads every key and value and decodes every record but the
// instance and outbox records: an instance record that does not decode
// is a broken instance, which Instances reports (Instance.Err), and an
// outbox record one Outbox reports (OutboxMessage.Err), without stopping
// the start or disturbing the others.
func verifyTx(tx *bolt.Tx) error {
	if b := tx.Bucket([]byte(bucketTimers)); b != nil {
		if err := b.ForEach(func(k, v []byte) error {
			_, err := decodeTimerKey(k)
			return err
		}); err != nil {
			return err
		}
	}
	for _, name := range []string{bucketInstances, bucketVars, bucketRoutes, bucketIndex} {
		if b := tx.Bucket([]byte(name)); b != nil {
			n := 0
			if err := b.ForEach(func(k, v []byte) error {
				n += len(k) + len(v)
				return nil
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close releases the file. Calls in progress finish first; later calls fail
// with ErrClosed.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("persist: close %s: %w", s.path, err)
	}
	return nil
}

// Path returns the data file's path.
func (s *Store) Path() string { return s.path }

// Stats returns the cumulative counters.
func (s *Store) Stats() Stats {
	return Stats{
		Commits:      s.commits.Load(),
		Checkpoints:  s.checkpoints.Load(),
		BytesWritten: s.bytesWritten.Load(),
		CommitNanos:  s.commitNanos.Load(),
		CommitErrors: s.commitErrors.Load(),
	}
}

// view runs fn in a read transaction. A panic or memory fault inside bbolt
// (a damaged page) becomes ErrCorrupt, as does any error fn returns that is
// not one of ours; panics raised by caller callbacks (see callback) are
// re-raised.
func (s *Store) view(fn func(*bolt.Tx) error) (err error) {
	if s.closed.Load() {
		return ErrClosed
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			if c, ok := p.(callbackPanic); ok {
				panic(c.v)
			}
			err = corrupt(s.path, fmt.Errorf("bbolt panicked: %v", p))
		}
	}()
	err = s.db.View(fn)
	if err != nil && !isOurs(err) {
		if errors.Is(err, berrors.ErrDatabaseNotOpen) {
			return ErrClosed
		}
		return corrupt(s.path, err)
	}
	return err
}

// isOurs reports whether err is a sentinel of this package (already
// explained) rather than a decoding failure.
func isOurs(err error) bool {
	return errors.Is(err, ErrNotFound) || errors.Is(err, ErrClosed) || errors.Is(err, ErrCorrupt)
}

// callbackPanic carries a panic out of a caller's callback through view's
// recover, so that it is re-raised rather than reported as corruption.
type callbackPanic struct{ v any }

// callback calls fn(v), tagging a panic in it as the caller's.
func callback[T any](fn func(T) bool, v T) (ok bool) {
	panicking := true
	defer func() {
		if panicking {
			if p := recover(); p != nil {
				panic(callbackPanic{p})
			}
			// runtime.Goexit (t.FailNow): let it go on.
		}
	}()
	ok = fn(v)
	panicking = false
	return ok
}

// update runs fn in a write transaction: alone if no other write is in
// flight, else through bbolt's Batch, which shares one transaction (and one
// fsync) among concurrent callers. fn may run more than once (Batch reruns a
// group without a failing member), so it must be idempotent. It counts
// committed transactions.
func (s *Store) update(fn func(*bolt.Tx) error) error {
	if s.closed.Load() {
		return ErrClosed
	}
	wrapped := func(tx *bolt.Tx) (err error) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if p := recover(); p != nil {
				err = corrupt(s.path, fmt.Errorf("bbolt panicked: %v", p))
			}
		}()
		if s.hooked != tx {
			s.hooked = tx
			tx.OnCommit(func() { s.commits.Add(1) })
		}
		return fn(tx)
	}
	var err error
	if s.inflight.Add(1) == 1 {
		err = s.db.Update(wrapped)
	} else {
		err = s.db.Batch(wrapped)
	}
	s.inflight.Add(-1)
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return ErrClosed
	}
	return err
}
