package process

import (
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orchd/orchd/internal/process/interp"
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
	lateAnswers   *prometheus.CounterVec
	held          *prometheus.CounterVec
	heldNow       prometheus.Gauge
	broken        prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		started: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "orchd_instances_started_total",
			Help: "Process instances created.",
		}, []string{"process"}),
		ended: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "orchd_instances_ended_total",
			Help: "Process instances that ended, by process, version (this node's deploy number; a version's series go when it is dropped) and outcome: completed, faulted (a fault reached the process, handled or not), exited, failed (system failure), suspended.",
		}, []string{"process", "version", "outcome"}),
		partnerCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "orchd_partner_invocations_total",
			Help: "Partner invocations by process, partner link, operation and outcome (ok, fault, error).",
		}, []string{"process", "partner", "operation", "outcome"}),
		partnerTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "orchd_partner_invocation_duration_seconds",
			Help:    "Time spent in partner invocations, by process, partner link and operation.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 12),
		}, []string{"process", "partner", "operation"}),
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
		lateAnswers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "orchd_late_answers_dropped_total",
			Help: "Partner calls whose activity was terminated (a fault reached its scope, exit) before the answer came; the answer is dropped.",
		}, []string{"process"}),
		held: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "orchd_held_messages_total",
			Help: "Messages for a running instance that no activity waited for yet, held until one does; outcome taken, expired, or refused (not held: --message-hold-max messages were held already).",
		}, []string{"process", "outcome"}),
		heldNow: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "orchd_held_messages",
			Help: "Messages held now for an instance that does not wait for them yet, over all processes; at --message-hold-max, more are refused.",
		}),
		broken: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "orchd_instances_broken_total",
			Help: "Persistent instances found broken since start: their stored record, control state or a variable cannot be decoded.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.started, m.ended, m.partnerCalls, m.partnerTime, m.commits, m.storedBytes, m.instanceTimes, m.completed, m.commitTime, m.lateAnswers, m.held, m.heldNow, m.broken)
	}
	return m
}

// deployed resolves a process's series (visible at 0 from deploy on) and
// those of its invokes.
func (m *metrics) deployed(p *interp.Version) {
	l := p.Name.Local
	pm := &interp.ProcMetrics{
		Started: m.started.WithLabelValues(l), Commits: m.commits.WithLabelValues(l),
		StoredBytes: m.storedBytes.WithLabelValues(l), Duration: m.instanceTimes.WithLabelValues(l),
		Ended: map[string]interp.Incrementer{}, LateAnswers: m.lateAnswers.WithLabelValues(l),
		HeldTaken: m.held.WithLabelValues(l, "taken"), HeldExpired: m.held.WithLabelValues(l, "expired"),
		HeldRefused: m.held.WithLabelValues(l, "refused"),
	}
	for _, o := range endOutcomes {
		c := &versionCounter{vec: m.ended, p: p, outcome: o}
		if p.Number > 0 {
			c.series() // visible at 0 from deploy on
		}
		pm.Ended[o] = c
	}
	p.Metrics = pm
	p.BindPartnerMetrics(func(partner, op string) *interp.PartnerMetrics { return m.partner(l, partner, op) })
}

// endOutcomes are the outcome label's values of orchd_instances_ended_total.
var endOutcomes = [...]string{"completed", "faulted", "exited", "failed", "suspended"}

// dropped removes the series of a version the engine forgot, so that
// redeploys do not add series without bound: only the versions kept
// (active, and retired ones instances still use) have them.
func (m *metrics) dropped(p *interp.Version) {
	for _, o := range endOutcomes {
		m.ended.DeleteLabelValues(p.Name.Local, strconv.Itoa(p.Number), o)
	}
}

// versionCounter is a series of orchd_instances_ended_total, whose
// version label is read when it is first counted: orchd serve deploys
// the versions of --deploy before the deployer numbers them (a version
// numbered at deploy, as every later deploy, has its series at once).
type versionCounter struct {
	vec     *prometheus.CounterVec
	p       *interp.Version
	outcome string
	child   atomic.Pointer[prometheus.Counter]
}

func (c *versionCounter) series() prometheus.Counter {
	if s := c.child.Load(); s != nil {
		return *s
	}
	s := c.vec.WithLabelValues(c.p.Name.Local, strconv.Itoa(c.p.Number), c.outcome)
	c.child.Store(&s)
	return s
}

// Inc implements interp.Incrementer.
func (c *versionCounter) Inc() { c.series().Inc() }

// partner is the series of a partner call of process (its local name).
func (m *metrics) partner(process, partner, op string) *interp.PartnerMetrics {
	return &interp.PartnerMetrics{
		Ok:       m.partnerCalls.WithLabelValues(process, partner, op, "ok"),
		Fault:    m.partnerCalls.WithLabelValues(process, partner, op, "fault"),
		Failed:   m.partnerCalls.WithLabelValues(process, partner, op, "error"),
		Duration: m.partnerTime.WithLabelValues(process, partner, op),
	}
}
