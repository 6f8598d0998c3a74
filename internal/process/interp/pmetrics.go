package interp

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orchd/orchd/internal/exchange"
)

// ProcMetrics are one process's series, resolved once at deploy so an
// exchange does no label lookups.
type ProcMetrics struct {
	Started, Commits, StoredBytes prometheus.Counter
	LateAnswers                   prometheus.Counter
	HeldTaken, HeldExpired        prometheus.Counter
	HeldRefused                   prometheus.Counter
	Ended                         map[string]prometheus.Counter
	Duration                      prometheus.Observer
}

// PartnerMetrics are one partner operation's series.
type PartnerMetrics struct {
	Ok, Fault, Failed prometheus.Counter
	Duration          prometheus.Observer
}

func (pm *PartnerMetrics) Observe(err error, d time.Duration) {
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
