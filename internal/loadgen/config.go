package loadgen

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Defaults of a run.
const (
	DefaultURL         = "http://127.0.0.1:8080/processes/PurchaseOrder"
	DefaultSOAPAction  = "urn:example:po#submitPurchaseOrder"
	DefaultContentType = "text/xml; charset=utf-8"
	DefaultDuration    = 10 * time.Second
	DefaultWarmup      = 2 * time.Second
	DefaultTimeout     = 30 * time.Second
	// MaxErrorSamples is how many distinct error messages a level keeps.
	MaxErrorSamples = 5
)

// DefaultConcurrency is the default list of concurrency levels.
func DefaultConcurrency() []int { return []int{1, 16, 64, 256, 1000} }

// Config describes a run. Targets, Body and Concurrency are required; the
// zero value of the other fields means "the default" or "off".
type Config struct {
	// Targets holds one URL (A) or two (A and B, compared level by level).
	Targets []string
	// Body is sent as the body of every request.
	Body []byte
	// SOAPAction is sent as the SOAPAction header, quoted if it is not
	// already; empty sends no SOAPAction header.
	SOAPAction string
	// ContentType of the requests; empty means DefaultContentType.
	ContentType string
	// Concurrency lists the levels (number of closed-loop clients), run in
	// this order.
	Concurrency []int
	// Rates, when not empty, makes the levels open loop instead: each is
	// an arrival rate in requests per second, requests sent on schedule
	// whether or not earlier ones were answered. Concurrency is then
	// ignored.
	Rates []float64
	// MaxOutstanding bounds the requests of an open-loop level sent and
	// not yet answered (the workers, and connections); a request due
	// while that many are outstanding is not sent and counted as unsent.
	// Zero means DefaultMaxOutstanding.
	MaxOutstanding int
	// Duration is the measured time per level (default DefaultDuration),
	// Warmup the unmeasured time before it (0 means none).
	Duration, Warmup time.Duration
	// Timeout bounds one request (default DefaultTimeout).
	Timeout time.Duration
	// Expect, when not nil, must be true on every response.
	Expect *Expect
	// Interval, when positive, records tx/s per interval of each level
	// (and the target's RSS and goroutines when its /metrics has them).
	Interval time.Duration
	// OnInterval, when not nil, is called with each interval sample as it
	// is taken, with the target's label ("A" or "B").
	OnInterval func(label string, concurrency int, s IntervalSample)
	// OnLevel, when not nil, is called with each level result as soon as
	// the level ends.
	OnLevel func(LevelResult)
	// Progress, when not nil, receives one progress line per second.
	Progress io.Writer
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
	// LoopbackOnly refuses targets that are not loopback addresses (for
	// tests).
	LoopbackOnly bool
}

// ParseConcurrency parses a comma-separated list of positive integers such
// as "1,16,64,256,1000".
func ParseConcurrency(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("concurrency %q: want a positive integer", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("concurrency: empty list")
	}
	return out, nil
}

// withDefaults checks c and returns a copy with the defaults filled in.
func (c Config) withDefaults() (Config, error) {
	if len(c.Targets) < 1 || len(c.Targets) > 2 {
		return c, fmt.Errorf("want one or two target URLs, got %d", len(c.Targets))
	}
	for _, t := range c.Targets {
		u, err := url.Parse(t)
		if err != nil {
			return c, fmt.Errorf("target %q: %w", t, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			return c, fmt.Errorf("target %q: want an http:// or https:// URL", t)
		}
		if c.LoopbackOnly && !isLoopback(u.Hostname()) {
			return c, fmt.Errorf("target %q: only loopback targets are allowed", t)
		}
	}
	switch {
	case len(c.Rates) > 0:
		for _, r := range c.Rates {
			if !(r > 0) {
				return c, fmt.Errorf("rate %g: want a positive number of requests per second", r)
			}
		}
		if c.MaxOutstanding < 0 {
			return c, fmt.Errorf("max outstanding %d: may not be negative", c.MaxOutstanding)
		}
		if c.MaxOutstanding == 0 {
			c.MaxOutstanding = DefaultMaxOutstanding
		}
	case len(c.Concurrency) == 0:
		return c, errors.New("no concurrency level")
	}
	for _, n := range c.Concurrency {
		if n < 1 {
			return c, fmt.Errorf("concurrency %d: want at least 1", n)
		}
	}
	if c.Duration < 0 || c.Warmup < 0 || c.Timeout < 0 || c.Interval < 0 {
		return c, errors.New("durations must not be negative")
	}
	if c.Duration == 0 {
		c.Duration = DefaultDuration
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.ContentType == "" {
		c.ContentType = DefaultContentType
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

func isLoopback(host string) bool {
	switch host {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return strings.HasPrefix(host, "127.")
}

// soapActionHeader quotes a SOAPAction value unless it already is.
func soapActionHeader(a string) string {
	if len(a) >= 2 && a[0] == '"' && a[len(a)-1] == '"' {
		return a
	}
	return `"` + a + `"`
}
