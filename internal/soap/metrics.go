package soap

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Exchange outcomes, the values of the outcome label.
const (
	outcomeOK          = "ok"
	outcomeFault       = "fault"
	outcomeClientError = "client_error"
	outcomeServerError = "server_error"
	outcomeAccepted    = "accepted"
)

// unknownLabel labels a request whose process or operation is unknown.
const unknownLabel = "unknown"

// Stages of an exchange, the values of the stage label.
const (
	stageDispatch = "dispatch"
	stageReply    = "reply"
)

// latencyBuckets suit exchanges from 100µs to 10s.
func latencyBuckets() []float64 {
	return []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
}

// metrics are the front door's metrics. A nil *metrics records nothing.
type metrics struct {
	exchanges *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	dispatch  prometheus.Observer
	reply     prometheus.Observer
	shedTotal *prometheus.CounterVec
	callbacks *prometheus.CounterVec
	reg       prometheus.Registerer
}

// Callback outcomes, the values of the outcome label of
// orchd_wsa_callbacks_total.
const (
	callbackDelivered = "delivered"
	callbackRetried   = "retried"
	callbackFailed    = "failed"
)

// newMetrics builds the metrics and registers them with reg; it returns nil
// when reg is nil. Collectors already registered (by another Server on the
// same registry) are shared.
func newMetrics(reg prometheus.Registerer) *metrics {
	if reg == nil {
		return nil
	}
	exchanges := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "orchd_exchanges_total",
		Help: "Exchanges handled by the SOAP front door, by process, operation and outcome.",
	}, []string{"process", "operation", "outcome"}))
	duration := register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "orchd_exchange_duration_seconds",
		Help:    "Time from receiving a request to finishing its exchange, by process, operation and outcome (as orchd_exchanges_total's).",
		Buckets: latencyBuckets(),
	}, []string{"process", "operation", "outcome"}))
	stage := register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "orchd_exchange_stage_seconds",
		Help:    "Time from receiving a request to reaching a stage: dispatch (handed to the runtime) or reply (reply written).",
		Buckets: latencyBuckets(),
	}, []string{"stage"}))
	shed := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "orchd_shed_total",
		Help: "SOAP requests shed, unparsed, with HTTP 503 because the admission bound (--max-inflight slots, or the adaptive limit) was full and so was its queue (--max-queue), or the queue overflowed or stood still while they waited (--queue-wait), by process.",
	}, []string{"process"}))
	callbacks := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "orchd_wsa_callbacks_total",
		Help: "Replies and faults sent to a non-anonymous wsa:ReplyTo or wsa:FaultTo, by process and outcome: delivered (the address answered 2xx), retried (an attempt failed in a way safe to repeat and is tried again), failed (given up, logged).",
	}, []string{"process", "outcome"}))
	return &metrics{
		callbacks: callbacks,
		exchanges: exchanges,
		duration:  duration,
		dispatch:  stage.WithLabelValues(stageDispatch),
		reply:     stage.WithLabelValues(stageReply),
		shedTotal: shed,
		reg:       reg,
	}
}

// admission registers gauges of the exchanges admitted, of those waiting
// to be, and (when adaptive, limit not nil) of the admission limit, and
// returns the counter of requests paused before admission (nil without
// metrics).
func (m *metrics) admission(inflight, queued, limit func() int64) prometheus.Counter {
	if m == nil {
		return nil
	}
	register(m.reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "orchd_inflight_exchanges",
		Help: "SOAP exchanges admitted and not finished: with --admission fixed those holding one of the --max-inflight slots, with adaptive all but those waiting for another message.",
	}, func() float64 { return float64(inflight()) }))
	register(m.reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "orchd_queued_exchanges",
		Help: "SOAP requests waiting in turn (at most --max-queue) to be admitted.",
	}, func() float64 { return float64(queued()) }))
	if limit != nil {
		register(m.reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "orchd_admission_limit",
			Help: "The adaptive admission limit (--admission adaptive): most SOAP exchanges admitted at once now.",
		}, func() float64 { return float64(limit()) }))
	}
	return register(m.reg, prometheus.NewCounter(prometheus.CounterOpts{
		Name: "orchd_admission_paused_total",
		Help: "SOAP requests that waited out a pause before admission because they came on a connection whose last requests were shed, sooner than the Retry-After those were given.",
	}))
}

// shedFor resolves the shed counter of process; nil without metrics.
func (m *metrics) shedFor(process string) prometheus.Counter {
	if m == nil {
		return nil
	}
	return m.shedTotal.WithLabelValues(process)
}

// register registers c, or returns the equal collector already registered.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(err) // a programming error, as with MustRegister
	}
	return c
}

// opMetrics are the children of one process and operation, resolved once.
type opMetrics struct {
	outcomes  map[string]prometheus.Counter
	durations map[string]prometheus.Observer
	m         *metrics
}

// forOp resolves the metrics of one process and operation.
func (m *metrics) forOp(process, op string) *opMetrics {
	if m == nil {
		return nil
	}
	om := &opMetrics{
		outcomes:  make(map[string]prometheus.Counter, 5),
		durations: make(map[string]prometheus.Observer, 5),
		m:         m,
	}
	for _, o := range []string{outcomeOK, outcomeFault, outcomeClientError, outcomeServerError, outcomeAccepted} {
		om.outcomes[o] = m.exchanges.WithLabelValues(process, op, o)
		om.durations[o] = m.duration.WithLabelValues(process, op, o)
	}
	return om
}

// done records a finished exchange.
func (om *opMetrics) done(outcome string, received time.Time) {
	if om == nil {
		return
	}
	om.doneAt(outcome, received, time.Now())
}

// doneAt records an exchange that finished at now.
func (om *opMetrics) doneAt(outcome string, received, now time.Time) {
	if om == nil {
		return
	}
	om.outcomes[outcome].Inc()
	om.durations[outcome].Observe(now.Sub(received).Seconds())
}

// dispatched records the time from received to dispatch.
func (m *metrics) dispatched(received time.Time) {
	if m == nil {
		return
	}
	m.dispatch.Observe(time.Since(received).Seconds())
}

// replied records the time from received to the reply being written.
func (m *metrics) replied(received time.Time) {
	if m == nil {
		return
	}
	m.reply.Observe(time.Since(received).Seconds())
}

// callback records one outcome of a callback of process.
func (m *metrics) callback(process, outcome string) {
	if m == nil {
		return
	}
	m.callbacks.WithLabelValues(process, outcome).Inc()
}
