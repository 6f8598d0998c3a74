package humantask

import "github.com/prometheus/client_golang/prometheus"

// metrics are the task engine's: tasks created, claimed, completed (by
// outcome) and escalated, and the time from creation to claim and to end.
type metrics struct {
	created   prometheus.Counter
	claimed   prometheus.Counter
	ended     *prometheus.CounterVec
	escalated prometheus.Counter
	toClaim   prometheus.Histogram
	toEnd     prometheus.Histogram
	authBusy  prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	buckets := []float64{1, 10, 60, 300, 900, 3600, 4 * 3600, 24 * 3600, 3 * 24 * 3600, 7 * 24 * 3600}
	m := &metrics{
		created: prometheus.NewCounter(prometheus.CounterOpts{Name: "orchd_tasks_created_total",
			Help: "Human tasks and notifications created."}),
		claimed: prometheus.NewCounter(prometheus.CounterOpts{Name: "orchd_tasks_claimed_total",
			Help: "Human tasks claimed (or started from Ready, or delegated)."}),
		ended: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "orchd_tasks_ended_total",
			Help: "Human tasks that reached a final state, by state (COMPLETED, FAILED, EXITED, OBSOLETE, ERROR)."}, []string{"state"}),
		escalated: prometheus.NewCounter(prometheus.CounterOpts{Name: "orchd_tasks_escalated_total",
			Help: "Escalations of human tasks that fired (a deadline passed and the escalation's condition held)."}),
		toClaim: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "orchd_tasks_claim_seconds",
			Help: "Time from a task's creation to its claim.", Buckets: buckets}),
		toEnd: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "orchd_tasks_complete_seconds",
			Help: "Time from a task's creation to its end (completed, failed, skipped).", Buckets: buckets}),
		authBusy: prometheus.NewCounter(prometheus.CounterOpts{Name: "orchd_tasks_auth_busy_total",
			Help: "Sign-ins of task users refused at once because every password check slot (--people-max-checks) was taken."}),
	}
	if reg != nil {
		reg.MustRegister(m.created, m.claimed, m.ended, m.escalated, m.toClaim, m.toEnd, m.authBusy)
	}
	return m
}
