package instancestore

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/orchd/orchd/internal/etcdstore"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process"
)

// File is the bbolt store's file name in the data directory.
const File = "orchd.db"

// The kinds of store (Config.Kind).
const (
	Bbolt = "bbolt"
	Etcd  = "etcd"
)

// Store is what orchd serve needs of an instance store: the engine's
// interface, the counters for /metrics, and Close. *persist.Store and
// *etcdstore.Store implement it.
type Store interface {
	process.Store
	Stats() persist.Stats
	Close() error
	// Task, UpdateTask and Tasks keep the human tasks
	// (internal/humantask's Store).
	Task(id string) ([]byte, bool, error)
	UpdateTask(id string, fn func(old []byte) ([]byte, error)) error
	Tasks(fn func(id string, rec []byte) bool) error
}

var (
	_ Store = (*persist.Store)(nil)
	_ Store = (*etcdstore.Store)(nil)
	_ Store = (*Lazy)(nil)
)

// Config selects the store. The zero value is the bbolt file in the
// current directory.
type Config struct {
	// Kind is Bbolt (or empty) or Etcd.
	Kind string
	// Dir is the data directory: the bbolt file is File in it (Dir is
	// created when it is opened).
	Dir string
	// Endpoints are the etcd members' client addresses, comma-separated
	// (Etcd only).
	Endpoints string
	// Prefix, DialTimeout and RequestTimeout are etcdstore.Options'.
	Prefix                      string
	DialTimeout, RequestTimeout time.Duration
}

// Open opens the store c selects. A bbolt file another process holds
// is an error after a second (persist.ErrLocked).
func Open(c Config, log *slog.Logger) (Store, error) {
	switch c.Kind {
	case "", Bbolt:
		if err := os.MkdirAll(c.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("data directory: %w", err)
		}
		st, err := persist.Open(filepath.Join(c.Dir, File), persist.Options{LockTimeout: time.Second, MaxBatchDelay: 2 * time.Millisecond})
		if err != nil {
			return nil, fmt.Errorf("open instance store: %w", err)
		}
		return st, nil
	case Etcd:
		var eps []string
		for _, e := range strings.Split(c.Endpoints, ",") {
			if e = strings.TrimSpace(e); e != "" {
				eps = append(eps, e)
			}
		}
		if len(eps) == 0 {
			return nil, errors.New("--store etcd needs --etcd-endpoints")
		}
		st, err := etcdstore.Open(etcdstore.Options{Endpoints: eps, Prefix: c.Prefix,
			DialTimeout: c.DialTimeout, RequestTimeout: c.RequestTimeout})
		if err != nil {
			return nil, fmt.Errorf("open instance store: %w", err)
		}
		if log != nil {
			log.Info("instance store on etcd", slog.String("store", st.Path()))
		}
		return st, nil
	}
	return nil, fmt.Errorf("--store %q: want %s or %s", c.Kind, Bbolt, Etcd)
}

// Lazy is the store of Config, opened on the first Open (or the first
// write). Until then it is an empty store: its reads find nothing, and
// the engine given it accepts persistent processes, whose deploy opens
// it. Its methods are safe for concurrent use.
type Lazy struct {
	cfg    Config
	log    *slog.Logger
	onOpen func(Store)

	mu     sync.Mutex // serializes Open and Close
	st     atomic.Pointer[Store]
	closed bool
}

// NewLazy returns the store of c, not opened yet; onOpen, when set, is
// called once with the store just opened (to register its metrics).
func NewLazy(c Config, log *slog.Logger, onOpen func(Store)) *Lazy {
	return &Lazy{cfg: c, log: log, onOpen: onOpen}
}

// errClosed is Open after Close.
var errClosed = errors.New("instance store closed")

// Open opens the store unless it is open, and returns it.
func (l *Lazy) Open() (Store, error) {
	if st := l.st.Load(); st != nil {
		return *st, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if st := l.st.Load(); st != nil {
		return *st, nil
	}
	if l.closed {
		return nil, errClosed
	}
	st, err := Open(l.cfg, l.log)
	if err != nil {
		return nil, err
	}
	l.st.Store(&st)
	if l.log != nil && (l.cfg.Kind == "" || l.cfg.Kind == Bbolt) {
		l.log.Info("instance store opened", slog.String("file", filepath.Join(l.cfg.Dir, File)))
	}
	if l.onOpen != nil {
		l.onOpen(st)
	}
	return st, nil
}

// Opened is the store if it is open, else nil.
func (l *Lazy) Opened() Store {
	if st := l.st.Load(); st != nil {
		return *st
	}
	return nil
}

// Close closes the store if it was opened; after it the store is empty
// again and Open (and Commit) fail.
func (l *Lazy) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if st := l.st.Swap(nil); st != nil {
		return (*st).Close()
	}
	return nil
}

// Commit implements process.Store, opening the store first.
func (l *Lazy) Commit(cps ...*persist.Checkpoint) error {
	st, err := l.Open()
	if err != nil {
		return err
	}
	return st.Commit(cps...)
}

// AckOutbox implements process.Store: nothing is to acknowledge in a
// store not opened.
func (l *Lazy) AckOutbox(seq uint64) error {
	if st := l.Opened(); st != nil {
		return st.AckOutbox(seq)
	}
	return nil
}

// Instance implements process.Store: persist.ErrNotFound until opened.
func (l *Lazy) Instance(id string) (*persist.Instance, map[int][]byte, error) {
	if st := l.Opened(); st != nil {
		return st.Instance(id)
	}
	return nil, nil, fmt.Errorf("instance %q: %w", id, persist.ErrNotFound)
}

// Route implements process.Store.
func (l *Lazy) Route(key string) (string, bool, error) {
	if st := l.Opened(); st != nil {
		return st.Route(key)
	}
	return "", false, nil
}

// Instances implements process.Store.
func (l *Lazy) Instances(fn func(*persist.Instance) bool) error {
	if st := l.Opened(); st != nil {
		return st.Instances(fn)
	}
	return nil
}

// Timers implements process.Store.
func (l *Lazy) Timers(fn func(persist.Timer) bool) error {
	if st := l.Opened(); st != nil {
		return st.Timers(fn)
	}
	return nil
}

// Outbox implements process.Store.
func (l *Lazy) Outbox(fn func(persist.OutboxMessage) bool) error {
	if st := l.Opened(); st != nil {
		return st.Outbox(fn)
	}
	return nil
}

// ScanInstances implements process.Store.
func (l *Lazy) ScanInstances(sc persist.Scan, fn func(*persist.InstanceView) bool) (persist.ScanResult, error) {
	if st := l.Opened(); st != nil {
		return st.ScanInstances(sc, fn)
	}
	return persist.ScanResult{}, nil
}

// InstanceTimers implements process.Store.
func (l *Lazy) InstanceTimers(id string) ([]persist.Timer, error) {
	if st := l.Opened(); st != nil {
		return st.InstanceTimers(id)
	}
	return nil, nil
}

// Task implements Store: none until opened.
func (l *Lazy) Task(id string) ([]byte, bool, error) {
	if st := l.Opened(); st != nil {
		return st.Task(id)
	}
	return nil, false, nil
}

// UpdateTask implements Store, opening the store first: a task is
// stored even when no persistent process is deployed.
func (l *Lazy) UpdateTask(id string, fn func(old []byte) ([]byte, error)) error {
	st, err := l.Open()
	if err != nil {
		return err
	}
	return st.UpdateTask(id, fn)
}

// Tasks implements Store.
func (l *Lazy) Tasks(fn func(id string, rec []byte) bool) error {
	if st := l.Opened(); st != nil {
		return st.Tasks(fn)
	}
	return nil
}

// Stats implements Store: zeros until opened.
func (l *Lazy) Stats() persist.Stats {
	if st := l.Opened(); st != nil {
		return st.Stats()
	}
	return persist.Stats{}
}
