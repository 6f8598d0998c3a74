package process

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orchd/orchd/internal/exchange"
)

// metrics are the runtime's Prometheus metrics. A nil Registerer gives
// working but unregistered metrics.
type metrics struct {
	started       *prometheus.CounterVec
	ended         *prometheus.CounterVec
	partnerCalls  *prometheus.CounterVec
	partnerTime   *prometheus.HistogramVec
	commits       *prometheus.CounterVec
	storedBytes   *prometheus.CounterVec
	instanceTimes *prometheus.HistogramVec
	completed     prometheus.Histogram
	commitTime    prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		started: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "orchd_instances_started_total",
			Help: "Process instances created.",
		}, []string{"process"}),
		ended: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "orchd_instances_ended_total",
			Help: "Process instances that ended, by outcome: completed, faulted (a fault reached the process, handled or not), exited, failed (system failure).",
		}, []string{"process", "outcome"}),
		partnerCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "orchd_partner_invocations_total",
			Help: "Partner invocations by partner link, operation and outcome (ok, fault, error).",
		}, []string{"partner", "operation", "outcome"}),
		partnerTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "orchd_partner_invocation_duration_seconds",
			Help:    "Time spent in partner invocations.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 12),
		}, []string{"partner", "operation"}),
		commits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "orchd_store_commits_total",
			Help: "Store write transactions committed for instances of the process (0 for in-memory processes).",
		}, []string{"process"}),
		storedBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "orchd_store_serialized_bytes_total",
			Help: "Bytes of instance state serialized for the store (0 for in-memory processes).",
		}, []string{"process"}),
		instanceTimes: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "orchd_instance_duration_seconds",
			Help:    "Time from instance creation to completion.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 12),
		}, []string{"process"}),
		completed: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "orchd_exchange_completed_seconds",
			Help:    "Time from receiving the request that ran an instance to the instance ending (the stage after orchd_exchange_stage_seconds' reply).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 12),
		}),
		commitTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "orchd_store_commit_duration_seconds",
			Help:    "Time an instance waits for its checkpoint to be durable (group commit and fsync included).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}),
	}
	if reg != nil {
		reg.MustRegister(m.started, m.ended, m.partnerCalls, m.partnerTime, m.commits, m.storedBytes, m.instanceTimes, m.completed, m.commitTime)
	}
	return m
}

// deployed makes a process's series visible at 0 from deploy on.
func (m *metrics) deployed(p *Process) {
	l := p.Name.Local
	m.started.WithLabelValues(l)
	for _, o := range []string{"completed", "faulted", "exited", "failed"} {
		m.ended.WithLabelValues(l, o)
	}
	m.commits.WithLabelValues(l)
	m.storedBytes.WithLabelValues(l)
}

func (m *metrics) partnerCall(partner, op string, err error, d time.Duration) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
		var f *exchange.Fault
		if errors.As(err, &f) {
			outcome = "fault"
		}
	}
	m.partnerCalls.WithLabelValues(partner, op, outcome).Inc()
	m.partnerTime.WithLabelValues(partner, op).Observe(d.Seconds())
}
