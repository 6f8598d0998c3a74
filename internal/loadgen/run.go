package loadgen

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// maxResponseBytes bounds how much of a response is read and validated.
const maxResponseBytes = 16 << 20

// Histogram range, in microseconds: 1µs to 10 minutes, 2 significant
// digits (about 20 KiB per worker, so 1,000 workers stay small).
const (
	histMinMicros = 1
	histMaxMicros = int64(10 * time.Minute / time.Microsecond)
	histDigits    = 2
)

// Run runs every level of cfg against its target(s) and returns the
// report. With two targets the levels alternate A@N1, B@N1, A@N2, B@N2, ...
// When ctx is cancelled Run stops within the request timeout and returns
// the levels finished so far, with Complete false, and ctx's error.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if _, err := newChecker(cfg.Expect); err != nil {
		return nil, err
	}
	rep := &Report{A: cfg.Targets[0]}
	if len(cfg.Targets) == 2 {
		rep.B = cfg.Targets[1]
	}
	labels := []string{"A", "B"}
	for _, lv := range cfg.levels() {
		for i, target := range cfg.Targets {
			l, err := runLevel(ctx, &cfg, labels[i], target, lv)
			if err != nil {
				rep.compare()
				return rep, err
			}
			rep.Levels = append(rep.Levels, l)
			if cfg.OnLevel != nil {
				cfg.OnLevel(l)
			}
		}
	}
	rep.compare()
	rep.Complete = true
	return rep, nil
}

// worker is one closed-loop client, or one open-loop sender. Its counters are read by the monitor
// while it runs; its histogram and error map only after it has stopped.
type worker struct {
	ok, fail, warm, shed atomic.Int64
	hist                 *hdrhistogram.Histogram
	errs                 map[string]int64
	errOrder             []string
	check                *checker
	header               http.Header
	buf                  bytes.Buffer
	_                    [64]byte // keep the hot counters of two workers apart
}

// window is the measured part of a level.
type window struct{ from, to time.Time }

// runLevel runs one level against one target: n closed-loop clients, or
// in open loop MaxOutstanding workers fed on the level's schedule.
func runLevel(ctx context.Context, cfg *Config, label, target string, lv level) (LevelResult, error) {
	n := lv.clients // workers, and connections
	res := LevelResult{Label: label, Target: target, Concurrency: n, Rate: lv.rate, DurationS: cfg.Duration.Seconds()}
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        n,
		MaxIdleConnsPerHost: n,
		MaxConnsPerHost:     n,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{
		Transport:     tr,
		Timeout:       cfg.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}

	workers := make([]*worker, n)
	for i := range workers {
		c, err := newChecker(cfg.Expect)
		if err != nil {
			return res, err
		}
		h := http.Header{"Content-Type": {cfg.ContentType}}
		if cfg.SOAPAction != "" {
			h.Set("SOAPAction", soapActionHeader(cfg.SOAPAction))
		}
		workers[i] = &worker{
			hist:   hdrhistogram.New(histMinMicros, histMaxMicros, histDigits),
			errs:   map[string]int64{},
			check:  c,
			header: h,
		}
	}

	start := time.Now()
	win := window{from: start.Add(cfg.Warmup)}
	win.to = win.from.Add(cfg.Duration)
	lctx, cancel := context.WithDeadline(ctx, win.to.Add(cfg.Timeout))
	defer cancel()

	cfg.Logger.Debug("level start", slog.String("target", label), slog.String("url", target), slog.Int("clients", n), slog.Float64("rate", lv.rate))
	var wg sync.WaitGroup
	var unsent atomic.Int64
	if lv.rate > 0 {
		// Open loop: a dispatcher hands each request, when it is due, to
		// an idle worker; with none idle it is not sent.
		wg.Go(func() {
			c := paced(lctx, schedule{start: start, rate: lv.rate}, win, realClock{}, n, func(g int, at time.Time) {
				w := workers[g]
				err := w.do(lctx, client, target, cfg.Body)
				w.record(lctx, at, time.Now(), err, win)
			}, nil)
			unsent.Store(c.unsent)
		})
	} else {
		for _, w := range workers {
			wg.Go(func() { w.loop(lctx, client, target, cfg.Body, win) })
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	res.Intervals = monitor(ctx, cfg, label, target, lv, workers, win, done)
	<-done
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("level %s@%s interrupted: %w", label, lv.name(), err)
	}
	res.Unsent = unsent.Load()

	merged := hdrhistogram.New(histMinMicros, histMaxMicros, histDigits)
	errCounts := map[string]int64{}
	var order []string
	for _, w := range workers {
		res.Successes += w.ok.Load()
		res.Errors += w.fail.Load()
		res.Shed += w.shed.Load()
		merged.Merge(w.hist)
		for _, m := range w.errOrder {
			if _, seen := errCounts[m]; !seen {
				order = append(order, m)
			}
			errCounts[m] += w.errs[m]
		}
	}
	res.TxPerSec = float64(res.Successes) / cfg.Duration.Seconds()
	if merged.TotalCount() > 0 {
		ms := func(us int64) float64 { return float64(us) / 1000 }
		res.Latency = Latency{
			P50:  ms(merged.ValueAtQuantile(50)),
			P90:  ms(merged.ValueAtQuantile(90)),
			P99:  ms(merged.ValueAtQuantile(99)),
			Max:  ms(merged.Max()),
			Mean: merged.Mean() / 1000,
		}
	}
	// The most frequent first; ties keep the order first seen.
	slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(errCounts[b], errCounts[a]) })
	for _, m := range order[:min(len(order), MaxErrorSamples)] {
		res.ErrorSamples = append(res.ErrorSamples, ErrorSample{Message: m, Count: errCounts[m]})
	}
	return res, nil
}

// loop sends requests one after the other until the window has ended.
func (w *worker) loop(ctx context.Context, client *http.Client, target string, body []byte, win window) {
	for {
		t0 := time.Now()
		if !t0.Before(win.to) || ctx.Err() != nil {
			return
		}
		err := w.do(ctx, client, target, body)
		if !w.record(ctx, t0, time.Now(), err, win) {
			return
		}
	}
}

// record counts one exchange sent (or due, in open loop) at t0 and
// finished at t1 with err. It reports false when the exchange ended after
// the window or was interrupted: it is not counted, and a closed-loop
// client stops.
func (w *worker) record(ctx context.Context, t0, t1 time.Time, err error, win window) bool {
	switch {
	case ctx.Err() != nil || t1.After(win.to):
		return false // not counted: interrupted, or completed after the window
	case t1.Before(win.from):
		w.warm.Add(1)
	case errors.Is(err, errShed):
		w.shed.Add(1)
	case err != nil:
		w.fail.Add(1)
		w.noteErr(err)
	default:
		w.hist.RecordValue(min(max(t1.Sub(t0).Microseconds(), histMinMicros), histMaxMicros))
		w.ok.Add(1)
	}
	return true
}

// errShed is the outcome of an exchange the server shed: HTTP 503, its
// body not looked at.
var errShed = errors.New("shed: HTTP 503")

// do sends one request and validates its response.
func (w *worker) do(ctx context.Context, client *http.Client, target string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("building request: %w", err)
	}
	req.Header = w.header
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return err
	}
	w.buf.Reset()
	_, err = w.buf.ReadFrom(io.LimitReader(resp.Body, maxResponseBytes+1))
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("reading response: %w", err)
	}
	if w.buf.Len() > maxResponseBytes {
		return fmt.Errorf("response larger than %d bytes", maxResponseBytes)
	}
	if resp.StatusCode == http.StatusServiceUnavailable {
		return errShed
	}
	return w.check.check(resp.StatusCode, w.buf.Bytes())
}

// noteErr counts err by message, keeping a bounded number of messages.
func (w *worker) noteErr(err error) {
	m := err.Error()
	if _, ok := w.errs[m]; !ok {
		if len(w.errOrder) >= 2*MaxErrorSamples {
			m = "(other errors)"
		}
		if _, ok := w.errs[m]; !ok {
			w.errOrder = append(w.errOrder, m)
		}
	}
	w.errs[m]++
}

// totals sums the workers' counters.
func totals(workers []*worker) (ok, fail, warm, shed int64) {
	for _, w := range workers {
		ok += w.ok.Load()
		fail += w.fail.Load()
		warm += w.warm.Load()
		shed += w.shed.Load()
	}
	return
}

// monitor prints progress once a second and takes interval samples until
// done is closed or ctx is cancelled.
func monitor(ctx context.Context, cfg *Config, label, target string, lv level, workers []*worker, win window, done <-chan struct{}) []IntervalSample {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var (
		intervals        <-chan time.Time // nil: no (more) samples
		timer            *time.Timer
		scrape           *scraper
		samples          []IntervalSample
		lastOK, lastFail int64
		lastShed         int64
		lastAt           = win.from
		ps               = progressState{at: time.Now()}
	)
	if cfg.Interval > 0 {
		timer = time.NewTimer(time.Until(win.from.Add(cfg.Interval)))
		defer timer.Stop()
		intervals = timer.C
		scrape = newScraper(target)
		defer scrape.close()
	}
	take := func(now time.Time) {
		ok, fail, _, shed := totals(workers)
		s := IntervalSample{
			Elapsed:   now.Sub(win.from).Seconds(),
			TxPerSec:  float64(ok-lastOK) / now.Sub(lastAt).Seconds(),
			Successes: ok - lastOK,
			Errors:    fail - lastFail,
			Shed:      shed - lastShed,
		}
		s.RSSBytes, s.Goroutines = scrape.sample(ctx)
		lastOK, lastFail, lastShed, lastAt = ok, fail, shed, now
		samples = append(samples, s)
		if cfg.OnInterval != nil {
			cfg.OnInterval(label, lv.clients, s)
		}
	}
	// next is when the next sample is due; samples stop at the window's end.
	next := func() time.Time { return win.from.Add(time.Duration(len(samples)+1) * cfg.Interval) }
	for {
		select {
		case <-done:
			// The workers may finish just before the last timer fires.
			if intervals != nil && !time.Now().Before(next()) && !next().After(win.to) {
				take(next())
			}
			return samples
		case <-ctx.Done():
			return samples
		case now := <-tick.C:
			progress(cfg, &ps, label, lv, workers, win, now)
		case now := <-intervals:
			take(now)
			if next().After(win.to) {
				intervals = nil
			} else {
				timer.Reset(time.Until(next()))
			}
		}
	}
}

// progressState remembers the previous progress line's count.
type progressState struct {
	count int64
	at    time.Time
}

// progress writes one progress line: the level's counts so far and the
// rate of the last second.
func progress(cfg *Config, ps *progressState, label string, lv level, workers []*worker, win window, now time.Time) {
	if cfg.Progress == nil {
		return
	}
	ok, fail, warm, shed := totals(workers)
	rate := 0.0
	if dt := now.Sub(ps.at).Seconds(); !ps.at.IsZero() && dt > 0 {
		rate = float64(ok+fail+warm+shed-ps.count) / dt
	}
	ps.count, ps.at = ok+fail+warm+shed, now
	if now.Before(win.from) {
		fmt.Fprintf(cfg.Progress, "%s@%s warmup %.0fs/%s: %d exchanges, %.0f/s\n",
			label, lv.name(), cfg.Warmup.Seconds()-win.from.Sub(now).Seconds(), cfg.Warmup, warm, rate)
		return
	}
	fmt.Fprintf(cfg.Progress, "%s@%s %.0fs/%s: %d ok, %d shed, %d errors, %.0f/s\n",
		label, lv.name(), min(now.Sub(win.from), cfg.Duration).Seconds(), cfg.Duration, ok, shed, fail, rate)
}
