package loadgen

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultMaxOutstanding bounds the requests an open-loop level has sent
// and not yet seen answered, when Config.MaxOutstanding is zero.
const DefaultMaxOutstanding = 1000

// level is one level of a run: clients closed-loop clients, or (rate > 0)
// an open-loop arrival rate served by clients workers.
type level struct {
	clients int
	rate    float64
}

// levels lists the levels of c (after withDefaults).
func (c *Config) levels() []level {
	if len(c.Rates) > 0 {
		out := make([]level, len(c.Rates))
		for i, r := range c.Rates {
			out[i] = level{clients: c.MaxOutstanding, rate: r}
		}
		return out
	}
	out := make([]level, len(c.Concurrency))
	for i, n := range c.Concurrency {
		out[i] = level{clients: n}
	}
	return out
}

// name is how progress lines and errors name l: "64" (clients) or
// "2000/s".
func (l level) name() string {
	if l.rate > 0 {
		return strconv.FormatFloat(l.rate, 'f', -1, 64) + "/s"
	}
	return strconv.Itoa(l.clients)
}

// ParseRates parses a comma-separated list of positive arrival rates in
// requests per second, each optionally followed by "/s": "500,2000/s".
func ParseRates(s string) ([]float64, error) {
	var out []float64
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSuffix(strings.TrimSpace(f), "/s")
		if f == "" {
			continue
		}
		r, err := strconv.ParseFloat(f, 64)
		if err != nil || !(r > 0) || math.IsInf(r, 0) {
			return nil, fmt.Errorf("rate %q: want a positive number of requests per second", f)
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("rate: empty list")
	}
	return out, nil
}

// schedule is the arrival schedule of an open-loop level: request i
// (from 0) is due at start + i/rate, whatever happened to the others.
type schedule struct {
	start time.Time
	rate  float64 // requests per second, positive
}

// at is when request i is due.
func (s schedule) at(i int64) time.Time {
	return s.start.Add(time.Duration(float64(i) * float64(time.Second) / s.rate))
}

// dueBy is how many requests are due at or before t.
func (s schedule) dueBy(t time.Time) int64 {
	if t.Before(s.start) {
		return 0
	}
	n := int64(math.Floor(float64(t.Sub(s.start)) * s.rate / float64(time.Second)))
	// Rounding may put request n at t exactly or just off it; at decides.
	for !s.at(n + 1).After(t) {
		n++
	}
	for n >= 0 && s.at(n).After(t) {
		n--
	}
	return n + 1
}

// dueBefore is how many requests are due strictly before t.
func (s schedule) dueBefore(t time.Time) int64 {
	n := s.dueBy(t)
	if n > 0 && !s.at(n-1).Before(t) {
		n--
	}
	return n
}

// clock is the time source of the dispatcher (a fake one in tests).
type clock interface {
	Now() time.Time
	// SleepUntil returns at t, or false at once when ctx is done first.
	SleepUntil(ctx context.Context, t time.Time) bool
}

// realClock is the wall clock.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) SleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// dispatchCounts are what a dispatcher did with the requests due in a
// level.
type dispatchCounts struct {
	// sent were taken by a worker.
	sent int64
	// unsent were due inside the measured window but found no idle
	// worker: MaxOutstanding requests were waiting for answers.
	unsent int64
	// unsentWarm is the same for the warmup.
	unsentWarm int64
}

// dispatch offers each request of sch due before win.to, when it is due,
// to offer (which hands it to an idle worker, or reports false when
// none is idle), until all are offered or ctx is done. A late wake-up
// offers every request due by then at once; each carries its due time,
// from which its latency is measured, so a slow generator or a slow
// server cannot hide waiting time (no coordinated omission).
func dispatch(ctx context.Context, sch schedule, win window, clk clock, offer func(due time.Time) bool) dispatchCounts {
	var c dispatchCounts
	total := sch.dueBefore(win.to)
	for next := int64(0); next < total; {
		due := min(sch.dueBy(clk.Now()), total)
		for ; next < due; next++ {
			at := sch.at(next)
			switch {
			case offer(at):
				c.sent++
			case at.Before(win.from):
				c.unsentWarm++
			default:
				c.unsent++
			}
		}
		if next >= total || !clk.SleepUntil(ctx, sch.at(next)) {
			break
		}
	}
	return c
}

// paced runs the open-loop schedule sch on n goroutines: each request
// due before win.to is handed, when it is due, to an idle goroutine,
// which calls send(g, due) with its own index g (0 to n-1); a request
// due while all n are busy is not sent, and unsent (when not nil) is
// called with its due time. paced returns, with the dispatcher's counts,
// once every request is offered (or ctx is done) and every send has
// returned.
func paced(ctx context.Context, sch schedule, win window, clk clock, n int, send func(g int, due time.Time), unsent func(due time.Time)) dispatchCounts {
	jobs := make(chan time.Time)
	var wg sync.WaitGroup
	for g := range n {
		wg.Go(func() {
			for at := range jobs {
				send(g, at)
			}
		})
	}
	c := dispatch(ctx, sch, win, clk, func(at time.Time) bool {
		select {
		case jobs <- at:
			return true
		default:
			if unsent != nil {
				unsent(at)
			}
			return false
		}
	})
	close(jobs)
	wg.Wait()
	return c
}

// Pace sends requests at rate per second from now until ctx is done, each
// when it is due whether or not earlier ones were answered (open loop), on
// at most maxOutstanding goroutines: send(due) sends one request due at
// due and returns when it is answered or failed; measuring its latency
// from due, not from when send was called, keeps a late generator from
// hiding waiting time. A request due while maxOutstanding are outstanding
// is not sent; unsent (when not nil) is called with its due time instead.
// Pace returns when ctx is done and every send has returned. It is the
// pacer of the open-loop levels of Run, for callers whose requests differ
// from one to the next (the soak test's mix).
func Pace(ctx context.Context, rate float64, maxOutstanding int, send func(due time.Time), unsent func(due time.Time)) error {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return fmt.Errorf("rate %g: want a positive number of requests per second", rate)
	}
	if maxOutstanding < 1 {
		return fmt.Errorf("max outstanding %d: want at least 1", maxOutstanding)
	}
	start := time.Now()
	// No end but ctx: a century is far enough, and near enough that the
	// schedule's arithmetic stays inside a time.Duration.
	win := window{from: start, to: start.Add(100 * 365 * 24 * time.Hour)}
	paced(ctx, schedule{start: start, rate: rate}, win, realClock{}, maxOutstanding, func(_ int, due time.Time) { send(due) }, unsent)
	return nil
}
