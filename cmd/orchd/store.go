package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/orchd/orchd/internal/etcdstore"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process"
)

// instanceStore is what serve needs of an instance store: the engine's
// interface, the counters for /metrics, and Close. *persist.Store (bbolt,
// the default) and *etcdstore.Store implement it.
type instanceStore interface {
	process.Store
	Stats() persist.Stats
	Close() error
}

var (
	_ instanceStore = (*persist.Store)(nil)
	_ instanceStore = (*etcdstore.Store)(nil)
)

// storeConfig selects the instance store of persistent processes.
type storeConfig struct {
	kind        string // "bbolt" or "etcd"
	endpoints   string // comma-separated etcd endpoints
	prefix      string
	dialTimeout time.Duration
	reqTimeout  time.Duration
}

func storeFlags(fs *flag.FlagSet, c *storeConfig) {
	fs.StringVar(&c.kind, "store", "bbolt", "instance store of persistent processes: bbolt (the file "+dataFile+" in --data) or etcd (--etcd-endpoints)")
	fs.StringVar(&c.endpoints, "etcd-endpoints", "", "with --store etcd: the etcd members' client addresses, host:port,...")
	fs.StringVar(&c.prefix, "etcd-prefix", etcdstore.DefaultPrefix, "with --store etcd: the key prefix of this orchd cluster's instances")
	fs.DurationVar(&c.dialTimeout, "etcd-dial-timeout", etcdstore.DefaultDialTimeout, "with --store etcd: bound on connecting to etcd at start")
	fs.DurationVar(&c.reqTimeout, "etcd-request-timeout", etcdstore.DefaultRequestTimeout, "with --store etcd: bound on one etcd request; an exchange whose commit exceeds it gets a Server fault")
}

// openStore opens the instance store cfg selects: the bbolt file in dir
// (created), or the etcd cluster. Archived process versions stay in dir
// either way.
func openStore(dir string, cfg *storeConfig, log *slog.Logger) (instanceStore, error) {
	switch cfg.kind {
	case "", "bbolt":
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("data directory: %w", err)
		}
		st, err := persist.Open(filepath.Join(dir, dataFile), persist.Options{LockTimeout: time.Second, MaxBatchDelay: 2 * time.Millisecond})
		if err != nil {
			return nil, fmt.Errorf("open instance store: %w", err)
		}
		return st, nil
	case "etcd":
		var eps []string
		for _, e := range strings.Split(cfg.endpoints, ",") {
			if e = strings.TrimSpace(e); e != "" {
				eps = append(eps, e)
			}
		}
		if len(eps) == 0 {
			return nil, fmt.Errorf("--store etcd needs --etcd-endpoints")
		}
		st, err := etcdstore.Open(etcdstore.Options{Endpoints: eps, Prefix: cfg.prefix,
			DialTimeout: cfg.dialTimeout, RequestTimeout: cfg.reqTimeout})
		if err != nil {
			return nil, fmt.Errorf("open instance store: %w", err)
		}
		log.Info("instance store on etcd", slog.String("store", st.Path()))
		return st, nil
	}
	return nil, fmt.Errorf("--store %q: want bbolt or etcd", cfg.kind)
}
