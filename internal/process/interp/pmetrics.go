package interp

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/plan"
)

// ProcMetrics are one process's series, resolved once at deploy so an
// exchange does no label lookups. A version no engine deployed has none
// (Version.Metrics nil): its runs count nothing (lateAnswer).
type ProcMetrics struct {
	Started, Commits, StoredBytes prometheus.Counter
	LateAnswers                   prometheus.Counter
	HeldTaken, HeldExpired        prometheus.Counter
	HeldRefused                   prometheus.Counter
	// Ended counts instances by outcome ("completed", "faulted", ...).
	Ended    map[string]Incrementer
	Duration prometheus.Observer
}

// Incrementer is a counter as a run counts: one more.
type Incrementer interface{ Inc() }

// PartnerMetrics are one partner operation's series.
type PartnerMetrics struct {
	Ok, Fault, Failed prometheus.Counter
	Duration          prometheus.Observer
}

// Observe counts one call that answered err after d; nil pm (a version
// no engine deployed) counts nothing.
func (pm *PartnerMetrics) Observe(err error, d time.Duration) {
	if pm == nil {
		return
	}
	switch {
	case err == nil:
		pm.Ok.Inc()
	case errors.As(err, new(*exchange.Fault)):
		pm.Fault.Inc()
	default:
		pm.Failed.Inc()
	}
	pm.Duration.Observe(d.Seconds())
}

// lateAnswer counts an answer that came for a thread no longer waiting
// for it.
func (in *Instance) lateAnswer() {
	if m := in.proc.Metrics; m != nil {
		m.LateAnswers.Inc()
	}
}

// BindPartnerMetrics gives each invoke of the version its partner call
// series, series(partner link, operation).
func (p *Version) BindPartnerMetrics(series func(partner, op string) *PartnerMetrics) {
	for i, a := range p.Acts {
		if iv, ok := a.(*plan.Invoke); ok && iv.Op != nil {
			p.InvokeMetrics[i] = series(iv.Partner, iv.Op.Name)
		}
	}
}
