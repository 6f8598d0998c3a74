package process

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orchd/orchd/internal/exchange"
)

// procMetrics are one process's series, resolved once at deploy so an
// exchange does no label lookups.
type procMetrics struct {
	started, commits, storedBytes prometheus.Counter
	lateAnswers                   prometheus.Counter
	heldTaken, heldExpired        prometheus.Counter
	heldRefused                   prometheus.Counter
	ended                         map[string]prometheus.Counter
	duration                      prometheus.Observer
}

// partnerMetrics are one partner operation's series.
type partnerMetrics struct {
	ok, fault, failed prometheus.Counter
	duration          prometheus.Observer
}

func (pm *partnerMetrics) observe(err error, d time.Duration) {
	switch {
	case err == nil:
		pm.ok.Inc()
	case errors.As(err, new(*exchange.Fault)):
		pm.fault.Inc()
	default:
		pm.failed.Inc()
	}
	pm.duration.Observe(d.Seconds())
}
