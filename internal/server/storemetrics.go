package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/orchd/orchd/internal/persist"
)

// StatsSource is an instance store with cumulative counters:
// *persist.Store (bbolt) or *etcdstore.Store.
type StatsSource interface {
	Stats() persist.Stats
}

// StoreCollector exposes a store's cumulative Stats as Prometheus
// metrics, read at scrape time.
type StoreCollector struct {
	Store StatsSource

	commits, checkpoints, bytes, seconds, reads *prometheus.Desc
}

// readCounter is a store whose commits also read (etcdstore: the read
// round trip before each write transaction).
type readCounter interface {
	ReadTxns() uint64
}

// NewStoreCollector returns a collector for s.
func NewStoreCollector(s StatsSource) *StoreCollector {
	return &StoreCollector{
		Store:       s,
		commits:     prometheus.NewDesc("orchd_store_write_transactions_total", "Write transactions (group commits) of the instance store: bbolt transactions, or etcd Txns with --store etcd.", nil, nil),
		checkpoints: prometheus.NewDesc("orchd_store_checkpoints_total", "Instance checkpoints written; checkpoints per write transaction is the group-commit factor.", nil, nil),
		bytes:       prometheus.NewDesc("orchd_store_written_bytes_total", "Encoded bytes put into the instance store.", nil, nil),
		seconds:     prometheus.NewDesc("orchd_store_commit_seconds_total", "Time spent in store commits, including fsync.", nil, nil),
		reads:       prometheus.NewDesc("orchd_store_read_transactions_total", "Read round trips of commits (etcd store only: the keys a group's write transaction compares).", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *StoreCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.commits
	ch <- c.checkpoints
	ch <- c.bytes
	ch <- c.seconds
	if _, ok := c.Store.(readCounter); ok {
		ch <- c.reads
	}
}

// Collect implements prometheus.Collector.
func (c *StoreCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.Store.Stats()
	ch <- prometheus.MustNewConstMetric(c.commits, prometheus.CounterValue, float64(st.Commits))
	ch <- prometheus.MustNewConstMetric(c.checkpoints, prometheus.CounterValue, float64(st.Checkpoints))
	ch <- prometheus.MustNewConstMetric(c.bytes, prometheus.CounterValue, float64(st.BytesWritten))
	ch <- prometheus.MustNewConstMetric(c.seconds, prometheus.CounterValue, float64(st.CommitNanos)/1e9)
	if r, ok := c.Store.(readCounter); ok {
		ch <- prometheus.MustNewConstMetric(c.reads, prometheus.CounterValue, float64(r.ReadTxns()))
	}
}
